"""Which alarm may speak for an instance's idleness: only the one the tracker last put.

When the tracker puts an instance's alarm (PutMetricAlarm, in the instance's own account
and region) it records what it put: the alarm's ARN (account, region, name), its one
metric (namespace, name, dimensions, period, statistic) and its threshold. A state-change
event speaks only if its ``resources[0]`` ARN, its ``detail.configuration.metrics`` and
the threshold in its ``state.reasonData`` all match that record. An alarm made by anyone
else, even under the tracker's name and in the same account (after deleting the
tracker's), watching another metric or with another threshold, is not the tracker's.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation

from shared.domain.base import Frozen
from shared.domain.idle import Signal


class AlarmIdentity(Frozen):
    """What tells one metric alarm from another in its state-change events."""

    account: str
    region: str
    name: str
    namespace: str
    metric: str
    dimensions: tuple[tuple[str, str], ...] = ()
    period: int | None = None
    stat: str | None = None
    threshold: Decimal | None = None

    @property
    def arn(self) -> str:
        return alarm_arn(self.account, self.region, self.name)


class PutAlarm(Frozen):
    """One alarm as the tracker last put it (``deleted_at``: when the tracker retired
    it, at its instance's stop; its state changes until then still count, e.g. a late
    ALARM of the run just ended). ``delete_pending``: retired, but still in CloudWatch
    until the hourly sweep deletes it. ``definition``: a digest of the whole request put
    (``AlarmSpec.definition``; None in records made before digests were kept), so that
    the same alarm is not put again. ``version``: how many times the record was put, so
    that the sweep's delete can tell a record put again meanwhile."""

    identity: AlarmIdentity
    instance_id: str
    signal: Signal
    put_at: datetime
    deleted_at: datetime | None = None
    delete_pending: bool = False
    definition: str | None = None
    version: int = 0


def partition_of(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def alarm_arn(account: str, region: str, name: str) -> str:
    return f"arn:{partition_of(region)}:cloudwatch:{region}:{account}:alarm:{name}"


def parse_alarm_arn(arn: str) -> tuple[str, str, str] | None:
    """(account, region, name) of ``arn:<partition>:cloudwatch:<region>:<account>:alarm:<name>``."""
    parts = arn.split(":", 6)
    if len(parts) != 7 or parts[0] != "arn" or parts[2] != "cloudwatch" or parts[5] != "alarm":
        return None
    _, _, _, region, account, _, name = parts
    if not (region and account and name):
        return None
    return account, region, name


def threshold_of(value: object) -> Decimal | None:
    """A threshold as a finite Decimal (``50.0`` and ``50`` are the same threshold)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def why_not_ours(put: PutAlarm | None, seen: AlarmIdentity | None, state_at: datetime) -> str:
    """Empty when ``seen`` (from a state-change event whose state is timed ``state_at``)
    is the alarm the tracker last put; else why it is not (for the log)."""
    if seen is None:
        return "not one metric alarm with an ARN"
    if put is None:
        return "the tracker put no alarm under this ARN"
    ours = put.identity
    if ours.threshold is None or seen.threshold is None:
        return "no threshold to compare"
    for field in ("account", "region", "name", "namespace", "metric", "dimensions"):
        if getattr(ours, field) != getattr(seen, field):
            return f"{field} differs from what the tracker put"
    if (ours.period, ours.stat) != (seen.period, seen.stat):
        return "period or statistic differs from what the tracker put"
    if ours.threshold != seen.threshold:
        return "threshold differs from what the tracker put"
    if put.deleted_at is not None and state_at > put.deleted_at:
        return "the tracker deleted this alarm before this state"
    return ""
