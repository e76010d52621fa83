"""The replay's router: delivers a scenario's events to the functions whose deployed
rules match them, and runs the deployed schedules as the simulated clock passes their
times; both read from the function catalog (``shared.app.functions``).

Events are delivered in file order (their order of arrival); the simulated clock is
the latest event time delivered so far and never runs backwards.
"""

from __future__ import annotations

import heapq
import importlib
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from costtracker.emulator import Emulator
from costtracker.fakes.scenario_events import scheduled_event
from costtracker.lambda_context import FakeLambdaContext
from costtracker.progress import Progress
from costtracker.scenario import Scenario
from shared.app import runtime
from shared.app.edge import MalformedEvent
from shared.app.functions import BY_NAME, event_rules, schedules
from shared.app.triggers import Schedule
from shared.domain.clock import FixedClock, utc
from shared.reports.views import iso
from shared.services.alerts import take_recorded, watch_recorded

Handler = Callable[[Any, Any], Any]
LAMBDA_ATTEMPTS = 3  # an asynchronous invocation and Lambda's two retries
SECOND = timedelta(seconds=1)


def load_handler(function: str) -> Handler:
    module = importlib.import_module(BY_NAME[function].handler_module)
    handler: Handler = module.handler
    return handler


class NextFirings:
    """``schedule.next_after(now)``, remembered per schedule: for any ``now`` from the
    moment it was asked at until the firing it named, the answer is that same firing (the
    replay asks at every event, and most events come between two firings). A replay has
    one schedule per function."""

    def __init__(self) -> None:
        self._asked: dict[str, tuple[datetime, datetime]] = {}

    def after(self, schedule: Schedule, now: datetime) -> datetime:
        asked = self._asked.get(schedule.function)
        if asked is not None and asked[0] <= now < asked[1]:
            return asked[1]
        at = schedule.next_after(now)
        self._asked[schedule.function] = (now, at)
        return at

    def each_after(
        self, schedules: Sequence[Schedule], now: datetime
    ) -> list[tuple[Schedule, datetime]]:
        """``(schedule, after(schedule, now))`` for each schedule, in order (one loop: the
        replay asks for all of them at every event)."""
        remembered = self._asked
        firings = []
        for schedule in schedules:
            asked = remembered.get(schedule.function)
            if asked is None or not asked[0] <= now < asked[1]:
                asked = (now, schedule.next_after(now))
                remembered[schedule.function] = asked
            firings.append((schedule, asked[1]))
        return firings


