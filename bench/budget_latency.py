"""Budget alert latency: for every budget alert of the budget scenarios, the alert's
``at`` minus the true crossing (both simulated time). The true crossing is found on the
replayed ledger by bisection, to the second, on the scope's spend as of each moment;
and what budget evaluation costs in AWS calls per hour of tracked (simulated) time."""

from __future__ import annotations

import contextlib
import statistics
import sys
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench.counter import default_events
from costtracker.replay import collect_alerts, replay_session
from costtracker.scenario import load_scenario
from shared.adapters.table import MemoryTable
from shared.app import runtime
from shared.config.budgets import Budget
from shared.domain.budgets import period_bounds
from shared.services.budgets import JobCache, effective_budgets, in_scope

SCENARIOS = Path(__file__).resolve().parent.parent / "tests" / "scenarios"


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


def measure(paths: list[Path] | None = None) -> dict[str, Any]:

    rows: list[dict[str, Any]] = []
    tick_calls = 0
    simulated_hours = 0.0
    for path in paths or sorted(
        p for p in SCENARIOS.glob("budget_*.json") if "shuffled" not in p.name
    ):
        scenario = load_scenario(path)
        calls: list[str] = []

        def count(event_name: str, calls: list[str] = calls, **_: Any) -> None:
            calls.append(event_name)

        table = MemoryTable()
        with (
            contextlib.redirect_stdout(sys.stderr),
            replay_session(scenario, table=table) as replayer,
        ):
            start = replayer.clock.now()
            events = default_events()  # the emulator's session, the handlers' clients'
            events.register("before-call.*.*", count)
            try:
                replayer.run()
            finally:
                events.unregister("before-call.*.*", count)
            # The ledger's table is in memory: its calls, counted by the table.
            calls += [f"table.{name}" for name, n in table.calls.items() for _ in range(n)]
            simulated_hours += (replayer.clock.now() - start).total_seconds() / 3600
            tick_calls += len(calls)
            alerts = collect_alerts(replayer.emulator)["alerts"]
            budgets = {
                b.budget_id: b
                for b in effective_budgets(
                    runtime.budget_store(), runtime.current_settings().config
                )
            }
            for alert in alerts:
                if alert["kind"] != "budget":
                    continue
                at = datetime.fromisoformat(alert["at"].replace("Z", "+00:00"))
                budget = budgets[alert["budget_id"]]
                crossing = _crossing(budget, alert["threshold"], start, at, replayer.clock.now())
                rows.append(
                    {
                        "scenario": path.name,
                        "budget_id": budget.budget_id,
                        "threshold": alert["threshold"],
                        "crossing": crossing.isoformat(),
                        "at": alert["at"],
                        "latency_s": (at - crossing).total_seconds(),
                    }
                )
    latencies = [r["latency_s"] for r in rows]
    return {
        "alerts": rows,
        "median_latency_s": statistics.median(latencies) if latencies else None,
        "max_latency_s": max(latencies) if latencies else None,
        "aws_calls_per_simulated_hour": tick_calls / simulated_hours if simulated_hours else None,
    }
