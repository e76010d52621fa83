"""The change decomposition on a hand-made two-week scenario, against a hand calculation.

The scenario's events go through the real services (state changes, the tracker's own
alarms, checkpoint writes) over the in-memory table; the figures are read back from the
job records as the API reads them. Method: docs/efficiency.md (LMDI-I, per job).

Week 0 (Nov 2-8): job sft, one trn1.32xlarge (16 chips) at $21.50/h, 09:00-17:00 daily:
  56 instance-hours = H0 896 accelerator-hours, C0 = $1,204.00, p0 = $1.34375/acc-h,
  56,000 steps (8,000 a day).
Week 1 (Nov 9-15): sft 08:00-20:00 daily (84 h = H1 1,344 acc-h, C1 = $1,806.00, the same
  p1 = $1.34375), idle on Nov 12 from 08:30 ($247.25 wasted), 72,000 steps (12,000 on each
  of the 6 busy days); job gpu, a p5.48xlarge at $55.04/h for 10 h on Nov 10 ($550.40),
  in week 1 only.
sft: L = (1,806 - 1,204) / ln(1,806 / 1,204) = 602 / ln(3/2)
  use        = L ln(72,000 / 56,000)                   = 602 ln(9/7) / ln(3/2) = 373.1302
  efficiency = L ln((1,344 / 72,000) / (896 / 56,000)) = 602 ln(7/6) / ln(3/2) = 228.8698
  price      = L ln(1.34375 / 1.34375)                 = 0
gpu: spent in week 1 only: all use, $550.40.
Scope: use 923.5302 -> $923.53, efficiency $228.87, price $0.00, other $0.00;
  $923.53 + $228.87 = $1,152.40 = $2,356.40 - $1,204.00, no cent left over.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.divisia import Factors, split, to_cents
from shared.domain.ebs import Volume
from shared.domain.instance import InstanceProfile
from shared.domain.job import JobRecords
from shared.domain.spend_change import decompose, is_accelerator, period_figures, steps_between
from shared.reports.change_view import change_json
from tests.support import REGION, Ledger, Timeline, job_records, memory_ledger

NOW = datetime(2026, 11, 16, 12, tzinfo=UTC)
WEEK0 = (datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 9, tzinfo=UTC))
WEEK1 = (datetime(2026, 11, 9, tzinfo=UTC), datetime(2026, 11, 16, tzinfo=UTC))
CONFIG = LedgerConfig(
    live_prices=False,
    prices=PriceOverrides(
        ec2={"trn1.32xlarge": Decimal("21.50"), "p5.48xlarge": Decimal("55.04"),
             "m5.large": Decimal("0.096")},
        ebs_gb_month={"gp3": Decimal("0.08")},
    ),
)  # fmt: skip
TRN, GPU, CPU = "i-0000000000000a001", "i-0000000000000b002", "i-0000000000000c003"


def t(day: int, hh: int, mm: int = 0) -> datetime:
    return datetime(2026, 11, day, hh, mm, tzinfo=UTC)


def profile(
    instance_id: str, instance_type: str, job: str, volumes: tuple[Volume, ...] = ()
) -> InstanceProfile:
    return InstanceProfile(instance_id=instance_id, instance_type=instance_type, region=REGION,
                           tags={"training-job": job}, volumes=volumes)  # fmt: skip


def ledger_after(events: Timeline, *profiles: InstanceProfile) -> Ledger:
    ledger = memory_ledger(*profiles, config=CONFIG, now=datetime(2026, 11, 1, tzinfo=UTC))
    events.apply(ledger)
    ledger.clock.advance_to(NOW)
    return ledger


def jobs(ledger: Ledger, *job_ids: str) -> list[JobRecords]:
    since = min(WEEK0[0], WEEK1[0])
    return [job_records(ledger, job_id, since) for job_id in job_ids]


def scenario() -> Ledger:
    events = Timeline()
    for d in range(2, 9):
        events.run(TRN, t(d, 9), t(d, 17))
    for d in range(9, 16):
        events.run(TRN, t(d, 8), t(d, 20))
    events.idle(TRN, t(12, 8, 30), t(12, 20))
    step = 0
    for d in range(2, 16):
        if d == 12:
            continue  # the idle day makes no progress
        step += 8000 if d <= 8 else 12000
        events.write("b", f"runs/sft/step-{step}/m.pt", t(d, 17 if d <= 8 else 20))
    events.run(GPU, t(10, 8), t(10, 18))
    for n in range(1, 6):
        events.write("b", f"runs/gpu/step-{5000 * n}/m.pt", t(10, 8 + 2 * n))
    return ledger_after(
        events, profile(TRN, "trn1.32xlarge", "sft"), profile(GPU, "p5.48xlarge", "gpu")
    )


def test_two_weeks_match_the_hand_calculation() -> None:
    ledger = scenario()
    both = jobs(ledger, "sft", "gpu")
    series = ledger.deps.prices.series
    before = period_figures(both, *WEEK0, NOW, series)
    after = period_figures(both, *WEEK1, NOW, series)
    assert before.accelerator_hours == 896  # 56 h x 16 chips
    assert before.accelerator_usd == Decimal("1204.00")
    assert after.accelerator_hours == 1344 + 80  # 84 h x 16 + 10 h x 8
    assert after.accelerator_usd == Decimal("2356.40")
    assert after.wasted_idle_usd == Decimal("247.25")
    assert before.wasted_usd == 0
    assert [(j.job_id, j.steps) for j in before.jobs] == [("sft", 56000), ("gpu", None)]
    assert [(j.job_id, j.steps) for j in after.jobs] == [("sft", 72000), ("gpu", 25000)]
    assert (before.active_jobs, after.active_jobs) == (1, 2)

    change = decompose(before, after)
    sft, gpu = sorted(change.jobs, key=lambda j: j.job_id, reverse=True)
    assert (sft.basis, gpu.basis) == ("steps", "one_period")
    ln = lambda x: Decimal(x).ln()  # noqa: E731
    use = 602 * ln(Decimal(9) / 7) / ln(Decimal("1.5"))
    efficiency = 602 * ln(Decimal(7) / 6) / ln(Decimal("1.5"))
    assert abs(sft.parts.use - use) < Decimal("1e-20")
    assert abs(sft.parts.efficiency - efficiency) < Decimal("1e-20")
    assert abs(sft.parts.price) < Decimal("1e-20")
    assert sft.parts.total == Decimal("602.00")
    assert (gpu.parts.use, gpu.parts.efficiency, gpu.parts.price) == (Decimal("550.40"), 0, 0)
    assert change.cents() == {
        "use": Decimal("923.53"), "efficiency": Decimal("228.87"),
        "price": Decimal("0.00"), "other": Decimal("0.00"),
    }  # fmt: skip

    doc = change_json(change)
    assert doc["change"]["total_usd"] == "1152.40"
    assert (doc["change"]["use_usd"], doc["change"]["efficiency_usd"]) == ("923.53", "228.87")
    assert (doc["change"]["price_usd"], doc["change"]["other_usd"]) == ("0.00", "0.00")
    assert doc["change"]["wasted_idle_usd"] == "247.250000000"
    by_job = {j["job_id"]: j for j in doc["by_job"]}
    assert by_job["sft"]["change"]["use_usd"] == "373.13"
    assert by_job["sft"]["change"]["efficiency_usd"] == "228.87"
    assert by_job["sft"]["before"]["cost_per_1k_steps_usd"] == "21.500000000"
    assert by_job["sft"]["efficiency_basis"] == "steps"
    assert by_job["gpu"]["change"]["use_usd"] == "550.40"
    assert "steps" not in doc["before"]  # never summed across jobs


def test_the_lmdi_parts_of_a_dearer_hour_and_more_work_add_up() -> None:
    """C0 = 10 acc-h x $10 (1,000 steps), C1 = 20 acc-h x $12 (2,000 steps): the work
    doubled at the same hours per step and the hour got 20 % dearer.
    L = 140 / ln 2.4; use = L ln 2 = 110.8442, efficiency 0, price = L ln 1.2 = 29.1558."""
    parts = split(Factors(Decimal(100), Decimal(10), Decimal(1000)),
                  Factors(Decimal(240), Decimal(20), Decimal(2000)))  # fmt: skip
    weight = 140 / Decimal("2.4").ln()
    assert abs(parts.use - weight * Decimal(2).ln()) < Decimal("1e-25")
    assert parts.efficiency == 0
    assert abs(parts.price - weight * Decimal("1.2").ln()) < Decimal("1e-25")
    assert parts.total == 140
    assert to_cents({"use": parts.use, "efficiency": parts.efficiency, "price": parts.price},
                    Decimal("140.00")) == {"use": Decimal("110.84"), "efficiency": Decimal("0.00"),
                                           "price": Decimal("29.16")}  # fmt: skip


def test_without_work_in_both_periods_the_change_in_hours_is_use() -> None:
    parts = split(
        Factors(Decimal(100), Decimal(10), None), Factors(Decimal(300), Decimal(20), None)
    )
    weight = 200 / Decimal(3).ln()
    assert abs(parts.use - weight * Decimal(2).ln()) < Decimal("1e-25")
    assert parts.efficiency == 0 and parts.total == 200


def test_left_over_cents_go_to_the_largest_part() -> None:
    """Three parts of $1.005 each round (half to even) to $1.00; the change shown is
    $3.02 (after and before rounded): the $0.02 left over joins the first largest part."""
    parts = {"use": Decimal("1.005"), "efficiency": Decimal("1.005"), "price": Decimal("1.005")}
    assert to_cents(parts, Decimal("3.02")) == {
        "use": Decimal("1.02"),
        "efficiency": Decimal("1.00"),
        "price": Decimal("1.00"),
    }
    negative = {"use": Decimal("0.004"), "efficiency": Decimal("-2.006"), "price": Decimal(0)}
    assert to_cents(negative, Decimal("-2.00")) == {
        "use": Decimal("0.00"),
        "efficiency": Decimal("-2.00"),
        "price": Decimal("0.00"),
    }


def test_the_idle_waste_is_the_jobs_own_idle_figure() -> None:
    """The period's idle waste is the job's: 11.5 h x $21.50, from its records."""
    ledger = scenario()
    assert ledger.job("sft", NOW).wasted_idle_usd == Decimal("247.25")
    assert ledger.job("sft", NOW).idle_seconds == 11 * 3600 + 1800


def test_one_job_with_the_same_rate_and_hours_per_step_is_all_use() -> None:
    trn_only = jobs(scenario(), "sft")
    change = decompose(period_figures(trn_only, *WEEK0, NOW, None),
                       period_figures(trn_only, *WEEK1, NOW, None))  # fmt: skip
    assert change.price_usd.quantize(Decimal("1e-20")) == 0  # $1.34375 both weeks
    assert (change.use_usd + change.efficiency_usd).quantize(Decimal("1e-9")) == 602


def test_a_job_in_one_period_only_is_all_use() -> None:
    gpu_only = jobs(scenario(), "gpu")
    change = decompose(period_figures(gpu_only, *WEEK0, NOW, None),
                       period_figures(gpu_only, *WEEK1, NOW, None))  # fmt: skip
    assert change.use_usd == Decimal("550.40")  # 10 h x $55.04, all of it new
    assert change.efficiency_usd == change.price_usd == 0
    assert change_json(change)["by_job"][0]["efficiency_basis"] == "one_period"


def test_a_run_across_the_boundary_is_split_to_the_second() -> None:
    events = Timeline()
    events.run(TRN, t(8, 20), t(9, 4))
    ledger = ledger_after(events, profile(TRN, "trn1.32xlarge", "x"))
    records = jobs(ledger, "x")
    before = period_figures(records, *WEEK0, NOW, None)
    after = period_figures(records, *WEEK1, NOW, None)
    assert (before.accelerator_hours, after.accelerator_hours) == (64, 64)  # 4 h x 16 chips
    assert (before.accelerator_usd, after.accelerator_usd) == (86, 86)  # 4 h x $21.50


def test_a_running_instance_counts_up_to_now_and_ebs_is_other_spend() -> None:
    """Still running at NOW (Nov 16 12:00): week 1 holds its hours from Nov 15 22:00 to the
    period's end (2 h, $43); its 100 GiB gp3 volume (100 x $0.08 = $8/month, from the first
    running on) is other spend: 2 h of November's 720 h x $8 = $0.0222..."""
    events = Timeline()
    events.run(TRN, t(15, 22))
    volumes = (Volume(volume_id="vol-1", size_gib=100),)
    ledger = ledger_after(events, profile(TRN, "trn1.32xlarge", "r", volumes))
    after = period_figures(jobs(ledger, "r"), *WEEK1, NOW, None)
    assert after.accelerator_hours == 32 and after.accelerator_usd == Decimal(43)
    ebs = Decimal(8) * 2 * 3600 / (30 * 86400)
    assert abs(after.total_usd - Decimal(43) - ebs) < Decimal("1e-20")
    change = decompose(period_figures(jobs(ledger, "r"), *WEEK0, NOW, None), after)
    assert abs(change.other_change_usd - ebs) < Decimal("1e-20")


