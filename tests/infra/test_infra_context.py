"""Every context key is applied (visible in the template) or stops synth naming it.

The context is given as the CDK CLI hands it to the app: cdk.json's keys, with each
``-c key=value`` as a string replacing a whole key of the same name.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template
from conftest import REPO_ROOT, TEST_CONTEXT, cdk_json_context

from cdk.app import build_app, file_context
from cdk.context import SettingsError, load_settings, settings_with_sources
from shared.config.ledger import LedgerConfig

BUDGET = {
    "budget_id": "nlp-month",
    "scope": {"tag": {"team": "nlp"}},
    "amount_usd": "500",
    "period": "month",
    "recipients": ["nlp-lead@example.com"],
}
RULES = [{"arn_pattern": "arn:aws:sts::*:assumed-role/finops/*", "role": "finance"}]


def cli(**flags: str) -> dict[str, Any]:
    """The context `cdk synth -c k=v ...` gives the app (keys may contain dots)."""
    return {**cdk_json_context(), **flags}


def _load(context: dict[str, Any]) -> Any:
    return load_settings(context, file_context())


# --- the silently dropped settings of issue 14 now stop synth, key named ---------------------


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (
            {"ledger.budgets": json.dumps([{**BUDGET, "amount_usd": "-5"}])},
            r"ledger\.budgets\.0\.amount_usd: Input should be greater than 0 .*from -c",
        ),
        ({"ledger.access": "garbage"}, r"ledger\.access: .*'garbage'"),
        ({"finance_email": "finops@example.com"}, r"finance_email: not a setting .*finance_emails"),
        ({"ledger.acess.rules": "[]"}, r"ledger\.acess\.rules: not a setting .*ledger\.access"),
        ({"ledger.budgets": "[{"}, r"ledger\.budgets: not valid JSON"),
        ({"ledger.access.team_tag_key": "squad"}, r"ledger\.access\.team_tag_key: 'squad' is not"),
        ({"ledger.access.rules": '[{"arn_pattern": "x", "role": "root"}]'},
         r"ledger\.access\.rules\.0\.role"),
        ({"api_throttling.rate_limit": "-1"}, r"api_throttling\.rate_limit"),
        ({"stacks": "tracker,members"}, r"stacks\.1"),
    ],
)  # fmt: skip
def test_a_bad_or_unknown_key_stops_synth_naming_it(flags: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        _load(cli(**flags))


def test_cdk_own_keys_are_left_alone() -> None:
    settings = _load(cli(**{"@aws-cdk/aws-lambda:someFlag": "true", "aws:cdk:anything": "x"}))
    assert settings.stack_name == "CostTracker"


def test_a_whole_ledger_block_merges_into_cdk_json() -> None:
    settings = _load(cli(ledger='{"reconcile": {"enabled": true}}'))
    assert settings.ledger.reconcile.enabled is True
    # cdk.json's values under the block are kept, not replaced by the defaults
    assert settings.ledger.price_max_age_days == 7
    assert settings.ledger.tracking.job_tag_keys == ("training-job",)


def test_dotted_keys_merge_and_dict_keys_may_contain_dots() -> None:
    settings = _load(cli(**{
        "ledger.prices.ec2.trn1.32xlarge": "21.50",
        "ledger.tracking.grouping_tag_keys": "project,squad",
        "ledger.access.team_tag_key": "squad",
        "log_retention_days": "30",
    }))  # fmt: skip
    assert str(settings.ledger.prices.ec2["trn1.32xlarge"]) == "21.50"
    assert settings.ledger.tracking.grouping_tag_keys == ("project", "squad")
    assert settings.ledger.access.team_tag_key == "squad"
    assert settings.ledger.tracking.job_tag_keys == ("training-job",)
    assert settings.log_retention_days == 30


def test_sources_say_default_cdk_json_or_cli() -> None:
    settings, resolved = settings_with_sources(
        cli(**{"ledger.reconcile.enabled": "true"}), file_context()
    )
    assert resolved.source_of("ledger.reconcile.enabled") == "-c"
    assert resolved.source_of("ledger.reconcile.settle_days") == "default"
    assert resolved.source_of("ledger.tracking.job_tag_keys") == "cdk.json"
    assert resolved.source_of("account") == "cdk.json"
    assert settings.ledger.reconcile.settle_days == 2


# --- ... or take effect in the synthesized template -----------------------------------------


@pytest.fixture(scope="module")
def dotted_template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    context = cli(**{
        "ledger": '{"reconcile": {"enabled": true}}',
        "ledger.budgets": json.dumps([BUDGET]),
        "ledger.access.rules": json.dumps(RULES),
        "ledger.prices.ec2.trn1.32xlarge": "21.50",
        "finance_emails": "finops@example.com",
    })  # fmt: skip
    context.update(TEST_CONTEXT)
    outdir = tmp_path_factory.mktemp("dotted.out")
    _, stack, _ = build_app(context, outdir=str(outdir), nag=False)
    return dict(Template.from_stack(stack).to_json())


def _ledger_configs(template: dict[str, Any]) -> list[LedgerConfig]:
    return [
        LedgerConfig.model_validate_json(r["Properties"]["Environment"]["Variables"]["LEDGER_CONFIG"])
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and "Environment" in r["Properties"]
        and "LEDGER_CONFIG" in r["Properties"]["Environment"]["Variables"]
    ]  # fmt: skip


def test_dotted_and_block_settings_reach_every_function(dotted_template: dict[str, Any]) -> None:
    configs = _ledger_configs(dotted_template)
    assert configs
    for config in configs:
        assert [b.budget_id for b in config.budgets] == ["nlp-month"]
        assert [r.arn_pattern for r in config.access.rules] == [RULES[0]["arn_pattern"]]
        assert config.reconcile.enabled is True
        assert str(config.prices.ec2["trn1.32xlarge"]) == "21.50"
        assert config.tracking.job_tag_keys == ("training-job",)  # from cdk.json, kept


def test_budget_recipients_and_emails_are_subscribed(dotted_template: dict[str, Any]) -> None:
    subscriptions = [
        r["Properties"] for r in dotted_template["Resources"].values()
        if r["Type"] == "AWS::SNS::Subscription"
    ]  # fmt: skip
    endpoints = {s["Endpoint"] for s in subscriptions}
    assert {"finops@example.com", "nlp-lead@example.com"} <= endpoints
    (budget_sub,) = [s for s in subscriptions if s["Endpoint"] == "nlp-lead@example.com"]
    assert budget_sub["FilterPolicy"] == {"recipients": ["nlp-lead@example.com"]}


def test_reconcile_enabled_grants_cost_explorer(dotted_template: dict[str, Any]) -> None:
    text = json.dumps(
        [r for r in dotted_template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"]
    )
    assert "ce:GetCostAndUsage" in text


# --- through the real CDK CLI ---------------------------------------------------------------


def test_cdk_cli_rejects_a_misspelt_key_by_name(tmp_path: Path) -> None:
    env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
           "CDK_DISABLE_CLI_TELEMETRY": "true",
           "PATH": f"{REPO_ROOT / '.venv' / 'bin'}:{os.environ['PATH']}"}  # fmt: skip
    for key in ("CDK_CONTEXT_JSON", "CDK_OUTDIR"):
        env.pop(key, None)
    result = subprocess.run(
        ["npx", "--no-install", "cdk", "synth", "--quiet", "-o", str(tmp_path / "out"),
         "-c", "finance_email=finops@example.com"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode != 0
    assert "finance_email: not a setting (did you mean finance_emails?)" in result.stderr
    assert "Traceback" not in result.stderr


# --- costtracker config show ------------------------------------------------------------------


def test_config_show_prints_each_value_with_its_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from costtracker.cli import main

    cdk_json = str(REPO_ROOT / "cdk.json")
    assert (
        main(
            [
                "config",
                "show",
                "--cdk-json",
                cdk_json,
                "--json",
                "-c",
                "ledger.reconcile.enabled=true",
                "-c",
                "finance_emails=a@example.com",
            ]
        )
        == 0
    )
    shown = json.loads(capsys.readouterr().out)
    assert shown["ledger.reconcile.enabled"] == {"value": True, "source": "-c"}
    assert shown["ledger.reconcile.settle_days"] == {"value": 2, "source": "default"}
    assert shown["ledger.tracking.job_tag_keys"]["source"] == "cdk.json"
    assert shown["finance_emails"] == {"value": ["a@example.com"], "source": "-c"}
    assert main(["config", "show", "--cdk-json", cdk_json]) == 0
    table = capsys.readouterr().out
    assert any(line.split()[:2] == ["account", "cdk.json"] for line in table.splitlines())


def test_config_show_names_a_bad_key(capsys: pytest.CaptureFixture[str]) -> None:
    from costtracker.cli import main

    cdk_json = str(REPO_ROOT / "cdk.json")
    for argv, words in (
        (["-c", "finance_email=x", "-c", "ledger.reconcile.settle_days=0"],
         ("finance_email: not a setting",)),
        (["-c", "ledger.reconcile.settle_days=0"], ("ledger.reconcile.settle_days",)),
        (["-c", "nonsense"], ("-c nonsense", "KEY=VALUE")),
    ):  # fmt: skip
        assert main(["config", "show", "--cdk-json", cdk_json, *argv]) == 2
        out, err = capsys.readouterr()
        # One line on stderr (the CLI's rule), nothing on stdout.
        assert out == "" and err.count("\n") == 1 and err.startswith("costtracker: "), err
        assert all(word in err for word in words), err
    assert main(["config", "show", "--cdk-json", "/no/such/cdk.json"]) == 2
    assert "no such file" in capsys.readouterr().err
