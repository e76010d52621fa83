"""The change decomposition on a hand-made two-week scenario, against a hand calculation.

The scenario's events go through the real services (state changes, the tracker's own
alarms, checkpoint writes) over the in-memory table; the figures are read back from the
job records as the API reads them.

Week 0 (Nov 2-8): one trn1.32xlarge at $21.50/h, 09:00-17:00 daily: H0 = 56 h, C0 = $1,204.00.
Week 1 (Nov 9-15): the trn1 08:00-20:00 daily (84 h, $1,806.00), idle on Nov 12 from 08:30
(11.5 h x $21.50 = $247.25 wasted), plus a p5.48xlarge at $55.04/h for 10 h on Nov 10
($550.40): H1 = 94 h, C1 = $2,356.40.
  usage = (94 - 56) x 21.50                  = $817.00
  rate  = (2,356.40 / 94 - 21.50) x 94        = 2,356.40 - 2,021.00 = $335.40
  usage + rate = $1,152.40 = C1 - C0
Steps: 8,000 a day in week 0 (56,000), 12,000 a day on the 6 busy days of week 1 plus
25,000 on the GPU (97,000): cost per 1k steps 1,204 / 56 = $21.50, then 2,356.40 / 97.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.ebs import Volume
from shared.domain.instance import InstanceProfile
from shared.domain.job import JobRecords
from shared.services.change import (
    change_json,
    decompose,
    is_accelerator,
    period_figures,
    steps_between,
)
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
    assert before.accelerator_hours == 56
    assert before.accelerator_usd == Decimal("1204.00")
    assert after.accelerator_hours == 94
    assert after.accelerator_usd == Decimal("2356.40")
    assert after.wasted_idle_usd == Decimal("247.25")
    assert before.wasted_usd == 0
    assert (before.steps, after.steps) == (56000, 97000)
    assert (before.jobs, after.jobs) == (1, 2)

    change = decompose(before, after)
    assert change.usage_usd == Decimal("817.00")
    assert change.rate_usd.quantize(Decimal("0.000001")) == Decimal("335.400000")
    assert (change.usage_usd + change.rate_usd).quantize(Decimal("0.000001")) == Decimal(
        "1152.400000"
    )
    assert change.accelerator_change_usd == Decimal("1152.40")
    assert change.other_change_usd == 0  # no EBS, storage (0-byte objects) or CPU here

    doc = change_json(change)
    assert doc["change"]["usage_usd"] == "817.000000000"
    assert doc["change"]["rate_usd"] == "335.400000000"
    assert doc["change"]["wasted_idle_usd"] == "247.250000000"
    assert doc["before"]["cost_per_1k_steps_usd"] == "21.500000000"
    per_1k_after = Decimal("2356.40") * 1000 / 97000
    assert doc["after"]["cost_per_1k_steps_usd"] == f"{per_1k_after:.9f}"
    assert doc["change"]["cost_per_1k_steps_usd"] == f"{per_1k_after - Decimal('21.5'):.9f}"


def test_the_idle_waste_is_the_jobs_own_idle_figure() -> None:
    """The period's idle waste is the job's: 11.5 h x $21.50, from its records."""
    ledger = scenario()
    assert ledger.job("sft", NOW).wasted_idle_usd == Decimal("247.25")
    assert ledger.job("sft", NOW).idle_seconds == 11 * 3600 + 1800


def test_one_job_with_the_same_rate_is_all_usage() -> None:
    trn_only = jobs(scenario(), "sft")
    change = decompose(period_figures(trn_only, *WEEK0, NOW, None),
                       period_figures(trn_only, *WEEK1, NOW, None))  # fmt: skip
    assert change.usage_usd == Decimal("602.00")  # (84 - 56) x 21.50
    assert change.rate_usd == 0


def test_a_period_without_accelerator_hours_takes_the_other_rate() -> None:
    gpu_only = jobs(scenario(), "gpu")
    change = decompose(period_figures(gpu_only, *WEEK0, NOW, None),
                       period_figures(gpu_only, *WEEK1, NOW, None))  # fmt: skip
    assert change.usage_usd == Decimal("550.40")  # 10 h x $55.04, all of it new
    assert change.rate_usd == 0
    assert any("no average rate" in n for n in change_json(change)["notes"])


def test_a_run_across_the_boundary_is_split_to_the_second() -> None:
    events = Timeline()
    events.run(TRN, t(8, 20), t(9, 4))
    ledger = ledger_after(events, profile(TRN, "trn1.32xlarge", "x"))
    records = jobs(ledger, "x")
    before = period_figures(records, *WEEK0, NOW, None)
    after = period_figures(records, *WEEK1, NOW, None)
    assert (before.accelerator_hours, after.accelerator_hours) == (4, 4)
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
    assert after.accelerator_hours == 2 and after.accelerator_usd == Decimal(43)
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
