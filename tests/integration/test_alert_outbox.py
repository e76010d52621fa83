"""A failed publish delays an alert, it never loses or duplicates one (issue 13).

The budget scenario (three threshold alerts and a forecast) and the idle scenario (idle,
input-bound, no-metrics and resolved alerts) are replayed while SNS refuses the first
publishes: a KMS denial on the topic key (not retried by botocore), then an invalid
parameter (a subject SNS rejects). Every alert of the undisturbed replay still arrives,
exactly once (counted by alert_id), each re-sent at a later tick.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from costtracker.replay import replay
from costtracker.scenario import Scenario
from tests.integration.conftest import scenario_dict
from tests.integration.test_transient_failures import Faults


@pytest.fixture
def refusing_sns() -> Iterator[list[Faults]]:
    session = boto3._get_default_session()
    faults = [
        Faults(400, "KMSAccessDeniedException", times=3),
        Faults(400, "InvalidParameter", times=2),
    ]
    for fault in faults:
        session.events.register("before-send.sns.Publish", fault)
    yield faults
    for fault in faults:
        session.events.unregister("before-send.sns.Publish", fault)


def ids(document: dict[str, Any]) -> Counter[str]:
    return Counter(a["alert_id"] for a in document["alerts"])


@pytest.mark.parametrize("name", ["budget_llama.json", "idle_alarms.json"])
def test_refused_publishes_delay_alerts_and_lose_none(name: str, request: Any) -> None:
    scenario = Scenario.model_validate(scenario_dict(name))
    expected = ids(replay(scenario))
    assert expected and all(n == 1 for n in expected.values())
    faults = request.getfixturevalue("refusing_sns")
    got = ids(replay(scenario))
    assert sum(f.injected for f in faults) == 5  # refusals really happened
    assert got == expected  # every alert, once