class Replayer:
    """Delivers events and schedules to the handlers, keeping the simulated clock."""

    def __init__(self, scenario: Scenario, emulator: Emulator, skip_quiet: bool = True) -> None:
        self.scenario = scenario
        self.emulator = emulator
        self._until = utc(scenario.until) if scenario.until is not None else None
        times = scenario.event_times()
        start = min(times) if times else (scenario.until or datetime.now(UTC))
        self.clock = FixedClock(start)
        self.rejected: list[dict[str, str]] = []
        self.warnings: list[dict[str, str]] = []
        self.unrouted: list[str] = []
        self.scheduled_runs: dict[str, int] = {}
        # A scheduled handler may say until when it has nothing to do if no event arrives
        # (``quiet_until``); its runs before then are skipped, and any event resets it.
        self.quiet_until: dict[str, datetime] = {}
        self._quiet_regardless: set[str] = set()
        self.skipped_runs: dict[str, int] = {}
        self.skip_quiet = skip_quiet
        self._handlers: dict[str, Handler] = {}
        self._next_firings = NextFirings()
        # Work due at a simulated moment that no schedule or scenario event carries: the
        # crossing timers' messages, a stop's own state changes, the scenario's API calls.
        self._deferred: list[tuple[datetime, int, str, Any]] = []
        self._deferred_count = 0
        self.api_answers: list[dict[str, Any]] = []
        for call in scenario.api_calls:
            self.defer(utc(call.at), "api", call)
        watch_recorded()  # the outbox's new alerts, to wake the re-send path
        # The deployed rules: the checkpoint rule only sees the configured buckets.
        buckets = runtime.current_settings().config.checkpoint.buckets
        self.rules = event_rules(buckets)
        self._event_rules = EventRules(self.rules)
        config = runtime.current_settings().config
        self.schedules = tuple(
            s for s in schedules(config.summary.time_utc, config.finance_timezone) if s.in_replay
        )

    def handler(self, function: str) -> Handler:
        if function not in self._handlers:
            self._handlers[function] = load_handler(function)
        return self._handlers[function]

    def invoke(self, function: str, event: Any) -> Any:
        """One delivery, with Lambda's asynchronous retries (two more attempts); an event
        that fails all three would go to the function's DLQ: replay reports it."""
        error: Exception | None = None
        for _ in range(LAMBDA_ATTEMPTS):
            try:
                return self.handler(function)(event, FakeLambdaContext(function_name=function))
            except MalformedEvent as exc:  # no retry makes a malformed event well formed
                error = exc
                break
            except Exception as exc:
                error = exc
        event_id = event.get("id") if isinstance(event, dict) else None
        self.rejected.append(
            {"event_id": str(event_id or "<no id>"), "function": function, "error": str(error)}
        )
        return None

    def defer(self, due: datetime, kind: str, payload: Any) -> None:
        """Run ``payload`` (a timer's message, an event, an API call) at ``due``."""
        self._deferred_count += 1
        heapq.heappush(self._deferred, (due, self._deferred_count, kind, payload))

    def _run_deferred(self, to: datetime) -> None:
        """Everything deferred up to ``to`` (each at its own moment), in time order."""
        while self._deferred and self._deferred[0][0] <= to:
            due, _, kind, payload = heapq.heappop(self._deferred)
            self.clock.advance_to(max(due, self.clock.now()))
            for function in [f for f in self.quiet_until if f not in self._quiet_regardless]:
                del self.quiet_until[function]
            take_recorded()
            if kind == "event":
                self._route(payload)
            elif kind == "timer":
                self.invoke("budget_timer", timer_event(payload, self.clock.now()))
            else:
                from costtracker.replay_calls import call_api

                self.api_answers.append(call_api(self, payload))
            if self._outbox_waits():
                self.quiet_until.pop("budget_tick", None)
                self._quiet_regardless.discard("budget_tick")

    def _next_deferred(self) -> datetime | None:
        return self._deferred[0][0] if self._deferred else None

    def advance(self, to: datetime) -> None:
        """Run every schedule due in (now, to], in time order, then set the clock to ``to``.

        Due times are found one at a time, and a schedule that said it has nothing to do
        until a moment (``quiet_until``) jumps straight there: the cost follows the runs
        that happen, not the length of simulated time."""
        now = self.clock.now()
        if to <= now:
            self._run_deferred(now)
            return
        firings = self._next_firings.each_after(self.schedules, now)
        if self._skip_quiet_to(to, firings):
            return
        pending = {s.function: (s, at) for s, at in firings}
        while pending:
            function, (schedule, at) = min(
                pending.items(), key=lambda kv: (kv[1][1], kv[1][0].function)
            )
            deferred = self._next_deferred()
            if deferred is not None and deferred < at and deferred <= to:
                self._run_deferred(deferred)  # a schedule due at the same moment runs first
                continue
            if at > to:
                break
            quiet = self.quiet_until.get(function)
            if quiet is not None and at < quiet:
                resume = schedule.next_after(min(quiet, to) - SECOND) if quiet <= to else None
                skipped = schedule.count_between(at - SECOND, min(quiet, to) - SECOND)
                self.skipped_runs[function] = self.skipped_runs.get(function, 0) + skipped
                if resume is None:
                    del pending[function]
                else:
                    pending[function] = (schedule, resume)
                continue
            self.clock.advance_to(at)
            take_recorded()
            result = self.invoke(function, self.scheduled_event(schedule, at))
            self._note_quiet(function, result)
            self.scheduled_runs[function] = self.scheduled_runs.get(function, 0) + 1
            pending[function] = (schedule, schedule.next_after(at))
            tick = next((s for s in self.schedules if s.function == "budget_tick"), None)
            if self._outbox_waits() and tick is not None:  # wake the tick: it re-sends
                self.quiet_until.pop("budget_tick", None)
                self._quiet_regardless.discard("budget_tick")
                pending["budget_tick"] = (tick, tick.next_after(at))
        self._run_deferred(to)
        self.clock.advance_to(to)

    def _skip_quiet_to(self, to: datetime, firings: list[tuple[Schedule, datetime]]) -> bool:
        """What ``advance`` does when nothing runs on the way (most events): no deferred
        work is due by ``to`` and each schedule due by then is quiet past it. Its skipped
        runs are counted in time order, as the loop does, and the clock set to ``to``;
        False (nothing done) otherwise."""
        deferred = self._next_deferred()
        if deferred is not None and deferred <= to:
            return False
        due = [(s, at) for s, at in firings if at <= to]
        if len(due) > 1:
            due.sort(key=lambda d: (d[1], d[0].function))
        for schedule, _ in due:
            quiet = self.quiet_until.get(schedule.function)
            if quiet is None or quiet <= to:
                return False
        for schedule, at in due:
            skipped = schedule.count_between(at - SECOND, to - SECOND)
            self.skipped_runs[schedule.function] = (
                self.skipped_runs.get(schedule.function, 0) + skipped
            )
        self.clock.advance_to(to)
        return True

    def scheduled_event(self, schedule: Schedule, at: datetime) -> dict[str, Any]:
        account, region = self.scenario.account, self.scenario.region
        rule = f"arn:aws:events:{region}:{account}:rule/costtracker-{schedule.function}"
        return scheduled_event(
            f"schedule-{schedule.function}-{iso(at)}",
            at,
            resources=[rule],
            account=account,
            region=region,
        )

    def deliver(self, event: Any) -> None:
        if not isinstance(event, dict):  # EventBridge delivers only JSON objects
            self.rejected.append(
                {
                    "event_id": "<no id>",
                    "function": "",
                    "error": f"not a JSON object: {event!r:.80}",
                }
            )
            return
        at = _event_time(event)
        if at is not None and self._until is not None and at > self._until:
            self.warnings.append(
                {
                    "kind": "event_after_until",
                    "detail": f"event {event.get('id')} at {iso(at)} is after until "
                    f"{iso(self._until)}: ignored",
                }
            )
            return
        if at is not None:
            self.advance(at)
        self._route(event)

    def _route(self, event: dict[str, Any]) -> None:
        """Deliver one event, at the clock's now, to every function whose rule matches."""
        routed = self._event_rules.matching(event)
        if not routed:
            self.unrouted.append(str(event.get("id")))
            return
        # An event may change spend: forget the quiet moments that depend on it.
        for function in [f for f in self.quiet_until if f not in self._quiet_regardless]:
            del self.quiet_until[function]
        take_recorded()
        for function in routed:
            self.invoke(function, event)
        if self._outbox_waits():  # an alert waits in the outbox: the next tick sends it
            self.quiet_until.pop("budget_tick", None)
            self._quiet_regardless.discard("budget_tick")

    def _outbox_waits(self) -> bool:
        """Whether an alert recorded by the last invocation (or the re-send path's own
        tick) is still pending: also one whose write landed but whose answer was lost,
        which the handler's retry finds already known. One read per alert recorded."""
        recorded = take_recorded()
        if not recorded:  # nearly every invocation
            return False
        outbox = runtime.current().outbox_store
        for alert_id in dict.fromkeys(recorded):
            item = outbox.get(alert_id)
            if item is not None and item.get("state") == "pending":
                return True
        return False

    def _note_quiet(self, function: str, result: Any) -> None:
        value = result.get("quiet_until") if isinstance(result, dict) else None
        if not self.skip_quiet:
            return
        if value:
            self.quiet_until[function] = utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
            if result.get("quiet_regardless_of_events"):
                self._quiet_regardless.add(function)
            else:
                self._quiet_regardless.discard(function)

    def run(self, progress: Progress | None = None) -> None:
        for event in self.scenario.events:
            self.deliver(event)
            if progress is not None:
                progress.advance()
        if self.scenario.until is not None:
            self.advance(utc(self.scenario.until))


