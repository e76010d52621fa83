"""cdk-nag 3.x (AwsSolutions) reports nothing unacknowledged, and every
acknowledgment carries a reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FEATURED_CONTEXT, cdk_json_context

from cdk.app import build_app

# Budget actions denying launches with SCPs (the tracker in the management account).
SCP_CONTEXT = {
    **FEATURED_CONTEXT,
    "ledger.budget_actions.deny_with": "scp",
    "ledger.accounts.management_account": "111122223333",
}


@pytest.fixture(scope="module", params=["cdk.json", "every feature on", "deny with SCPs"])
def nag_report(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> dict[str, Any]:
    """Synthesize with AwsSolutionsChecks; return its plugin report.

    cdk-nag 3 is a policy-validation plugin: findings are not construct annotations
    but entries of validation-report.json, and errors make synth raise.
    """
    outdir = Path(tmp_path_factory.mktemp("nag.out"))
    extras = {"every feature on": FEATURED_CONTEXT, "deny with SCPs": SCP_CONTEXT}
    extra = extras.get(request.param, {})
    app, _, _ = build_app(cdk_json_context(**extra), outdir=str(outdir), nag=True)
    try:
        app.synth()
    except RuntimeError as error:
        if "Validation failed" not in str(error):
            raise
    report = json.loads((outdir / "validation-report.json").read_text())
    (plugin,) = [p for p in report["pluginReports"] if p["pluginName"] == "AwsSolutions"]
    return dict(plugin)


def test_no_unacknowledged_errors_or_warnings(nag_report: dict[str, Any]) -> None:
    findings = [
        f"{v['severity']} {v['ruleName']} at "
        + ", ".join(c["constructPath"] for c in v["violatingConstructs"])
        for v in nag_report["violations"]
    ]
    assert findings == []
    assert nag_report["conclusion"] == "success"


def test_every_acknowledgment_has_a_specific_reason(nag_report: dict[str, Any]) -> None:
    suppressed = nag_report.get("suppressedViolations", [])
    assert suppressed, "expected the documented acknowledgments to be in the report"
    for violation in suppressed:
        assert len(violation["reason"].strip()) >= 40, violation["ruleName"]


def test_iam_wildcards_are_acknowledged_one_finding_at_a_time(
    nag_report: dict[str, Any],
) -> None:
    """No blanket IAM5: each acknowledgment names its finding (Resource::/Action::)."""
    for violation in nag_report.get("suppressedViolations", []):
        if violation["ruleName"].startswith(("AwsSolutions-IAM5", "AwsSolutions-IAM4")):
            assert "[" in violation["acknowledgedId"], violation["acknowledgedId"]
