"""Sections 1 and 3: AWS calls and items written per event kind during a replay, replay
throughput against the floor of one bare UpdateItem per event, CPU per event over the
in-memory twins, and where the replay's time goes (cProfile, both sides of the wire)."""

from __future__ import annotations

import cProfile
import io
import logging
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest import mock

from bench.counter import CallCounter, summarize, table_items
from bench.scenario import ALARM, REBALANCE, SPOT_WARNING, STATE

TWIN_FUNCTIONS = ("instance_state", "spot_interruption", "checkpoint", "alarm_state")
CLOSING = {"stopping", "shutting-down", "stopped", "terminated"}
ROOT = Path(__file__).resolve().parent.parent


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _event_time(event: dict[str, Any]) -> datetime:
    from shared.domain.clock import utc

    return utc(datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00")))


class Classifier:
    """Names what each delivered event is, as the handler will see it: first sight of an
    instance, later (in order), late (after a later event of the same instance arrived),
    duplicate (the same event id again)."""

    def __init__(self, scenario: Any) -> None:
        from shared.app.config import LedgerConfig

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
        at = _event_time(event)
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
    scenario_dict: dict[str, Any], *, api_requests: bool = True, progress_every: int = 500
) -> dict[str, Any]:
    """Replay the scenario once, counting calls per invocation; then the API requests."""
    import boto3

    from costtracker.emulator import TABLE_NAME
    from costtracker.lambda_context import FakeLambdaContext
    from costtracker.local_api import proxy_event
    from costtracker.replay import replay_session
    from costtracker.scenario import Scenario

    scenario = Scenario.model_validate(scenario_dict)
    counter = CallCounter()
    events = boto3._get_default_session().events
    counter.register(events)
    classifier = Classifier(scenario)
    invocations: list[dict[str, Any]] = []
    per_event_s: list[float] = []
    server = ServerTimer()
    try:
        # Handler stdout (Powertools metrics EMF) goes to stderr: stdout keeps the table.
        with redirect_stdout(sys.stderr), replay_session(scenario) as replayer, server.patch():
            original: Callable[[str, Any], Any] = replayer.invoke

            def counted_invoke(function: str, event: Any) -> Any:
                category = (
                    f"scheduled {function}"
                    if event.get("detail-type") == "Scheduled Event"
                    else classifier.classify(function, event)
                )
                mark, rejected = len(counter.calls), len(replayer.rejected)
                t0, c0 = time.perf_counter(), time.thread_time()
                result = original(function, event)
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
                return result

            replayer.invoke = counted_invoke  # type: ignore[method-assign]
            n = len(scenario.events)
            _say(f"replay: {n} events, {len(scenario.instances)} instances")
            start = time.perf_counter()
            overhead0 = counter.overhead_s
            server.seconds.clear()
            server.count.clear()
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
            hooks_s = counter.overhead_s - overhead0
            server_ops = server.table()
            _say(f"  replayed in {replay_s:.1f} s (counting hooks {hooks_s:.1f} s)")
            api_error = None
            if api_requests:
                try:
                    invocations += _api_requests(replayer, counter, proxy_event, FakeLambdaContext)
                except Exception as exc:
                    api_error = f"{type(exc).__name__}: {exc}"
                    _say(f"  API requests failed: {api_error}")
            rejected = list(replayer.rejected)
            counter.unregister(events)
            alarms, open_instances = _alarms_and_open(replayer)
            stored = table_items(TABLE_NAME)
    finally:
        counter.unregister(events)
    return {
        "events": len(scenario.events),
        "instances": len(scenario.instances),
        "replay_s": replay_s,
        "hooks_s": hooks_s,
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
                _event_time({"time": scenario_dict["until"]}) - min(scenario.event_times())
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


def floor_rate(n_calls: int, blocks: int) -> dict[str, Any]:
    """One bare UpdateItem per event against a fresh emulator: block rates (calls/s)."""
    from costtracker.emulator import running_emulator
    from shared.adapters.ledger_schema import create_table_request

    rates = []
    per_call = []
    with running_emulator() as emulator:
        table = "bench-floor"
        client = emulator.client("dynamodb")
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
    """CPU time per event with no I/O: the services alone, and the whole handlers, over
    the in-memory twins (``bench.twins``); log output is counted, not written."""
    from bench.twins import memory_deps, scenario_profiles
    from costtracker.lambda_context import FakeLambdaContext
    from costtracker.replay import ledger_config_for
    from costtracker.routing import load_handler, matches
    from costtracker.scenario import Scenario
    from shared.adapters.checkpoint_store import CheckpointStore
    from shared.app import runtime
    from shared.app.functions import EVENT_RULES, checkpoint_rule
    from shared.services.checkpoints import record_object_event
    from shared.services.instances import record_spot_notice, record_state_change
    from tests.fakes import RecordingNotifier

    scenario = Scenario.model_validate(scenario_dict)
    config = ledger_config_for(scenario)
    profiles = scenario_profiles(scenario)
    first = min(scenario.event_times())

    # (a) the services alone (state changes, spot notices, checkpoint objects)
    service_us: dict[str, list[float]] = {"state": [], "spot": [], "checkpoint": []}
    d = memory_deps(config, profiles, first)
    store = CheckpointStore(d.table)
    for event in scenario.events:
        kind = event.get("detail-type")
        at = _event_time(event)
        d.clock.advance_to(at)
        detail = event["detail"]
        c0 = time.process_time()
        if kind == STATE:
            record_state_change(
                d,
                event_id=event["id"],
                at=at,
                instance_id=detail["instance-id"],
                state=detail["state"],
                region=event["region"],
                account=event["account"],
            )
            name = "state"
        elif kind in (SPOT_WARNING, REBALANCE):
            record_spot_notice(
                d,
                event_id=event["id"],
                at=at,
                instance_id=detail["instance-id"],
                action=detail.get("instance-action", "rebalance"),
                region=event["region"],
                account=event["account"],
            )
            name = "spot"
        elif kind in ("Object Created", "Object Deleted"):
            record_object_event(
                d,
                store,
                event_id=event["id"],
                at=at,
                region=event["region"],
                account=event["account"],
                bucket=detail["bucket"]["name"],
                raw_key=detail["object"]["key"],
                size_bytes=detail["object"].get("size") if kind == "Object Created" else None,
                sequencer=detail["object"].get("sequencer", ""),
            )
            name = "checkpoint"
        else:
            continue
        service_us[name].append((time.process_time() - c0) * 1e6)

    # (b) the whole handler (parse, log, service) with the twins as its dependencies
    rules = {**EVENT_RULES, "checkpoint": checkpoint_rule(config.checkpoint.buckets)}
    rules = {k: v for k, v in rules.items() if k in TWIN_FUNCTIONS}
    env = {
        "TABLE_NAME": "bench",
        "LEDGER_CONFIG": config.model_dump_json(),
        "FINANCE_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:f",
        "TEAM_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:t",
        "ADMIN_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:a",
        "POWERTOOLS_SERVICE_NAME": "costtracker",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "AWS_REGION": scenario.region,
        # Nothing may reach AWS from here: a closed loopback port, dummy credentials.
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
    }
    d = memory_deps(config, profiles, first)
    store = CheckpointStore(d.table)
    notifier = RecordingNotifier()

    class Twins(runtime.Runtime):
        """The container's dependencies: the in-memory twins."""

        def ledger_deps(self) -> Any:
            return d

        checkpoints = property(lambda self: store)  # type: ignore[assignment]
        notifier = property(lambda self: notifier)  # type: ignore[assignment]
        stopper = property(lambda self: None)  # type: ignore[assignment]

    handler_us: dict[str, list[float]] = {}
    failures: dict[str, str] = {}
    sink = _CountingSink()
    with mock.patch.dict(os.environ, env):
        runtime.reset()
        handlers = {name: load_handler(name) for name in rules}
        logger = logging.getLogger("costtracker")
        patched = [(h, h.stream) for h in logger.handlers if isinstance(h, logging.StreamHandler)]
        for h, _ in patched:
            h.setStream(sink)
        try:
            # Powertools Metrics print EMF to stdout: CloudWatch Logs bytes too, counted.
            with runtime.using(Twins(d.clock)), redirect_stdout(sink):
                for event in scenario.events:
                    routed = [n for n, p in rules.items() if matches(p, event)]
                    d.clock.advance_to(_event_time(event))
                    for name in routed:
                        c0 = time.process_time()
                        try:
                            handlers[name](event, FakeLambdaContext(function_name=name))
                        except Exception as exc:
                            failures.setdefault(name, f"{type(exc).__name__}: {exc}"[:200])
                            continue
                        handler_us.setdefault(name, []).append((time.process_time() - c0) * 1e6)
        finally:
            for h, stream in patched:
                h.setStream(stream)
            runtime.reset()
    invoked = sum(len(v) for v in handler_us.values())
    return {
        "service_us": service_us,
        "handler_us": handler_us,
        "log_bytes_per_invocation": sink.bytes / invoked if invoked else 0.0,
        "log_lines_per_invocation": sink.lines / invoked if invoked else 0.0,
        "failed_invocations": failures,
    }


def _wrap_server(profile: cProfile.Profile) -> Any:
    """Profile moto's WSGI application (the emulator's side of every call)."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    original = DomainDispatcherApplication.__call__

    def profiled(self: Any, environ: Any, start_response: Any) -> Any:
        profile.enable()
        try:
            return original(self, environ, start_response)
        finally:
            profile.disable()

    return mock.patch.object(DomainDispatcherApplication, "__call__", profiled)


class ServerTimer:
    """Wall time of the emulator's request handling, by service and operation (the
    credential scope of the SigV4 header names the service; X-Amz-Target the operation
    of JSON protocols)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.count: dict[str, int] = {}

    def patch(self) -> Any:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication

        original = DomainDispatcherApplication.__call__
        timer = self

        def timed(app: Any, environ: Any, start_response: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return original(app, environ, start_response)
            finally:
                auth = str(environ.get("HTTP_AUTHORIZATION", ""))
                scope = auth.split("Credential=", 1)[-1].split(",", 1)[0].split("/")
                service = scope[3] if len(scope) > 3 else "?"
                target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
                name = f"{service}.{target.rsplit('.', 1)[-1]}" if target else service
                timer.seconds[name] = timer.seconds.get(name, 0.0) + time.perf_counter() - t0
                timer.count[name] = timer.count.get(name, 0) + 1

        return mock.patch.object(DomainDispatcherApplication, "__call__", timed)

    def table(self) -> list[dict[str, Any]]:
        return [
            {
                "operation": k,
                "calls": self.count[k],
                "total_s": round(v, 3),
                "mean_ms": round(v / self.count[k] * 1000, 2),
            }
            for k, v in sorted(self.seconds.items(), key=lambda kv: -kv[1])
        ]


def _top(stats: pstats.Stats, key: str, n: int, only: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    rows = []
    entries = {
        k: v
        for k, v in stats.stats.items()  # type: ignore[attr-defined]
        if not only or any(part in k[0] for part in only)
    }
    ranked = sorted(
        entries.items(), key=lambda kv: kv[1][2 if key == "tottime" else 3], reverse=True
    )
    for (filename, line, name), (_cc, ncalls, tottime, cumtime, _callers) in ranked[:n]:
        rel = filename
        for prefix in (str(ROOT) + "/", str(Path(sys.prefix)) + "/lib/python3.11/site-packages/"):
            rel = rel.replace(prefix, "")
        rows.append(
            {
                "function": f"{rel}:{line}({name})",
                "calls": ncalls,
                "tottime_s": round(tottime, 3),
                "cumtime_s": round(cumtime, 3),
            }
        )
    return rows


def _by_area(stats: pstats.Stats) -> dict[str, float]:
    """Own (tottime) seconds by area of the code."""
    areas = {
        "shared/domain": "core: domain",
        "shared/adapters": "core: adapters",
        "shared/services": "core: services",
        "shared/": "core: other shared",
        "functions/": "handlers",
        "costtracker/": "replay driver",
        "bench/": "bench hooks",
        "pydantic": "pydantic",
        "aws_lambda_powertools": "powertools",
        "botocore": "botocore",
        "boto3": "boto3",
        "urllib3": "urllib3/http",
        "http/client": "urllib3/http",
        "moto": "moto",
        "werkzeug": "werkzeug",
        "socket": "socket wait",
        "<method 'recv_into'": "socket wait",
        "json": "json",
        "logging": "logging",
    }
    totals: dict[str, float] = {}
    for (filename, _line, name), (_cc, _n, tottime, _cum, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{filename} {name}"
        area = "other"
        for needle, label in areas.items():
            if needle in where:
                area = label
                break
        totals[area] = totals.get(area, 0.0) + tottime
    return dict(sorted(((k, round(v, 2)) for k, v in totals.items()), key=lambda kv: -kv[1]))


def profile_replay(scenario_dict: dict[str, Any], top: int = 15) -> dict[str, Any]:
    """cProfile of a replay (no counting hooks): the driver's thread (handlers, services,
    boto3, waiting on the socket) and the emulator's request handling, apart."""
    from costtracker.replay import replay_session
    from costtracker.scenario import Scenario

    scenario = Scenario.model_validate(scenario_dict)
    client, server = cProfile.Profile(), cProfile.Profile()
    with redirect_stdout(sys.stderr), replay_session(scenario) as replayer, _wrap_server(server):
        start = time.perf_counter()
        client.enable()
        try:
            replayer.run()
        finally:
            client.disable()
        wall = time.perf_counter() - start
    out: dict[str, Any] = {"events": len(scenario.events), "wall_s": wall}
    for name, prof in (("client", client), ("server", server)):
        stats = pstats.Stats(prof)
        out[name] = {
            "total_s": round(stats.total_tt, 2),  # type: ignore[attr-defined]
            "by_area_s": _by_area(stats),
            "top_tottime": _top(stats, "tottime", top),
            "top_cumtime": _top(stats, "cumtime", top),
            "top_cumtime_core": _top(
                stats, "cumtime", 3 * top, (str(ROOT / "shared"), str(ROOT / "functions"))
            ),
            # The emulator's side: DynamoDB operations, expression parsing, copies.
            "top_cumtime_dynamodb": _top(
                stats, "cumtime", 3 * top, ("moto/dynamodb/", "costtracker/emulator")
            ),
        }
    return out


def event_kinds(scenario_dict: dict[str, Any]) -> dict[str, int]:
    from collections import Counter

    kinds = Counter(str(e.get("detail-type")) for e in scenario_dict["events"])
    return {
        k: kinds.get(k, 0)
        for k in (STATE, SPOT_WARNING, REBALANCE, "Object Created", "Object Deleted", ALARM)
    }
