"""FOCUS charges of a job's FSx for Lustre file systems (cost rule 13): one row per file
system and rate inside the period, its usage in GiB-months (storage x the month fraction
it was held), ServiceName "Amazon FSx" and the file system's ARN as its resource id."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from shared.domain.clock import MONTH_UNITS, month_clock
from shared.domain.job import JobRecords
from shared.reports.focus import Charge


def file_system_charges(
    records: JobRecords, lo: datetime, hi: datetime, now: datetime
) -> list[Charge]:
    charges: list[Charge] = []
    hi_now = min(hi, now)
    for head in records.file_systems:
        if head.job_id is None or head.storage_type == "INTELLIGENT_TIERING":
            continue  # tiered storage is unconfirmed until the bill says
        by_rate: dict[tuple[str, Decimal, Decimal, str, str], Decimal] = {}
        for piece in head.pieces():
            rate = piece.shape.rate
            a, b = max(lo, piece.start), min(hi_now, piece.end or now)
            if rate is None or b <= a:
                continue
            months = Decimal(month_clock(b) - month_clock(a)) / MONTH_UNITS
            key = (
                piece.shape.price_key,
                rate.list_usd,
                rate.effective_usd,
                rate.source.value,
                rate.checked_on.isoformat(),
            )
            by_rate[key] = by_rate.get(key, Decimal(0)) + piece.storage_gib * months
        for (price_key, list_usd, eff_usd, source, checked), quantity in sorted(by_rate.items()):
            charges.append(
                Charge(
                    kind="fsx_storage",
                    job_id=records.job_id,
                    account=head.account,
                    region=head.region,
                    resource_id=head.arn,
                    resource_name=head.tags.get("Name") or head.file_system_id,
                    period_start=lo,
                    period_end=hi,
                    pricing_quantity=quantity,
                    consumed_quantity=quantity,
                    list_unit_price=list_usd,
                    contracted_unit_price=eff_usd,
                    list_cost=list_usd * quantity,
                    contracted_cost=eff_usd * quantity,
                    effective_cost=eff_usd * quantity,
                    description=(
                        f"Estimated by costtracker from FSx API calls: Lustre {price_key} "
                        f"storage of {head.file_system_id}"
                    ),
                    sku_id=f"FSx:Lustre:{price_key}",
                    tags=head.tags,
                    rate_source=source,
                    rate_checked_on=date_of(checked),
                )
            )
    return charges


def date_of(text: str) -> date:
    return date.fromisoformat(text)
