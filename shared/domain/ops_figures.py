"""One finance day's operational figures for the admins (accelerator-hours and
utilization by team, checkpoint storage), as computed by ``shared.services.ops_metrics``
and published by ``shared.adapters.telemetry``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal


@dataclass
class TeamFigures:
    accelerator_hours: Decimal = Decimal(0)
    idle_hours: Decimal = Decimal(0)

    @property
    def utilization_percent(self) -> Decimal | None:
        """Share of accelerator running time not idle; None without accelerator time."""
        if self.accelerator_hours <= 0:
            return None
        busy = max(Decimal(0), self.accelerator_hours - self.idle_hours)
        return busy * 100 / self.accelerator_hours


@dataclass
class DayFigures:
    day: date
    teams: dict[str, TeamFigures] = field(default_factory=dict)
    checkpoint_storage_gb: Decimal = Decimal(0)
