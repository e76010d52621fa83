"""FOCUS charges of a job's day from managed training and reserved capacity: a SageMaker
training job's instance time, warm pool and ML storage, and a reservation's unused
reserved time (``CapacityReservationStatus`` ``Unused``) on the job it is charged to."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta
from decimal import Decimal

from shared.domain.clock import SECONDS_PER_HOUR
from shared.domain.job import JobRecords
from shared.domain.managed.reservation_cost import reservation_usage
from shared.domain.managed.training import training_between
from shared.reports.focus import Charge


def managed_charges(
    records: JobRecords, day_start: datetime, now: datetime, day_end: datetime | None = None
) -> list[Charge]:
    """Charges inside [day_start, day_end) (default: 24 hours)."""
    day_end = day_end if day_end is not None else day_start + timedelta(days=1)
    hi = min(day_end, now)
    charges: list[Charge] = []
    for head in records.training:
        if head.rate is None:
            continue
        parts = training_between(head, day_start, hi, now)
        rate = head.rate
        arn = f"arn:aws:sagemaker:{head.region}:{head.account}:training-job/{head.name}"
        hourly = rate.effective_usd
        rows = (
            ("sagemaker_training", parts["instance"], hourly, f"{head.instance_type} training"),
            ("sagemaker_warm_pool", parts["warm_pool"], hourly, "warm pool retained time"),
        )
        for kind, usd, unit, what in rows:
            if not usd:
                continue
            quantity = usd / unit
            charges.append(_charge(records, head.account, head.region, arn, head.name, kind,
                                   day_start, day_end, quantity, unit, usd,
                                   f"Estimated by costtracker: SageMaker {what} "
                                   f"({head.instance_count} instances)", head.tags,
                                   rate.source.value, rate.checked_on))  # fmt: skip
        storage = head.storage_rate
        if storage is not None and parts["ml_storage"]:
            usd = parts["ml_storage"]
            charges.append(_charge(records, head.account, head.region, arn, head.name,
                                   "sagemaker_storage", day_start, day_end,
                                   usd / storage.effective_usd, storage.effective_usd, usd,
                                   f"Estimated by costtracker: SageMaker ML storage "
                                   f"{head.instance_count} x {head.volume_gb} GB", head.tags,
                                   storage.source.value, storage.checked_on))  # fmt: skip
    for res in records.reservations:
        if res.rate is None or hi <= day_start:
            continue
        usage = reservation_usage(res.reservation, res.uses(), hi, since=day_start)
        if not usage.unused_instance_seconds:
            continue
        hours = Decimal(usage.unused_instance_seconds) / SECONDS_PER_HOUR
        unit = res.rate.effective_usd
        kind_name = "Capacity Block" if res.reservation.kind == "capacity-block" else "ODCR"
        charge = _charge(
            records, res.account, res.region, res.reservation_id, None,
            "capacity_reservation", day_start, day_end, hours, unit, hours * unit,
            f"Estimated by costtracker: unused reserved time of {kind_name} "
            f"{res.reservation_id} ({res.reservation.instance_type})",
            res.reservation.tags, res.rate.source.value, res.rate.checked_on,
        )  # fmt: skip
        charges.append(
            replace(
                charge,
                capacity_reservation_id=res.reservation_id,
                capacity_reservation_status="Unused",
            )
        )
    return charges


def _charge(
    records: JobRecords, account: str, region: str, resource_id: str, name: str | None,
    kind: str, start: datetime, end: datetime, quantity: Decimal, unit: Decimal, usd: Decimal,
    description: str, tags: dict[str, str], source: str, checked_on: date,
) -> Charge:  # fmt: skip
    return Charge(
        kind=kind,
        job_id=records.job_id,
        account=account,
        region=region,
        resource_id=resource_id,
        resource_name=name,
        period_start=start,
        period_end=end,
        pricing_quantity=quantity,
        consumed_quantity=quantity,
        list_unit_price=unit,
        contracted_unit_price=unit,
        list_cost=usd,
        contracted_cost=usd,
        effective_cost=usd,
        description=description,
        tags=tags,
        rate_source=source,
        rate_checked_on=checked_on,
    )
