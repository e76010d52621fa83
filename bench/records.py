"""Record sizes for the cost model: how big an instance head, a checkpoint head and a job
rollup get with history (the services over the in-memory table; sizes by DynamoDB's
item-size rules on the items as they would be stored), and the items a state event
writes."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.counter import item_size

ACCOUNT, REGION, BUCKET = "123456789012", "us-east-1", "bench-records"
START = datetime(2026, 11, 2, tzinfo=UTC)


def stored_size(item: dict[str, Any]) -> int:
    from boto3.dynamodb.types import TypeSerializer

    ser = TypeSerializer()
    return item_size({k: ser.serialize(v) for k, v in item.items()})


def _sizes_by_kind(table: Any) -> dict[str, dict[str, float]]:
    by: dict[str, list[int]] = {}
    for item in table.items.values():
        by.setdefault(str(item.get("kind", "?")), []).append(stored_size(item))
    return {k: {"n": len(v), "mean": sum(v) / len(v), "max": max(v)} for k, v in sorted(by.items())}


def growth(cycles: tuple[int, ...] = (1, 10, 100, 1000)) -> dict[str, Any]:
    """One on-demand instance started and stopped ``max(cycles)`` times (3 billing
    transitions a cycle) and one checkpoint key overwritten as often: their heads' and
    the job rollup's sizes after each count in ``cycles``."""
    from bench.twins import memory_deps
    from shared.adapters import keys
    from shared.adapters.checkpoint_store import CheckpointStore
    from shared.config.ledger import LedgerConfig
    from shared.domain.ebs import Volume
    from shared.domain.instance import InstanceProfile
    from shared.services.checkpoints import record_object_event
    from shared.services.instances import record_state_change

    config = LedgerConfig.model_validate(
        {
            "live_prices": False,
            "prices": {
                "ec2": {"trn1.32xlarge": "21.50"},
                "ebs_gb_month": {"gp3": "0.08"},
                "s3_gb_month": "0.023",
                "as_of": START.date().isoformat(),
            },
            "checkpoint": {
                "buckets": [BUCKET],
                "key_pattern": r"^runs/(?P<job>[^/]+)/step-(?P<step>\d+)/",
            },
        }
    )
    iid = "i-0aaaaaaaaaaaaaaa1"
    profile = InstanceProfile(
        instance_id=iid,
        instance_type="trn1.32xlarge",
        region=REGION,
        account=ACCOUNT,
        availability_zone=f"{REGION}a",
        tags={"training-job": "grow", "project": "llama", "team": "nlp", "owner": "user1"},
        volumes=(Volume(volume_id="vol-0aaaaaaaaaaaaaaa1", size_gib=1024),),
    )
    deps = memory_deps(config, {iid: profile}, START)
    store = CheckpointStore(deps.table)
    head_key = (keys.job_pk("grow"), keys.instance_head_sk(ACCOUNT, iid))
    ckpt_key = (
        keys.job_pk("grow"),
        keys.checkpoint_head_sk(ACCOUNT, BUCKET, "runs/grow/step-1/model.pt"),
    )
    rollup_key = (keys.job_pk("grow"), keys.rollup_sk(ACCOUNT))
    rows = []
    t = START
    n = 0
    started = time.process_time()
    for cycle in range(1, max(cycles) + 1):
        for state, dt in (("running", 0), ("stopping", 3600), ("stopped", 3650)):
            n += 1
            at = t + timedelta(seconds=dt)
            deps.clock.advance_to(at)
            record_state_change(
                deps,
                event_id=f"e{n}",
                at=at,
                instance_id=iid,
                state=state,
                region=REGION,
                account=ACCOUNT,
            )
        at = t + timedelta(seconds=1800)
        record_object_event(
            deps,
            store,
            event_id=f"o{cycle}",
            at=at,
            region=REGION,
            account=ACCOUNT,
            bucket=BUCKET,
            raw_key="runs/grow/step-1/model.pt",
            size_bytes=2**30,
        )
        t += timedelta(hours=2)
        if cycle in cycles:
            items = deps.table.items
            rows.append(
                {
                    "cycles": cycle,
                    "instance_head_bytes": stored_size(items[head_key]),
                    "checkpoint_head_bytes": stored_size(items[ckpt_key]),
                    "rollup_bytes": stored_size(items[rollup_key]),
                    "items_in_partition": sum(1 for k in items if k[0] == keys.job_pk("grow")),
                }
            )
    return {
        "rows": rows,
        "cpu_s": time.process_time() - started,
        "sizes_by_kind": _sizes_by_kind(deps.table),
    }
