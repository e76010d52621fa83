"""The API's job views over every job of every scenario (spot series, stops, checkpoints,
SageMaker, reservations):

- the timeline (each record priced once, kept past its end) gives, at every point, the
  very figures of ``job_between`` over (start - 1 s, point]: the reference it replaced;
- the response models keep the views' documents key for key (the managed keys only
  where a job has them), as Powertools serializes them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from shared.domain.day_split import job_between
from shared.domain.job import JobRecords
from shared.domain.segments import SeriesReader
from shared.reports.formatting import iso, money
from tests.golden.make_golden import SCENARIOS, scenario_names


def reference(
    records: JobRecords, start: datetime, now: datetime, points: int, series: SeriesReader | None
) -> list[dict[str, Any]]:
    before = start - timedelta(seconds=1)
    out = []
    for n in range(points):
        at = start + (now - start) * n / (points - 1) if points > 1 else now
        inside, _ = job_between(records, before, at, now, series)
        out.append({"at": iso(at), "total_usd": money(inside["total"]),
                    "instance_usd": money(inside["instance"]), "ebs_usd": money(inside["ebs"]),
                    "checkpoint_storage_usd": money(inside["checkpoint_storage"])})  # fmt: skip
    return out


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def _same_document(model: type[BaseModel], document: dict[str, Any]) -> None:
    served = TypeAdapter(model).dump_python(
        model.model_validate(document), mode="json", by_alias=True
    )
    assert _ordered(served) == _ordered(json.loads(json.dumps(document)))


@pytest.mark.parametrize("name", [n for n in scenario_names() if "shuffled" not in n])
def test_timeline_and_job_documents_over_every_scenario(name: str) -> None:
    from costtracker.progress import Progress
    from costtracker.replay import replay_session
    from costtracker.scenario import Scenario
    from shared.adapters.job_records import load_job, load_sealed
    from shared.api.models.jobs import JobDetail, JobItems
    from shared.app import runtime
    from shared.reports.views import job_detail, job_line_items
    from shared.services.job_view import all_rollups, cost_of
    from shared.services.timeline import cumulative_points

    scenario = Scenario.model_validate(json.loads((SCENARIOS / name).read_text()))
    checked = 0
    with replay_session(scenario) as replayer:
        replayer.run(Progress(len(scenario.events), "replay", enabled=False))
        deps, now = runtime.ledger_deps(), replayer.clock.now()
        for job_id in sorted(all_rollups(deps.rollups)):
            records = load_job(deps.table, deps.rollups, job_id)
            assert records is not None
            cost = cost_of(deps, records, now)
            _same_document(JobDetail, job_detail(cost))
            items = job_line_items(cost, records, now)
            _same_document(JobItems, {"job_id": job_id, "items": items, "next_token": None})
            starts = [str(r["started_at"]) for r in records.rollups if r.get("started_at")]
            start = datetime.fromisoformat(min(starts)) if starts else now
            load_sealed(deps.table, records, start)
            for points in (2, 9, 100):
                expected = reference(records, start, now, points, deps.prices.series)
                got = cumulative_points(records, start, now, points, deps.prices.series)
                assert got == expected, f"{job_id}, {points} points"
                checked += 1
    assert checked
