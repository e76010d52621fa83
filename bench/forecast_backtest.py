"""``python -m bench.forecast_backtest [--generated N] [--json PATH]``: every candidate
budget forecast against the period's real outcome.

Each scenario (bench/forecast_scenarios.py) is forecast at every hour of its period
from what the ledger would know then (jobs started by then; a running job's last event:
its start or its latest checkpoint; a finished job's end). Reported per candidate:

- coverage: the share of those ticks whose real outcome fell inside the range (a
  candidate without a range: "no range");
- MAPE at 25, 50 and 75 % of the period: the mean of |projected - outcome| / outcome
  over the scenarios, at the tick nearest each fraction;
- moves: the share of consecutive ticks with no new event between them whose projected
  total differs (how much the forecast drifts with the clock alone).

The candidates: ``as_long_again`` (the model this replaced: declared end, else the
job runs as long again as it has run so far, from now), ``fixed_horizon`` (declared
end, else 24 h from its start, extended by 24 h each time it is passed) and the
product's model (``shared.domain.forecast``) at a few spreads of its assumed length.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from bench.forecast_scenarios import HOUR, SimJob, SimScenario, generated, replayed_scenarios
from shared.domain.forecast import DurationPrior, JobFacts, budget_forecast

FRACTIONS = (0.25, 0.5, 0.75)
# (median hours, sigma) of the assumed length: the product's candidates.
PRIORS = (
    DurationPrior(median_hours=24, sigma=1.0),
    DurationPrior(median_hours=12, sigma=2.0),
    DurationPrior(shape="pareto", alpha=1.0, min_hours=1.0),
    DurationPrior(shape="pareto", alpha=1.5, min_hours=1.0),
    DurationPrior(shape="pareto", alpha=0.8, min_hours=1.0),
)
# (central, low, high) projected totals at a tick; low/high None: no range.
Projection = tuple[Decimal, Decimal | None, Decimal | None]
Candidate = Callable[[SimScenario, datetime], Projection]


def _known(scenario: SimScenario, now: datetime) -> list[SimJob]:
    return [j for j in scenario.jobs if j.start <= now]


def _spent(scenario: SimScenario, job: SimJob, until: datetime) -> Decimal:
    """The job's period spend up to ``until`` as the ledger knows it at a tick: a running
    job keeps its burn until its end is known (``until`` beyond its end only once known)."""
    return (
        job.usd_per_hour
        * Decimal(max((until - max(job.start, scenario.period_start)).total_seconds(), 0))
        / 3600
    )


def _declared_end(job: SimJob) -> datetime | None:
    return job.start + timedelta(hours=float(job.declared_hours)) if job.declared_hours else None


def _point_candidate(ends: Callable[[SimJob, datetime], datetime]) -> Candidate:
    def project(scenario: SimScenario, now: datetime) -> Projection:
        total = Decimal(0)
        for job in _known(scenario, now):
            if job.end <= now:
                total += job.spend(scenario.period_start, scenario.horizon)
                continue
            end = ends(job, now)
            if scenario.period_end is not None:
                end = min(end, scenario.period_end)
            total += _spent(scenario, job, max(end, now))
        return total, None, None

    return project


def _as_long_again(job: SimJob, now: datetime) -> datetime:
    declared = _declared_end(job)
    if declared is not None and declared > now:
        return declared
    return now + (now - job.start)


def _fixed_horizon(job: SimJob, now: datetime) -> datetime:
    declared = _declared_end(job)
    if declared is not None and declared > now:
        return declared
    end = job.start + timedelta(hours=24)
    while end <= now:
        end += timedelta(hours=24)
    return end


def product_model(prior: DurationPrior) -> Candidate:
    def project(scenario: SimScenario, now: datetime) -> Projection:
        facts, curves = [], {}
        for job in _known(scenario, now):
            ended = job.end <= now
            facts.append(
                JobFacts(
                    job_id=job.job_id,
                    running=not ended,
                    first_event_at=job.start,
                    last_event_at=job.last_event(now),
                    declared_hours=job.declared_hours,
                )
            )
            curves[job.job_id] = job

        def spend_at(job_id: str, moment: datetime) -> Decimal:
            job = curves[job_id]
            if job.end <= now:
                return job.spend(scenario.period_start, scenario.horizon)
            return _spent(scenario, job, moment)

        forecast = budget_forecast(
            facts,
            spend_at,
            Decimal(1),
            (),
            (scenario.period_start, scenario.period_end),
            prior,
            now,
        )
        return forecast.total_usd, forecast.low_usd, forecast.high_usd

    return project


@dataclass
class Score:
    ticks: int = 0
    inside: int = 0
    inside_known: int = 0
    ranged: bool = True
    moves: int = 0
    quiet_pairs: int = 0
    errors: dict[float, list[float]] = field(default_factory=lambda: {f: [] for f in FRACTIONS})
    errors_known: dict[float, list[float]] = field(
        default_factory=lambda: {f: [] for f in FRACTIONS}
    )

    def figures(self) -> dict[str, object]:
        return {
            "ticks": self.ticks,
            "coverage": round(self.inside / self.ticks, 4) if self.ranged and self.ticks else None,
            "coverage_known": round(self.inside_known / self.ticks, 4)
            if self.ranged and self.ticks
            else None,
            **{
                f"mape_{int(f * 100)}": round(statistics.fmean(v), 4) if v else None
                for f, v in self.errors.items()
            },
            **{
                f"mape_known_{int(f * 100)}": round(statistics.fmean(v), 4) if v else None
                for f, v in self.errors_known.items()
            },
            "moves_without_news": round(self.moves / self.quiet_pairs, 4)
            if self.quiet_pairs
            else None,
        }


def known_outcome(scenario: SimScenario, now: datetime) -> Decimal:
    """The period's real spend of the jobs started by ``now`` (what a forecast of the
    jobs the ledger knows of aims at)."""
    return sum(
        (j.spend(scenario.period_start, scenario.horizon) for j in _known(scenario, now)),
        Decimal(0),
    )


def _events_between(scenario: SimScenario, a: datetime, b: datetime) -> bool:
    return any(
        a < j.start <= b or a < j.end <= b or j.last_event(a) != j.last_event(b)
        for j in scenario.jobs
    )


def score(candidate: Candidate, scenarios: list[SimScenario], score_: Score) -> Score:
    for scenario in scenarios:
        outcome = scenario.outcome()
        if outcome <= 0:
            continue
        first = scenario.period_start.replace(minute=0, second=0) + HOUR
        span = scenario.horizon - scenario.period_start
        ticks = []
        now = first
        while now < scenario.horizon:
            ticks.append(now)
            now += HOUR
        previous: tuple[datetime, Decimal] | None = None
        results = {}
        for now in ticks:
            central, low, high = candidate(scenario, now)
            known = known_outcome(scenario, now)
            results[now] = (central, known)
            score_.ticks += 1
            if low is None or high is None:
                score_.ranged = False
            else:
                score_.inside += low <= outcome <= high
                score_.inside_known += low <= known <= high
            if previous is not None and not _events_between(scenario, previous[0], now):
                score_.quiet_pairs += 1
                score_.moves += central != previous[1]
            previous = (now, central)
        for fraction in FRACTIONS:
            if not ticks:
                continue
            target = scenario.period_start + span * fraction
            nearest = min(ticks, key=lambda t: abs(t - target))
            central, known = results[nearest]
            score_.errors[fraction].append(float(abs(central - outcome) / outcome))
            if known > 0:
                score_.errors_known[fraction].append(float(abs(central - known) / known))
    return score_


def candidates() -> dict[str, Candidate]:
    out: dict[str, Candidate] = {
        "as_long_again (replaced)": _point_candidate(_as_long_again),
        "fixed_horizon 24 h": _point_candidate(_fixed_horizon),
    }
    for prior in PRIORS:
        name = (
            f"pareto alpha {prior.alpha:g}, min {prior.min_hours:g} h"
            if prior.shape == "pareto"
            else f"lognormal median {prior.median_hours:g} h sigma {prior.sigma:g}"
        )
        out[name] = product_model(prior)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.forecast_backtest", description=__doc__)
    parser.add_argument("--generated", type=int, default=200)
    parser.add_argument("--only", default="", help="candidates whose name contains this")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    replayed = replayed_scenarios()
    made = generated(args.generated, args.seed)
    groups = {"replayed (golden + examples)": replayed, "generated": made, "all": replayed + made}
    table: dict[str, dict[str, dict[str, object]]] = {}
    for name, candidate in candidates().items():
        if args.only not in name:
            continue
        table[name] = {g: score(candidate, s, Score()).figures() for g, s in groups.items()}
    print(f"scenarios: {len(replayed)} replayed, {len(made)} generated (seed {args.seed})")
    print(
        "cover/M25..: against the period's real outcome; k-: against the real spend of the "
        "jobs started by the tick"
    )
    names = ["ticks", "coverage", "mape_25", "mape_50", "mape_75"]
    names += ["coverage_known", "mape_known_25", "mape_known_50", "mape_known_75"]
    names += ["moves_without_news"]
    heads = ["ticks", "cover", "M25", "M50", "M75", "kcover", "kM25", "kM50", "kM75", "moves"]
    print(f"{'candidate':36} {'group':10} " + " ".join(f"{h:>6}" for h in heads))
    for name, rows in table.items():
        for group, f in rows.items():
            cells = [f[n] for n in names]
            text = " ".join(f"{'-' if c is None else c:>6}" for c in cells)
            print(f"{name:36} {group.split()[0]:10} {text}")
    if args.json is not None:
        args.json.write_text(json.dumps(table, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
