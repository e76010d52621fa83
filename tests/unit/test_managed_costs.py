"""Pure cost rules for SageMaker training jobs and reserved capacity, against hand calculations.

SageMaker rate in these tests: ml.trn1.32xlarge $24.72/h (a configured rate); ML storage
$0.14/GB-month. November 2026 has 30 days = 2,592,000 s; December 31 days = 2,678,400 s.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from shared.domain.managed.costs_common import prorate_monthly
from shared.domain.managed.models import CapacityReservation, ReservationUse, TrainingJobDescription
from shared.domain.managed.reservation_cost import (
    block_fee,
    block_forecast,
    capacity_block_cost,
    daily_utilization,
    odcr_cost,
    reservation_cost,
    reservation_job_id,
    reservation_usage,
)
from shared.domain.managed.training_cost import (
    sagemaker_job_id,
    sagemaker_job_status,
    training_job_cost,
)

RATE = Decimal("24.72")
STORAGE = Decimal("0.14")


def t(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def trn_job(**update: object) -> TrainingJobDescription:
    base: dict[str, object] = {
        "name": "llama-sft-spot-a",
        "status": "Stopped",
        "instance_type": "ml.trn1.32xlarge",
        "instance_count": 2,
        "volume_size_gb": 600,
        "training_start": t("2026-11-03T08:00:00Z"),
        "training_end": t("2026-11-03T11:00:00Z"),
        "billable_seconds": 4320,
        "training_seconds": 10800,
        "warm_pool_retained_billable_seconds": None,
        "managed_spot": True,
        "tags": {"training-job": "llama-sft-spot", "project": "llama"},
        "region": "us-east-1",
        "account": "123456789012",
    }
    return TrainingJobDescription.model_validate({**base, **update})


# -- SageMaker -------------------------------------------------------------------------------


def test_stopped_two_node_managed_spot_job() -> None:
    """2 x ml.trn1.32xlarge, managed spot, 600 GB each, Stopped after 3 h (10,800 s) of which
    4,320 s were billable:
    instance   = 4,320 x 2 x 24.72 / 3600 = 2.4 x 24.72 = 59.328
    ml_storage = 2 x 600 x 0.14 x 10,800 / 2,592,000 = 168 / 240 = 0.7
    saving     = 1 - 4,320 / 10,800 = 0.6; instance_seconds = 8,640; total 60.028."""
    cost = training_job_cost(
        trn_job(), now=t("2026-11-06T00:00:00Z"), hourly_usd=RATE, storage_gb_month_usd=STORAGE
    )
    assert cost.job_id == "llama-sft-spot"
    assert cost.status == "stopped"
    assert cost.billed
    assert cost.instance_usd == Decimal("59.328")
    assert cost.ml_storage_usd == Decimal("0.7")
    assert cost.warm_pool_usd == 0
    assert cost.managed_spot_saving == Decimal("0.6")
    assert cost.instance_seconds == 8640
    assert cost.total_usd == Decimal("60.028")
    assert cost.complete


def test_completed_two_node_managed_spot_job_without_job_tag() -> None:
    """2 x ml.trn1.32xlarge, managed spot, 900 GB, Completed 11-04 00:00 -> 20:00 (72,000 s),
    billable 50,400 s: instance = 50,400 x 2 x 24.72 / 3600 = 28 x 24.72 = 692.16;
    ml_storage = 2 x 900 x 0.14 x 72,000 / 2,592,000 = 252 / 36 = 7; saving = 0.3."""
    job = trn_job(
        name="llama-sft-spot-b",
        status="Completed",
        volume_size_gb=900,
        training_start=t("2026-11-04T00:00:00Z"),
        training_end=t("2026-11-04T20:00:00Z"),
        billable_seconds=50400,
        training_seconds=72000,
        tags={"project": "llama"},
    )
    cost = training_job_cost(
        job, now=t("2026-11-06T00:00:00Z"), hourly_usd=RATE, storage_gb_month_usd=STORAGE
    )
    assert cost.job_id == "sagemaker:llama-sft-spot-b"
    assert cost.status == "complete"
    assert (cost.instance_usd, cost.ml_storage_usd) == (Decimal("692.16"), Decimal(7))
    assert cost.managed_spot_saving == Decimal("0.3")
    assert cost.instance_seconds == 100800
    assert cost.total_usd == Decimal("699.16")


def test_warm_pool_is_retained_seconds_times_count_times_rate() -> None:
    """On demand, 2 nodes, 9,000 s billable, warm pool retained 1,800 s:
    warm_pool = 1,800 x 2 x 24.72 / 3600 = 24.72; no spot saving (not spot)."""
    job = trn_job(
        status="Completed",
        managed_spot=False,
        volume_size_gb=0,
        billable_seconds=9000,
        training_seconds=9000,
        warm_pool_retained_billable_seconds=1800,
    )
    cost = training_job_cost(
        job, now=t("2026-11-06T00:00:00Z"), hourly_usd=RATE, storage_gb_month_usd=STORAGE
    )
    assert cost.warm_pool_usd == Decimal("24.72")
    assert cost.warm_pool_instance_seconds == 3600
    assert cost.instance_usd == Decimal("123.6")
    assert cost.managed_spot_saving is None
    assert cost.total_usd == Decimal("148.32")


def test_in_progress_accrues_from_training_start_to_now_as_an_estimate() -> None:
    """InProgress at 09:30, started 08:00: 5,400 s x 2 x 24.72 / 3600 = 74.16;
    storage 168 x 5,400 / 2,592,000 = 0.35. Billable seconds are not known yet."""
    job = trn_job(
        status="InProgress", training_end=None, billable_seconds=None, training_seconds=None
    )
    cost = training_job_cost(
        job, now=t("2026-11-03T09:30:00Z"), hourly_usd=RATE, storage_gb_month_usd=STORAGE
    )
    assert cost.status == "running"
    assert not cost.billed
    assert cost.instance_usd == Decimal("74.16")
    assert cost.ml_storage_usd == Decimal("0.35")
    assert cost.instance_seconds == 10800
    assert cost.managed_spot_saving is None


def test_still_starting_accrues_nothing() -> None:
    job = trn_job(
        status="InProgress",
        training_start=None,
        training_end=None,
        billable_seconds=None,
        training_seconds=None,
    )
    cost = training_job_cost(
        job, now=t("2026-11-03T09:30:00Z"), hourly_usd=RATE, storage_gb_month_usd=STORAGE
    )
    assert (cost.instance_usd, cost.ml_storage_usd, cost.instance_seconds) == (0, 0, 0)


def test_terminal_without_billable_seconds_accrues_to_end_and_stays_an_estimate() -> None:
    """Describe not answered yet: 08:00 -> 11:00 = 10,800 s x 2 x 24.72 / 3600 = 148.32."""
    job = trn_job(billable_seconds=None, training_seconds=None)
    cost = training_job_cost(
        job, now=t("2026-11-06T00:00:00Z"), hourly_usd=RATE, storage_gb_month_usd=STORAGE
    )
    assert not cost.billed
    assert cost.instance_usd == Decimal("148.32")


def test_unknown_rate_is_unpriced_never_zero() -> None:
    cost = training_job_cost(
        trn_job(instance_type="InstanceType"),
        now=t("2026-11-06T00:00:00Z"),
        hourly_usd=None,
        storage_gb_month_usd=None,
    )
    assert cost.instance_usd is None
    assert cost.ml_storage_usd is None
    assert not cost.complete
    assert any("InstanceType" in u for u in cost.unpriced)
    assert cost.instance_seconds == 8640  # the time still counts
    assert cost.total_usd == 0  # "at least $0", with the missing price named


def test_ml_storage_prorates_each_calendar_month_by_its_own_length() -> None:
    """1 x 100 GB at 0.14 = 14/month, 11-30 12:00 -> 12-01 12:00:
    14 x 43,200 / 2,592,000 + 14 x 43,200 / 2,678,400."""
    job = trn_job(
        instance_count=1,
        volume_size_gb=100,
        training_start=t("2026-11-30T12:00:00Z"),
        training_end=t("2026-12-01T12:00:00Z"),
        billable_seconds=86400,
        training_seconds=86400,
        managed_spot=False,
    )
    cost = training_job_cost(
        job, now=t("2026-12-05T00:00:00Z"), hourly_usd=RATE, storage_gb_month_usd=STORAGE
    )
    expected = Decimal(14) * 43200 / 2592000 + Decimal(14) * 43200 / 2678400
    assert cost.ml_storage_usd == expected
    assert (
        prorate_monthly(Decimal(14), t("2026-11-30T12:00:00Z"), t("2026-12-01T12:00:00Z"))
        == expected
    )


def test_job_id_and_status_mapping() -> None:
    assert sagemaker_job_id("x", {"team": "a", "run": "r1"}, ("training-job", "run")) == "r1"
    assert sagemaker_job_id("x", {"training-job": ""}) == "sagemaker:x"
    assert [
        sagemaker_job_status(s)
        for s in ("InProgress", "Stopping", "Completed", "Failed", "Stopped")
    ] == ["running", "running", "complete", "stopped", "stopped"]
    with pytest.raises(ValueError, match="unknown TrainingJobStatus"):
        sagemaker_job_status("Deleting")


# -- Capacity Blocks -------------------------------------------------------------------------

BLOCK = CapacityReservation(
    reservation_id="cr-0b1c000000000000b",
    kind="capacity-block",
    instance_type="p5.48xlarge",
    instance_count=4,
    start=t("2026-11-10T11:30:00Z"),
    end=t("2026-11-12T11:30:00Z"),
    tags={"project": "llama"},
)


def _uses(job: str, prefix: str, n: int, start: str, end: str | None) -> list[ReservationUse]:
    return [
        ReservationUse(
            instance_id=f"{prefix}{k}",
            job_id=job,
            start=t(start),
            end=None if end is None else t(end),
        )
        for k in range(n)
    ]


BLOCK_USES = [
    *_uses("p5-pretrain", "i-x1", 4, "2026-11-10T12:00:00Z", "2026-11-11T06:00:00Z"),
    *_uses("p5-pretrain", "i-x2", 4, "2026-11-11T08:00:00Z", "2026-11-11T20:00:00Z"),
    *_uses("p5-eval", "i-y", 2, "2026-11-11T22:00:00Z", "2026-11-12T10:00:00Z"),
]


def test_capacity_block_fee_becomes_job_costs_and_unused_hours() -> None:
    """4 x p5.48xlarge, 48 h, fee $6,000: 192 reserved instance-hours, $31.25 each.
    p5-pretrain 4 x 18 h + 4 x 12 h = 120 inst-h -> 3,750; p5-eval 2 x 12 h = 24 -> 750;
    unused 192 - 144 = 48 inst-h -> 1,500 wasted_reserved on reservation:<id>.
    3,750 + 750 + 1,500 = 6,000."""
    cost = capacity_block_cost(BLOCK, BLOCK_USES, t("2026-11-13T00:00:00Z"), fee_usd=Decimal(6000))
    by_job = {c.job_id: c for c in cost.by_job}
    assert by_job["p5-pretrain"].instance_seconds == 120 * 3600
    assert by_job["p5-pretrain"].instance_usd == Decimal(3750)
    assert by_job["p5-eval"].instance_seconds == 24 * 3600
    assert by_job["p5-eval"].instance_usd == Decimal(750)
    assert cost.usage.unused_instance_seconds == 48 * 3600
    assert cost.wasted_job_id == "reservation:cr-0b1c000000000000b"
    assert cost.wasted_reserved_usd == Decimal(1500)
    assert cost.usd_per_instance_second is not None
    assert cost.usd_per_instance_second * 3600 == Decimal("31.25")
    assert cost.usage.utilization == Decimal("0.75")


def test_block_unused_time_accrues_as_the_block_passes() -> None:
    """At 11-11 07:00 (19.5 h in): reserved so far 4 x 19.5 = 78 inst-h, used 72, unused 6
    -> 6 x 31.25 = 187.5; the remaining 28.5 h are not wasted yet."""
    cost = capacity_block_cost(BLOCK, BLOCK_USES, t("2026-11-11T07:00:00Z"), fee_usd=Decimal(6000))
    assert cost.usage.reserved_instance_seconds == 78 * 3600
    assert cost.usage.unused_instance_seconds == 6 * 3600
    assert cost.wasted_reserved_usd == Decimal("187.5")


def test_block_share_has_no_minimum_and_adds_an_os_fee() -> None:
    """A 10-second run costs 10 s of share (no 60 s minimum): 6,000 x 10 / 691,200; an OS
    fee of $0.72/h adds 10 x 0.72 / 3600 = 0.002."""
    uses = _uses("short", "i-s", 1, "2026-11-10T12:00:00Z", "2026-11-10T12:00:10Z")
    cost = capacity_block_cost(
        BLOCK, uses, t("2026-11-13T00:00:00Z"), fee_usd=Decimal(6000), os_hourly_usd=Decimal("0.72")
    )
    (charge,) = cost.by_job
    assert charge.instance_seconds == 10
    assert charge.instance_usd == Decimal(6000) * 10 / 691200 + Decimal("0.002")


def test_unknown_block_fee_is_unpriced_never_zero() -> None:
    cost = capacity_block_cost(BLOCK, BLOCK_USES, t("2026-11-13T00:00:00Z"), fee_usd=None)
    assert cost.wasted_reserved_usd is None
    assert [c.instance_usd for c in cost.by_job] == [None, None]  # both jobs, unpriced
    assert not cost.complete and "cr-0b1c000000000000b" in cost.unpriced[0]
    assert cost.usage.unused_instance_seconds == 48 * 3600  # the hours are still known


def test_block_job_tag_names_whom_unused_time_is_charged_to() -> None:
    tagged = BLOCK.model_copy(update={"tags": {"training-job": "p5-pretrain"}})
    assert reservation_job_id(tagged) == "p5-pretrain"
    assert reservation_job_id(BLOCK) == "reservation:cr-0b1c000000000000b"


def test_spans_outside_the_block_and_running_instances_are_clipped() -> None:
    """A span from before the block start to still running at 12:30 counts 11:30 -> 12:30."""
    uses = _uses("j", "i-c", 1, "2026-11-10T10:00:00Z", None)
    usage = reservation_usage(BLOCK, uses, t("2026-11-10T12:30:00Z"))
    assert usage.used_instance_seconds == 3600
    assert usage.running_now == 1
    assert usage.reserved_instance_seconds == 4 * 3600


def test_forecast_at_the_current_pace() -> None:
    """At 11-11 00:00 (12.5 h in): used 48 of 50 inst-h, 4 running: unused 2 / 192 -> 1 %.
    At 07:00 in the gap: unused 6 so far + 4 x 28.5 h idle ahead = 120 / 192 = 62.5 % -> 63 %;
    average pace 1 - 72/78."""
    early = block_forecast(BLOCK, BLOCK_USES, t("2026-11-11T00:00:00Z"))
    assert early is not None
    assert early.running_now == 4
    assert early.unused_fraction_at_current_pace == Decimal(2) / 192
    assert early.unused_fraction_at_average_pace == Decimal("0.04")
    assert early.message() == "you will leave 1 % of this block unused at the current pace"
    gap = block_forecast(BLOCK, BLOCK_USES, t("2026-11-11T07:00:00Z"))
    assert gap is not None
    assert gap.running_now == 0
    assert gap.unused_fraction_at_current_pace == Decimal("0.625")
    assert gap.unused_fraction_at_average_pace == 1 - Decimal(72) / 78
    assert gap.message() == "you will leave 63 % of this block unused at the current pace"
    after = block_forecast(BLOCK, BLOCK_USES, t("2026-11-12T12:00:00Z"))
    assert after is not None and after.unused_fraction_at_current_pace == Decimal("0.25")
    assert block_forecast(BLOCK, BLOCK_USES, t("2026-11-10T11:00:00Z")) is None


def test_block_fee_from_configuration() -> None:
    """By id first; else $/instance-hour by type x count x hours: 31.25 x 4 x 48 = 6,000."""
    assert block_fee(
        BLOCK,
        fees_by_id={"cr-0b1c000000000000b": Decimal(5000)},
        hourly_by_type={"p5.48xlarge": Decimal("31.25")},
    ) == Decimal(5000)
    assert block_fee(
        BLOCK, fees_by_id={}, hourly_by_type={"p5.48xlarge": Decimal("31.25")}
    ) == Decimal(6000)
    assert block_fee(BLOCK, fees_by_id={}) is None


def test_daily_utilization_of_the_block() -> None:
    """11-10: 48 / 50 inst-h; 11-11: (24 + 48 + 4) / 96; 11-12: 20 / 46; 11-13: nothing."""
    assert daily_utilization(BLOCK, BLOCK_USES, date(2026, 11, 10)) == Decimal("0.96")
    assert daily_utilization(BLOCK, BLOCK_USES, date(2026, 11, 11)) == Decimal(76) / 96
    assert daily_utilization(BLOCK, BLOCK_USES, date(2026, 11, 12)) == Decimal(20) / 46
    assert daily_utilization(BLOCK, BLOCK_USES, date(2026, 11, 13)) is None


# -- ODCR ------------------------------------------------------------------------------------

ODCR = CapacityReservation(
    reservation_id="cr-0dc0000000000000d",
    kind="odcr",
    instance_type="trn1.32xlarge",
    instance_count=2,
    start=t("2026-11-20T00:00:00Z"),
    end=t("2026-11-21T00:00:00Z"),
    tags={"training-job": "trn-odcr-job"},
)


def test_odcr_half_used_bills_the_unused_half_at_the_on_demand_rate() -> None:
    """2 x trn1.32xlarge for 24 h = 48 inst-h reserved; O1 16 h + O2 8 h = 24 used;
    unused 24 x 21.50 = 516 wasted_reserved on trn-odcr-job (its job tag). The instances'
    own 516 is the usual on-demand rule, not charged here."""
    uses = [
        *_uses("trn-odcr-job", "i-o1", 1, "2026-11-20T00:00:00Z", "2026-11-20T16:00:00Z"),
        *_uses("trn-odcr-job", "i-o2", 1, "2026-11-20T04:00:00Z", "2026-11-20T12:00:00Z"),
    ]
    cost = odcr_cost(ODCR, uses, t("2026-11-22T00:00:00Z"), on_demand_hourly_usd=Decimal("21.50"))
    assert cost.usage.used_instance_seconds == 24 * 3600
    assert cost.usage.utilization == Decimal("0.5")
    assert cost.wasted_job_id == "trn-odcr-job"
    assert cost.wasted_reserved_usd == Decimal(516)
    assert [(c.job_id, c.instance_usd) for c in cost.by_job] == [("trn-odcr-job", None)]
    assert (
        reservation_cost(
            ODCR, uses, t("2026-11-22T00:00:00Z"), on_demand_hourly_usd=Decimal("21.50")
        )
        == cost
    )


def test_open_ended_odcr_accrues_unused_time_to_now() -> None:
    """Open-ended, 1 instance, nothing launched for 10 h: 10 x 21.50 = 215; no forecast."""
    open_ended = ODCR.model_copy(update={"end": None, "instance_count": 1})
    cost = odcr_cost(
        open_ended, [], t("2026-11-20T10:00:00Z"), on_demand_hourly_usd=Decimal("21.50")
    )
    assert cost.wasted_reserved_usd == Decimal(215)
    assert block_forecast(open_ended, [], t("2026-11-20T10:00:00Z")) is None
    unpriced = odcr_cost(open_ended, [], t("2026-11-20T10:00:00Z"), on_demand_hourly_usd=None)
    assert unpriced.wasted_reserved_usd is None and not unpriced.complete


def test_capacity_block_rule_refuses_an_odcr() -> None:
    with pytest.raises(ValueError, match="not a Capacity Block"):
        capacity_block_cost(ODCR, [], t("2026-11-22T00:00:00Z"), fee_usd=Decimal(1))


def test_models_reject_bad_windows() -> None:
    with pytest.raises(ValueError, match="end must be after start"):
        BLOCK.model_validate({**BLOCK.model_dump(), "end": BLOCK.start})
    with pytest.raises(ValueError, match="has an end date"):
        BLOCK.model_validate({**BLOCK.model_dump(), "end": None})
    assert BLOCK.block_seconds == 172800
    assert ODCR.model_copy(update={"end": None}).block_seconds is None
    assert BLOCK.start + timedelta(seconds=172800) == BLOCK.end
