"""In-memory answers to the AWS calls the local emulator cannot make, from the scenario.

moto has no DescribeCapacityReservations, no capacity-block lifecycle, and its
DescribeTrainingJob has no billable or warm-pool seconds. Replay answers the same protocols
(``shared.adapters.sagemaker.TrainingJobs``, ``shared.adapters.reservations.CapacityReservations``)
from the scenario's ``training_jobs`` and ``capacity_reservations`` and its events, as AWS
would at the simulated time. Local-only code: no function bundle carries it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal

from pydantic import ValidationError

from costtracker.scenario import CapacityReservationSpec, Scenario, TrainingJobSpec
from shared.adapters.reservations import ReservationNotFound
from shared.adapters.sagemaker import TrainingJobNotFound
from shared.domain.clock import Clock
from shared.domain.managed.models import (
    LIVE_RESERVATION_STATES,
    CapacityReservation,
    InstanceReservationRef,
    ReservationState,
    TrainingJobDescription,
)
from shared.events.sagemaker import TrainingJobStateChangeEvent

_STATUS_RANK = {"InProgress": 0, "Stopping": 1, "Completed": 2, "Failed": 2, "Stopped": 2}


class ScenarioTrainingJobs:
    """``TrainingJobs`` from the scenario: status, resources and times from its SageMaker
    events up to the clock's now; billable, training and warm-pool seconds from its
    ``training_jobs`` entry once the job has ended (as DescribeTrainingJob: none before)."""

    def __init__(self, scenario: Scenario, clock: Clock) -> None:
        self._region = scenario.region
        self._clock = clock
        self._specs: dict[str, TrainingJobSpec] = {j.name: j for j in scenario.training_jobs}
        self._events: dict[str, list[TrainingJobStateChangeEvent]] = {}
        for raw in scenario.events:
            if not (isinstance(raw, dict) and raw.get("source") == "aws.sagemaker"):
                continue
            try:
                event = TrainingJobStateChangeEvent.model_validate(raw)
            except ValidationError:
                continue  # the handler reports a malformed event; the fake just skips it
            self._events.setdefault(event.detail.training_job_name, []).append(event)

    def describe(
        self, name: str, *, event_tags: Mapping[str, str] | None = None
    ) -> TrainingJobDescription:
        now = self._clock.now()
        seen = [e for e in self._events.get(name, []) if e.time <= now]
        if not seen:
            raise TrainingJobNotFound(name, self._region)
        latest = max(seen, key=lambda e: (e.time, _STATUS_RANK[e.detail.training_job_status]))
        described = latest.description()
        spec = self._specs.get(name)
        tags = dict(event_tags) if event_tags else (spec.tags if spec else described.tags)
        update: dict[str, object] = {"tags": tags}
        if spec is not None:
            update.update(
                instance_type=spec.instance_type,
                instance_count=spec.instance_count,
                volume_size_gb=spec.volume_gb,
                managed_spot=spec.spot,
            )
            if described.terminal:
                update.update(
                    billable_seconds=spec.billed_seconds,
                    training_seconds=spec.training_seconds,
                    warm_pool_retained_billable_seconds=spec.warm_pool_seconds,
                )
        return TrainingJobDescription.model_validate({**described.model_dump(), **update})


def _state_at(spec: CapacityReservationSpec, now: datetime) -> ReservationState:
    if now < spec.start:
        return "scheduled"
    if spec.end is not None and now >= spec.end:
        return "expired"
    return "active"


class ScenarioCapacityReservations:
    """``CapacityReservations`` from the scenario's ``capacity_reservations`` (state by the
    clock: scheduled before its start, active inside, expired after), and which reservation
    each scenario instance was launched into."""

    def __init__(self, scenario: Scenario, clock: Clock) -> None:
        self._account = scenario.account
        self._clock = clock
        self._specs = {r.reservation_id: r for r in scenario.capacity_reservations}
        self._instances = {
            i.instance_id: InstanceReservationRef(
                instance_id=i.instance_id,
                reservation_id=i.capacity_reservation_id,
                capacity_block=i.lifecycle == "capacity-block",
            )
            for i in scenario.instances
            if i.capacity_reservation_id
        }

    def _model(self, spec: CapacityReservationSpec) -> CapacityReservation:
        return CapacityReservation(
            reservation_id=spec.reservation_id,
            kind=spec.kind,
            instance_type=spec.instance_type,
            instance_count=spec.instance_count,
            start=spec.start,
            end=spec.end,
            state=_state_at(spec, self._clock.now()),
            tags=dict(spec.tags),
            account=self._account,
        )

    def describe(self, reservation_id: str) -> CapacityReservation:
        spec = self._specs.get(reservation_id)
        if spec is None:
            raise ReservationNotFound(reservation_id)
        return self._model(spec)

    def list_live(self) -> list[CapacityReservation]:
        models = [self._model(s) for _, s in sorted(self._specs.items())]
        return [m for m in models if m.state in LIVE_RESERVATION_STATES]

    def instance_reservation(self, instance_id: str) -> InstanceReservationRef | None:
        return self._instances.get(instance_id)

    def fees_by_id(self) -> dict[str, Decimal]:
        """The configured upfront fees (a block without one is unpriced)."""
        return {
            rid: spec.upfront_fee_usd
            for rid, spec in self._specs.items()
            if spec.upfront_fee_usd is not None
        }
