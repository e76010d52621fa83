"""Scenarios for the forecast backtest: jobs (start, real end, burn, declared length,
checkpoint cadence) in a budget period, and the period's real outcome.

Two sources: the replay documents of the golden scenarios and of the bundled examples
(each job as a constant burn from its first to its last event, its total over that
span: interruptions and restarts are averaged into the burn), and generated ones
(seeded) whose job lengths are drawn from a mixture that is not the forecast's own
assumption (short debugging runs, fine-tunes of a day or so, multi-day runs), with
declared lengths that are sometimes wrong.
"""

from __future__ import annotations

import json
import random
import sys
from contextlib import redirect_stdout
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = ROOT / "costtracker" / "examples"
HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class SimJob:
    job_id: str
    start: datetime
    end: datetime  # the real end (unknown to the forecast until it happens)
    usd_per_hour: Decimal
    declared_hours: Decimal | None
    checkpoint_hours: float | None  # an event every so many hours while running

    def last_event(self, at: datetime) -> datetime:
        """The job's last event known at ``at``: its start, a checkpoint or its end."""
        if at >= self.end:
            return self.end
        if self.checkpoint_hours is None:
            return self.start
        step = timedelta(hours=self.checkpoint_hours)
        return self.start + step * int((at - self.start) / step)

    def spend(self, since: datetime, until: datetime) -> Decimal:
        """What the job costs in [since, until] (its real life)."""
        seconds = (min(until, self.end) - max(since, self.start)).total_seconds()
        return self.usd_per_hour * Decimal(max(seconds, 0)) / 3600


@dataclass(frozen=True)
class SimScenario:
    name: str
    source: str  # golden, example, generated
    jobs: tuple[SimJob, ...]
    period_start: datetime
    period_end: datetime | None  # None: a total budget (the outcome: when all jobs end)

    @property
    def horizon(self) -> datetime:
        return self.period_end or max(j.end for j in self.jobs)

    def outcome(self) -> Decimal:
        return sum((j.spend(self.period_start, self.horizon) for j in self.jobs), Decimal(0))


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def from_document(name: str, source: str, document: dict[str, Any]) -> SimScenario | None:
    """A replay document as a scenario whose period ends at the replay's end."""
    as_of = _at(document["as_of"])
    jobs = []
    for job in document["jobs"]:
        if not job.get("started_at"):
            continue
        start = _at(job["started_at"])
        end = _at(job["ended_at"]) if job.get("ended_at") else as_of
        hours = Decimal(int((end - start).total_seconds())) / 3600
        total = Decimal(str(job["cost_usd"]["total"]))
        if hours <= 0 or total <= 0:
            continue
        declared = (job.get("tags") or {}).get("expected-duration-hours")
        cadence = job.get("checkpoint_cadence_seconds")
        jobs.append(
            SimJob(
                job["job_id"],
                start,
                end,
                total / hours,
                Decimal(declared) if declared else None,
                float(cadence) / 3600 if cadence else None,
            )
        )
    if not jobs:
        return None
    start = min(j.start for j in jobs)
    return SimScenario(name, source, tuple(jobs), start, as_of)


def replayed_scenarios() -> list[SimScenario]:
    """The golden scenarios (their stored replay documents, the shuffled twins left out:
    the same jobs) and the bundled examples (replayed here)."""
    from costtracker.replay import replay
    from costtracker.scenario import Scenario

    out = []
    for path in sorted(GOLDEN.glob("*.replay.json")):
        if "shuffled" in path.name:
            continue
        scenario = from_document(
            path.name.removesuffix(".replay.json"), "golden", json.loads(path.read_text())
        )
        if scenario is not None:
            out.append(scenario)
    for path in sorted(EXAMPLES.glob("*.json")):
        if path.name.endswith(".budgets.json"):
            continue
        with redirect_stdout(sys.stderr):
            document = replay(Scenario.model_validate(json.loads(path.read_text())))
        scenario = from_document(path.stem, "example", document)
        if scenario is not None:
            out.append(scenario)
    return out


def _length_hours(rng: random.Random) -> float:
    kind = rng.random()
    if kind < 0.3:
        return rng.uniform(0.5, 4)  # a debugging or evaluation run
    if kind < 0.75:
        return rng.uniform(6, 40)  # a fine-tune
    return rng.uniform(48, 240)  # a long run


def generated(count: int, seed: int) -> list[SimScenario]:
    rng = random.Random(seed)
    out = []
    month = datetime(2026, 11, 1, tzinfo=UTC)
    for n in range(count):
        monthly = rng.random() < 0.5
        jobs = []
        for k in range(rng.randint(1, 8)):
            start = month + timedelta(hours=rng.uniform(0, 24 * (28 if monthly else 10)))
            length = _length_hours(rng)
            declared: Decimal | None = None
            if rng.random() < 0.4:
                # The declared length: mostly right, sometimes off either way.
                stated = length / rng.choice([1.0, 1.0, 1.0, 0.9, 1.1, 0.7, 1.5])
                declared = Decimal(round(stated, 1)) if stated >= 0.1 else None
            jobs.append(
                SimJob(
                    f"job-{k}",
                    start.replace(microsecond=0),
                    (start + timedelta(hours=length)).replace(microsecond=0),
                    Decimal(rng.choice(["1.21", "5.67", "21.50", "32.77", "55.04", "98.32"])),
                    declared,
                    rng.choice([None, 0.5, 1.0, 2.0, 4.0]),
                )
            )
        period_end = datetime(2026, 12, 1, tzinfo=UTC) if monthly else None
        out.append(
            SimScenario(
                f"generated-{n}",
                "generated",
                tuple(jobs),
                month if monthly else min(j.start for j in jobs),
                period_end,
            )
        )
    return out
