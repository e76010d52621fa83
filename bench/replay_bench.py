"""Sections 1 and 3: AWS calls and items written per event kind during a replay, and
replay throughput against the floor of one bare UpdateItem per event. CPU per event over
the in-memory twins is ``bench.twin_cpu``; where the replay's time goes (cProfile, the
emulator's time by operation) is ``bench.profiling``."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from datetime import datetime
from typing import Any

from bench.counter import CallCounter, CountingTable, default_events, summarize
from bench.events import ALARM, REBALANCE, SPOT_WARNING, STATE, event_time
from bench.profiling import CallTimer

CLOSING = {"stopping", "shutting-down", "stopped", "terminated"}


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Classifier:
    """Names what each delivered event is, as the handler will see it: first sight of an
    instance, later (in order), late (after a later event of the same instance arrived),
    duplicate (the same event id again)."""

    def __init__(self, scenario: Any) -> None:
        from shared.config.ledger import LedgerConfig

        tracking = LedgerConfig().tracking
        self.tracked = {
            s.instance_id: tracking.job_of(s.instance_id, s.instance_type, s.tags) is not None
            for s in scenario.instances
        }
        self.seen_events: set[str] = set()
        self.latest: dict[str, datetime] = {}

    def _order(self, iid: str, at: datetime) -> str:
        latest = self.latest.get(iid)
        if latest is None:
            self.latest[iid] = at
            return "first-sight"
        if at < latest:
            return "late"
        self.latest[iid] = at
        return "later"

    def classify(self, function: str, event: dict[str, Any]) -> str:
        detail_type = event.get("detail-type")
        eid = f"{function}:{event.get('id')}"
        duplicate = eid in self.seen_events
        self.seen_events.add(eid)
        detail = event.get("detail") or {}
        at = event_time(event)
        if function == "instance_state":
            state = detail.get("state")
            kind = "running" if state == "running" else "closing" if state in CLOSING else state
            if kind == "pending":
                return "state pending"
            iid = str(detail.get("instance-id"))
            if not self.tracked.get(iid, True):
                return "state untracked instance"
            if duplicate:
                return "state duplicate"
            return f"state {kind} {self._order(iid, at)}"
        if function == "spot_interruption":
            name = "spot warning" if detail_type == SPOT_WARNING else "rebalance rec."
            if duplicate:
                return f"{name} duplicate"
            return f"{name} {self._order(str(detail.get('instance-id')), at)}"
        if function == "checkpoint":
            name = "ckpt created" if detail_type == "Object Created" else "ckpt deleted"
            return f"{name} duplicate" if duplicate else name
        if function == "alarm_state":
            ours = str(detail.get("alarmName", "")).startswith("costtracker-")
            if not ours:
                return "alarm (not ours)"
            return "alarm duplicate" if duplicate else f"alarm {detail['state']['value']}"
        short = str(detail_type or "?").replace("EC2 ", "").replace(" Notification", "")
        return f"{function}: {short}"


def run_replay(
    scenario_dict: dict[str, Any],
    *,
    api_requests: bool = True,
    progress_every: int = 500,
    floor_every: int = 500,
    floor_calls: int = 100,
) -> dict[str, Any]:
    """Replay the scenario once, counting calls per invocation; then the API requests.

    The replay runs in local mode (the ledger's table in memory: ``CountingTable``).
    Every ``floor_every`` events the replay pauses for a block of ``floor_calls`` bare
    UpdateItems on the same emulator (a table of their own, a client outside the counting
    hooks): the floor is measured in the same minutes as the replay, so a machine that
    slows down or speeds up moves both. The blocks' time is left out of the replay's."""
    from costtracker.lambda_context import FakeLambdaContext
    from costtracker.local_api import proxy_event
    from costtracker.replay import replay_session
    from costtracker.scenario import Scenario

    scenario = Scenario.model_validate(scenario_dict)
    counter = CallCounter()
    table = CountingTable(counter)
    events: Any = None
    classifier = Classifier(scenario)
    invocations: list[dict[str, Any]] = []
    per_event_s: list[float] = []
    server = CallTimer()
    try:
        # Handler stdout (Powertools metrics EMF) goes to stderr: stdout keeps the table.
        with redirect_stdout(sys.stderr), replay_session(scenario, table=table) as replayer:
            events = default_events()  # the emulator's session, the handlers' clients'
            counter.register(events)
            server.register(events)
            original: Callable[[str, Any], Any] = replayer.invoke
            bookkeeping = [0.0]  # the bench's own work per invocation, left out as the hooks

            def counted_invoke(function: str, event: Any) -> Any:
                b0 = time.perf_counter()
                category = (
                    f"scheduled {function}"
                    if event.get("detail-type") == "Scheduled Event"
                    else classifier.classify(function, event)
                )
                mark, rejected = len(counter.calls), len(replayer.rejected)
                t0, c0 = time.perf_counter(), time.thread_time()
                result = original(function, event)
                cpu, wall = time.thread_time() - c0, time.perf_counter() - t0
                b1 = time.perf_counter()
                invocations.append(
                    {
                        "function": function,
                        "category": category,
                        "wall_s": wall,
                        "cpu_s": cpu,
                        "failed": len(replayer.rejected) > rejected,
                        **summarize(counter.since(mark)),
                    }
                )
                bookkeeping[0] += (t0 - b0) + (time.perf_counter() - b1)
                return result

            replayer.invoke = counted_invoke  # type: ignore[method-assign]
            n = len(scenario.events)
            _say(f"replay: {n} events, {len(scenario.instances)} instances")
            floor = FloorBlocks(replayer.emulator)
            start = time.perf_counter()
            overhead0 = counter.overhead_s
            server.seconds.clear()
            server.count.clear()
            for i, event in enumerate(scenario.events, 1):
                t0 = time.perf_counter()
                replayer.deliver(event)
                per_event_s.append(time.perf_counter() - t0)
                if floor_every and (i % floor_every == 0 or i == n):
                    floor.block(floor_calls)
                if progress_every and i % progress_every == 0:
                    elapsed = time.perf_counter() - start
                    _say(
                        f"  {i}/{n} events, {elapsed:.0f} s, {i / elapsed:.1f} events/s,"
                        f" ~{(n - i) * elapsed / i:.0f} s to go"
                    )
            if scenario.until is not None:
                replayer.advance(scenario.until)
            replay_s = time.perf_counter() - start - floor.seconds - bookkeeping[0]
            hooks_s = counter.overhead_s - overhead0
            server_ops = server.table()
            _say(
                f"  replayed in {replay_s:.1f} s (counting hooks {hooks_s:.1f} s;"
                f" the bench's per-invocation bookkeeping, {bookkeeping[0]:.1f} s, left out)"
            )
            api_error = None
            if api_requests:
                try:
                    invocations += _api_requests(replayer, counter, proxy_event, FakeLambdaContext)
                except Exception as exc:
                    api_error = f"{type(exc).__name__}: {exc}"
                    _say(f"  API requests failed: {api_error}")
            rejected = list(replayer.rejected)
            counter.unregister(events)
            server.unregister(events)
            alarms, open_instances = _alarms_and_open(replayer)
            stored = table.stored()
    finally:
        if events is not None:
            counter.unregister(events)
            server.unregister(events)
    return {
        "events": len(scenario.events),
        "instances": len(scenario.instances),
        "floor": floor.summary(),
        "replay_s": replay_s,
        "hooks_s": hooks_s,
        "bookkeeping_s": bookkeeping[0],
        "server_ops": server_ops,
        "per_event_s": per_event_s,
        "invocations": invocations,
        "rejected": rejected,
        "counter": counter,
        "alarms_at_end": alarms,
        "api_error": api_error,
        "open_instances_at_end": open_instances,
        "stored_items": stored,
        "simulated_days": (
            (
                event_time({"time": scenario_dict["until"]}) - min(scenario.event_times())
            ).total_seconds()
            / 86400
            if scenario_dict.get("until")
            else 1.0
        ),
    }


def _alarms_and_open(replayer: Any) -> tuple[int, int]:
    """CloudWatch alarms left in the emulator, and instances with an open segment, at the end."""
    from shared.app import runtime

    alarms = 0
    try:
        paginator = replayer.emulator.client("cloudwatch").get_paginator("describe_alarms")
        for page in paginator.paginate():
            alarms += len(page.get("MetricAlarms", [])) + len(page.get("CompositeAlarms", []))
    except Exception:
        alarms = 0
    return alarms, sum(1 for _ in runtime.ledger_deps().instances.open_heads())


def _api_requests(
    replayer: Any, counter: CallCounter, proxy_event: Any, context_type: Any
) -> list[dict[str, Any]]:
    import json

    from functions.job_cost_api.handler import handler

    now = replayer.clock.now()
    first = (now.date() - __import__("datetime").timedelta(days=30)).isoformat()
    listing = json.loads(
        _get(handler, proxy_event, context_type, f"/jobs?limit=100&from={first}")["body"]
    )
    job_ids = [j["job_id"] for j in listing.get("jobs", [])]
    requests = [("GET /jobs/{id}", f"/jobs/{jid}") for jid in job_ids]
    requests += [("GET /jobs", "/jobs")] * 3
    requests += [("GET /jobs?project=", "/jobs?project=llama")] * 3
    out = []
    for category, path in requests:
        mark = len(counter.calls)
        t0, c0 = time.perf_counter(), time.thread_time()
        response = _get(handler, proxy_event, context_type, path)
        cpu, wall = time.thread_time() - c0, time.perf_counter() - t0
        out.append(
            {
                "function": "job_cost_api",
                "category": category,
                "wall_s": wall,
                "cpu_s": cpu,
                "failed": int(response["statusCode"]) != 200,
                "response_bytes": len(response.get("body") or ""),
                **summarize(counter.since(mark)),
            }
        )
    return out


def _get(handler: Any, proxy_event: Any, context_type: Any, path: str) -> dict[str, Any]:
    result: dict[str, Any] = handler(
        proxy_event("GET", path, {"Accept": "application/json"}),
        context_type(function_name="job_cost_api"),
    )
    return result


class FloorBlocks:
    """Blocks of bare UpdateItems on the replay's own emulator, between two deliveries."""

    def __init__(self, emulator: Any) -> None:
        import boto3

        from shared.adapters.ledger_schema import create_table_request

        # A session of its own: the counting hooks live on boto3's default session.
        self.client = boto3.session.Session().client(
            "dynamodb", region_name=emulator.region, endpoint_url=emulator.endpoint
        )
        self.client.create_table(**create_table_request("bench-floor"))
        self.seconds = 0.0
        self.rates: list[float] = []
        self.per_call: list[float] = []

    def block(self, n_calls: int) -> None:
        start = time.perf_counter()
        for i in range(n_calls):
            t0 = time.perf_counter()
            self.client.update_item(
                TableName="bench-floor",
                Key={"pk": {"S": f"BENCH#{i % 100}"}, "sk": {"S": "X"}},
                UpdateExpression="ADD n :one",
                ExpressionAttributeValues={":one": {"N": "1"}},
            )
            self.per_call.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - start
        self.seconds += elapsed
        self.rates.append(n_calls / elapsed)

    def summary(self) -> dict[str, Any]:
        calls = len(self.per_call)
        return {
            "block_rates": self.rates,
            "blocks": len(self.rates),
            "calls": calls,
            # Calls over the blocks' whole time: every block weighs by its length.
            "rate": calls / self.seconds if self.seconds else 0.0,
            "median_rate": statistics.median(self.rates) if self.rates else 0.0,
            "median_call_ms": statistics.median(self.per_call) * 1000 if calls else 0.0,
        }


def event_kinds(scenario_dict: dict[str, Any]) -> dict[str, int]:
    from collections import Counter

    kinds = Counter(str(e.get("detail-type")) for e in scenario_dict["events"])
    return {
        k: kinds.get(k, 0)
        for k in (STATE, SPOT_WARNING, REBALANCE, "Object Created", "Object Deleted", ALARM)
    }
