"""``shared.services.team_bound`` on the event path: an instance whose team is limited to
other accounts (``ledger.accounts.team_accounts``) is refused by every event that would
first describe it (a state change or a spot notice), and nothing is booked to its team.

The tracker (123456789012) trusts member account 222222222222; team ``nlp`` is limited to
the tracker's own account. M1 (member, team nlp) is refused whichever event comes first;
H1 (tracker's account, team nlp) is booked as usual: its spot warning at 10:30 counts
one interruption, and it runs 10:00-11:00 at $21.50/h = $21.50."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import pytest

from costtracker.fakes.scenario_events import ec2_state_event, rebalance_event, spot_warning_event
from costtracker.replay import replay_session, report
from costtracker.scenario import Scenario
from shared.config.ledger import AccountsConfig, LedgerConfig
from shared.domain.clock import utc

HOME, MEMBER = "123456789012", "222222222222"
M1, M2, H1 = "i-0d1000000000000d1", "i-0d2000000000000d2", "i-0d3000000000000d3"
NLP = {"team": "nlp"}
CONFIG = LedgerConfig(
    accounts=AccountsConfig(allowed_accounts=(MEMBER,), team_accounts={"nlp": (HOME,)})
)


def _scenario() -> dict[str, Any]:
    member = {"account": MEMBER, "region": "us-east-1"}
    return {
        "region": "us-east-1",
        "account": HOME,
        "prices": {"ec2": {"trn1.32xlarge": "21.50"}},
        "instances": [
            {
                "instance_id": M1,
                "instance_type": "trn1.32xlarge",
                "tags": {"training-job": "member-a", **NLP},
                **member,
            },
            {
                "instance_id": M2,
                "instance_type": "trn1.32xlarge",
                "tags": {"training-job": "member-b", **NLP},
                **member,
            },
            {
                "instance_id": H1,
                "instance_type": "trn1.32xlarge",
                "tags": {"training-job": "home", **NLP},
            },
        ],
        "events": [
            spot_warning_event("m1-spot", M1, "2026-11-01T10:00:00Z", account=MEMBER),
            ec2_state_event("m1-run", M1, "running", "2026-11-01T10:01:00Z", account=MEMBER),
            rebalance_event("m2-rebalance", M2, "2026-11-01T10:00:00Z", account=MEMBER),
            ec2_state_event("h1-run", H1, "running", "2026-11-01T10:00:00Z"),
            spot_warning_event("h1-spot", H1, "2026-11-01T10:30:00Z"),
            ec2_state_event("h1-stop", H1, "stopped", "2026-11-01T11:00:00Z"),
        ],
        "until": "2026-11-01T12:00:00Z",
    }


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    scenario = Scenario.model_validate(_scenario())
    with contextlib.redirect_stdout(sys.stderr), replay_session(scenario, CONFIG) as replayer:
        for event in scenario.events:
            replayer.deliver(event)
        assert scenario.until is not None
        replayer.advance(utc(scenario.until))
        return {"document": report(replayer), "rejected": list(replayer.rejected)}


def test_every_first_event_of_a_team_limited_elsewhere_is_refused(run: dict[str, Any]) -> None:
    refused = {r["event_id"]: r for r in run["rejected"]}
    assert set(refused) == {"m1-spot", "m1-run", "m2-rebalance"}
    assert all("limited to other accounts" in r["error"] for r in refused.values())
    assert {r["function"] for r in refused.values()} == {"spot_interruption", "instance_state"}


def test_nothing_is_booked_to_the_refused_instances(run: dict[str, Any]) -> None:
    jobs = {j["job_id"]: j for j in run["document"]["jobs"]}
    assert "member-a" not in jobs and "member-b" not in jobs
    home = jobs["home"]
    assert home["cost_usd"]["instance"] == "21.500000000"
    assert home["interruptions"] == 1
