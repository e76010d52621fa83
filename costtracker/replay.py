"""Replay a scenario through the Lambda handlers against the embedded emulator.

Events are delivered in file order (their order of arrival); the simulated
clock is the latest event time delivered so far and never runs backwards;
scheduled work runs as the clock passes its times, at the deployed cadence
(the router: ``costtracker/routing.py``). Then the replay document (docs/replay.md) is read back.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal
from unittest import mock

from costtracker.emulator import Emulator, function_environment, running_emulator
from costtracker.gc_budget import replay_collections
from costtracker.progress import Progress
from costtracker.replay_calls import (
    ReplayTimers,
    collect_actions,
    on_instance_stop,
    on_training_stop,
)
from costtracker.routing import Replayer
from costtracker.scenario import Scenario
from costtracker.scenario_metrics import seed_metrics
from shared.adapters.action_store import ActionStore
from shared.adapters.job_records import load_job
from shared.adapters.report_store import DirectoryReportStore
from shared.adapters.table import MemoryTable
from shared.app import runtime
from shared.config.access import AccessConfig
from shared.config.budgets import Budget
from shared.config.ledger import (
    BudgetActionsConfig,
    CheckpointConfig,
    LedgerConfig,
    UtilizationConfig,
)
from shared.domain.finance_day import calendar_of
from shared.reports.views import iso, job_summary
from shared.services.alerts import stop_watching
from shared.services.deps import LedgerDeps
from shared.services.job_view import active_between, all_rollups, get_job_cost
from shared.services.metric_reads import job_targets, read_hours
from shared.services.summaries import publish_summary, summaries_between

# The kinds of the contract's `alerts` (docs/cost-rules.md); other messages are reported beside
# them.
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
    "action",
)

# Where the ledger's table lives locally: "local", the in-memory table the contract suite
# holds equal to DynamoDB (the default: fast, in process); "full", a DynamoDB table on the
# emulator like every other service (the same document, byte for byte, slower).
EmulatorMode = Literal["local", "full"]
EMULATOR_MODES: tuple[EmulatorMode, ...] = ("local", "full")


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
    if scenario.metrics and all(m.period == 60 for m in scenario.metrics):
        # The agent publishes one-minute data: read it at 60 s.
        update["measurement"] = config.measurement.model_copy(update={"period_seconds": 60})
    if scenario.budgets:
        update["budgets"] = tuple(Budget.model_validate(b) for b in scenario.budgets)
    if scenario.discounts is not None:
        update["discounts"] = scenario.discounts
    if scenario.finance_timezone is not None:
        update["finance_timezone"] = scenario.finance_timezone
    if any(b.get("actions") for b in scenario.budgets):
        # A replay acts on nothing real: budget actions are on (each is still a dry run
        # unless it says "dry_run": false); the scenario may name deny principals.
        extra = (scenario.model_extra or {}).get("budget_actions") or {}
        update["budget_actions"] = BudgetActionsConfig.model_validate({"enabled": True, **extra})
    if scenario.api_calls:
        from costtracker.replay_calls import access_rules

        access = config.access.model_dump()
        access["rules"] = [*access_rules(scenario), *access["rules"]]
        update["access"] = AccessConfig.model_validate(access)
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


def _lowest_reached_level(logger: logging.Logger) -> int | None:
    """The lowest level of a handler that a record of ``logger`` or a logger below it can
    reach (their handlers, then their ancestors' while records propagate); None: none."""
    manager = logging.Logger.manager.loggerDict
    chain = [x for n, x in manager.items() if n.startswith(f"{logger.name}.")]
    current: logging.Logger | None = logger
    while current is not None:
        chain.append(current)
        current = current.parent if current.propagate else None
    levels = [h.level for x in chain if isinstance(x, logging.Logger) for h in x.handlers]
    return min(levels) if levels else None


@contextmanager
def _logs_to_stderr(verbose: bool) -> Iterator[None]:
    """Handler logs go to stderr so that ``--json`` keeps stdout for the document.

    Every handler would drop a record below the lowest level they have: the logger's
    level is raised to it, so such records (INFO lines, unless ``verbose``) are not made."""
    level = logging.INFO if verbose else logging.WARNING
    patched = []
    levels = []
    for name in ("costtracker",):
        logger = logging.getLogger(name)
        for handler in logger.handlers:
            if isinstance(handler, logging.StreamHandler):
                patched.append((handler, handler.stream, handler.level))
                handler.setStream(sys.stderr)
                handler.setLevel(level)
        lowest = _lowest_reached_level(logger)
        if lowest is not None and lowest > logger.getEffectiveLevel():
            levels.append((logger, logger.level))
            logger.setLevel(lowest)
    try:
        yield
    finally:
        for logger, old_level in levels:
            logger.setLevel(old_level)
        for handler, stream, old_level in patched:
            handler.setStream(stream)
            handler.setLevel(old_level)


def report(
    replayer: Replayer, focus_dir: Path | None = None, focus_version: str | None = None
) -> dict[str, Any]:
    """The replay contract's document, accrued to the simulated clock's final time.

    Daily summaries cover every whole finance day before the end, as the ledger knows them
    then (a late event for a past day is in); with ``focus_dir`` the day's files (FOCUS
    CSV and metadata, summary JSON and CSV) are written there as the stack writes to S3.
    """
    now = replayer.clock.now()
    deps = runtime.ledger_deps()
    alerts = collect_alerts(replayer.emulator)
    times = replayer.scenario.event_times()
    calendar = calendar_of(deps.config)
    if times:
        read_remaining_hours(deps, calendar.day_start(min(times)), now)
    last_whole_day = calendar.day_of(now) - timedelta(days=1)
    summaries = []
    if times and calendar.day_of(min(times)) <= last_whole_day:
        first = calendar.day_of(min(times))
        for summary, rows in summaries_between(deps, first, last_whole_day, now):
            summaries.append(summary)
            if focus_dir is not None:
                version = focus_version or deps.config.summary.focus_version
                publish_summary(summary, rows, DirectoryReportStore(focus_dir), None, version)
    first_day: date = calendar.day_of(min(times) if times else now)
    jobs = []
    rollups = all_rollups(deps.rollups)
    for job_id in sorted(rollups):
        if active_between(rollups[job_id], first_day, calendar.day_of(now), now, calendar):
            jobs.append(job_summary(get_job_cost(deps, job_id, now)))
    return {
        "as_of": iso(now),
        "jobs": jobs,
        "alerts": alerts["alerts"],
        "warnings": replayer.warnings,
        "daily_summaries": summaries,
        "actions": collect_actions(ActionStore(deps.table)),
        "api_calls": replayer.api_answers,
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


def read_remaining_hours(deps: LedgerDeps, since: datetime, now: datetime) -> None:
    """The hours of accelerator utilization that no scheduled read stored before the
    end (the last hours of the scenario; the daily summary of its last day runs after
    ``until``), so that the document holds what the emulator's CloudWatch has."""
    rt = runtime.current()
    rollups = all_rollups(deps.rollups)
    for job_id in sorted(rollups):
        records = load_job(deps.table, deps.rollups, job_id, since=since)
        if records is not None:
            targets = job_targets(records, now)
            read_hours(
                deps.config, rt.utilization_store, rt.metric_reader, targets, since, now, now
            )


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
    emulator_mode: EmulatorMode = "local",
    table: MemoryTable | None = None,
) -> Iterator[Replayer]:
    """An emulator provisioned for the scenario, handlers wired to it and to simulated time;
    the ledger's table in memory (``table``, e.g. the bench's counting one, or a new one)
    or, with ``emulator_mode="full"``, on the emulator."""
    if emulator_mode not in EMULATOR_MODES:
        raise ValueError(f"emulator mode {emulator_mode!r}: one of {', '.join(EMULATOR_MODES)}")
    if emulator_mode == "full" and table is not None:
        raise ValueError("--emulator full keeps the table on the emulator: give no table")
    if emulator_mode == "local":
        table = table if table is not None else MemoryTable()
    with running_emulator(scenario.region, scenario.account) as emulator:
        config = ledger_config_for(scenario, base_config)
        seed_metrics(emulator, scenario, config)
        env = function_environment(emulator, config.model_dump_json())
        with mock.patch.dict(os.environ, env):
            runtime.reset()
            replayer = Replayer(scenario, emulator, skip_quiet)
            # moto cannot answer these: the scenario's fakes behind the same interfaces.
            from costtracker.fakes.scenario_aws import (
                ScenarioCapacityReservations,
                ScenarioFileSystems,
                ScenarioInstances,
                ScenarioInstanceStops,
                ScenarioTrainingJobs,
                ScenarioTrainingJobStops,
            )

            training_jobs = ScenarioTrainingJobs(scenario, replayer.clock)
            instance_stops = ScenarioInstanceStops(scenario)
            instance_stops.on_stop = on_instance_stop(replayer)
            training_stops = ScenarioTrainingJobStops(scenario, training_jobs)
            training_stops.on_stop = on_training_stop(replayer, training_jobs)
            sources = runtime.Sources(
                training_jobs=training_jobs,
                reservations=ScenarioCapacityReservations(scenario, replayer.clock),
                file_systems=ScenarioFileSystems(scenario, replayer.clock),
                inventory=ScenarioInstances(scenario),
                instance_stops=instance_stops,
                training_stops=training_stops,
                crossing_timers=ReplayTimers(replayer),
            )
            try:
                with runtime.override(replayer.clock, sources, table=table):
                    for function in (*replayer.rules, *(s.function for s in replayer.schedules)):
                        replayer.handler(function)  # import now, so logs can be redirected
                    with _logs_to_stderr(verbose), replay_collections():
                        yield replayer
            finally:
                stop_watching()
                runtime.reset()  # the environment goes back: settings and clients with it


def replay(
    scenario: Scenario,
    base_config: LedgerConfig | None = None,
    verbose: bool = False,
    skip_quiet: bool = True,
    focus_dir: Path | None = None,
    show_progress: bool = False,
    focus_version: str | None = None,
    emulator_mode: EmulatorMode = "local",
) -> dict[str, Any]:
    """The replay document (docs/replay.md) of a scenario. ``skip_quiet=False`` runs every
    scheduled tick
    (slower; the same document: see the budget tests); ``emulator_mode`` as in
    ``replay_session`` (the same document)."""
    # Whatever a handler or a library prints (EMF metrics flush on their own) goes to
    # stderr: stdout is kept for the one JSON document.
    with (
        contextlib.redirect_stdout(sys.stderr),
        replay_session(scenario, base_config, verbose, skip_quiet, emulator_mode) as replayer,
    ):
        progress = Progress(len(scenario.events), "replay", enabled=show_progress)
        replayer.run(progress)
        progress.close()
        return report(replayer, focus_dir, focus_version)
