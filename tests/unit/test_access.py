"""Access fails closed: no rules, nobody; the denial names the setting."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shared.api.access import AccessConfig, denial, resolve_caller
from shared.config import LedgerConfig

ARN = "arn:aws:sts::123456789012:assumed-role/PowerUserAccess/mallory"


def test_no_rules_let_nobody_in_and_say_which_setting_would() -> None:
    access = AccessConfig()
    assert resolve_caller(ARN, access) is None
    assert resolve_caller(None, access) is None
    message = denial(ARN, access)
    assert ARN in message and "ledger.access.rules" in message
    assert "admin, finance and team" in message


def test_first_matching_rule_wins_and_unmatched_is_denied() -> None:
    access = AccessConfig.model_validate({"rules": [
        {"arn_pattern": "arn:aws:sts::*:assumed-role/finops/*", "role": "finance"},
        {"arn_pattern": "arn:aws:sts::*:assumed-role/*/*", "role": "team", "team": "nlp"},
    ]})  # fmt: skip
    finance = resolve_caller("arn:aws:sts::1:assumed-role/finops/c", access)
    assert finance is not None and finance.manages_budgets
    member = resolve_caller(ARN, access)
    assert member is not None and member.team == "nlp" and not member.manages_budgets
    assert resolve_caller("arn:aws:iam::1:user/u", access) is None
    assert "matches no rule" in denial("arn:aws:iam::1:user/u", access)


def test_team_tag_key_must_be_a_grouping_tag_key() -> None:
    with pytest.raises(ValidationError, match=r"access\.team_tag_key 'squad' is not a grouping"):
        LedgerConfig.model_validate({"access": {"team_tag_key": "squad"}})
    config = LedgerConfig.model_validate(
        {"access": {"team_tag_key": "squad"}, "tracking": {"grouping_tag_keys": ["squad"]}}
    )
    assert config.access.team_tag_key == "squad"