def test_cpu_instances_are_other_spend_not_hours() -> None:
    events = Timeline()
    events.run(CPU, t(10, 0), t(10, 10))
    ledger = ledger_after(events, profile(CPU, "m5.large", "etl"))
    after = period_figures(jobs(ledger, "etl"), *WEEK1, NOW, None)
    assert after.accelerator_hours == 0
    assert after.total_usd == Decimal("0.960")  # 10 h x $0.096
    assert not is_accelerator("m5.large") and not is_accelerator("gp3")
    assert is_accelerator("p4d.24xlarge") and is_accelerator("trn2.48xlarge")
    assert is_accelerator("g5.xlarge") and is_accelerator("inf2.xlarge")


def test_steps_count_from_the_last_checkpoint_before_the_period() -> None:
    events = Timeline()
    events.write("b", "runs/j/step-100/m.pt", t(8, 10))
    events.write("b", "runs/j/step-250/m.pt", t(9, 10))
    events.write("b", "runs/j/step-250/m.pt", t(9, 11))  # a shard written later: same step
    (records,) = jobs(ledger_after(events), "j")
    assert steps_between(records, *WEEK1) == 150
    assert steps_between(records, *WEEK0) == 100
    assert steps_between(JobRecords(job_id="j"), *WEEK1) is None
    # A period in which no step completed has no step figure (not 0).
    assert steps_between(records, WEEK1[1], WEEK1[1] + timedelta(days=7)) is None


