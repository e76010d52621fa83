"""What replay hands the functions' runtime in place of AWS calls moto cannot answer
from a scenario (``shared.app.runtime.Runtime.sources``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.adapters.fsx import FileSystems
    from shared.adapters.inventory import Inventory
    from shared.adapters.reservations import CapacityReservations
    from shared.adapters.sagemaker import TrainingJobs
    from shared.services.action_deps import CrossingTimers, LaunchDenial
    from shared.services.stopper import InstanceStops, TrainingJobStops


@dataclass(frozen=True)
class Sources:
    """What replay answers from its scenario where moto cannot (DescribeTrainingJob,
    DescribeCapacityReservations, DescribeFileSystems over simulated time, DescribeInstances
    of instances under the scenario's ids, and what a stop reads and does to them); the
    deployed functions never set them."""

    training_jobs: TrainingJobs | None = None
    reservations: CapacityReservations | None = None
    file_systems: FileSystems | None = None
    inventory: Inventory | None = None
    instance_stops: InstanceStops | None = None
    training_stops: TrainingJobStops | None = None
    # What a deny_launch attaches and detaches (IAM), and the crossing timers' queue.
    launch_denial: LaunchDenial | None = None
    crossing_timers: CrossingTimers | None = None
