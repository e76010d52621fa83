"""The change decomposition on a hand-made two-week scenario, against a hand calculation.

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

from datetime import UTC, date, datetime
from decimal import Decimal

from shared.models import (
    AlarmTransition,
    CheckpointObject,
    InstanceProfile,
    InstanceRecord,
    ObjectWrite,
    Rate,
    RateSource,
    RateStep,
    Transition,
)
from shared.services.change import (
    change_json,
    decompose,
    is_accelerator,
    period_figures,
    steps_between,
)

NOW = datetime(2026, 11, 16, 12, tzinfo=UTC)
WEEK0 = (datetime(2026, 11, 2, tzinfo=UTC), datetime(2026, 11, 9, tzinfo=UTC))
WEEK1 = (datetime(2026, 11, 9, tzinfo=UTC), datetime(2026, 11, 16, tzinfo=UTC))


def t(day: int, hh: int, mm: int = 0) -> datetime:
    return datetime(2026, 11, day, hh, mm, tzinfo=UTC)


def rate(usd: str) -> Rate:
    return Rate(
        list_usd=Decimal(usd),
        effective_usd=Decimal(usd),
        source=RateSource.OVERRIDE,
        checked_on=date(2026, 11, 1),
        region="us-east-1",
    )


def record(
    iid: str,
    itype: str,
    usd: str,
    runs: list[tuple[datetime, datetime]],
    idle: list[tuple[datetime, datetime]] = (),  # type: ignore[assignment]
) -> InstanceRecord:
    transitions, rates, alarms = [], {}, []
    for n, (start, end) in enumerate(runs):
        transitions += [
            Transition(event_id=f"{iid}-run-{n}", at=start, state="running"),
            Transition(event_id=f"{iid}-stop-{n}", at=end, state="stopped"),
        ]
        rates[f"{iid}-run-{n}"] = (RateStep(since=start, rate=rate(usd)),)
    for n, (start, end) in enumerate(idle):
        for signal in ("accelerator", "cpu"):
            alarms += [
                AlarmTransition(event_id=f"{signal}-a-{n}", at=start, signal=signal, state="ALARM"),
                AlarmTransition(event_id=f"{signal}-o-{n}", at=end, signal=signal, state="OK"),
            ]
    return InstanceRecord(
        profile=InstanceProfile(instance_id=iid, instance_type=itype, region="us-east-1"),
        job_id="job",
        transitions=tuple(transitions),
        alarm_transitions=tuple(alarms),
        segment_rates=rates,
    )


def checkpoint(job: str, step: int, at: datetime) -> CheckpointObject:
    return CheckpointObject(
        bucket="b",
        key=f"runs/{job}/step-{step}/m.pt",
        job_id=job,
        step=step,
        region="us-east-1",
        writes=(ObjectWrite(event_id=f"{job}-{step}", at=at, size_bytes=0),),
    )


def scenario() -> list[tuple[list[InstanceRecord], list[CheckpointObject]]]:
    runs = [(t(d, 9), t(d, 17)) for d in range(2, 9)] + [(t(d, 8), t(d, 20)) for d in range(9, 16)]
    trn = record("i-trn", "trn1.32xlarge", "21.50", runs, idle=[(t(12, 8, 30), t(12, 20))])
    step, trn_ckpts = 0, []
    for d in range(2, 16):
        if d == 12:
            continue  # the idle day makes no progress
        step += 8000 if d <= 8 else 12000
        trn_ckpts.append(checkpoint("sft", step, t(d, 17 if d <= 8 else 20)))
    gpu = record("i-gpu", "p5.48xlarge", "55.04", [(t(10, 8), t(10, 18))])
    gpu_ckpts = [checkpoint("gpu", 5000 * n, t(10, 8 + 2 * n)) for n in range(1, 6)]
    return [([trn], trn_ckpts), ([gpu], gpu_ckpts)]


def test_two_weeks_match_the_hand_calculation() -> None:
    jobs = scenario()
    before = period_figures(jobs, *WEEK0, NOW)
    after = period_figures(jobs, *WEEK1, NOW)
    assert before.accelerator_hours == 56
    assert before.accelerator_usd == Decimal("1204.00")
    assert after.accelerator_hours == 94
    assert after.accelerator_usd == Decimal("2356.40")
    assert after.wasted_idle_usd == Decimal("247.25")
    assert before.wasted_usd == 0
    assert (before.steps, after.steps) == (56000, 97000)

    change = decompose(before, after)
    assert change.usage_usd == Decimal("817.00")
    assert change.rate_usd.quantize(Decimal("0.000001")) == Decimal("335.400000")
    assert (change.usage_usd + change.rate_usd).quantize(Decimal("0.000001")) == Decimal(
        "1152.400000"
    )
    assert change.accelerator_change_usd == Decimal("1152.40")
    assert change.other_change_usd == 0  # no EBS, storage or CPU here

    doc = change_json(change)
    assert doc["change"]["usage_usd"] == "817.000000000"
    assert doc["change"]["rate_usd"] == "335.400000000"
    assert doc["change"]["wasted_idle_usd"] == "247.250000000"
    assert doc["before"]["cost_per_1k_steps_usd"] == "21.500000000"
    per_1k_after = Decimal("2356.40") * 1000 / 97000
    assert doc["after"]["cost_per_1k_steps_usd"] == f"{per_1k_after:.9f}"
    assert doc["change"]["cost_per_1k_steps_usd"] == f"{per_1k_after - Decimal('21.5'):.9f}"


def test_one_job_with_the_same_rate_is_all_usage() -> None:
    trn_only = scenario()[:1]
    change = decompose(period_figures(trn_only, *WEEK0, NOW), period_figures(trn_only, *WEEK1, NOW))
    assert change.usage_usd == Decimal("602.00")  # (84 - 56) x 21.50
    assert change.rate_usd == 0


def test_a_period_without_accelerator_hours_takes_the_other_rate() -> None:
    gpu_only = scenario()[1:]
    change = decompose(period_figures(gpu_only, *WEEK0, NOW), period_figures(gpu_only, *WEEK1, NOW))
    assert change.usage_usd == Decimal("550.40")
    assert change.rate_usd == 0
    assert any("no average rate" in n for n in change_json(change)["notes"])


def test_a_run_across_the_boundary_is_split_to_the_second() -> None:
    trn = record("i-x", "trn1.32xlarge", "10", [(t(8, 20), t(9, 4))])
    before = period_figures([([trn], [])], *WEEK0, NOW)
    after = period_figures([([trn], [])], *WEEK1, NOW)
    assert (before.accelerator_hours, after.accelerator_hours) == (4, 4)
    assert (before.accelerator_usd, after.accelerator_usd) == (40, 40)


def test_cpu_instances_are_other_spend_not_hours() -> None:
    cpu = record("i-cpu", "m5.large", "0.096", [(t(10, 0), t(10, 10))])
    after = period_figures([([cpu], [])], *WEEK1, NOW)
    assert after.accelerator_hours == 0
    assert after.total_usd == Decimal("0.960")
    assert not is_accelerator("m5.large") and not is_accelerator("gp3")
    assert is_accelerator("p4d.24xlarge") and is_accelerator("trn2.48xlarge")
    assert is_accelerator("g5.xlarge") and is_accelerator("inf2.xlarge")


def test_steps_count_from_the_last_checkpoint_before_the_period() -> None:
    ckpts = [checkpoint("j", 100, t(8, 10)), checkpoint("j", 250, t(9, 10))]
    assert steps_between(ckpts, *WEEK1) == 150
    assert steps_between(ckpts, *WEEK0) == 100
    assert steps_between([], *WEEK1) is None
