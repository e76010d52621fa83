"""Hourly: price what was unpriced, and tell admins, once a day per price, what is missing.

A segment with no known rate keeps its seconds; the moment an override or the
Price List knows the rate, this run fills it in and the job's cost is complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from shared.costing import instance_cost
from shared.ledger import VersionConflict
from shared.notify import Alert, Notifier
from shared.services.instance_state import LedgerDeps, price_segments


@dataclass(frozen=True)
class BackfillResult:
    repriced: tuple[str, ...]
    missing: tuple[str, ...]
    alerted: tuple[str, ...]


def backfill_prices(deps: LedgerDeps, notifier: Notifier) -> BackfillResult:
    now = deps.clock.now()
    repriced: list[str] = []
    missing: dict[str, list[str]] = {}
    for record in deps.ledger.unpriced_instances():
        updated = price_segments(record, deps.prices, now)
        volume_rates = dict(updated.volume_rates)
        for volume in record.profile.volumes:
            if volume.volume_type not in volume_rates:
                rate = deps.prices.volume_rate(record.profile.region, volume.volume_type)
                if rate is not None:
                    volume_rates[volume.volume_type] = rate
        updated = updated.model_copy(update={"volume_rates": volume_rates})
        if updated != record:
            try:
                deps.ledger.save_instance(updated, record.version)
                repriced.append(record.instance_id)
            except VersionConflict:
                pass  # an event just rewrote it (and priced it); next run sees the result
        for item in instance_cost(updated, now).unpriced:
            missing.setdefault(f"{item.kind}:{item.key}:{item.region}", []).append(item.instance_id)
    for obj in deps.ledger.unpriced_checkpoints():
        rate = deps.prices.s3_rate(obj.region)
        if rate is None:
            missing.setdefault(f"s3:standard:{obj.region}", []).append(
                f"s3://{obj.bucket}/{obj.key}"
            )
            continue
        try:
            deps.ledger.save_checkpoint(obj.model_copy(update={"rate": rate}), obj.version)
            repriced.append(f"s3://{obj.bucket}/{obj.key}")
        except VersionConflict:
            pass
    alerted = []
    for key, instances in sorted(missing.items()):
        if not deps.ledger.claim_once(f"price-missing#{key}#{now.date()}", now + timedelta(days=2)):
            continue
        kind, name, region = key.split(":")
        notifier.send(
            Alert(
                audience="admin",
                kind="price_missing",
                subject=f"No {kind} price for {name} in {region}",
                message=(
                    f"No price is known for {kind} {name} in {region}. Affected: "
                    f"{', '.join(sorted(instances))}. Their running time is kept and will be "
                    "priced as soon as a price is configured (CDK context prices.*) or the "
                    "Price List API lists one; until then their jobs report cost as incomplete."
                ),
                attributes={"severity": "warning", "region": region, "price_key": name},
            )
        )
        alerted.append(key)
    return BackfillResult(tuple(repriced), tuple(sorted(missing)), tuple(alerted))
