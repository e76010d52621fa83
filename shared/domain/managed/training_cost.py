"""Pure cost rules for SageMaker managed training (docs/cost-rules.md "Managed training and reserved
capacity"). Decimal money, the clock passed in, no AWS code.

A price that is not known is ``None`` (``unpriced``), never 0: the part it prices is None,
what it would price is named in ``unpriced``, and the priced parts still add up ("at least").

SageMaker training job (``training_job_cost``):
- while ``InProgress``/``Stopping``: instance = count x rate x (now - TrainingStartTime) / 3600,
  an estimate (``billed`` False);
- at ``Completed``/``Failed``/``Stopped`` with DescribeTrainingJob's figures: instance =
  BillableTimeInSeconds x count x rate / 3600 (managed spot already discounted);
  ``managed_spot_saving`` = 1 - billable / training seconds; ``instance_seconds`` = billable x
  count;
- ``ml_storage`` = count x volume GB x $/GB-month, per second over calendar months (each month
  by its own length, as EBS), TrainingStartTime to TrainingEndTime (or now);
- ``warm_pool`` = retained billable seconds x count x rate / 3600.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Literal

from shared.domain.base import Frozen
from shared.domain.managed.costs_common import (
    DEFAULT_JOB_TAG_KEYS,
    HOUR,
    first_job_tag,
    prorate_monthly,
    whole_seconds,
)
from shared.domain.managed.models import TrainingJobDescription

JobStatus = Literal["running", "stopped", "complete"]
_STATUS: dict[str, JobStatus] = {
    "InProgress": "running",
    "Stopping": "running",
    "Completed": "complete",
    "Failed": "stopped",
    "Stopped": "stopped",
}


def sagemaker_job_id(
    name: str, tags: Mapping[str, str], job_tag_keys: Sequence[str] = DEFAULT_JOB_TAG_KEYS
) -> str:
    """The first configured job tag in the event's ``Tags``, else ``sagemaker:<name>``."""
    return first_job_tag(tags, job_tag_keys) or f"sagemaker:{name}"


def sagemaker_job_status(training_job_status: str) -> JobStatus:
    """Completed -> complete; Failed, Stopped -> stopped; InProgress, Stopping -> running."""
    try:
        return _STATUS[training_job_status]
    except KeyError:
        raise ValueError(f"unknown TrainingJobStatus {training_job_status!r}") from None


class TrainingJobCost(Frozen):
    """One training job's figures. Parts are None when their price is unknown."""

    job_id: str
    training_job_name: str
    status: JobStatus
    instance_type: str
    instance_count: int
    instance_usd: Decimal | None
    ml_storage_usd: Decimal | None
    warm_pool_usd: Decimal | None
    instance_seconds: int
    warm_pool_instance_seconds: int
    managed_spot_saving: Decimal | None
    # True: from DescribeTrainingJob's billable seconds; False: accrued to now (an estimate).
    billed: bool
    unpriced: tuple[str, ...] = ()

    @property
    def total_usd(self) -> Decimal:
        """instance + ml_storage + warm_pool, of the parts that are priced ("at least")."""
        parts = (self.instance_usd, self.ml_storage_usd, self.warm_pool_usd)
        return sum((p for p in parts if p is not None), Decimal(0))

    @property
    def complete(self) -> bool:
        return not self.unpriced

    def cost_usd(self) -> dict[str, Decimal | None]:
        """The contract's ``cost_usd`` keys this job has (``total`` per the contract's rule)."""
        return {
            "total": self.total_usd,
            "instance": self.instance_usd,
            "ml_storage": self.ml_storage_usd,
            "warm_pool": self.warm_pool_usd,
        }


def _storage_window(job: TrainingJobDescription, now: datetime) -> tuple[datetime, datetime] | None:
    start = job.training_start
    if start is None and job.training_end is not None and job.training_seconds is not None:
        start = job.training_end - timedelta(seconds=job.training_seconds)
    if start is None:
        return None
    end = job.training_end if job.training_end is not None else now
    return (start, min(end, now)) if end > start else None


def training_job_cost(
    job: TrainingJobDescription,
    *,
    now: datetime,
    hourly_usd: Decimal | None,
    storage_gb_month_usd: Decimal | None,
    job_tag_keys: Sequence[str] = DEFAULT_JOB_TAG_KEYS,
) -> TrainingJobCost:
    """A SageMaker training job's cost at ``now`` (rules in the module docstring).

    ``hourly_usd`` is SageMaker's own rate for ``job.instance_type`` (an ``ml.*`` rate);
    ``storage_gb_month_usd`` its ML storage rate. A terminal job whose billable seconds are
    not known yet is accrued to its TrainingEndTime and stays ``billed`` False.
    """
    count = job.instance_count
    unpriced: list[str] = []
    billed = job.terminal and job.billable_seconds is not None
    if billed:
        assert job.billable_seconds is not None
        seconds = job.billable_seconds
    elif job.training_start is None:
        seconds = 0  # still starting: SageMaker bills from TrainingStartTime
    else:
        until = min(job.training_end, now) if job.training_end is not None else now
        seconds = whole_seconds(job.training_start, until)
    instance_seconds = seconds * count
    warm_seconds = (job.warm_pool_retained_billable_seconds or 0) * count

    instance_usd: Decimal | None = None
    warm_pool_usd: Decimal | None = Decimal(0) if warm_seconds == 0 else None
    if hourly_usd is not None:
        instance_usd = Decimal(instance_seconds) * hourly_usd / HOUR
        warm_pool_usd = Decimal(warm_seconds) * hourly_usd / HOUR
    else:
        unpriced.append(f"sagemaker {job.instance_type} ({job.region or 'region unknown'})")

    window = _storage_window(job, now)
    ml_storage_usd: Decimal | None = Decimal(0)
    if window is not None and job.volume_size_gb > 0:
        if storage_gb_month_usd is None:
            ml_storage_usd = None
            unpriced.append(f"sagemaker ml storage GB-month ({job.region or 'region unknown'})")
        else:
            monthly = storage_gb_month_usd * job.volume_size_gb * count
            ml_storage_usd = prorate_monthly(monthly, *window)

    saving: Decimal | None = None
    if job.managed_spot and billed and job.training_seconds:
        assert job.billable_seconds is not None
        saving = 1 - Decimal(job.billable_seconds) / Decimal(job.training_seconds)

    return TrainingJobCost(
        job_id=sagemaker_job_id(job.name, job.tags, job_tag_keys),
        training_job_name=job.name,
        status=sagemaker_job_status(job.status),
        instance_type=job.instance_type,
        instance_count=count,
        instance_usd=instance_usd,
        ml_storage_usd=ml_storage_usd,
        warm_pool_usd=warm_pool_usd,
        instance_seconds=instance_seconds,
        warm_pool_instance_seconds=warm_seconds,
        managed_spot_saving=saving,
        billed=billed,
        unpriced=tuple(unpriced),
    )


# -- reservations ----------------------------------------------------------------------------