def timer_event(body: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The SQS event Lambda hands the timer function for one delayed message."""
    return {
        "Records": [
            {
                "messageId": f"timer-{body['budget_id']}-{body['threshold']}-{iso(now)}",
                "body": json.dumps(body, sort_keys=True),
                "eventSource": "aws:sqs",
            }
        ]
    }


def _event_time(event: Any) -> datetime | None:
    if not isinstance(event, dict):
        return None
    try:
        return utc(datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00")))
    except (KeyError, ValueError):
        return None


class EventRules:
    """The deployed rules (name -> pattern, in delivery order), looked up by an event's
    source first: per source a rule lists, the rules that list it or list none; for any
    other source, those that list none. ``matches`` then decides, as for every rule."""

    def __init__(self, rules: dict[str, dict[str, Any]]) -> None:
        self.rules = rules

        def lists_sources(pattern: dict[str, Any]) -> bool:
            return isinstance(pattern.get("source"), list)

        named = {src for p in rules.values() if lists_sources(p) for src in p["source"]}
        self._by_source = {
            src: [(n, p) for n, p in rules.items() if not lists_sources(p) or src in p["source"]]
            for src in named
        }
        self._without_source = [(n, p) for n, p in rules.items() if not lists_sources(p)]

    def matching(self, event: dict[str, Any]) -> list[str]:
        """The functions whose rule matches ``event``, in delivery order."""
        source = event.get("source")
        if isinstance(source, str):
            candidates = self._by_source.get(source, self._without_source)
        else:  # EventBridge sources are strings: try every rule on anything else
            candidates = list(self.rules.items())
        return [name for name, pattern in candidates if matches(pattern, event)]


def matches(pattern: dict[str, Any], event: Any) -> bool:
    """EventBridge matching for the subset our patterns use (exact values, nested keys)."""
    if not isinstance(event, dict):
        return False
    for key, expected in pattern.items():
        value = event.get(key)
        if isinstance(expected, dict):
            if not matches(expected, value):
                return False
        elif value not in expected:
            return False
    return True
