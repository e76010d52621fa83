"""Replay a scenario through the Lambda handlers against the embedded emulator.

Events are delivered in file order (their order of arrival); the simulated
clock is the latest event time delivered so far and never runs backwards;
scheduled work runs as the clock passes its times, at the deployed cadence.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

from costtracker.emulator import Emulator, function_environment, launch_instance, running_emulator
from costtracker.lambda_context import FakeLambdaContext
from costtracker.progress import Progress
from costtracker.scenario import Scenario
from shared.app import runtime
from shared.app.edge import MalformedEvent
from shared.budgets import Budget
from shared.clock import FixedClock, utc
from shared.config import CheckpointConfig, LedgerConfig, UtilizationConfig
from shared.event_patterns import (
    EVENT_RULES,
    SCHEDULES,
    Schedule,
    checkpoint_rule,
    matches,
    schedules,
)
from shared.reports import DirectoryReportStore
from shared.services.alerts import refusals
from shared.services.job_view import active_between, all_rollups, get_job_cost
from shared.services.summaries import publish_summary, summaries_between
from shared.views import iso, job_summary

Handler = Callable[[Any, Any], Any]
LAMBDA_ATTEMPTS = 3  # an asynchronous invocation and Lambda's two retries
SECOND = timedelta(seconds=1)
# The kinds of the contract's `alerts` (SPEC); other messages are reported beside them.
ALERT_KINDS = (
    "budget",
    "forecast",
    "anomaly",
    "idle",
    "input_bound",
    "no_metrics",
    "resolved",
    "missing_price",
    "reservation_underused",
)


def load_handler(function: str) -> Handler:
    module = importlib.import_module(f"functions.{function}.handler")
    handler: Handler = module.handler
    return handler


def ledger_config_for(scenario: Scenario, base: LedgerConfig | None = None) -> LedgerConfig:
    """The configured values with the scenario's overrides; no live prices in the emulator."""
    config = base or LedgerConfig()
    update: dict[str, Any] = {"live_prices": False}
    if scenario.prices is not None:
        prices = scenario.prices
        times = scenario.event_times()
        if prices.as_of is None and times:  # a scenario's prices hold from its first event
            prices = prices.model_copy(update={"as_of": min(times).date()})
        update["prices"] = prices
    if scenario.checkpoint is not None:
        update["checkpoint"] = CheckpointConfig.model_validate(
            {**config.checkpoint.model_dump(), **scenario.checkpoint}
        )
    if scenario.utilization is not None:
        merged = config.utilization.model_dump()
        for key, value in scenario.utilization.items():
            merged[key] = {**merged[key], **value} if isinstance(value, dict) else value
        update["utilization"] = UtilizationConfig.model_validate(merged)
    if scenario.budgets:
        update["budgets"] = tuple(Budget.model_validate(b) for b in scenario.budgets)
    if scenario.discounts is not None:
        update["discounts"] = scenario.discounts
    fees = {
        r.reservation_id: r.upfront_fee_usd
        for r in scenario.capacity_reservations
        if r.upfront_fee_usd is not None
    }
    if fees:  # a scenario's Capacity Block fees, as configured ones
        reservations = config.reservations
        update["reservations"] = reservations.model_copy(
            update={"fees": {**reservations.fees, **fees}}
        )
    # Validate the result as a whole (budget scopes against the known tag keys, ...).
    return LedgerConfig.model_validate(config.model_copy(update=update).model_dump())


@contextmanager
def _logs_to_stderr(verbose: bool) -> Iterator[None]:
    """Handler logs go to stderr so that ``--json`` keeps stdout for the document."""
    level = logging.INFO if verbose else logging.WARNING
    patched = []
    for name in ("costtracker",):
        logger = logging.getLogger(name)
        for handler in logger.handlers:
            if isinstance(handler, logging.StreamHandler):
                patched.append((handler, handler.stream, handler.level))
                handler.setStream(sys.stderr)
                handler.setLevel(level)
    try:
        yield
    finally:
        for handler, stream, old_level in patched:
            handler.setStream(stream)
            handler.setLevel(old_level)


