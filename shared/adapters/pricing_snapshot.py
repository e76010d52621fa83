"""The bundled, labelled price list for offline runs (``shared/data/price_snapshot.json``)."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any


class Snapshot:
    """The bundled, labelled price list for offline runs."""

    def __init__(self, document: dict[str, Any]) -> None:
        self._doc = document
        self.source: str = document["source"]
        self.checked_on = date.fromisoformat(document["checked_on"])
        # Sections checked apart from the rest (their own source and date).
        self._sections: dict[str, dict[str, str]] = document.get("sections", {})

    def provenance(self, section: str, region: str | None = None) -> tuple[str, date]:
        """(source, checked on) of a section's prices: a region's own for that section
        (``<section>:<region>``), else the section's own, else the snapshot's."""
        own = self._sections.get(f"{section}:{region}") if region else None
        own = own or self._sections.get(section)
        if own is None:
            return self.source, self.checked_on
        return own["source"], date.fromisoformat(own["checked_on"])

    def _region(self, region: str) -> dict[str, Any]:
        regions: dict[str, dict[str, Any]] = self._doc["regions"]
        return regions.get(region, {})

    def ec2(self, region: str, instance_type: str) -> Decimal | None:
        value = self._region(region).get("ec2", {}).get(instance_type)
        return Decimal(value) if value else None

    def ebs(self, region: str, volume_type: str) -> Decimal | None:
        value = self._region(region).get("ebs_gb_month", {}).get(volume_type)
        return Decimal(value) if value else None

    def s3(self, region: str) -> Decimal | None:
        value = self._region(region).get("s3_gb_month")
        return Decimal(value) if value else None


@cache
def bundled_snapshot() -> Snapshot:
    text = resources.files("shared").joinpath("data/price_snapshot.json").read_text()
    return Snapshot(json.loads(text))


def snapshot_value(
    snapshot: Snapshot, region: str, section: str, key: str | None
) -> Decimal | None:
    """A value of the snapshot's region (a section's key, or the section itself)."""
    value = snapshot._region(region).get(section)
    if key is not None:
        value = value.get(key) if isinstance(value, dict) else None
    return Decimal(str(value)) if value else None
