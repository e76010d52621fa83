"""CPU per event with no I/O (section 3): the services alone and the whole handlers over
the in-memory twins (``bench.twins``), apart from the replay against the emulator
(``bench.replay_bench``), whose time is mostly the emulator's and the wire's."""

from __future__ import annotations

import io
import logging
import os
import time
from contextlib import redirect_stdout
from typing import Any
from unittest import mock

from bench.events import REBALANCE, SPOT_WARNING, STATE, event_time

TWIN_FUNCTIONS = ("instance_state", "spot_interruption", "checkpoint", "alarm_state")


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
    from costtracker.fakes.twins import RecordingNotifier
    from costtracker.lambda_context import FakeLambdaContext
    from costtracker.replay import ledger_config_for
    from costtracker.routing import load_handler, matches
    from costtracker.scenario import Scenario
    from shared.adapters.checkpoint_store import CheckpointStore
    from shared.app import runtime
    from shared.app.functions import EVENT_RULES, checkpoint_rule
    from shared.services.checkpoints import record_object_event
    from shared.services.instances import record_spot_notice, record_state_change

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
        at = event_time(event)
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

        checkpoints = property(lambda self: store)
        notifier = property(lambda self: notifier)
        stopper = property(lambda self: None)

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
                    d.clock.advance_to(event_time(event))
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
