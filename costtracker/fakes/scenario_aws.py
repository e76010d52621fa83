"""In-memory answers to the AWS calls the local emulator cannot make, from the scenario.

moto has no DescribeCapacityReservations, no capacity-block lifecycle, and its
DescribeTrainingJob has no billable or warm-pool seconds. Its EC2 gives instances and
volumes ids of its own (a scenario's events name theirs) and has no PlatformDetails;
published moto offers no way to choose them. Replay answers the same protocols
(``shared.adapters.sagemaker.TrainingJobs``, ``shared.adapters.reservations.CapacityReservations``,
``shared.adapters.inventory.Inventory``, ``shared.services.utilization.InstanceStopper``)
from the scenario's ``training_jobs``, ``capacity_reservations``, ``instances`` and its
events, as AWS would at the simulated time. Local-only code: no function bundle carries it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from costtracker.scenario import CapacityReservationSpec, InstanceSpec, Scenario, TrainingJobSpec
from shared.adapters.instance_stops import InstanceNow
from shared.adapters.inventory import InstanceNotFound
from shared.adapters.reservations import ReservationNotFound
from shared.adapters.sagemaker import TrainingJobNotFound
from shared.adapters.training_job_stops import TrainingJobNow
from shared.domain.clock import Clock
from shared.domain.ebs import Volume
from shared.domain.fsx import FileSystemDescription, FileSystemFacts
from shared.domain.instance import InstanceProfile
from shared.domain.managed.models import (
    LIVE_RESERVATION_STATES,
    CapacityReservation,
    InstanceReservationRef,
    ReservationState,
    TrainingJobDescription,
)
from shared.events.fsx import FsxApiCallEvent, created_facts, updated_values
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
        # Jobs the tracker stopped: Stopped at this moment, billed up to it.
        self.stopped_at: dict[str, datetime] = {}
        self.raw: dict[str, list[dict[str, Any]]] = {}
        for raw in scenario.events:
            self.add(raw)

    def add(self, raw: Any) -> None:
        """One SageMaker event of the scenario (or one the replay delivers for a stop)."""
        if not (isinstance(raw, dict) and raw.get("source") == "aws.sagemaker"):
            return
        try:
            event = TrainingJobStateChangeEvent.model_validate(raw)
        except ValidationError:
            return  # the handler reports a malformed event; the fake just skips it
        self._events.setdefault(event.detail.training_job_name, []).append(event)
        self.raw.setdefault(event.detail.training_job_name, []).append(raw)

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
                stopped = self.stopped_at.get(name)
                if stopped is not None and described.training_start is not None:
                    # Stopped by the tracker: SageMaker bills up to the stop.
                    ran = max(0, int((stopped - described.training_start).total_seconds()))
                    update.update(
                        billable_seconds=min(ran, spec.billed_seconds),
                        training_seconds=min(ran, spec.training_seconds),
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


class ScenarioFileSystems:
    """``FileSystems`` (DescribeFileSystems) from the scenario's ``file_systems``, as AWS
    would answer at the simulated time: a file system from its ``created`` on, at the
    size and tier of its latest ``changes`` entry so far (each named with its time, as an
    administrative action's request time); a deleted one with its ``deleted`` time."""

    def __init__(self, scenario: Scenario, clock: Clock) -> None:
        self._scenario = scenario
        self._clock = clock
        self._calls: list[FsxApiCallEvent] = []
        for raw in scenario.events:
            if not (isinstance(raw, dict) and raw.get("source") == "aws.fsx"):
                continue
            try:
                self._calls.append(FsxApiCallEvent.model_validate(raw))
            except ValidationError:
                continue  # the handler reports a malformed event; the fake just skips it

    def _from_calls(self, account: str, region: str, now: datetime) -> list[FileSystemDescription]:
        """File systems the scenario's CloudTrail calls made (AWS lists them too)."""
        calls = sorted(
            (c for c in self._calls if c.detail.event_time <= now and not c.detail.error_code),
            key=lambda c: c.detail.event_time,
        )
        made: dict[str, FileSystemDescription] = {}
        for call in calls:
            if (call.account_id, call.region_name) != (account, region):
                continue
            fs_id = call.detail.file_system_id
            if call.detail.event_name == "CreateFileSystem":
                try:
                    facts = created_facts(call)
                except ValueError:
                    continue
                if facts is not None:
                    made[facts.file_system_id] = FileSystemDescription(facts=facts)
            elif fs_id in made and call.detail.event_name == "UpdateFileSystem":
                storage, throughput = updated_values(call)
                found = made[fs_id]
                change = (call.detail.event_time, storage, throughput)
                made[fs_id] = found.model_copy(update={"changes": (*found.changes, change)})
            elif fs_id in made:
                made[fs_id] = made[fs_id].model_copy(update={"deleted_at": call.detail.event_time})
        return list(made.values())

    def describe(self, account: str, region: str) -> list[FileSystemDescription]:
        now = self._clock.now()
        out = []
        given = {spec.file_system_id for spec in self._scenario.file_systems}
        out += [
            d for d in self._from_calls(account, region, now) if d.facts.file_system_id not in given
        ]
        for spec in self._scenario.file_systems:
            own = (spec.account or self._scenario.account, spec.region or self._scenario.region)
            if own != (account, region) or spec.created > now:
                continue
            changes = tuple(
                (c.at, c.storage_gib, c.throughput_mb_s_per_tib)
                for c in sorted(spec.changes, key=lambda c: c.at)
                if c.at <= now
            )
            facts = FileSystemFacts(
                file_system_id=spec.file_system_id,
                account=account,
                region=region,
                deployment_type=spec.deployment_type,
                storage_type=spec.storage_type,
                drive_cache_type=spec.drive_cache_type,
                storage_gib=spec.storage_gib,
                throughput_mb_s_per_tib=spec.throughput_mb_s_per_tib,
                tags=spec.tags,
                created_at=spec.created,
            )
            deleted = spec.deleted if spec.deleted is not None and spec.deleted <= now else None
            out.append(FileSystemDescription(facts=facts, changes=changes, deleted_at=deleted))
        return out


# EC2's default IOPS of a gp3 volume created without a figure (as DescribeVolumes says).
GP3_DEFAULT_IOPS = 3000


def volume_id_for(instance_id: str, device: str) -> str:
    """A stable EBS volume id for a scenario volume that names none: the same scenario
    gives the same ids (and so byte-identical exports) on every run."""
    return "vol-" + hashlib.sha256(f"{instance_id} {device}".encode()).hexdigest()[:17]


def devices(count: int) -> list[str]:
    """The device names a scenario instance's volumes are attached under, in order."""
    return [f"/dev/sd{chr(ord('f') + n)}" for n in range(count)]


class ScenarioInstances:
    """``Inventory`` from the scenario's ``instances``, as DescribeInstances and
    DescribeVolumes answer in the instance's own account and region: its type, lifecycle,
    platform, tags, reservation, zone (the region's first when none is given) and volumes
    (a gp3 volume without IOPS has EC2's default; an io1/io2 one keeps none)."""

    def __init__(self, scenario: Scenario) -> None:
        self._account = scenario.account
        self._region = scenario.region
        self._specs: dict[str, InstanceSpec] = {s.instance_id: s for s in scenario.instances}

    def describe(self, instance_id: str, region: str, account: str = "") -> InstanceProfile:
        spec = self._specs.get(instance_id)
        owner = spec.account or self._account if spec is not None else ""
        in_region = (spec.region or self._region) if spec is not None else ""
        if spec is None or (account or self._account) != owner or region != in_region:
            raise InstanceNotFound(instance_id)
        volumes = [
            Volume(
                volume_id=v.volume_id or volume_id_for(instance_id, device),
                size_gib=v.size_gib,
                volume_type=v.volume_type,
                iops=v.iops
                if v.iops is not None
                else (GP3_DEFAULT_IOPS if v.volume_type == "gp3" else None),
                throughput=v.throughput if v.volume_type == "gp3" else None,
            )
            for v, device in zip(spec.volumes, devices(len(spec.volumes)), strict=True)
        ]
        return InstanceProfile(
            instance_id=instance_id,
            instance_type=spec.instance_type,
            region=region,
            account=owner,
            availability_zone=spec.availability_zone or f"{region}a",
            lifecycle=spec.lifecycle,
            capacity_reservation_id=spec.capacity_reservation_id or "",
            platform=spec.platform or "Linux/UNIX",
            tags=dict(spec.tags),
            volumes=tuple(sorted(volumes, key=lambda v: v.volume_id)),
        )


StopListener = Callable[[str, str, str], None]  # (id, region, account)


class ScenarioInstanceStops:
    """``InstanceStops`` for the scenario's instances: what DescribeInstances says of one
    just before a stop (running until stopped, the scenario's tags), and the stops asked
    for, in order (the replay's instances live in the scenario, not in moto's EC2); the
    replay listens (``on_stop``) to deliver the stop's own state changes."""

    def __init__(self, scenario: Scenario) -> None:
        self._tags = {s.instance_id: dict(s.tags) for s in scenario.instances}
        self.stopped: list[str] = []
        self.on_stop: StopListener | None = None

    def current(self, instance_id: str, region: str, account: str = "") -> InstanceNow | None:
        if instance_id not in self._tags:
            return None
        state = "stopped" if instance_id in self.stopped else "running"
        return InstanceNow(state=state, tags=self._tags[instance_id])

    def stop(self, instance_id: str, region: str, account: str = "") -> None:
        if instance_id not in self._tags:
            raise InstanceNotFound(instance_id)
        self.stopped.append(instance_id)
        if self.on_stop is not None:
            self.on_stop(instance_id, region, account)


class ScenarioTrainingJobStops:
    """``TrainingJobStops`` for the scenario's training jobs: status from its events (and
    the replay's), tags and ``CheckpointConfig.S3Uri`` from its ``training_jobs`` entry."""

    def __init__(self, scenario: Scenario, jobs: ScenarioTrainingJobs) -> None:
        self._specs = {j.name: j for j in scenario.training_jobs}
        self._jobs = jobs
        self.stopped: list[str] = []
        self.on_stop: StopListener | None = None

    def current(self, name: str, region: str, account: str = "") -> TrainingJobNow | None:
        try:
            described = self._jobs.describe(name)
        except TrainingJobNotFound:
            return None
        spec = self._specs.get(name)
        uri = spec.checkpoint_uri if spec is not None else ""
        return TrainingJobNow(status=described.status, tags=described.tags, checkpoint_uri=uri)

    def stop(self, name: str, region: str, account: str = "") -> None:
        if self.current(name, region, account) is None:
            raise TrainingJobNotFound(name, region)
        self.stopped.append(name)
        if self.on_stop is not None:
            self.on_stop(name, region, account)
