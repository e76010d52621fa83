"""A replay's schedule spans only the event times the handlers can accept
(costtracker.scenario.Scenario.event_times): an event from year 999 is rejected there and
must not make the replay walk every minute since."""

from __future__ import annotations

from datetime import UTC, datetime

from costtracker.scenario import Scenario
from tests.aws_events import ec2_state_event


def _event(event_id: str, time: str) -> dict[str, object]:
    return ec2_state_event(event_id, "i-0123456789abcdef0", "running", time)


def test_times_outside_the_years_events_carry_do_not_stretch_the_schedule() -> None:
    scenario = Scenario.model_validate(
        {
            "events": [
                _event("ancient", "0999-12-31T23:00:00Z"),
                _event("future", "2101-01-01T00:00:00Z"),
                _event("real", "2026-11-01T00:00:00Z"),
                _event("garbled", "not a time"),
            ]
        }
    )
    assert scenario.event_times() == [datetime(2026, 11, 1, tzinfo=UTC)]
