"""A SageMaker training job's head record and what it accrues (docs/cost-rules.md "Managed
training and
reserved capacity"). Pure: no AWS, the clock passed in.

The head keeps the job's best-known state (terminal status is final; otherwise the latest
status by event time), its resources and times, the rates pinned when it was first seen,
and, once the job ended, DescribeTrainingJob's billed figures. Its accrual:

- while not billed: instance = count x rate per second from TrainingStartTime (linear; to
  TrainingEndTime once known), ``instance_seconds`` the same seconds x count;
- billed: instance = billable seconds x count x rate (fixed), warm pool = retained billable
  seconds x count x rate, ``instance_seconds`` = billable x count;
- ``ml_storage`` = count x GB x $/GB-month on the calendar-month clock over the training time;
- an unknown rate is an ``unpriced:sagemaker:<type>:<region>`` marker, never 0.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from pydantic import Field

from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.base import Frozen, Rate
from shared.domain.clock import MONTH_UNITS, SECONDS_PER_HOUR, month_clock, seconds_clock
from shared.domain.managed.models import TERMINAL_TRAINING_STATUSES, TrainingJobDescription
from shared.domain.segments import unpriced_component

MAX_SEEN = 16
STATUS_RANK = {"InProgress": 0, "Stopping": 1, "Completed": 2, "Failed": 2, "Stopped": 2}
# Components of their own (a job's managed-spot saving = 1 - billable / training seconds).
SPOT_BILLABLE = "sm_spot_billable_seconds"
SPOT_TRAINING = "sm_spot_training_seconds"
N_TRAINING = "n_training_jobs"


class TrainingHead(Frozen):
    job_id: str
    account: str
    region: str
    name: str
    status: str
    status_at: datetime
    instance_type: str
    instance_count: int = Field(ge=1)
    volume_gb: int = Field(ge=0)
    managed_spot: bool = False
    training_start: datetime | None = None
    training_end: datetime | None = None
    billed: bool = False
    billable_seconds: int | None = None
    training_seconds: int | None = None
    warm_pool_seconds: int | None = None
    rate: Rate | None = None
    storage_rate: Rate | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    first_event_at: datetime
    seen: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    version: int = 0

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_TRAINING_STATUSES

    def unpriced_key(self) -> str:
        return f"sagemaker:{self.instance_type}:{self.region}"

    def same_as(self, other: TrainingHead) -> bool:
        """Equal but for the event ids seen and the version (nothing to write)."""
        skip = {"seen", "version"}
        return self.model_dump(exclude=skip) == other.model_dump(exclude=skip)


def merge(
    head: TrainingHead | None,
    event: TrainingJobDescription,
    at: datetime,
    event_id: str,
    job_id: str,
) -> TrainingHead:
    """Fold one state-change event into the head: a terminal status is final, otherwise the
    later (status rank, event time) wins; times and resources are kept once known."""
    if head is None:
        return TrainingHead(
            job_id=job_id,
            account=event.account,
            region=event.region,
            name=event.name,
            status=event.status,
            status_at=at,
            instance_type=event.instance_type,
            instance_count=event.instance_count,
            volume_gb=event.volume_size_gb,
            managed_spot=event.managed_spot,
            training_start=event.training_start,
            training_end=event.training_end,
            tags=dict(event.tags),
            first_event_at=at,
            seen=(event_id,),
        )
    update: dict[str, object] = {
        "seen": (*head.seen, event_id)[-MAX_SEEN:],
        "first_event_at": min(head.first_event_at, at),
        "training_start": head.training_start or event.training_start,
        "training_end": head.training_end or event.training_end,
    }
    newer = (STATUS_RANK[event.status], at) > (STATUS_RANK[head.status], head.status_at)
    if not head.terminal and newer:
        update.update(status=event.status, status_at=at)
    return head.model_copy(update=update)


def foreign_description(head: TrainingHead, described: TrainingJobDescription) -> str:
    """Why a description is not of this head's job (empty: it is): its ARN names
    another account or region, or none (a same-named job elsewhere is another job)."""
    if (described.account, described.region) == (head.account, head.region):
        return ""
    where = f"{described.account or '?'}/{described.region or '?'}"
    return (
        f"DescribeTrainingJob answered for {described.name} in {where}, not in "
        f"{head.account}/{head.region}: refused; cost accrued to its end (an estimate)"
    )


def with_billing(head: TrainingHead, described: TrainingJobDescription) -> TrainingHead:
    """DescribeTrainingJob's figures once the job ended (billable seconds present), only
    from a description of this very job (``foreign_description``): another one is set
    aside with a warning and the job stays an estimate."""
    refused = foreign_description(head, described)
    if refused:
        if refused in head.warnings:
            return head
        return head.model_copy(update={"warnings": (*head.warnings, refused)})
    if not (described.terminal and described.billable_seconds is not None):
        return head
    return head.model_copy(
        update={
            "billed": True,
            "billable_seconds": described.billable_seconds,
            "training_seconds": described.training_seconds,
            "warm_pool_seconds": described.warm_pool_retained_billable_seconds or 0,
            "instance_type": described.instance_type or head.instance_type,
            "instance_count": described.instance_count,
            "volume_gb": described.volume_size_gb,
            "managed_spot": described.managed_spot,
            "training_start": head.training_start or described.training_start,
            "training_end": head.training_end or described.training_end,
        }
    )


def _storage_window(head: TrainingHead) -> tuple[datetime, datetime | None] | None:
    start = head.training_start
    end = head.training_end
    if start is None and end is not None and head.training_seconds is not None:
        start = end - timedelta(seconds=head.training_seconds)
    if start is None:
        return None
    if end is None and head.terminal and head.training_seconds is not None:
        end = start + timedelta(seconds=head.training_seconds)
    if end is None and head.terminal:
        end = max(start, head.status_at)
    return start, end


def training_accrual(head: TrainingHead) -> Accrual:
    """What the training job contributes to its job's rollup (module docstring)."""
    out = Accrual()
    count = head.instance_count
    out.fixed(N_TRAINING, acc.SECONDS_CLOCK, 1, 1)
    out.fixed("n_instances", acc.SECONDS_CLOCK, 1, 1)
    if not head.terminal:
        out.fixed("n_running", acc.SECONDS_CLOCK, 1, 1)
    elif head.status == "Completed":
        out.fixed("n_terminated", acc.SECONDS_CLOCK, 1, 1)
    rate = head.rate.effective_usd if head.rate is not None else None
    if rate is None:
        out.fixed(unpriced_component(head.unpriced_key()), acc.SECONDS_CLOCK, 1, 1)
    hour = SECONDS_PER_HOUR
    if head.billed:
        seconds = (head.billable_seconds or 0) * count
        warm = (head.warm_pool_seconds or 0) * count
        out.fixed(acc.SECONDS, acc.SECONDS_CLOCK, 1, seconds)
        if rate is not None:
            for component in (acc.INSTANCE, acc.INSTANCE_LIST):
                out.fixed(component, acc.SECONDS_CLOCK, hour, rate * seconds)
            out.fixed(acc.WARM_POOL, acc.SECONDS_CLOCK, hour, rate * warm)
        if head.managed_spot and head.training_seconds:
            out.fixed(SPOT_BILLABLE, acc.SECONDS_CLOCK, 1, head.billable_seconds or 0)
            out.fixed(SPOT_TRAINING, acc.SECONDS_CLOCK, 1, head.training_seconds)
    elif head.training_start is not None:
        start = seconds_clock(head.training_start)
        end = head.training_end
        if end is None and head.terminal:
            end = max(head.training_start, head.status_at)
        if end is not None:
            seconds = max(0, seconds_clock(end) - start) * count
            out.fixed(acc.SECONDS, acc.SECONDS_CLOCK, 1, seconds)
            if rate is not None:
                for component in (acc.INSTANCE, acc.INSTANCE_LIST):
                    out.fixed(component, acc.SECONDS_CLOCK, hour, rate * seconds)
        else:
            out.linear(acc.SECONDS, acc.SECONDS_CLOCK, 1, count, start)
            if rate is not None:
                for component in (acc.INSTANCE, acc.INSTANCE_LIST):
                    out.linear(component, acc.SECONDS_CLOCK, hour, rate * count, start)
    window = _storage_window(head)
    if window is not None and head.volume_gb > 0:
        if head.storage_rate is None:
            out.fixed(unpriced_component(f"sagemaker_storage:{head.region}"), "s", 1, 1)
        else:
            weight = head.storage_rate.effective_usd * head.volume_gb * count
            begin = month_clock(window[0])
            if window[1] is None:
                out.linear(acc.ML_STORAGE, acc.MONTH_CLOCK, MONTH_UNITS, weight, begin)
            else:
                span = max(0, month_clock(window[1]) - begin)
                out.fixed(acc.ML_STORAGE, acc.MONTH_CLOCK, MONTH_UNITS, weight * span)
    return out


