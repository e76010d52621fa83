"""Budget alert latency: for every budget alert of the budget scenarios, the alert's
``at`` minus the true crossing (both simulated time). The true crossing is found on the
replayed ledger by bisection, to the second, on the scope's spend as of each moment;
and what budget evaluation costs in AWS calls per hour of tracked (simulated) time.

Each alert is classed as predicted (the minute tick planned a crossing timer for that
threshold: the forecast saw the crossing coming) or not (e.g. a crossing that a closing
segment's minimum brings about); goals: predicted at most 10 s (median and maximum),
the others at most 60 s. Every scenario is replayed plain, and delivered late and twice
(neighbours up to 15 minutes apart swapped, every event again after the next one).

The timer's precision in the model: SQS delays a message by whole seconds, so a timer is
planned for the crossing rounded up to the second, and the replay delivers it then.
Lambda's SQS poller adds its own delay in AWS, which the replay does not model and no
figure here measures.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench.counter import default_events
from costtracker.replay import collect_alerts, replay_session
from costtracker.scenario import Scenario, load_scenario
from shared.adapters import keys
from shared.adapters.table import MemoryTable
from shared.app import runtime
from shared.config.budgets import Budget
from shared.domain.budgets import period_bounds
from shared.domain.finance_day import calendar_of
from shared.services.budgets import JobCache, effective_budgets, in_scope

SCENARIOS = Path(__file__).resolve().parent.parent / "tests" / "scenarios"
ACTION_SCENARIOS = SCENARIOS / "budget_actions"
PREDICTED_GOAL_S = 10
OTHER_GOAL_S = 60


def _crossing(
    budget: Budget, threshold: int, before: datetime, after: datetime, now: datetime
) -> datetime:
    """The first second at which the scope's spend reaches the threshold, on the ledger
    as it stands at the end of the replay (``now``): each in-scope job's spend up to a
    moment less its spend up to the start of that moment's budget period."""
    config = runtime.current_settings().config
    target = budget.amount_usd * threshold / 100
    deps = runtime.ledger_deps()
    cache = JobCache(deps)

    def spend(at: datetime) -> Any:
        start, _, _ = period_bounds(budget, at)
        total = Decimal(0)
        for job_id, rollups in cache.jobs().items():
            if in_scope(budget, job_id, rollups, config):
                total += cache.spend_at(job_id, at, now) - cache.spend_at(job_id, start, now)
        return total

    lo, hi = before, after  # spend(lo) < target <= spend(hi)
    while hi - lo > timedelta(seconds=1):
        mid = lo + (hi - lo) / 2
        if spend(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


LATE_BY = timedelta(minutes=15)


def _time(event: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00"))
    except (KeyError, TypeError, ValueError):
        return None


def late_and_twice(scenario: Scenario) -> Scenario:
    """Neighbouring events at most 15 minutes apart arrive in the wrong order (the later
    one first), and every event arrives again after the next one (a late duplicate)."""
    events = list(scenario.events)
    for i in range(0, len(events) - 1, 2):
        a, b = _time(events[i]), _time(events[i + 1])
        if a is not None and b is not None and abs(b - a) <= LATE_BY:
            events[i], events[i + 1] = events[i + 1], events[i]
    delivered = []
    for i, event in enumerate(events):
        delivered.append(event)
        if i > 0:
            delivered.append(events[i - 1])
    if events:
        delivered.append(events[-1])
    return scenario.model_copy(update={"events": delivered})


def scenarios() -> Iterator[tuple[str, Scenario]]:
    """The budget scenarios of tests/scenarios and tests/scenarios/budget_actions, each
    plain and delivered late and twice (budget_llama_shuffled.json is that one's own)."""
    plain: list[tuple[str, Scenario]] = [
        (p.name, load_scenario(p))
        for p in sorted(SCENARIOS.glob("budget_*.json"))
        if "shuffled" not in p.name
    ]
    plain += [
        (f"actions:{p.stem}", load_scenario(p)) for p in sorted(ACTION_SCENARIOS.glob("*.json"))
    ]
    for name, scenario in plain:
        yield name, scenario
        yield f"{name} (late, twice)", late_and_twice(scenario)


def _predicted(table: MemoryTable, budget_id: str, period_key: str, threshold: int) -> bool:
    """Whether a tick planned a crossing timer for this threshold (its claim is kept)."""
    prefix = f"{keys.part(budget_id)}#{period_key}#{threshold}#"
    return any(True for _ in table.query("TIMERS", begins_with=prefix))


def _replay(name: str, scenario: Scenario, rows: list[dict[str, Any]]) -> tuple[int, float]:
    """Replay one scenario, adding a row per budget alert; its (AWS calls, hours)."""
    calls: list[str] = []

    def count(event_name: str, calls: list[str] = calls, **_: Any) -> None:
        calls.append(event_name)

    table = MemoryTable()
    with contextlib.redirect_stdout(sys.stderr), replay_session(scenario, table=table) as replayer:
        start = replayer.clock.now()
        events = default_events()  # the emulator's session, the handlers' clients'
        events.register("before-call.*.*", count)
        try:
            replayer.run()
        finally:
            events.unregister("before-call.*.*", count)
        # The ledger's table is in memory: its calls, counted by the table.
        calls += [f"table.{op}" for op, n in table.calls.items() for _ in range(n)]
        hours = (replayer.clock.now() - start).total_seconds() / 3600
        config = runtime.current_settings().config
        budgets = {b.budget_id: b for b in effective_budgets(runtime.budget_store(), config)}
        for alert in collect_alerts(replayer.emulator)["alerts"]:
            if alert["kind"] != "budget":
                continue
            at = datetime.fromisoformat(alert["at"].replace("Z", "+00:00"))
            budget = budgets[alert["budget_id"]]
            threshold = alert["threshold"]
            crossing = _crossing(budget, threshold, start, at, replayer.clock.now())
            _, _, period_key = period_bounds(budget, crossing, calendar_of(config))
            rows.append(
                {
                    "scenario": name,
                    "budget_id": budget.budget_id,
                    "threshold": threshold,
                    "predicted": _predicted(table, budget.budget_id, period_key, threshold),
                    "crossing": crossing.isoformat(),
                    "at": alert["at"],
                    "latency_s": (at - crossing).total_seconds(),
                }
            )
    return len(calls), hours


def _summary(latencies: list[float], goal: float) -> dict[str, Any]:
    return {
        "alerts": len(latencies),
        "median_latency_s": statistics.median(latencies) if latencies else None,
        "max_latency_s": max(latencies) if latencies else None,
        "goal_s": goal,
        "met": max(latencies) <= goal if latencies else None,
    }


def measure(
    chosen: Callable[[], Iterator[tuple[str, Scenario]]] | None = None,
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    tick_calls, simulated_hours = 0, 0.0
    for name, scenario in (chosen or scenarios)():
        calls, hours = _replay(name, scenario, rows)
        tick_calls += calls
        simulated_hours += hours
    latencies = [r["latency_s"] for r in rows]
    return {
        "alerts": rows,
        "median_latency_s": statistics.median(latencies) if latencies else None,
        "max_latency_s": max(latencies) if latencies else None,
        "predicted": _summary([r["latency_s"] for r in rows if r["predicted"]], PREDICTED_GOAL_S),
        "other": _summary([r["latency_s"] for r in rows if not r["predicted"]], OTHER_GOAL_S),
        "aws_calls_per_simulated_hour": tick_calls / simulated_hours if simulated_hours else None,
    }


if __name__ == "__main__":
    import json

    result = measure()
    for row in result["alerts"]:
        kind = "predicted" if row["predicted"] else "other"
        print(
            f"{row['scenario']:48} {row['threshold']:>4} %  {kind:9} crossing "
            f"{row['crossing'][11:19]} alert {row['at'][11:19]} {row['latency_s']:6.0f} s"
        )
    print(json.dumps({k: v for k, v in result.items() if k != "alerts"}, indent=1))
