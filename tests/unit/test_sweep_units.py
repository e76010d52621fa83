"""The sweep in units: one DescribeInstances page each, its token the next unit; the
open instances EC2 no longer lists are asked about on the first page only; a team
limited to some accounts is never booked from another (the in-memory ledger)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from costtracker.fakes.twins import FakeFleet
from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.instance import InstanceProfile
from shared.services.sweep import plan, sweep_page
from tests.support import memory_ledger

T0 = datetime(2026, 11, 1, 10, tzinfo=UTC)
MEMBER, OTHER = "222222222222", "333333333333"
CONFIG = LedgerConfig(
    live_prices=False, prices=PriceOverrides(ec2={"trn1.32xlarge": Decimal("21.50")})
)


def _profile(n: int, account: str = MEMBER, team: str = "nlp") -> InstanceProfile:
    return InstanceProfile(
        instance_id=f"i-{n:017x}",
        instance_type="trn1.32xlarge",
        region="eu-west-1",
        account=account,
        tags={"training-job": f"run-{account}", "team": team},
    )


def _fleet(*profiles: InstanceProfile) -> FakeFleet:
    fleet = FakeFleet(*profiles)
    for profile in profiles:
        fleet.now_states[profile.instance_id] = ("running", None)
        fleet.launched[profile.instance_id] = T0
    return fleet


def test_plan_is_one_first_unit_per_account_and_region() -> None:
    units = plan(["111111111111", MEMBER], ["us-east-1", "eu-west-1"], 1000, "tick")
    assert [(u.account, u.region, u.next_token, u.page) for u in units] == [
        ("111111111111", "us-east-1", None, 1),
        ("111111111111", "eu-west-1", None, 1),
        (MEMBER, "us-east-1", None, 1),
        (MEMBER, "eu-west-1", None, 1),
    ]
    assert units[0].following("tok").model_dump() == {
        **units[0].model_dump(),
        "next_token": "tok",
        "page": 2,
    }


def test_each_unit_is_one_page_and_hands_on_its_token() -> None:
    profiles = [_profile(n) for n in range(12)]
    fleet = _fleet(*profiles)
    ledger = memory_ledger(*profiles, config=CONFIG, now=T0 + timedelta(hours=1))
    deps = dataclasses.replace(ledger.deps, inventory=fleet)
    opened, token, pages = [], None, 0
    while True:
        page = sweep_page(deps, fleet, account=MEMBER, region="eu-west-1", token=token, page_size=5)
        pages += 1
        assert page.listed <= 5
        opened += page.opened
        token = page.next_token
        if token is None:
            break
    assert pages == 3 and sorted(opened) == sorted(p.instance_id for p in profiles)
    # A unit run again writes nothing new (deterministic inferred event ids).
    again = sweep_page(deps, fleet, account=MEMBER, region="eu-west-1", page_size=5)
    assert again.opened == [] and again.closed == []


def test_the_first_page_closes_an_open_instance_ec2_no_longer_lists() -> None:
    gone, kept = _profile(1), _profile(2)
    fleet = _fleet(gone, kept)
    ledger = memory_ledger(gone, kept, config=CONFIG, now=T0 + timedelta(hours=1))
    deps = dataclasses.replace(ledger.deps, inventory=fleet)
    sweep_page(deps, fleet, account=MEMBER, region="eu-west-1")
    del fleet.now_states[gone.instance_id]  # terminated long ago: EC2 forgets it
    later = sweep_page(deps, fleet, account=MEMBER, region="eu-west-1", page_size=5)
    assert later.closed == [gone.instance_id]
    # A later page (a token) does not ask again.
    assert sweep_page(deps, fleet, account=MEMBER, region="eu-west-1", token="0").closed == []


def test_a_team_limited_to_other_accounts_is_refused_from_this_one() -> None:
    mine, theirs = _profile(1, MEMBER, "nlp"), _profile(2, OTHER, "nlp")
    fleet = _fleet(mine, theirs)
    ledger = memory_ledger(mine, theirs, config=CONFIG, now=T0 + timedelta(hours=1))
    deps = dataclasses.replace(ledger.deps, inventory=fleet)

    def allows(team: str | None, account: str) -> bool:
        return team != "nlp" or account == MEMBER

    ok = sweep_page(deps, fleet, account=MEMBER, region="eu-west-1", team_allows=allows)
    refused = sweep_page(deps, fleet, account=OTHER, region="eu-west-1", team_allows=allows)
    assert ok.opened == [mine.instance_id]
    assert refused.refused == [theirs.instance_id] and refused.opened == []