def test_without_steps_the_efficiency_is_measured_utilization() -> None:
    """100 acc-h at $1 and 50 % utilization, then 200 acc-h at $1 and 40 %: utilized
    hours 50 -> 80 (use), 1/u 2 -> 2.5 (efficiency), the same price. L = 100 / ln 2;
    use = 100 ln 1.6 / ln 2 = 67.8072, efficiency = 100 ln 1.25 / ln 2 = 32.1928."""
    from shared.domain.spend_change import JobPeriod, job_change

    def period(hours: int, utilization: str) -> JobPeriod:
        usd = Decimal(hours)
        return JobPeriod("u", Decimal(hours), False, usd, usd, Decimal(0), Decimal(0), None,
                         Decimal(utilization))  # fmt: skip

    change = job_change(period(100, "0.5"), period(200, "0.4"))
    assert change.basis == "utilization"
    two = Decimal(2).ln()
    assert abs(change.parts.use - 100 * Decimal("1.6").ln() / two) < Decimal("1e-25")
    assert abs(change.parts.efficiency - 100 * Decimal("1.25").ln() / two) < Decimal("1e-25")
    assert abs(change.parts.price) < Decimal("1e-25") and change.parts.total == 100
    unmeasured = job_change(period(100, "0.5"), JobPeriod("u", Decimal(200), False, Decimal(200),
                            Decimal(200), Decimal(0), Decimal(0), None, None))  # fmt: skip
    assert unmeasured.basis == "none" and unmeasured.parts.efficiency == 0


def test_a_periods_utilization_is_read_per_instance_over_the_period() -> None:
    from shared.domain.utilization import Measured

    asked: list[tuple[str, datetime, datetime]] = []

    def reader(account: str, instance_id: str, lo: datetime, hi: datetime) -> Measured:
        asked.append((instance_id, lo, hi))
        return Measured(Decimal("0.75") * 3600, 3600)

    (sft,) = jobs(scenario(), "sft")
    figures = period_figures([sft], *WEEK1, NOW, None, measured=reader)
    assert figures.jobs[0].utilization == Decimal("0.75")
    assert asked == [(TRN, *WEEK1)]
    assert period_figures([sft], *WEEK1, NOW, None).jobs[0].utilization is None
