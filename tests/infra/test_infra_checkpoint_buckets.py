"""Configured checkpoint buckets: EventBridge notifications turned on (existing ones kept),
the checkpoint rule narrowed to them, and cdk-nag still clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cdk_json_context

from cdk.app import build_app

BUCKETS = ["ml-checkpoints", "ml-checkpoints-eu"]


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    context = cdk_json_context()
    context["ledger"]["checkpoint"] = {"buckets": BUCKETS}
    outdir = Path(tmp_path_factory.mktemp("ckpt.out"))
    app, stack, _ = build_app(context, outdir=str(outdir), nag=True)
    app.synth()
    template = json.loads((outdir / f"{stack.stack_name}.template.json").read_text())
    return template, outdir


def test_each_bucket_sends_events_to_eventbridge_without_replacing_its_config(
    synthesized: tuple[dict[str, Any], Path],
) -> None:
    template, _ = synthesized
    notifications = [
        r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "Custom::S3BucketNotifications"
    ]
    assert sorted(n["BucketName"] for n in notifications) == BUCKETS
    for n in notifications:
        assert n["NotificationConfiguration"] == {"EventBridgeConfiguration": {}}
        assert n["Managed"] is False  # merges with what the bucket already has


def test_checkpoint_rule_sees_only_the_configured_buckets(
    synthesized: tuple[dict[str, Any], Path],
) -> None:
    template, _ = synthesized
    patterns = [
        r["Properties"]["EventPattern"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Events::Rule" and "EventPattern" in r["Properties"]
    ]
    (checkpoint,) = [p for p in patterns if p["source"] == ["aws.s3"]]
    assert checkpoint["detail-type"] == ["Object Created", "Object Deleted"]
    assert checkpoint["detail"] == {"bucket": {"name": BUCKETS}}


def test_nag_has_no_open_findings_with_buckets(synthesized: tuple[dict[str, Any], Path]) -> None:
    _, outdir = synthesized
    report = json.loads((outdir / "validation-report.json").read_text())
    (plugin,) = [p for p in report["pluginReports"] if p["pluginName"] == "AwsSolutions"]
    assert plugin["violations"] == []


def test_budget_recipients_get_only_their_budgets_alerts(tmp_path: Path) -> None:
    context = cdk_json_context()
    context["ledger"]["budgets"] = [
        {
            "budget_id": "llama-total",
            "scope": {"tag": {"project": "llama"}},
            "amount_usd": "1000",
            "recipients": ["llama-lead@example.com"],
        }
    ]
    app, stack, _ = build_app(context, outdir=str(tmp_path), nag=False)
    app.synth()
    template = json.loads((tmp_path / f"{stack.stack_name}.template.json").read_text())
    (subscription,) = [
        r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SNS::Subscription"
        and r["Properties"].get("Endpoint") == "llama-lead@example.com"
    ]
    assert subscription["Protocol"] == "email"
    # Filtered to the alerts of the budgets that name it (their `recipients` attribute).
    assert subscription["FilterPolicy"] == {"recipients": ["llama-lead@example.com"]}
