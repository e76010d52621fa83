"""No record grows with history (issue 12): an instance started and stopped 10,000 times,
a checkpoint key overwritten 10,000 times, a spot segment across 5,000 price changes and
a job of 1,000 instances, each driven through the real services and stores (over the
in-memory table, so it runs in seconds), with the largest items then written to moto,
which enforces DynamoDB's 400 KB item limit, and read back. Costs are exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import boto3
import pytest
from moto import mock_aws

from shared.adapters import keys, ledger_schema
from shared.adapters.table import DynamoTable, MemoryTable, Put
from shared.config.ledger import LedgerConfig
from shared.domain import accrual as acc
from shared.domain.ebs import Volume
from shared.domain.instance import InstanceProfile
from shared.services.instances import record_state_change
from tests.support import ACCOUNT, REGION, largest_item, memory_ledger, object_event

T0 = datetime(2026, 11, 1, tzinfo=UTC)
LIMIT = 64 * 1024  # "well under" DynamoDB's 400 KB
TRN = InstanceProfile(
    instance_id="i-0b0000000000000b1",
    instance_type="trn1.32xlarge",
    region=REGION,
    account=ACCOUNT,
    tags={"training-job": "nightly", "team": "nlp"},
    volumes=(Volume(volume_id="vol-0b1", size_gib=512, volume_type="gp3"),),
)
CONFIG = LedgerConfig.model_validate(
    {
        "live_prices": False,
        "prices": {
            "ec2": {"trn1.32xlarge": "21.50"},
            "ebs_gb_month": {"gp3": "0.08"},
            "s3_gb_month": "0.023",
        },
    }
)


@pytest.fixture
def moto_table() -> Iterator[DynamoTable]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        client.create_table(**ledger_schema.create_table_request("bounded"))
        yield DynamoTable(client, "bounded")


def into_moto(memory: MemoryTable, moto: DynamoTable, largest: int = 5) -> None:
    """Write the largest items (and every head and rollup) to moto and read them back."""
    from shared.adapters.items import dump

    items = sorted(memory.items.values(), key=lambda i: -len(dump(i)))
    chosen = items[:largest] + [i for i in items if str(i["sk"])[:2] in ("H#", "R#")]
    for item in chosen:
        moto.transact([Put(item)])
        assert moto.get(item["pk"], item["sk"]) is not None


def test_an_instance_started_and_stopped_10000_times(moto_table: DynamoTable) -> None:
    ledger = memory_ledger(TRN, config=CONFIG, now=T0)
    for n in range(10_000):
        start = T0 + timedelta(minutes=10 * n)
        ledger.clock.advance_to(start)
        for eid, at, state in (
            (f"r{n}", start, "running"),
            (f"s{n}", start + timedelta(seconds=30 + n % 300), "stopped"),
        ):
            ledger.clock.advance_to(at)
            outcome = record_state_change(
                ledger.deps,
                event_id=eid,
                at=at,
                instance_id=TRN.instance_id,
                state=state,
                region=REGION,
                account=ACCOUNT,
            )
            assert outcome.result == "applied"
    size, key = largest_item(ledger.table)
    assert size < LIMIT, key
    into_moto(ledger.table, moto_table)
    # Each run lasts 30 + n % 300 s, billed at least 60 s, at $21.50/h.
    billed = sum(max(60, 30 + n % 300) for n in range(10_000))
    now = ledger.clock.now()
    rollup = moto_table.get(keys.job_pk("nightly"), keys.rollup_sk(ACCOUNT))
    assert rollup is not None
    accrual = acc.from_attributes(rollup)
    assert accrual.value(acc.SECONDS, now) == billed
    assert accrual.value(acc.INSTANCE, now) == Decimal(billed) * Decimal("21.50") / 3600
    assert ledger.job("nightly").instance_usd == Decimal(billed) * Decimal("21.50") / 3600


def test_a_checkpoint_key_overwritten_10000_times(moto_table: DynamoTable) -> None:
    ledger = memory_ledger(
        config=CONFIG.model_copy(
            update={
                "checkpoint": CONFIG.checkpoint.model_copy(
                    update={"key_pattern": r"^runs/(?P<job>[^/]+)/latest/"}
                )
            }
        ),
        now=T0,
    )
    size_bytes = 2**30  # 1 GiB each time, every 10 minutes
    for n in range(10_000):
        at = T0 + timedelta(minutes=10 * n)
        ledger.clock.advance_to(at)
        outcome = object_event(
            ledger,
            f"w{n}",
            at,
            "runs/nightly/latest/model.pt",
            size_bytes,
            bucket="ckpt",
            sequencer=f"{n:016X}",
        )
        assert outcome.result == "applied"
    size, key = largest_item(ledger.table)
    assert size < LIMIT, key
    into_moto(ledger.table, moto_table)
    # One GiB stored without a break from T0 to the last write (and on to now): 0.023 $/GB-
    # month prorated per second over each calendar month (Nov 30 d, Dec 31 d, Jan 31 d...).
    now = ledger.clock.now()
    expected = _months_between(T0, now) * Decimal("0.023")
    job = ledger.job("nightly")
    assert abs(job.checkpoint_storage_usd - expected) < Decimal("1e-20")
    assert job.checkpoints == 1  # one key, no step: one checkpoint


def _months_between(a: datetime, b: datetime) -> Decimal:
    from shared.domain.clock import MONTH_UNITS, month_clock

    return Decimal(month_clock(b) - month_clock(a)) / MONTH_UNITS


def test_a_spot_segment_across_5000_price_changes(moto_table: DynamoTable) -> None:
    spot = TRN.model_copy(
        update={"lifecycle": "spot", "instance_type": "p5.48xlarge", "volumes": ()}
    )
    history = [
        {
            "from": (T0 + timedelta(minutes=5 * n)).isoformat(),
            "usd": str(Decimal("20") + Decimal(n % 7) / 10),
        }
        for n in range(5000)
    ]
    config = LedgerConfig.model_validate(
        {"live_prices": False, "prices": {"spot": {"p5.48xlarge": history}}}
    )
    ledger = memory_ledger(spot, config=config, now=T0)
    end = T0 + timedelta(minutes=5 * 5000 - 1)
    record_state_change(
        ledger.deps,
        event_id="r",
        at=T0,
        instance_id=spot.instance_id,
        state="running",
        region=REGION,
        account=ACCOUNT,
    )
    ledger.clock.advance_to(end)
    record_state_change(
        ledger.deps,
        event_id="s",
        at=end,
        instance_id=spot.instance_id,
        state="stopped",
        region=REGION,
        account=ACCOUNT,
    )
    size, key = largest_item(ledger.table)
    assert size < LIMIT, key
    into_moto(ledger.table, moto_table)
    # Each 5-minute step at its own price; the last one lasts 4 minutes.
    expected = sum(Decimal("20") + Decimal(n % 7) / 10 for n in range(4999)) * 300 / 3600
    expected += (Decimal("20") + Decimal(4999 % 7) / 10) * 240 / 3600
    assert ledger.job("nightly").instance_usd == expected


def test_a_job_of_1000_instances(moto_table: DynamoTable) -> None:
    profiles = [
        TRN.model_copy(update={"instance_id": f"i-0c{n:015x}", "volumes": ()}) for n in range(1000)
    ]
    ledger = memory_ledger(*profiles, config=CONFIG, now=T0)
    for n, profile in enumerate(profiles):
        for eid, minutes, state in ((f"r{n}", 0, "running"), (f"s{n}", 60 + n % 60, "stopped")):
            at = T0 + timedelta(minutes=minutes)
            ledger.clock.advance_to(at)
            record_state_change(
                ledger.deps,
                event_id=eid,
                at=at,
                instance_id=profile.instance_id,
                state=state,
                region=REGION,
                account=ACCOUNT,
            )
    size, key = largest_item(ledger.table)
    assert size < LIMIT, key
    into_moto(ledger.table, moto_table)
    billed = sum((60 + n % 60) * 60 for n in range(1000))
    job = ledger.job("nightly")
    assert job.billed_seconds == billed
    assert job.instance_usd == Decimal(billed) * Decimal("21.50") / 3600
    assert len(job.instances) == 1000 and job.status == "stopped"
