"""The organisation as the trust boundary, on moto's Organizations: an event from an
account missing from the cached list triggers one rate-limited refresh before it is
refused; a refused event raises (Lambda's retries end in the dead-letter queue), so a
newly joined account's event is admitted on a later delivery."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from shared.adapters.account_store import AccountStore
from shared.app import runtime
from shared.app.trust_edge import trust_of
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from shared.services.account_trust import UntrustedAccount
from tests.aws_events import spot_warning_event
from tests.support import moto_ledger

TABLE = "ledger-trust"
HOME = "123456789012"


@pytest.fixture
def org(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        organizations = boto3.client("organizations", region_name="us-east-1")
        org_id = organizations.create_organization(FeatureSet="ALL")["Organization"]["Id"]

        def join(name: str) -> str:
            status = organizations.create_account(AccountName=name, Email=f"{name}@example.com")
            return str(status["CreateAccountStatus"]["AccountId"])

        moto_ledger(
            monkeypatch,
            TABLE,
            LedgerConfig.model_validate(
                {"live_prices": False, "accounts": {"organization_id": org_id}}
            ).model_dump_json(),
        )
        monkeypatch.setenv("TRACKER_ACCOUNT", HOME)
        clock = FixedClock(datetime(2026, 11, 2, 9, 0, tzinfo=UTC))
        with runtime.override(clock):
            yield {"join": join, "clock": clock, "organizations": organizations}


def _event(account: str, at: datetime, event_id: str = "e1") -> dict[str, Any]:
    return spot_warning_event(event_id, "i-0123456789abcdef0", at, account=account)


def _deliver(event: dict[str, Any]) -> Any:
    from functions.spot_interruption.handler import handler

    return handler(event, FakeLambdaContext("spot_interruption"))


def test_an_account_outside_the_organisation_is_refused_after_one_refresh(
    org: dict[str, Any],
) -> None:
    member = org["join"]("nlp")
    now = org["clock"].now()
    trust = trust_of(runtime.current())
    assert trust.admits(member)  # not cached yet: the first refresh lists it
    assert trust.refreshes == 1
    outsider = "999999999999"
    with pytest.raises(UntrustedAccount, match="999999999999"):
        _deliver(_event(outsider, now))
    # The refresh is rate-limited: the outsider made no second ListAccounts call.
    assert trust.refreshes == 1
    with pytest.raises(UntrustedAccount):
        _deliver(_event(outsider, now, "e2"))
    assert trust.refreshes == 1
    # Nothing of the refused event was written (its account has no health record).
    assert outsider not in {h.account for h in AccountStore(runtime.current().table).health()}


def test_a_newly_joined_account_is_admitted_on_a_later_delivery(org: dict[str, Any]) -> None:
    org["join"]("nlp")
    trust = trust_of(runtime.current())
    trust.refresh()  # the cache holds the organisation before the new account joins
    newcomer = org["join"]("vision")
    now = org["clock"].now()
    # Within the rate limit: refused (the event rests in the DLQ, nothing lost)...
    with pytest.raises(UntrustedAccount):
        _deliver(_event(newcomer, now))
    # ... Lambda's retry minutes later: the one refresh admits it.
    org["clock"].advance_to(now + timedelta(minutes=6))
    _deliver(_event(newcomer, now))
    assert trust.refreshes == 2
    health = {h.account: h for h in AccountStore(runtime.current().table).health()}
    assert health[newcomer].seen == {"spot": "2026-11-02T09:06:00Z"}


def test_the_refresh_is_shared_by_every_container(org: dict[str, Any]) -> None:
    """Two containers (two runtimes) asked about the same unknown account: one
    ListAccounts between them (the conditional write on the refresh marker)."""
    org["join"]("nlp")
    first = trust_of(runtime.current())
    with runtime.override(org["clock"]):
        second = trust_of(runtime.current())
        assert second is not first
        assert not first.admits("999999999999")
        assert not second.admits("999999999999")
    assert first.refreshes + second.refreshes == 1


def test_the_tracker_account_and_its_schedules_need_no_list(org: dict[str, Any]) -> None:
    trust = trust_of(runtime.current())
    assert trust.admits(HOME) and trust.refreshes == 0
