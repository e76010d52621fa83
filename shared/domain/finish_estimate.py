"""The cost to reach a step count, as a range (pure): the pace measured between the first
and last checkpoint, the burn rate now (or of the instances' last run when stopped), and a
high end for slower progress and reruns as in the job's own history."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from shared.domain.job import JobCost


@dataclass(frozen=True)
class FinishEstimate:
    current_step: int
    remaining_steps: int
    pace_steps_per_hour: Decimal
    burn_usd_per_hour: Decimal
    # False: the job is not running, ``burn_usd_per_hour`` is its instances' last run rate.
    running_burn: bool
    rerun_share: Decimal
    utilization_drop: Decimal
    hours: Decimal
    slow_hours: Decimal
    low_usd: Decimal
    high_usd: Decimal


def finish_estimate(cost: JobCost, target_steps: int, utilization_drop: Decimal) -> FinishEstimate:
    """Raises ValueError when the job has no pace yet (fewer than two checkpoints with steps)."""
    if cost.steps_per_hour is None or cost.last_checkpoint_step is None:
        raise ValueError("needs at least two checkpoints with steps to measure a pace")
    remaining = max(0, target_steps - cost.last_checkpoint_step)
    pace = cost.steps_per_hour
    burn = cost.burn_rate_usd_per_hour
    running_burn = True
    if burn == 0:  # stopped: what its instances cost per hour when they last ran
        burn = sum(
            (
                p.pin.rate.effective_usd
                for i in cost.instances
                for p in i.segments[-1:]
                if p.pin is not None and p.pin.rate is not None
            ),
            Decimal(0),
        )
        running_burn = False
    hours = Decimal(remaining) / pace if pace > 0 else Decimal(0)
    rerun_share = cost.wasted_rerun_usd / cost.instance_usd if cost.instance_usd else Decimal(0)
    slow_hours = hours / (1 - utilization_drop)
    return FinishEstimate(
        current_step=cost.last_checkpoint_step,
        remaining_steps=remaining,
        pace_steps_per_hour=pace,
        burn_usd_per_hour=burn,
        running_burn=running_burn,
        rerun_share=rerun_share,
        utilization_drop=utilization_drop,
        hours=hours,
        slow_hours=slow_hours,
        low_usd=hours * burn,
        high_usd=slow_hours * burn * (1 + rerun_share),
    )
