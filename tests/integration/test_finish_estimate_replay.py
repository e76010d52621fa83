"""Estimate to finish, on the spot/checkpoint scenario (see test_replay_spot_checkpoints):
last checkpoint step 2,000; pace 1,500 steps in 2 h 10 min = 692.307692 steps/h; burning
$40/h (two p5.48xlarge spot at $20); rerun share 14.444444 / 108.111111 of its cost."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from costtracker.lambda_context import FakeLambdaContext
from costtracker.local_api import proxy_event
from costtracker.replay import replay_session
from costtracker.scenario import load_scenario

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "spot_checkpoints.json"


def test_estimate_is_a_range_with_its_assumptions() -> None:
    from functions.job_cost_api.handler import handler

    with replay_session(load_scenario(SCENARIO)) as replayer:
        replayer.run()
        response = handler(
            proxy_event("GET", "/jobs/gpt-spot/estimate?target_steps=3000", {}),
            FakeLambdaContext("test"),
        )
        bad = handler(
            proxy_event("GET", "/jobs/gpt-spot/estimate?target_steps=0", {}),
            FakeLambdaContext("test"),
        )
    assert response["statusCode"] == 200, response["body"]
    body = json.loads(response["body"])
    hours = Decimal(1000) / (Decimal(1500) / (Decimal(130) / 60))
    low = hours * 40
    rerun_share = (Decimal(2600) * 20 / 3600) / (Decimal(19460) * 20 / 3600)
    high = hours / Decimal("0.8") * 40 * (1 + rerun_share)
    assert abs(Decimal(body["cost_usd"]["low"]) - low) < Decimal("1e-6")
    assert abs(Decimal(body["cost_usd"]["high"]) - high) < Decimal("1e-6")
    assert body["remaining_steps"] == 1000 and len(body["assumptions"]) >= 3
    assert bad["statusCode"] == 400 and json.loads(bad["body"])["field"] == "target_steps"
