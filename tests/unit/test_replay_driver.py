"""The replay driver's shortcuts give what the long way gives: routing by source, the
schedules' next firings remembered, request ids without random bytes, logs not made
when no handler would write them."""

from __future__ import annotations

import logging
import uuid
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from costtracker.fakes.scenario_events import envelope
from costtracker.lambda_context import FakeLambdaContext
from costtracker.replay import _logs_to_stderr
from costtracker.routing import EventRules, NextFirings, matches
from shared.app.functions import event_rules, schedules
from shared.services.checkpoints import CheckpointOutcome

T0 = datetime(2026, 11, 1, 23, 40, 17, tzinfo=UTC)


def event(source: Any, detail_type: str, detail: dict[str, Any] | None = None) -> dict[str, Any]:
    """An event of ``source`` (anything, as a hostile one may carry; None: no source)."""
    made = envelope("e", T0, "aws.ec2", detail_type, detail or {})
    if source is None:
        del made["source"]
    else:
        made["source"] = source
    return made


STATE_CHANGE = "EC2 Instance State-change Notification"
EVENTS = [
    event("aws.ec2", STATE_CHANGE),
    event("aws.ec2", STATE_CHANGE, {"state": "running"}),
    event("aws.ec2", "EC2 Spot Instance Interruption Warning"),
    event("aws.s3", "Object Created", {"bucket": {"name": "b1"}}),
    event("aws.s3", "Object Created", {"bucket": {"name": "b2"}}),
    event("aws.cloudwatch", "CloudWatch Alarm State Change"),
    event("aws.other", "Object Created"),
    event(["aws.s3"], "Object Created"),
    event(None, "Object Created"),
]


def test_routing_by_source_finds_what_every_rule_tried_finds() -> None:
    rules: dict[str, dict[str, Any]] = {
        **event_rules(("b1",)),
        "anything_created": {"detail-type": ["Object Created"]},  # lists no source
    }
    by_source = EventRules(rules)
    for raw in EVENTS:
        every = [name for name, pattern in rules.items() if matches(pattern, raw)]
        assert by_source.matching(raw) == every, raw
    assert by_source.matching(EVENTS[6]) == ["anything_created"]


def test_next_firings_remembered_equal_the_schedules_own() -> None:
    for schedule in (*schedules(), *schedules("06:30", "Europe/Berlin")):
        firings = NextFirings()
        now = T0
        for step in range(400):  # irregular steps, some landing on firings exactly
            expected = schedule.next_after(now)
            assert firings.after(schedule, now) == expected, (schedule, now)
            now = expected if step % 7 == 0 else now + timedelta(minutes=13 * (step % 5))


def test_next_firings_of_each_schedule_equal_the_schedules_own() -> None:
    for every in (schedules(), schedules("06:30", "Europe/Berlin")):  # one per function
        firings = NextFirings()
        now = T0
        for step in range(400):  # some steps land on a firing exactly
            expected = [(s, s.next_after(now)) for s in every]
            assert firings.each_after(every, now) == expected, now
            now = min(at for _, at in expected) if step % 3 == 0 else now + timedelta(minutes=7)


def test_request_ids_are_distinct_uuid_strings() -> None:
    ids = [FakeLambdaContext("f").aws_request_id for _ in range(3)]
    assert len(set(ids)) == 3
    assert all(str(uuid.UUID(i)) == i for i in ids)
    numbers = [uuid.UUID(i).int for i in ids]
    assert numbers == list(range(numbers[0], numbers[0] + 3))  # counted, not drawn


def test_checkpoint_answer_is_the_outcome_as_asdict() -> None:
    outcome = CheckpointOutcome("applied", "b", "k", "j", 7, True)
    assert outcome.answer() == asdict(outcome)
    assert list(outcome.answer()) == list(asdict(outcome))


def test_records_no_handler_writes_are_not_made() -> None:
    parent = logging.getLogger("costtracker")
    root = logging.getLogger()
    saved = (parent.level, parent.propagate, root.handlers[:])
    made: list[logging.LogRecord] = []

    def count(record: logging.LogRecord) -> bool:
        made.append(record)
        return True

    handler = logging.StreamHandler()
    parent.addHandler(handler)
    parent.addFilter(count)
    try:
        parent.setLevel(logging.INFO)
        root.handlers = []
        with _logs_to_stderr(verbose=False):
            logging.getLogger("costtracker.checkpoints").info("not written")
            parent.warning("written")
        assert [r.getMessage() for r in made] == ["written"]
        assert parent.level == logging.INFO

        made.clear()
        root.addHandler(logging.NullHandler())  # a handler that takes every level
        with _logs_to_stderr(verbose=False):
            parent.info("made: the root's handler takes it")
        assert len(made) == 1
    finally:
        parent.removeFilter(count)
        parent.removeHandler(handler)
        parent.setLevel(saved[0])
        parent.propagate = saved[1]
        root.handlers = saved[2]
