"""The sweep's deletes of the retired alarms: grouped by account and region, bounded
per sweep, and never the record of an alarm put again since."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import cast

from shared.adapters.alarm_store import AlarmStore
from shared.adapters.alarms import AlarmSpec, alarm_specs
from shared.adapters.table import MemoryTable
from shared.config.ledger import UtilizationConfig
from shared.domain.alarm_record import PutAlarm
from shared.services.alarm_lifecycle import RETIRED_PER_SWEEP, delete_retired_alarms
from shared.services.deps import LedgerDeps

CONFIG = UtilizationConfig()
AT = datetime(2026, 11, 1, 10, tzinfo=UTC)
HOME, MEMBER = "111111111111", "222222222222"


class Deletes:
    """An AlarmManager that keeps each DeleteAlarms request: (account, region, names)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, list[str]]] = []

    def ensure(self, specs: list[AlarmSpec], config: UtilizationConfig) -> None:
        raise AssertionError("nothing is put again here")

    def delete(self, names: list[str], account: str = "", region: str = "") -> None:
        self.calls.append((account, region, list(names)))

    def managed(self, prefix: str, account: str = "", region: str = "") -> Iterator[str]:
        return iter(())


def retire(store: AlarmStore, instance: int, account: str, region: str) -> None:
    iid = f"i-{instance:017x}"
    for spec in alarm_specs(CONFIG, iid, "trn1.32xlarge", account=account, region=region):
        store.put(
            PutAlarm(identity=spec.identity(CONFIG), instance_id=iid, signal=spec.signal, put_at=AT)
        )
        store.retired(spec, AT + timedelta(hours=1))


def test_one_sweep_deletes_at_most_its_bound_each_place_in_its_own_requests() -> None:
    table = MemoryTable()
    store = AlarmStore(table)
    for n in range(RETIRED_PER_SWEEP // 2):  # two alarms each: the bound exactly
        retire(store, n, MEMBER, "eu-west-1")
    retire(store, 99_999, HOME, "us-east-1")  # two more, past the bound
    deps = cast(LedgerDeps, SimpleNamespace(table=table))
    alarms = Deletes()
    first = delete_retired_alarms(deps, alarms)
    assert len(first) == RETIRED_PER_SWEEP
    # Listed by account first: the home account's two come first, then 998 of the member's.
    assert [(a, r, len(names)) for a, r, names in alarms.calls] == [
        (HOME, "us-east-1", 2),
        (MEMBER, "eu-west-1", RETIRED_PER_SWEEP - 2),
    ]
    left = list(store.retired_alarms())
    assert len(left) == 2 and {a.account for a in left} == {MEMBER}
    alarms.calls.clear()
    assert len(delete_retired_alarms(deps, alarms)) == 2
    assert [(a, r, len(names)) for a, r, names in alarms.calls] == [(MEMBER, "eu-west-1", 2)]
    assert list(store.retired_alarms()) == []
    assert delete_retired_alarms(deps, alarms) == []


def test_an_account_whose_delete_fails_keeps_its_alarms_for_the_next_sweep() -> None:
    class MemberRefuses(Deletes):
        def delete(self, names: list[str], account: str = "", region: str = "") -> None:
            if account == MEMBER:
                raise RuntimeError("AccessDenied: the member role cannot be assumed")
            super().delete(names, account, region)

    table = MemoryTable()
    store = AlarmStore(table)
    retire(store, 1, MEMBER, "eu-west-1")
    retire(store, 2, HOME, "us-east-1")
    deps = cast(LedgerDeps, SimpleNamespace(table=table))
    deleted = delete_retired_alarms(deps, MemberRefuses())
    assert len(deleted) == 2 and all(f":{HOME}:" in arn for arn in deleted)
    assert {a.account for a in store.retired_alarms()} == {MEMBER}
