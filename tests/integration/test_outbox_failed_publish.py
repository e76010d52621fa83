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
from tests.integration.test_spec_transient_failures import Faults


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


def _missing_price_scenario() -> Scenario:
    """The budget scenario with llama-dpo on an instance type no price source knows: a
    missing_price alert to admins."""
    data = scenario_dict("budget_llama.json")
    data["instances"][1]["instance_type"] = "trn2.48xlarge"
    return Scenario.model_validate(data)


def test_throttling_beyond_the_sdk_retries_delays_every_kind_and_loses_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SNS throttles longer than botocore retries (5 attempts): the outbox re-sends at
    the next tick. Budget, forecast, missing-price and idle alerts, each exactly once."""
    import botocore.endpoint

    monkeypatch.setattr(botocore.endpoint.time, "sleep", lambda seconds: None)
    scenarios = {
        "budget": Scenario.model_validate(scenario_dict("budget_llama_declared.json")),
        "missing_price": _missing_price_scenario(),
        "idle": Scenario.model_validate(scenario_dict("idle_alarms.json")),
    }
    expected = {name: ids(replay(s)) for name, s in scenarios.items()}
    kinds = {i.split(":")[0] for counter in expected.values() for i in counter}
    assert {"budget", "forecast", "missing_price", "idle"} <= kinds
    session = boto3._get_default_session()
    for name, scenario in scenarios.items():
        fault = Faults(400, "Throttling", times=7)  # 5 for the first publish, 2 after
        session.events.register("before-send.sns.Publish", fault)
        try:
            got = ids(replay(scenario))
        finally:
            session.events.unregister("before-send.sns.Publish", fault)
        assert fault.injected == 7, name
        assert got == expected[name], name  # every alert, once, after the delay