def managed_spot_saving(a: Accrual, now: datetime) -> Decimal | None:
    """1 - billable / training seconds over the job's ended managed-spot training jobs."""
    training = a.value(SPOT_TRAINING, now)
    if not training:
        return None
    return 1 - a.value(SPOT_BILLABLE, now) / training


def training_between(
    head: TrainingHead, lo: datetime, hi: datetime, now: datetime
) -> dict[str, Decimal]:
    """The head's parts inside (lo, hi] (a UTC day): each part spread evenly over the time
    it covers (instance over the training time, warm pool over the retained time after it),
    so consecutive windows add up to its totals."""
    out = {"instance": Decimal(0), "ml_storage": Decimal(0), "warm_pool": Decimal(0)}
    a = training_accrual(head)
    window = _storage_window(head)
    if window is None:
        return out
    start, end = window[0], window[1] or now

    def share(amount: Decimal, s: datetime, e: datetime) -> Decimal:
        if e <= s:
            return amount if lo < s <= hi else Decimal(0)
        inside = min(hi, e) - max(lo, s)
        if inside <= timedelta(0):
            return Decimal(0)
        return amount * Decimal(inside.total_seconds()) / Decimal((e - s).total_seconds())

    out["instance"] = share(a.value(acc.INSTANCE, now), start, end)
    out["ml_storage"] = share(a.value(acc.ML_STORAGE, now), start, end)
    warm_end = end + timedelta(seconds=head.warm_pool_seconds or 0)
    out["warm_pool"] = share(a.value(acc.WARM_POOL, now), end, warm_end)
    return out
