"""Measured utilization per instance-hour (cost rule 10), and per instance the sum of its
closed hours in the job's partition, so that a job view has it from the job's one Query
(one item per instance) and never asks CloudWatch.

| record | pk | sk |
|---|---|---|
| one hour of one instance | UTIL#<account>#<instance> | H#<hour> |
| the instance's closed hours summed, its open hours inline | JOB#<job> | U#<account>#<instance> |

An hour is *closed* when it was read 15 minutes or more after it ended (agent metrics
arrive late); a closed hour is written once and added to the total once (the hour's
put is conditional on it not being closed yet, in the same transaction as the add). An
hour read earlier is *open*: kept on its own item and inline in the total (``open_<hour>``)
until a later read closes it; open hours are few (the daily summary closes the day's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import NamedTuple

from shared.adapters import keys
from shared.adapters.table import Below, ConditionFailed, Item, Put, Table, Update
from shared.domain.utilization import Measured

KIND = "utilization_total"
OPEN = "open_"
# An instance and the hours asked of it: (account, instance id, hours, ascending).
HoursAsked = tuple[str, str, Sequence[datetime]]


def util_pk(account: str, instance_id: str) -> str:
    return f"UTIL#{account}#{instance_id}"


def total_key(job_id: str, account: str, instance_id: str) -> tuple[str, str]:
    return keys.job_pk(job_id), f"U#{account}#{instance_id}"


def hour_sk(hour: datetime) -> str:
    return f"H#{keys.iso(hour)}"


@lru_cache(maxsize=512)
def _open_name(hour: datetime) -> str:
    return OPEN + hour.astimezone(UTC).strftime("%Y%m%d%H")


class InstanceHour(NamedTuple):
    """What one read of an hour measured of one instance (``record_read``)."""

    account: str
    instance_id: str
    job_id: str
    measured: Measured


class _HourRead:
    """The texts every instance's records of one read of an hour share."""

    def __init__(self, hour: datetime, read_at: datetime, closed: bool) -> None:
        self.hour = keys.iso(hour)
        self.sk = f"H#{self.hour}"
        self.read_at = keys.iso(read_at)
        self.closed = 1 if closed else 0
        self.open_name = _open_name(hour)


_NOT_CLOSED = (Below("closed", 1),)


def _measured(value: object) -> Measured:
    weighted, _, covered = str(value).partition("|")
    return Measured(Decimal(weighted), int(covered or 0))


class UtilizationStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def record(
        self,
        account: str,
        instance_id: str,
        job_id: str,
        hour: datetime,
        measured: Measured,
        *,
        closed: bool,
        read_at: datetime,
    ) -> bool:
        """Keep what one read of an hour measured; False when the hour was closed already
        (a retry, or a second read: nothing changes)."""
        read = _HourRead(hour, read_at, closed)
        return self._record(read, InstanceHour(account, instance_id, job_id, measured))

    def record_read(
        self, hour: datetime, read_at: datetime, closed: bool, measured: Iterable[InstanceHour]
    ) -> list[bool]:
        """``record`` for each instance one read of ``hour`` measured, in order: the
        hour's key and times are formatted once for the read, not once per instance."""
        read = _HourRead(hour, read_at, closed)
        return [self._record(read, one) for one in measured]

    def _record(self, read: _HourRead, one: InstanceHour) -> bool:
        account, instance_id, job_id, measured = one
        weighted, covered = measured.weighted, measured.covered_seconds
        put = Put(
            {
                "pk": util_pk(account, instance_id),
                "sk": read.sk,
                "kind": "utilization_hour",
                "job_id": job_id,
                "hour": read.hour,
                "weighted": weighted,
                "covered_seconds": covered,
                "closed": read.closed,
                "read_at": read.read_at,
            },
            conditions=_NOT_CLOSED,
        )
        total_pk, total_sk = total_key(job_id, account, instance_id)
        names = {"kind": KIND, "account": account, "instance_id": instance_id}
        if read.closed:
            total = Update(
                total_pk,
                total_sk,
                add={"weighted": weighted, "covered_seconds": covered},
                set=names,
                remove=(read.open_name,),
            )
        else:
            names[read.open_name] = f"{weighted}|{covered}"
            total = Update(total_pk, total_sk, set=names)
        try:
            self.table.transact([put, total])
        except ConditionFailed:
            return False
        return True

    def closed_hours(self, asks: Sequence[HoursAsked]) -> set[tuple[str, str, datetime]]:
        """Which of the asked hours, as (account, instance id, hour), are closed already.
        An instance asked for one hour (the hourly read) is read by its key, all such
        keys together (BatchGetItem, 100 keys a call, rather than a Query per instance;
        eventually consistent as the Query is, and the same read units for one item);
        one asked for more (a day's) in one Query over their range, which reads them at
        the cost of their size where a batch would pay per item."""
        closed: set[tuple[str, str, datetime]] = set()
        by_key: dict[tuple[str, str], tuple[str, str, datetime]] = {}
        for account, instance_id, hours in asks:
            if len(hours) == 1:
                by_key[(util_pk(account, instance_id), hour_sk(hours[0]))] = (
                    account,
                    instance_id,
                    hours[0],
                )
            elif hours:
                asked = {keys.iso(hour): hour for hour in hours}
                items = self.table.query(
                    util_pk(account, instance_id),
                    sk_from=hour_sk(min(hours)),
                    sk_to=hour_sk(max(hours)),
                    attributes=("hour", "closed"),
                )
                closed |= {
                    (account, instance_id, asked[str(i["hour"])])
                    for i in items
                    if int(i.get("closed", 0)) and str(i["hour"]) in asked
                }
        if by_key:
            for item in self.table.batch_get(list(by_key)):
                if int(item.get("closed", 0)):
                    closed.add(by_key[(str(item["pk"]), str(item["sk"]))])
        return closed

    def between(self, account: str, instance_id: str, lo: datetime, hi: datetime) -> Measured:
        """The hours in [lo, hi) (a day: at most 24 items, one Query)."""
        total, before = Measured(), keys.iso(hi)
        for item in self.table.query(
            util_pk(account, instance_id), sk_from=hour_sk(lo), sk_to=hour_sk(hi) + "~"
        ):
            if str(item["hour"]) < before:
                total = total + _item_measured(item)
        return total


def _item_measured(item: Item) -> Measured:
    return Measured(Decimal(item.get("weighted", 0)), int(item.get("covered_seconds", 0)))


def measured_total(item: Item) -> tuple[tuple[str, str], Measured]:
    """(account, instance id) and what was measured of it so far, from its total item
    (closed hours summed, open hours inline)."""
    measured = _item_measured(item)
    for name, value in item.items():
        if name.startswith(OPEN):
            measured = measured + _measured(value)
    return (str(item["account"]), str(item["instance_id"])), measured
