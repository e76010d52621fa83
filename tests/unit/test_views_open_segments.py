"""An open segment in the API's views (shared.reports.views): its hours and cost accrued
to the as-of moment (cost rule 9), in the job's breakdown and in its line items alike,
never ``0`` hours and a null cost while its rate is known."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from shared.config.ledger import LedgerConfig
from shared.reports.views import job_detail, job_line_items
from shared.services.job_view import cost_of, load_job
from tests.support import running_jobs_ledger

T0 = datetime(2026, 11, 1, tzinfo=UTC)
CONFIG = LedgerConfig.model_validate(
    {"live_prices": False, "prices": {"ec2": {"trn1.32xlarge": "21.50"}}}
)


def test_an_open_segment_shows_its_hours_and_cost_so_far() -> None:
    books = running_jobs_ledger(["pretrain"], CONFIG, T0)
    now = T0 + timedelta(hours=2, minutes=30)
    records = load_job(books.deps.table, books.deps.rollups, "pretrain")
    assert records is not None
    cost = cost_of(books.deps, records, now)
    detail = job_detail(cost)
    (segment,) = detail["instances"][0]["segments"]
    assert segment["state"] == "open" and segment["end"] is None
    assert segment["billed_seconds"] == 9000 and segment["priced"]
    assert Decimal(segment["cost_usd"]) == Decimal("53.75")  # 2.5 h at $21.50/h
    assert segment["cost_usd"] == detail["instances"][0]["instance_usd"]
    (item,) = [i for i in job_line_items(cost, records, now) if i["kind"] == "segment"]
    assert (item["billed_seconds"], item["cost_usd"]) == (9000, segment["cost_usd"])
    # Later, more: the same stored segment accrues to each as-of moment.
    later = job_detail(cost_of(books.deps, records, now + timedelta(hours=1)))
    assert Decimal(later["instances"][0]["segments"][0]["cost_usd"]) == Decimal("75.25")
