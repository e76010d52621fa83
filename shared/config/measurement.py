"""Measured utilization's configuration (cost rule 10): accelerators per instance type,
the period the metric is read at, and where only per-device series exist."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

AcceleratorKind = Literal["neuron", "gpu"]

# Rule 10's table: accelerators (chips / GPUs) per instance type; configurable.
DEFAULT_ACCELERATOR_COUNTS: dict[str, int] = {
    "trn1.2xlarge": 1,
    "trn1.32xlarge": 16,
    "trn1n.32xlarge": 16,
    "trn2.48xlarge": 16,
    "inf2.xlarge": 1,
    "inf2.48xlarge": 12,
    "p4d.24xlarge": 8,
    "p5.48xlarge": 8,
    "g5.xlarge": 1,
    "g6e.xlarge": 1,
}


class MeasurementConfig(BaseModel):
    """``accelerator_counts``: chips or GPUs per instance type (others are ``unknown``);
    ``period_seconds``: 300, or 60 where the agent publishes one-minute data;
    ``device_dimensions``: for a kind whose metric exists only per device (no
    instance-level aggregate), the device dimensions beside the instance dimension,
    e.g. ``{"gpu": ["index", "name"]}``: read with one SEARCH() per instance, averaged
    over its devices."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    accelerator_counts: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_ACCELERATOR_COUNTS)
    )
    period_seconds: Literal[60, 300] = 300
    device_dimensions: dict[AcceleratorKind, tuple[str, ...]] = Field(default_factory=dict)

    @field_validator("accelerator_counts")
    @classmethod
    def _counts(cls, counts: dict[str, int]) -> dict[str, int]:
        for instance_type, count in counts.items():
            if not 0 <= count <= 1024:
                raise ValueError(f"accelerator count of {instance_type!r} must be 0..1024")
        return counts

    @field_validator("device_dimensions")
    @classmethod
    def _dimensions(
        cls, dimensions: dict[AcceleratorKind, tuple[str, ...]]
    ) -> dict[AcceleratorKind, tuple[str, ...]]:
        for kind, names in dimensions.items():
            if not names or any(not n or '"' in n or "," in n for n in names):
                raise ValueError(f"device_dimensions.{kind}: dimension names, e.g. index")
        return dimensions
