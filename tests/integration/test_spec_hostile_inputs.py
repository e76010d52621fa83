"""Inputs anyone who can write a checkpoint bucket or send an event can make, through the
real replay and the API handler: a checkpoint step of 30 digits, an event from year 999,
an account id with a '#'. None of them breaks the ledger, the API or the replay."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

from costtracker.lambda_context import FakeLambdaContext
from costtracker.local_api import proxy_event
from costtracker.progress import Progress
from costtracker.replay import replay, replay_session
from costtracker.scenario import Scenario
from tests.aws_events import s3_object_event
from tests.integration.conftest import scenario_dict

HUGE_STEP = "9" * 30
LONGEST_STEP = "9" * 18


def _object_created(event_id: str, key: str, at: str) -> dict[str, Any]:
    return s3_object_event(event_id, "ckpt-bucket", key, at, size=1024, sequencer="00B2B73650")


def _hostile_scenario() -> dict[str, Any]:
    data = scenario_dict("spot_checkpoints.json")
    data["events"] += [
        _object_created(
            "ck-huge", f"runs/gpt-spot/step-{HUGE_STEP}/model.pt", "2026-11-01T02:50:02Z"
        ),
        _object_created(
            "ck-longest", f"runs/gpt-spot/step-{LONGEST_STEP}/model.pt", "2026-11-01T02:50:01Z"
        ),
    ]
    first = data["events"][0]
    ancient = copy.deepcopy(first) | {"id": "st-year-999", "time": "0999-12-31T23:00:00Z"}
    other_account = copy.deepcopy(first) | {"id": "st-hash-account", "account": "123456789012#x"}
    data["events"] += [ancient, other_account]
    return data


def test_a_long_step_an_ancient_event_and_a_bad_account_are_set_aside() -> None:
    started = time.monotonic()
    document = replay(Scenario.model_validate(_hostile_scenario()))
    assert time.monotonic() - started < 120  # year 999 used to walk every minute since
    rejected = {r["event_id"]: r["error"] for r in document["rejected_events"]}
    assert set(rejected) >= {"st-year-999", "st-hash-account"}
    assert "2006-2100" in rejected["st-year-999"]
    assert "account" in rejected["st-hash-account"]
    (job,) = document["jobs"]
    # The 18-digit step counts; the 30-digit one is set aside (its object still bills).
    assert job["last_checkpoint_step"] == int(LONGEST_STEP)


def api(path: str) -> tuple[int, Any]:
    from functions.job_cost_api.handler import handler

    response = handler(proxy_event("GET", path, {}), FakeLambdaContext("test"))  # type: ignore[arg-type]
    return response["statusCode"], json.loads(response["body"])


def test_the_job_api_answers_for_a_job_with_a_hostile_checkpoint_key() -> None:
    scenario = Scenario.model_validate(_hostile_scenario())
    with replay_session(scenario) as replayer:
        replayer.run(Progress(len(scenario.events), "replay", enabled=False))
        for path in ("/jobs", "/jobs/gpt-spot", "/compare?jobs=gpt-spot,gpt-spot"):
            status, body = api(path)
            assert status == 200, (path, body)
        status, body = api("/jobs/gpt-spot")
        assert status == 200, body
        assert body["last_checkpoint_step"] == int(LONGEST_STEP)
        assert body["steps_per_hour"] is not None
