"""The replay driver's shortcuts give what the long way gives: routing by source, the
schedules' next firings remembered, request ids without random bytes, logs not made
when no handler would write them."""

from __future__ import annotations

import logging
import uuid
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from costtracker.lambda_context import FakeLambdaContext
from costtracker.replay import _logs_to_stderr
from costtracker.routing import NextFirings, matches, rules_by_source
from shared.app.functions import event_rules, schedules
from shared.services.checkpoints import CheckpointOutcome

T0 = datetime(2026, 11, 1, 23, 40, 17, tzinfo=UTC)

EVENTS: list[dict[str, Any]] = [
    {"source": "aws.ec2", "detail-type": "EC2 Instance State-change Notification"},
    {
        "source": "aws.ec2",
        "detail-type": "EC2 Instance State-change Notification",
        "detail": {"state": "running"},
    },
    {"source": "aws.ec2", "detail-type": "EC2 Spot Instance Interruption Warning"},
    {"source": "aws.s3", "detail-type": "Object Created", "detail": {"bucket": {"name": "b1"}}},
    {"source": "aws.s3", "detail-type": "Object Created", "detail": {"bucket": {"name": "b2"}}},
    {"source": "aws.cloudwatch", "detail-type": "CloudWatch Alarm State Change"},
    {"source": "aws.other", "detail-type": "Object Created"},
    {"source": ["aws.s3"], "detail-type": "Object Created"},
    {"detail-type": "Object Created"},
]


def routed_by_source(rules: dict[str, dict[str, Any]], event: dict[str, Any]) -> list[str]:
    by_source, without = rules_by_source(rules)
    source = event.get("source")
    candidates = by_source.get(source, without) if isinstance(source, str) else rules.items()
    return [name for name, pattern in candidates if matches(pattern, event)]


def test_routing_by_source_finds_what_every_rule_tried_finds() -> None:
    rules: dict[str, dict[str, Any]] = {
        **event_rules(("b1",)),
        "anything_created": {"detail-type": ["Object Created"]},  # lists no source
    }
    for event in EVENTS:
        every = [name for name, pattern in rules.items() if matches(pattern, event)]
        assert routed_by_source(rules, event) == every, event
    assert routed_by_source(rules, EVENTS[6]) == ["anything_created"]


def test_next_firings_remembered_equal_the_schedules_own() -> None:
    for schedule in (*schedules(), *schedules("06:30", "Europe/Berlin")):
        firings = NextFirings()
        now = T0
        for step in range(400):  # irregular steps, some landing on firings exactly
            expected = schedule.next_after(now)
            assert firings.after(schedule, now) == expected, (schedule, now)
            now = expected if step % 7 == 0 else now + timedelta(minutes=13 * (step % 5))


def test_request_ids_are_distinct_uuid_strings() -> None:
    ids = [FakeLambdaContext("f").aws_request_id for _ in range(3)]
    assert len(set(ids)) == 3
    assert all(str(uuid.UUID(i)) == i for i in ids)


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
