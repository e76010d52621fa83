"""Access fails closed: no rules, nobody; the denial names the setting."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shared.api.access import Caller, denial, resolve_caller
from shared.api.errors import ApiProblem
from shared.api.policy import AccessPolicy, policy_for
from shared.config.access import AccessConfig
from shared.config.budgets import Budget
from shared.config.ledger import LedgerConfig

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


NLP = Caller(arn="arn:aws:sts::1:assumed-role/ml-nlp/a", role="team", team="nlp")
FINANCE = Caller(arn="arn:aws:sts::1:assumed-role/finops/b", role="finance")


def test_the_policy_limits_a_team_member_to_their_team_under_the_team_tag_key() -> None:
    member = AccessPolicy(NLP, team_tag_key="squad")
    assert member.team_scope(None, "list", "jobs") == "nlp"
    assert member.team_scope("nlp", "list", "jobs") == "nlp"
    with pytest.raises(ApiProblem) as refused:
        member.team_scope("vision", "list", "jobs")
    assert refused.value.status == 403 and refused.value.field == "team"
    assert refused.value.message == "you may list only team nlp's jobs"
    # The team is filtered on under the team tag key only (never also under "team").
    assert member.tag_filters("nlp", project="p1", owner=None) == {"project": "p1", "squad": "nlp"}
    assert member.may_read({"squad": "nlp"}) and not member.may_read({"team": "nlp"})


def test_the_policy_lets_finance_see_everything_and_manage_budgets() -> None:
    finance = AccessPolicy(FINANCE, team_tag_key="team")
    assert finance.team_scope("vision", "see", "spend") == "vision"
    assert finance.team_scope(None, "see", "spend") is None
    assert finance.tag_filters(None, project=None) == {}
    assert finance.may_read({}) and finance.finance_or_admin("setting budgets") == FINANCE
    with pytest.raises(ApiProblem, match="setting budgets is for finance and admins") as denied:
        AccessPolicy(NLP, "team").finance_or_admin("setting budgets")
    assert denied.value.status == 403


def test_a_budget_is_visible_to_the_team_its_tag_scope_names() -> None:
    member = AccessPolicy(NLP, team_tag_key="squad")
    mine = Budget.model_validate(
        {"budget_id": "b1", "scope": {"tag": {"squad": "nlp"}}, "amount_usd": "10"}
    )
    account = Budget.model_validate(
        {"budget_id": "b2", "scope": {"account": True}, "amount_usd": "10"}
    )
    assert member.may_see_budget(mine) and not member.may_see_budget(account)
    assert AccessPolicy(FINANCE, "squad").may_see_budget(account)


def test_an_unknown_caller_gets_a_403_naming_the_setting() -> None:
    with pytest.raises(ApiProblem, match=r"ledger\.access\.rules") as denied:
        policy_for(ARN, AccessConfig())
    assert denied.value.status == 403
