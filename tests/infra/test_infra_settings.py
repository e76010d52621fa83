"""The CDK context is validated once, with the offending key named."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO_ROOT, cdk_json_context

from cdk.app import file_context
from cdk.context import SettingsError, load_settings
from cdk.stack_settings import StackSettings


def _load(**overrides: object) -> StackSettings:
    """As `cdk synth -c key=value ...` resolves it: cdk.json under the overrides."""
    context = cdk_json_context(**overrides)
    return load_settings(context, file_context())


def test_cdk_json_defaults_are_valid() -> None:
    settings = _load()
    assert settings.account == "123456789012"
    assert settings.region == "us-east-1"
    assert settings.stack_name == "CostTracker"
    assert settings.log_retention_days == 90


def test_bad_tracked_family_names_the_field() -> None:
    ledger = cdk_json_context()["ledger"]
    ledger["tracking"]["tracked_families"] = ["trn", "P5!"]
    with pytest.raises(SettingsError, match=r"ledger\.tracking\.tracked_families.*P5!"):
        _load(ledger=ledger)


def test_non_email_names_the_field() -> None:
    with pytest.raises(SettingsError, match=r"finance_emails.*not an email address: 'finance'"):
        _load(finance_emails=["finops@example.com", "finance"])


def test_unknown_ledger_key_is_rejected() -> None:
    with pytest.raises(SettingsError, match=r"ledger\.trackng"):
        _load(ledger={"trackng": {}})


@pytest.mark.parametrize(
    ("key", "value"),
    [("account", "1234"), ("region", "useast1"), ("log_retention_days", 10),
     ("admin_emails", "not json")],
)  # fmt: skip
def test_bad_values_name_their_key(key: str, value: object) -> None:
    with pytest.raises(SettingsError, match=key):
        _load(**{key: value})


def test_cli_json_strings_are_parsed() -> None:
    """`cdk synth -c admin_emails='["a@example.com"]' -c log_retention_days=30`."""
    settings = _load(admin_emails='["ops@example.com"]', log_retention_days="30")
    assert settings.admin_emails == ("ops@example.com",)
    assert settings.log_retention_days == 30


def test_teams_route_by_team_and_team_emails_is_retired() -> None:
    """`-c teams.nlp='{"emails": [...]}'` sets one team; unfiltered team_emails are refused."""
    settings = _load(**{"teams.nlp": '{"emails": ["nlp@example.com"]}'})
    assert settings.teams["nlp"].emails == ("nlp@example.com",)
    with pytest.raises(SettingsError, match=r"team_emails is retired.*teams"):
        _load(team_emails='["ml-team@example.com"]')
    with pytest.raises(SettingsError, match=r"teams\.nlp\.emails"):
        _load(teams='{"nlp": {"emails": ["not-an-address"]}}')


def test_app_exits_with_a_readable_message() -> None:
    """The real entry point (as `cdk synth` runs it): exit 1, key named, no traceback."""
    context = {"account": "123456789012", "region": "us-east-1", "admin_emails": ["root"]}
    env = {
        **os.environ,
        "CDK_CONTEXT_JSON": json.dumps(context),
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }
    result = subprocess.run(
        [sys.executable, "cdk/app.py"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "admin_emails" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_catalog_function_without_a_handler_fails_synth_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stack makes what the catalog lists: an entry needs functions/<name>/handler.py."""
    import cdk.stack
    from cdk.app import build_app
    from shared.app.function_grants import Grants
    from shared.app.functions import Function
    from shared.app.triggers import EventRule

    mystery = Function("mystery", "?", 60, EventRule({"source": ["aws.ec2"]}), Grants())
    monkeypatch.setattr(cdk.stack, "FUNCTIONS", (*cdk.stack.FUNCTIONS, mystery))
    with pytest.raises(ValueError, match=r"no handler module at .*functions/mystery/handler\.py"):
        build_app(cdk_json_context(), nag=False)
