"""Sections 1 and 2: AWS calls per operation during a replay, replay throughput against
the floor of one bare UpdateItem per event, and handler CPU time against in-memory twins."""

from __future__ import annotations

import io
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from datetime import datetime
from typing import Any
from unittest import mock

from bench.counter import CallCounter, summarize
from bench.scenario import REBALANCE, SPOT_WARNING, STATE

TWIN_FUNCTIONS = ("instance_state", "spot_interruption", "checkpoint")
CLOSING = {"stopping", "shutting-down", "stopped", "terminated"}


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _event_time(event: dict[str, Any]) -> datetime:
    from shared.clock import utc

    return utc(datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00")))


class Classifier:
    """Names what each delivered event is, as the handler will see it."""

    def __init__(self, scenario: Any) -> None:
        from shared.config import LedgerConfig

        tracking = LedgerConfig().tracking
        self.tracked = {
            s.instance_id: tracking.job_of(s.instance_id, s.instance_type, s.tags) is not None
            for s in scenario.instances
        }
        self.seen_events: set[str] = set()
        self.known_instances: set[str] = set()

    def classify(self, function: str, event: dict[str, Any]) -> str:
        detail_type = event.get("detail-type")
        eid = str(event.get("id"))
        duplicate = eid in self.seen_events
        self.seen_events.add(eid)
        detail = event.get("detail") or {}
        if function == "instance_state":
            state = detail.get("state")
            kind = "running" if state == "running" else "closing" if state in CLOSING else state
            if kind == "pending":
                return "state pending"
            iid = detail.get("instance-id")
            if not self.tracked.get(iid, True):
                first = iid not in self.known_instances
                self.known_instances.add(iid)
                return f"state untracked-instance {'first' if first else 'later'}"
            if duplicate:
                return f"state {kind} duplicate"
            first = iid not in self.known_instances
            self.known_instances.add(iid)
            return f"state {kind} {'first-sight' if first else 'later'}"
        if function == "spot_interruption":
            name = "spot warning" if detail_type == SPOT_WARNING else "rebalance rec."
            iid = detail.get("instance-id")
            first = iid not in self.known_instances
            self.known_instances.add(iid)
            if duplicate:
                return f"{name} duplicate"
            return f"{name} {'first-sight' if first else 'later'}"
        if function == "checkpoint":
            name = "ckpt created" if detail_type == "Object Created" else "ckpt deleted"
            return f"{name} duplicate" if duplicate else name
        short = str(detail_type or "?").replace("EC2 ", "").replace(" Notification", "")
        return f"{function}: {short}"


def run_replay(
    scenario_dict: dict[str, Any], *, api_requests: bool = True, progress_every: int = 500
) -> dict[str, Any]:
    """Replay the scenario once, counting calls per invocation; then the API requests."""
    import boto3

    from costtracker.local_api import proxy_event
    from costtracker.replay import FakeLambdaContext, replay_session
    from costtracker.scenario import Scenario

    scenario = Scenario.model_validate(scenario_dict)
    counter = CallCounter()
    events = boto3._get_default_session().events
    counter.register(events)
    classifier = Classifier(scenario)
    invocations: list[dict[str, Any]] = []
    per_event_s: list[float] = []
    try:
        # Handler stdout (Powertools metrics EMF) goes to stderr: stdout keeps the table.
        with redirect_stdout(sys.stderr), replay_session(scenario) as replayer:
            original: Callable[[str, Any], None] = replayer.invoke

            def counted_invoke(function: str, event: Any) -> None:
                category = (
                    f"scheduled {function}"
                    if event.get("detail-type") == "Scheduled Event"
                    else classifier.classify(function, event)
                )
                mark, rejected = len(counter.calls), len(replayer.rejected)
                t0, c0 = time.perf_counter(), time.thread_time()
                original(function, event)
                cpu, wall = time.thread_time() - c0, time.perf_counter() - t0
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

            replayer.invoke = counted_invoke  # type: ignore[method-assign]
            n = len(scenario.events)
            _say(f"replay: {n} events, {len(scenario.instances)} instances")
            start = time.perf_counter()
            for i, event in enumerate(scenario.events, 1):
                t0 = time.perf_counter()
                replayer.deliver(event)
                per_event_s.append(time.perf_counter() - t0)
                if progress_every and i % progress_every == 0:
                    elapsed = time.perf_counter() - start
                    _say(
                        f"  {i}/{n} events, {elapsed:.0f} s, {i / elapsed:.1f} events/s,"
                        f" ~{(n - i) * elapsed / i:.0f} s to go"
                    )
            if scenario.until is not None:
                replayer.advance(scenario.until)
            replay_s = time.perf_counter() - start
            _say(f"  replayed in {replay_s:.1f} s")
            api_error = None
            if api_requests:
                try:
                    invocations += _api_requests(replayer, counter, proxy_event, FakeLambdaContext)
                except Exception as exc:
                    api_error = f"{type(exc).__name__}: {exc}"
                    _say(f"  API requests failed: {api_error}")
            rejected = list(replayer.rejected)
            alarms, open_instances = _alarms_and_open(replayer)
    finally:
        counter.unregister(events)
    return {
        "events": len(scenario.events),
        "instances": len(scenario.instances),
        "replay_s": replay_s,
        "per_event_s": per_event_s,
        "invocations": invocations,
        "rejected": rejected,
        "counter": counter,
        "alarms_at_end": alarms,
        "api_error": api_error,
        "open_instances_at_end": open_instances,
    }


def _alarms_and_open(replayer: Any) -> tuple[int, int]:
    """CloudWatch alarms left in the emulator, and instances with an open segment, at the end."""
    from shared import runtime

    alarms = 0
    try:
        paginator = replayer.emulator.client("cloudwatch").get_paginator("describe_alarms")
        for page in paginator.paginate():
            alarms += len(page.get("MetricAlarms", [])) + len(page.get("CompositeAlarms", []))
    except Exception:
        alarms = 0
    return alarms, sum(1 for _ in runtime.ledger().open_instances())


def _api_requests(
    replayer: Any, counter: CallCounter, proxy_event: Any, context_type: Any
) -> list[dict[str, Any]]:
    import json

    from functions.job_cost_api.handler import handler

    jobs = json.loads(_get(handler, proxy_event, context_type, "/jobs?limit=100")["body"])
    job_ids = [j["job_id"] for j in jobs.get("jobs", jobs.get("items", []))]
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


def floor_rate(n_calls: int, blocks: int) -> dict[str, Any]:
    """One bare UpdateItem per event against a fresh emulator: block rates (calls/s)."""
    from costtracker.emulator import running_emulator

    rates = []
    per_call = []
    with running_emulator() as emulator:
        table = "bench-floor"
        client = emulator.client("dynamodb")
        from shared.ledger_schema import create_table_request

        client.create_table(**create_table_request(table))
        for b in range(blocks):
            start = time.perf_counter()
            for i in range(n_calls):
                t0 = time.perf_counter()
                client.update_item(
                    TableName=table,
                    Key={"pk": {"S": f"BENCH#{i % 100}"}, "sk": {"S": "X"}},
                    UpdateExpression="ADD n :one",
                    ExpressionAttributeValues={":one": {"N": "1"}},
                )
                per_call.append(time.perf_counter() - t0)
            rates.append(n_calls / (time.perf_counter() - start))
            _say(f"  floor block {b + 1}/{blocks}: {rates[-1]:.1f} UpdateItem/s")
    return {
        "block_rates": rates,
        "median_rate": statistics.median(rates),
        "median_call_ms": statistics.median(per_call) * 1000,
    }


class _CountingSink(io.TextIOBase):
    def __init__(self) -> None:
        self.bytes = 0
        self.lines = 0

    def write(self, s: str) -> int:
        self.bytes += len(s.encode())
        self.lines += s.count("\n")
        return len(s)


def handler_cpu(scenario_dict: dict[str, Any]) -> dict[str, Any]:
    """CPU time per event with no I/O: the service alone, and the whole handler, both over
    in-memory twins (``tests.fakes``); log output is counted, not written."""
    from shared.models import InstanceProfile, Volume
    from shared.services.instance_state import LedgerDeps, record_state_change

    from costtracker.replay import FakeLambdaContext, ledger_config_for, load_handler
    from costtracker.scenario import Scenario
    from shared import runtime
    from shared.clock import FixedClock
    from shared.event_patterns import EVENT_RULES, checkpoint_rule, matches
    from shared.pricing import PriceBook, bundled_snapshot
    from tests.fakes import FakeInventory, InMemoryLedger

    scenario = Scenario.model_validate(scenario_dict)
    config = ledger_config_for(scenario)
    profiles = [
        InstanceProfile(
            instance_id=s.instance_id,
            instance_type=s.instance_type,
            region=scenario.region,
            availability_zone=s.availability_zone,
            lifecycle=s.lifecycle,
            platform=s.platform,
            tags=s.tags,
            volumes=tuple(
                Volume(volume_id=v.volume_id, size_gib=v.size_gib, volume_type=v.volume_type)
                for v in s.volumes
            ),
        )
        for s in scenario.instances
    ]
    first = min(scenario.event_times())

    def deps() -> LedgerDeps:
        ledger = InMemoryLedger()
        return LedgerDeps(
            ledger=ledger,
            inventory=FakeInventory(*profiles),
            prices=PriceBook(config, ledger, None, bundled_snapshot(), first.date()),
            clock=FixedClock(first),
            config=config,
        )

    # (a) the state-change service alone
    service_us = []
    d = deps()
    for event in scenario.events:
        if event.get("detail-type") != STATE:
            continue
        at = _event_time(event)
        d.clock.advance_to(at)  # type: ignore[attr-defined]
        c0 = time.process_time()
        record_state_change(
            d,
            event_id=event["id"],
            at=at,
            instance_id=event["detail"]["instance-id"],
            state=event["detail"]["state"],
            region=event["region"],
        )
        service_us.append((time.process_time() - c0) * 1e6)

    # (b) the whole handler (parse, log, service) with the twins as its dependencies
    # Only the functions whose AWS dependencies are all in ``runtime.ledger_deps``.
    rules = {**EVENT_RULES, "checkpoint": checkpoint_rule(config.checkpoint.buckets)}
    rules = {k: v for k, v in rules.items() if k in TWIN_FUNCTIONS}
    env = {
        "TABLE_NAME": "bench",
        "LEDGER_CONFIG": config.model_dump_json(),
        "FINANCE_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:f",
        "TEAM_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:t",
        "ADMIN_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:a",
        "POWERTOOLS_SERVICE_NAME": "costtracker",
        "AWS_REGION": scenario.region,
        # Nothing may reach AWS from here: a closed loopback port, dummy credentials.
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
    }
    d = deps()
    handler_us: dict[str, list[float]] = {}
    failures = 0
    sink = _CountingSink()
    with mock.patch.dict(os.environ, env):
        runtime.reset()
        handlers = {name: load_handler(name) for name in rules}
        logger = logging.getLogger("costtracker")
        patched = [(h, h.stream) for h in logger.handlers if isinstance(h, logging.StreamHandler)]
        for h, _ in patched:
            h.setStream(sink)  # type: ignore[arg-type]
        try:
            # Powertools Metrics print EMF to stdout: CloudWatch Logs bytes too, counted.
            with mock.patch.object(runtime, "ledger_deps", lambda: d), redirect_stdout(sink):
                for event in scenario.events:
                    routed = [n for n, p in rules.items() if matches(p, event)]
                    d.clock.advance_to(_event_time(event))  # type: ignore[attr-defined]
                    for name in routed:
                        c0 = time.process_time()
                        try:
                            handlers[name](event, FakeLambdaContext(function_name=name))
                        except Exception:
                            failures += 1
                            continue
                        handler_us.setdefault(name, []).append((time.process_time() - c0) * 1e6)
        finally:
            for h, stream in patched:
                h.setStream(stream)
            runtime.reset()
    invoked = sum(len(v) for v in handler_us.values())
    return {
        "service_state_us": service_us,
        "handler_us": handler_us,
        "log_bytes_per_invocation": sink.bytes / invoked if invoked else 0.0,
        "log_lines_per_invocation": sink.lines / invoked if invoked else 0.0,
        "failed_invocations": failures,
    }


def event_kinds(scenario_dict: dict[str, Any]) -> dict[str, int]:
    from collections import Counter

    kinds = Counter(str(e.get("detail-type")) for e in scenario_dict["events"])
    return {
        STATE: kinds.get(STATE, 0),
        SPOT_WARNING: kinds.get(SPOT_WARNING, 0),
        REBALANCE: kinds.get(REBALANCE, 0),
        "Object Created": kinds.get("Object Created", 0),
        "Object Deleted": kinds.get("Object Deleted", 0),
    }
