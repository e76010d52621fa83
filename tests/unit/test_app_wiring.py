"""The functions' wiring: the runtime handed in and given back, the edge of a function that
takes several detail-types, and the one optimistic-locking loop."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from aws_lambda_powertools import Logger

from shared.adapters.table import ConditionFailed
from shared.app import runtime
from shared.app.edge import MalformedEvent, parse_event
from shared.domain.clock import FixedClock
from shared.events.aws import OBJECT_EVENT, ObjectCreatedEvent, ObjectDeletedEvent
from shared.services.versioned import ConcurrentUpdates, LostRace, commit, versioned_update
from tests.aws_events import envelope

T0 = datetime(2026, 11, 1, tzinfo=UTC)
LOGGER = Logger(service="costtracker-test")


def s3_event(detail_type: str, obj: dict[str, object]) -> dict[str, object]:
    detail = {"bucket": {"name": "ckpt"}, "object": obj}
    return envelope("ev-1", "2026-11-01T10:00:00Z", "aws.s3", detail_type, detail)


def test_override_hands_in_a_clock_and_gives_the_previous_runtime_back() -> None:
    outer = FixedClock(T0)
    with runtime.override(outer) as first:
        assert runtime.clock() is outer
        with runtime.override(FixedClock(datetime(2030, 1, 1, tzinfo=UTC))):
            assert runtime.clock() is not outer
        assert runtime.current() is first and runtime.clock() is outer
        runtime.reset()  # the environment changed: rebuilt, with the same clock
        assert runtime.current() is not first and runtime.clock() is outer


def test_a_union_event_is_parsed_into_its_member_and_rejected_as_the_member_would_be() -> None:
    created = parse_event(s3_event("Object Created", {"key": "k", "size": 1}), OBJECT_EVENT, LOGGER)
    assert isinstance(created, ObjectCreatedEvent) and created.detail.object.size == 1
    deleted = parse_event(s3_event("Object Deleted", {"key": "k"}), OBJECT_EVENT, LOGGER)
    assert isinstance(deleted, ObjectDeletedEvent)
    with pytest.raises(MalformedEvent) as union:
        parse_event(s3_event("Object Created", {"key": "k"}), OBJECT_EVENT, LOGGER)
    with pytest.raises(MalformedEvent) as single:
        parse_event(s3_event("Object Created", {"key": "k"}), ObjectCreatedEvent, LOGGER)
    assert (
        str(union.value)
        == str(single.value)
        == ("malformed event ev-1: detail.object.size: Field required")
    )
    with pytest.raises(MalformedEvent, match=r"^malformed event ev-1: detail-type: "):
        parse_event(s3_event("Object Restored", {"key": "k"}), OBJECT_EVENT, LOGGER)


class _Uow:
    def __init__(self, fails: int) -> None:
        self.fails = fails

    def commit(self) -> None:
        if self.fails > 0:
            self.fails -= 1
            raise ConditionFailed(("pk", "sk"))


def test_a_lost_race_tries_again_until_the_attempts_run_out() -> None:
    tried: list[int] = []
    uow = _Uow(fails=2)

    def attempt(n: int) -> int:
        tried.append(n)
        commit(uow)  # type: ignore[arg-type]
        return n

    assert versioned_update(attempt, "x") == 2
    assert tried == [0, 1, 2]
    uow.fails = 5
    with pytest.raises(ConcurrentUpdates, match="x"):
        versioned_update(attempt, "x", attempts=3)
    with pytest.raises(LostRace):  # commit alone says so; only the loop retries
        commit(_Uow(fails=1))  # type: ignore[arg-type]