class Replayer:
    """Delivers events and schedules to the handlers, keeping the simulated clock."""

    def __init__(self, scenario: Scenario, emulator: Emulator, skip_quiet: bool = True) -> None:
        self.scenario = scenario
        self.emulator = emulator
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
        # The deployed rules: the checkpoint rule only sees the configured buckets.
        buckets = runtime.current_settings().config.checkpoint.buckets
        self.rules = {**EVENT_RULES, "checkpoint": checkpoint_rule(buckets)}
        self.schedules = tuple(
            s for s in schedules(runtime.current_settings().config.summary.time_utc) if s.in_replay
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

    def advance(self, to: datetime) -> None:
        """Run every schedule due in (now, to], in time order, then set the clock to ``to``.

        Due times are found one at a time, and a schedule that said it has nothing to do
        until a moment (``quiet_until``) jumps straight there: the cost follows the runs
        that happen, not the length of simulated time."""
        now = self.clock.now()
        if to <= now:
            return
        pending = {s.function: (s, s.next_after(now)) for s in self.schedules}
        while pending:
            function, (schedule, at) = min(
                pending.items(), key=lambda kv: (kv[1][1], kv[1][0].function)
            )
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
            refused = refusals()
            result = self.invoke(function, self.scheduled_event(schedule, at))
            self._note_quiet(function, result)
            self.scheduled_runs[function] = self.scheduled_runs.get(function, 0) + 1
            pending[function] = (schedule, schedule.next_after(at))
            tick = next((s for s in self.schedules if s.function == "budget_tick"), None)
            if refusals() != refused and tick is not None:  # wake the tick: it re-sends
                self.quiet_until.pop("budget_tick", None)
                self._quiet_regardless.discard("budget_tick")
                pending["budget_tick"] = (tick, tick.next_after(at))
        self.clock.advance_to(to)

    def scheduled_event(self, schedule: Schedule, at: datetime) -> dict[str, Any]:
        return {
            "version": "0",
            "id": f"schedule-{schedule.function}-{iso(at)}",
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": self.scenario.account,
            "time": iso(at),
            "region": self.scenario.region,
            "resources": [
                f"arn:aws:events:{self.scenario.region}:{self.scenario.account}:rule/"
                f"costtracker-{schedule.function}"
            ],
            "detail": {},
        }

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
        if at is not None and self.scenario.until is not None and at > utc(self.scenario.until):
            self.warnings.append(
                {
                    "kind": "event_after_until",
                    "detail": f"event {event.get('id')} at {iso(at)} is after until "
                    f"{iso(utc(self.scenario.until))}: ignored",
                }
            )
            return
        if at is not None:
            self.advance(at)
        routed = [name for name, pattern in self.rules.items() if matches(pattern, event)]
        if not routed:
            self.unrouted.append(str(event.get("id")))
            return
        # An event may change spend: forget the quiet moments that depend on it.
        for function in [f for f in self.quiet_until if f not in self._quiet_regardless]:
            del self.quiet_until[function]
        refused = refusals()
        for function in routed:
            self.invoke(function, event)
        if refusals() != refused:  # an alert waits in the outbox: the next tick sends it
            self.quiet_until.pop("budget_tick", None)
            self._quiet_regardless.discard("budget_tick")

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


def _event_time(event: Any) -> datetime | None:
    if not isinstance(event, dict):
        return None
    try:
        return utc(datetime.fromisoformat(str(event["time"]).replace("Z", "+00:00")))
    except (KeyError, ValueError):
        return None


def report(
    replayer: Replayer, focus_dir: Path | None = None, focus_version: str | None = None
) -> dict[str, Any]:
    """The replay contract's document, accrued to the simulated clock's final time.

    Daily summaries cover every whole UTC day before the end, as the ledger knows them
    then (a late event for a past day is in); with ``focus_dir`` the day's files (FOCUS
    CSV and metadata, summary JSON and CSV) are written there as the stack writes to S3.
    """
    now = replayer.clock.now()
    deps = runtime.ledger_deps()
    alerts = collect_alerts(replayer.emulator)
    times = replayer.scenario.event_times()
    last_whole_day = now.date() - timedelta(days=1)
    summaries = []
    if times and min(times).date() <= last_whole_day:
        for summary, rows in summaries_between(deps, min(times).date(), last_whole_day, now):
            summaries.append(summary)
            if focus_dir is not None:
                version = focus_version or deps.config.summary.focus_version
                publish_summary(summary, rows, DirectoryReportStore(focus_dir), None, version)
    first_day: date = min(times).date() if times else now.date()
    jobs = []
    rollups = all_rollups(deps.rollups)
    for job_id in sorted(rollups):
        if active_between(rollups[job_id], first_day, now.date(), now):
            jobs.append(job_summary(get_job_cost(deps, job_id, now)))
    return {
        "as_of": iso(now),
        "jobs": jobs,
        "alerts": alerts["alerts"],
        "warnings": replayer.warnings,
        "daily_summaries": summaries,
        "resolved_alerts": alerts["resolved"],
        "anomaly_alerts": alerts["anomalies"],
        "messages": alerts["messages"],
        "admin_alerts": alerts["admin"],
        # Each malformed event once, however often it was delivered.
        "rejected_events": list(
            {r["event_id"] + r["error"]: r for r in replayer.rejected}.values()
        ),
        "unmatched_objects": [
            f"s3://{b}/{k}" for b, k in runtime.checkpoint_store().unmatched_objects()
        ],
        "unrouted_events": sorted(set(replayer.unrouted)),
        # How the replay ran (depends on arrival order, not on the ledger's results).
        "diagnostics": {
            "scheduled_runs": replayer.scheduled_runs,
            "scheduled_runs_skipped": replayer.skipped_runs,
        },
    }


def collect_alerts(emulator: Emulator) -> dict[str, list[dict[str, Any]]]:
    """Every message the stack's topics published, read back from the emulator's tap."""
    sqs = emulator.client("sqs")
    audiences = {arn: audience for audience, arn in emulator.topics.items()}
    collected: dict[str, list[dict[str, Any]]] = {
        "alerts": [],
        "resolved": [],
        "admin": [],
        "anomalies": [],
        "messages": [],
    }
    while True:
        messages = sqs.receive_message(
            QueueUrl=emulator.alert_queue_url,
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            break
        for message in messages:
            body = json.loads(message["Body"])
            attributes = {k: v.get("Value") for k, v in body.get("MessageAttributes", {}).items()}
            audience = attributes.pop("audience", None) or audiences.get(body.get("TopicArn"), "")
            threshold = attributes.pop("threshold", None)
            alert = {
                "alert_id": attributes.pop("alert_id", None),
                "kind": attributes.pop("kind", None),
                "audience": audience,
                "at": attributes.pop("at", None),
                "subject": body.get("Subject"),
                "budget_id": attributes.pop("budget_id", None),
                "threshold": int(threshold) if threshold else None,
                "job_id": attributes.pop("job_id", None),
                "instance_id": attributes.pop("instance_id", None),
                **{k.replace("-", "_"): v for k, v in sorted(attributes.items()) if v},
                "body": body.get("Message"),
            }
            if alert["kind"] in ALERT_KINDS:
                collected["alerts"].append(alert)
                if audience == "admin":
                    collected["admin"].append(alert)
                elif alert["kind"] == "resolved":
                    collected["resolved"].append(alert)
                elif alert["kind"] == "anomaly":
                    collected["anomalies"].append(alert)
            else:  # e.g. the daily summary message to finance
                collected["messages"].append(alert)
            sqs.delete_message(
                QueueUrl=emulator.alert_queue_url, ReceiptHandle=message["ReceiptHandle"]
            )
    for alerts in collected.values():
        alerts.sort(key=lambda a: (a.get("at") or "", a.get("kind") or "", a.get("subject") or ""))
    return collected


@contextmanager
def replay_session(
    scenario: Scenario,
    base_config: LedgerConfig | None = None,
    verbose: bool = False,
    skip_quiet: bool = True,
) -> Iterator[Replayer]:
    """An emulator provisioned for the scenario, handlers wired to it and to simulated time."""
    with running_emulator(scenario.region, scenario.account) as emulator:
        for spec in scenario.instances:
            launch_instance(emulator, spec)
        config = ledger_config_for(scenario, base_config)
        env = function_environment(emulator, config.model_dump_json())
        with mock.patch.dict(os.environ, env):
            runtime.reset()
            replayer = Replayer(scenario, emulator, skip_quiet)
            # moto cannot answer these: the scenario's fakes behind the same interfaces.
            from costtracker.fakes_aws import ScenarioCapacityReservations, ScenarioTrainingJobs

            sources = runtime.Sources(
                ScenarioTrainingJobs(scenario, replayer.clock),
                ScenarioCapacityReservations(scenario, replayer.clock),
            )
            try:
                with runtime.override(replayer.clock, sources):
                    for function in {*EVENT_RULES, *(s.function for s in SCHEDULES if s.in_replay)}:
                        replayer.handler(function)  # import now, so logs can be redirected
                    with _logs_to_stderr(verbose):
                        yield replayer
            finally:
                runtime.reset()  # the environment goes back: settings and clients with it


def replay(
    scenario: Scenario,
    base_config: LedgerConfig | None = None,
    verbose: bool = False,
    skip_quiet: bool = True,
    focus_dir: Path | None = None,
    show_progress: bool = False,
    focus_version: str | None = None,
) -> dict[str, Any]:
    """The SPEC document of a scenario. ``skip_quiet=False`` runs every scheduled tick
    (slower; the same document: see the budget tests)."""
    # Whatever a handler or a library prints (EMF metrics flush on their own) goes to
    # stderr: stdout is kept for the one JSON document.
    with (
        contextlib.redirect_stdout(sys.stderr),
        replay_session(scenario, base_config, verbose, skip_quiet) as replayer,
    ):
        progress = Progress(len(scenario.events), "replay", enabled=show_progress)
        replayer.run(progress)
        progress.close()
        return report(replayer, focus_dir, focus_version)
