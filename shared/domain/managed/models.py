"""Frozen models of managed training and reserved capacity (docs/cost-rules.md "Managed training and
reserved capacity").

No AWS code here: the adapters in ``shared.adapters`` build these from DescribeTrainingJob
and DescribeCapacityReservations (or the replay's fakes from a scenario), the pure rules in
``shared.domain.managed.training_cost`` and ``reservation_cost`` turn them into money.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import AwareDatetime, Field, field_validator, model_validator

from shared.domain.base import Frozen
from shared.domain.clock import utc

TrainingJobStatus = Literal["InProgress", "Completed", "Failed", "Stopping", "Stopped"]
# Statuses after which DescribeTrainingJob's billable seconds are final.
TERMINAL_TRAINING_STATUSES: frozenset[str] = frozenset({"Completed", "Failed", "Stopped"})

ReservationKind = Literal["capacity-block", "odcr"]
# DescribeCapacityReservations ``State`` values (botocore's enum, 2026).
ReservationState = Literal[
    "active",
    "expired",
    "cancelled",
    "pending",
    "failed",
    "scheduled",
    "payment-pending",
    "payment-failed",
    "assessing",
    "delayed",
    "unsupported",
    "cancelling",
    "unavailable",
]
# Plausibility bounds of SageMaker's figures, within what AWS allows: a training job runs
# at most 28 days by default (an adjustable quota), so a year of seconds is far beyond any
# real job and a larger value is a unit mistake or a forged event; SageMaker's own limits
# for warm pools (KeepAlivePeriodInSeconds 0-3600) and queueing (MaxPendingTimeInSeconds
# at most 28 days); an ML storage volume is an EBS volume (16 TiB at most); no training
# job runs 10,000 instances.
MAX_TRAINING_SECONDS = 366 * 24 * 3600
MAX_KEEP_ALIVE_SECONDS = 3600
MAX_PENDING_SECONDS = 28 * 24 * 3600
MAX_VOLUME_SIZE_GB = 16_384
MAX_TRAINING_INSTANCES = 10_000

# States in which a reservation is (or will be) reserved capacity that someone pays for.
LIVE_RESERVATION_STATES: frozenset[str] = frozenset(
    {"active", "scheduled", "pending", "payment-pending", "assessing", "delayed", "cancelling"}
)


def _utc_or_none(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


class TrainingJobDescription(Frozen):
    """What DescribeTrainingJob says of a training job (billable figures once it ended).

    ``billable_seconds``, ``training_seconds`` and ``warm_pool_retained_billable_seconds``
    are None until SageMaker reports them (a job in progress has none).
    """

    name: str = Field(min_length=1, max_length=63)
    status: TrainingJobStatus
    instance_type: str = Field(min_length=1)
    instance_count: int = Field(ge=1, le=MAX_TRAINING_INSTANCES)
    volume_size_gb: int = Field(ge=0, le=MAX_VOLUME_SIZE_GB)
    training_start: AwareDatetime | None = None
    training_end: AwareDatetime | None = None
    billable_seconds: int | None = Field(default=None, ge=0, le=MAX_TRAINING_SECONDS)
    training_seconds: int | None = Field(default=None, ge=0, le=MAX_TRAINING_SECONDS)
    warm_pool_retained_billable_seconds: int | None = Field(
        default=None, ge=0, le=MAX_TRAINING_SECONDS
    )
    managed_spot: bool = False
    tags: dict[str, str] = Field(default_factory=dict)
    region: str = ""
    account: str = ""

    @field_validator("training_start", "training_end")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return _utc_or_none(value)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_TRAINING_STATUSES


class CapacityReservation(Frozen):
    """A Capacity Block for ML (``kind`` capacity-block) or an On-Demand Capacity Reservation
    (``kind`` odcr). ``end`` is None for an open-ended ODCR."""

    reservation_id: str = Field(pattern=r"^cr-[0-9a-zA-Z]{8,17}$")
    kind: ReservationKind
    instance_type: str = Field(min_length=1)
    instance_count: int = Field(ge=0)
    start: AwareDatetime
    end: AwareDatetime | None = None
    state: ReservationState = "active"
    tags: dict[str, str] = Field(default_factory=dict)
    availability_zone: str = ""
    account: str = ""
    instance_platform: str = "Linux/UNIX"

    @field_validator("start")
    @classmethod
    def _utc_start(cls, value: datetime) -> datetime:
        return utc(value)

    @field_validator("end")
    @classmethod
    def _utc_end(cls, value: datetime | None) -> datetime | None:
        return _utc_or_none(value)

    @model_validator(mode="after")
    def _window(self) -> CapacityReservation:
        if self.end is not None and self.end <= self.start:
            raise ValueError(f"{self.reservation_id}: end must be after start")
        if self.kind == "capacity-block" and self.end is None:
            raise ValueError(f"{self.reservation_id}: a Capacity Block has an end date")
        return self

    @property
    def block_seconds(self) -> int | None:
        """The reserved window's length in seconds (None: open-ended ODCR)."""
        if self.end is None:
            return None
        return int((self.end - self.start).total_seconds())


class InstanceReservationRef(Frozen):
    """An instance's place in a reservation, from DescribeInstances
    (``InstanceLifecycle: capacity-block`` and ``CapacityReservationId``)."""

    instance_id: str
    reservation_id: str
    capacity_block: bool


class ReservationUse(Frozen):
    """One running span of one instance inside a reservation (``end`` None: still running).

    The ledger builds these from its segments of the instances whose
    ``InstanceReservationRef`` names the reservation.
    """

    instance_id: str
    job_id: str
    start: AwareDatetime
    end: AwareDatetime | None = None

    @field_validator("start")
    @classmethod
    def _utc_start(cls, value: datetime) -> datetime:
        return utc(value)

    @field_validator("end")
    @classmethod
    def _utc_end(cls, value: datetime | None) -> datetime | None:
        return _utc_or_none(value)
