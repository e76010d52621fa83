"""What the tracker last put for each of its alarms (``shared.domain.alarm_record``).

| record | pk | sk |
|---|---|---|
| one alarm as last put | ALARM#<account>#<region>#<name> | PUT |
| the last census of alarms under the prefix | ALARM_CENSUS#<account>#<region> | AT |

A live alarm (put, not deleted since) is in the open-index under ``ALARMS`` (sort
``<account>#<region>#<name>``), so the hourly sweep finds the alarms of instances no
longer running in every account and region without listing CloudWatch there. At its
instance's stop the tracker retires it (``deleted_at``) and moves it to
``ALARMS_TO_DELETE``, where the hourly sweep finds it to delete in CloudWatch, up to 100
names a call, in its own account and region. Deleted there, it leaves the index; it
expires (TTL) a week after it was retired: its late state changes still count until
then.

The census (the sweep listing CloudWatch for alarms under the tracker's prefix that it
holds no record of) runs once every ``CENSUS_EVERY``; its record says when it last did.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Protocol

from shared.adapters import keys
from shared.adapters.ledger_schema import OPEN_INDEX, TTL_ATTRIBUTE, index_attributes
from shared.adapters.table import ConditionFailed, Item, Put, Table, Update, VersionIs
from shared.domain.alarm_record import AlarmIdentity, PutAlarm, alarm_arn

ALARMS = "ALARMS"
TO_DELETE = "ALARMS_TO_DELETE"
KIND = "alarm_put"
KEPT_AFTER_DELETE = timedelta(days=7)
# Alarms with no record are made outside the records (before they were kept, or a put
# that landed after its delete): a daily listing finds them, the records do the rest.
CENSUS_EVERY = timedelta(hours=24)


class Placed(Protocol):
    """Where an alarm is (an ``AlarmIdentity``, an ``AlarmSpec``, a ``LiveAlarm``): all
    that names its record."""

    @property
    def account(self) -> str: ...

    @property
    def region(self) -> str: ...

    @property
    def name(self) -> str: ...


@dataclass(frozen=True)
class LiveAlarm:
    """A live alarm as the sweep needs it: where it is and whose instance it watches."""

    account: str
    region: str
    name: str
    instance_id: str

    @property
    def arn(self) -> str:
        return alarm_arn(self.account, self.region, self.name)


@dataclass(frozen=True)
class RetiredAlarm(LiveAlarm):
    """An alarm retired and not yet deleted in CloudWatch, with the record's version
    (a record put again since has another)."""

    version: int


_LIVE_ATTRIBUTES = ("account", "region", "name", "instance_id")
_RETIRED_ATTRIBUTES = (*_LIVE_ATTRIBUTES, "version")


def alarm_key(account: str, region: str, name: str) -> tuple[str, str]:
    return (f"ALARM#{account}#{region}#{keys.part(name)}", "PUT")


def census_key(account: str, region: str) -> tuple[str, str]:
    return (f"ALARM_CENSUS#{account}#{region}", "AT")


def _sort(identity: AlarmIdentity) -> str:
    return f"{identity.account}#{identity.region}#{keys.part(identity.name)}"


def _put_of(item: Item) -> PutAlarm:
    identity = AlarmIdentity(
        account=str(item["account"]),
        region=str(item["region"]),
        name=str(item["name"]),
        namespace=str(item["namespace"]),
        metric=str(item["metric"]),
        dimensions=tuple((str(k), str(v)) for k, v in item.get("dimensions", [])),
        period=int(item["period"]) if item.get("period") is not None else None,
        stat=str(item["stat"]) if item.get("stat") is not None else None,
        threshold=Decimal(str(item["threshold"])) if item.get("threshold") is not None else None,
    )
    deleted = item.get("deleted_at")
    version = item.get("version")
    return PutAlarm(
        identity=identity,
        instance_id=str(item["instance_id"]),
        signal=item["signal"],
        put_at=datetime.fromisoformat(str(item["put_at"])),
        deleted_at=datetime.fromisoformat(str(deleted)) if deleted else None,
        delete_pending=item.get(OPEN_INDEX.partition_key) == TO_DELETE,
        definition=str(item["definition"]) if item.get("definition") is not None else None,
        version=int(version) if version is not None else 0,
    )


class AlarmStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    def put(self, alarm: PutAlarm, replacing: PutAlarm | None = None) -> None:
        """Record an alarm as the tracker puts it (an upsert: the last put wins), one
        version after the record it replaces (``replacing``, as read)."""
        ident = alarm.identity
        pk, sk = alarm_key(ident.account, ident.region, ident.name)
        item: Item = {
            "pk": pk,
            "sk": sk,
            "kind": KIND,
            "account": ident.account,
            "region": ident.region,
            "name": ident.name,
            "namespace": ident.namespace,
            "metric": ident.metric,
            "dimensions": [list(d) for d in ident.dimensions],
            "period": ident.period,
            "stat": ident.stat,
            "threshold": ident.threshold,
            "instance_id": alarm.instance_id,
            "signal": alarm.signal,
            "put_at": keys.iso(alarm.put_at),
            "definition": alarm.definition,
            "version": (replacing.version if replacing is not None else 0) + 1,
            OPEN_INDEX.partition_key: ALARMS,
            OPEN_INDEX.sort_key: _sort(ident),
        }
        self.table.transact([Put({k: v for k, v in item.items() if v is not None})])

    def confirmed(self, identity: AlarmIdentity, definition: str) -> None:
        """CloudWatch accepted the put of ``definition``: only now may a later ``running``
        skip it (a put that failed, or never ran, leaves the record unconfirmed)."""
        pk, sk = alarm_key(identity.account, identity.region, identity.name)
        self.table.transact([Update(pk, sk, set={"definition": definition})])

    def deleted(self, alarm: Placed, at: datetime, *, known: bool = False) -> None:
        """The tracker deleted the alarm at ``at``: out of the sweep's index, kept a week.
        ``known``: the caller has just read the record (no second read)."""
        pk, sk = alarm_key(alarm.account, alarm.region, alarm.name)
        if not known and self.table.get(pk, sk) is None:
            return
        expires = int((at + KEPT_AFTER_DELETE).timestamp())
        self.table.transact(
            [
                Update(
                    pk,
                    sk,
                    set={"deleted_at": keys.iso(at), TTL_ATTRIBUTE: expires},
                    remove=index_attributes(OPEN_INDEX),
                )
            ]
        )

    def retired(self, alarm: Placed, at: datetime) -> None:
        """The tracker retired the alarm at ``at`` (its instance stopped): its state
        changes from then on are not the tracker's; the hourly sweep deletes it in
        CloudWatch (``retired_alarms``). A record put before versions were kept gets one."""
        pk, sk = alarm_key(alarm.account, alarm.region, alarm.name)
        expires = int((at + KEPT_AFTER_DELETE).timestamp())
        self.table.transact(
            [
                Update(
                    pk,
                    sk,
                    set={
                        "deleted_at": keys.iso(at),
                        TTL_ATTRIBUTE: expires,
                        OPEN_INDEX.partition_key: TO_DELETE,
                    },
                    set_if_absent={"version": 1},
                )
            ]
        )

    def retired_alarms(self) -> Iterator[RetiredAlarm]:
        """The alarms retired and not yet deleted in CloudWatch (the open-index, paged)."""
        for item in self.table.query(
            TO_DELETE, index=OPEN_INDEX.name, attributes=_RETIRED_ATTRIBUTES
        ):
            yield RetiredAlarm(
                account=str(item["account"]),
                region=str(item["region"]),
                name=str(item["name"]),
                instance_id=str(item["instance_id"]),
                version=int(item["version"]),
            )

    def deleted_in_cloudwatch(self, alarm: RetiredAlarm) -> bool:
        """The sweep deleted a retired alarm in CloudWatch: out of the index. False, and
        nothing written, when the record was put again since it was read (a restart
        whose alarm the delete may have removed)."""
        pk, sk = alarm_key(alarm.account, alarm.region, alarm.name)
        try:
            self.table.transact(
                [
                    Update(
                        pk,
                        sk,
                        remove=index_attributes(OPEN_INDEX),
                        conditions=[VersionIs(alarm.version)],
                    )
                ]
            )
        except ConditionFailed:
            return False
        return True

    def get(self, account: str, region: str, name: str) -> PutAlarm | None:
        item = self.table.get(*alarm_key(account, region, name))
        return _put_of(item) if item is not None else None

    def census_due(self, account: str, region: str, now: datetime) -> bool:
        """Whether the last census of ``account`` / ``region`` is ``CENSUS_EVERY`` old (or
        there was none)."""
        item = self.table.get(*census_key(account, region))
        if item is None:
            return True
        return now - datetime.fromisoformat(str(item["at"])) >= CENSUS_EVERY

    def census_taken(self, account: str, region: str, at: datetime) -> None:
        """A census of ``account`` / ``region`` was taken at ``at`` (an upsert)."""
        pk, sk = census_key(account, region)
        item: Item = {"pk": pk, "sk": sk, "kind": "alarm_census", "at": keys.iso(at)}
        self.table.transact([Put(item)])

    def live(self) -> Iterator[PutAlarm]:
        """Every alarm put and not deleted since (the open-index, paged)."""
        for item in self.table.query(ALARMS, index=OPEN_INDEX.name):
            yield _put_of(item)

    def live_alarms(self) -> Iterator[LiveAlarm]:
        """``live``, each as where it is and whose: the hourly sweep reads only these four
        attributes of every live alarm, not whole records."""
        for item in self.table.query(ALARMS, index=OPEN_INDEX.name, attributes=_LIVE_ATTRIBUTES):
            yield LiveAlarm(
                account=str(item["account"]),
                region=str(item["region"]),
                name=str(item["name"]),
                instance_id=str(item["instance_id"]),
            )
