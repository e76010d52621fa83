"""FSx for Lustre file systems (cost rule 13), hand-worked on the in-memory ledger.

fs-0123456789abcdef0: PERSISTENT_2, 125 MB/s/TiB, $0.145/GB-month (configured), tagged to
job llama. Created 2026-11-30T12:00Z at 1,200 GiB, resized to 2,400 GiB at 18:00Z,
deleted 2026-12-01T06:00Z. Prorated per second over calendar months like EBS
(November 2,592,000 s, December 2,678,400 s):
  1,200 x 0.145 x 21,600 / 2,592,000 = 1.45
  2,400 x 0.145 x 21,600 / 2,592,000 = 2.90
  2,400 x 0.145 x 21,600 / 2,678,400 = 2.806451612903...
  total 7.156451612903...
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from shared.adapters.file_system_store import FileSystemStore
from shared.adapters.fsx import description_of
from shared.adapters.job_records import load_job
from shared.config.ledger import LedgerConfig
from shared.domain import accrual as acc
from shared.domain.day_split import job_between
from shared.domain.fsx import price_key
from shared.events.fsx import FsxApiCallEvent, created_facts
from shared.services.file_systems import FileSystemLedger
from tests.aws_events import fsx_create_event, fsx_delete_event, fsx_update_event
from tests.support import Ledger, memory_ledger

EVENTS = Path(__file__).resolve().parents[1] / "events"
FS = "fs-0123456789abcdef0"
PRICES = {"fsx_gb_month": {"PERSISTENT_2_125": "0.145"}}
NOV, DEC = Decimal(2_592_000), Decimal(2_678_400)
SIX_HOURS = Decimal(21_600)
P1 = 1200 * Decimal("0.145") * SIX_HOURS / NOV
P2 = 2400 * Decimal("0.145") * SIX_HOURS / NOV
P3 = 2400 * Decimal("0.145") * SIX_HOURS / DEC
TOL = Decimal("1e-12")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def ledger(**config: object) -> tuple[Ledger, FileSystemLedger]:
    made = memory_ledger(
        config=LedgerConfig.model_validate({"live_prices": False, "prices": PRICES, **config}),
        now=at("2026-12-02T00:00:00Z"),
    )
    return made, FileSystemLedger(made.deps, FileSystemStore(made.table))


def apply(fsx: FileSystemLedger, raw: dict[str, object]) -> str:
    return fsx.record_event(FsxApiCallEvent.model_validate(raw)).result


def lifecycle() -> list[dict[str, object]]:
    return [
        fsx_create_event(
            "c", FS, "2026-11-30T12:00:00Z", storage_gib=1200, tags={"training-job": "llama"}
        ),
        fsx_update_event("u", FS, "2026-11-30T18:00:00Z", storage_gib=2400),
        fsx_delete_event("d", FS, "2026-12-01T06:00:00Z"),
    ]


def test_price_keys_by_deployment_type_and_tier() -> None:
    assert price_key("PERSISTENT_2", 125) == "PERSISTENT_2_125"
    assert price_key("PERSISTENT_1", 200) == "PERSISTENT_1_200"
    assert price_key("PERSISTENT_1", 12) == "PERSISTENT_1_12"  # HDD
    assert price_key("SCRATCH_2", 200) == "SCRATCH_2"  # scratch: the type alone


def test_the_cloudtrail_create_record_parses() -> None:
    raw = json.loads((EVENTS / "fsx-create-file-system-cloudtrail.json").read_text())
    facts = created_facts(FsxApiCallEvent.model_validate(raw))
    assert facts is not None
    assert facts.file_system_id == FS
    assert (facts.account, facts.region) == ("111122223333", "us-east-1")
    assert (facts.deployment_type, facts.throughput_mb_s_per_tib) == ("PERSISTENT_2", 125)
    assert facts.storage_gib == 1200
    assert facts.price_key == "PERSISTENT_2_125"
    assert facts.tags == {"training-job": "llama-pretrain", "project": "llama"}
    assert facts.created_at == at("2026-11-30T21:14:06Z")


def test_a_resized_file_system_across_a_month_end_is_prorated_per_second() -> None:
    made, fsx = ledger()
    assert [apply(fsx, e) for e in lifecycle()] == ["applied"] * 3
    cost = made.job("llama")
    assert abs(cost.fsx_usd - (P1 + P2 + P3)) < TOL
    assert abs(cost.total_usd - (P1 + P2 + P3)) < TOL  # a charge of its own, in the total
    assert cost.file_systems == (FS,)
    assert cost.complete
    assert "fsx_backups" in cost.unconfirmed
    records = load_job(made.table, made.deps.rollups, "llama")
    assert records is not None
    now = made.clock.now()
    nov30, _ = job_between(
        records, at("2026-11-30T00:00:00Z"), at("2026-12-01T00:00:00Z"), now, None
    )
    dec1, _ = job_between(
        records, at("2026-12-01T00:00:00Z"), at("2026-12-02T00:00:00Z"), now, None
    )
    assert abs(nov30["fsx"] - (P1 + P2)) < TOL
    assert abs(dec1["fsx"] - P3) < TOL


@pytest.mark.parametrize("order", [(2, 1, 0), (0, 0, 2, 1, 1, 2), (1, 2, 0)])
def test_events_out_of_order_and_twice_give_the_same_cost(order: tuple[int, ...]) -> None:
    made, fsx = ledger()
    events = lifecycle()
    for n in order:
        apply(fsx, events[n])
    assert abs(made.job("llama").fsx_usd - (P1 + P2 + P3)) < TOL


def test_an_unknown_deployment_type_is_unpriced_never_zero() -> None:
    made, fsx = ledger()
    apply(fsx, fsx_create_event("c", FS, "2026-11-30T12:00:00Z", storage_gib=1200,
                                deployment_type="PERSISTENT_9", throughput=125,
                                tags={"training-job": "llama"}))  # fmt: skip
    cost = made.job("llama")
    assert not cost.complete
    assert cost.unpriced == ("fsx:PERSISTENT_9_125:us-east-1",)
    assert "unpriced:fsx:PERSISTENT_9_125:us-east-1" in cost.unconfirmed


def test_an_untagged_file_system_is_left_out_and_a_configured_one_is_charged() -> None:
    made, fsx = ledger()
    untagged = fsx_create_event("c", FS, "2026-11-30T12:00:00Z", storage_gib=1200)
    assert apply(fsx, untagged) == "untracked"
    assert made.deps.rollups.all() == []
    assert FileSystemStore(made.table).head("123456789012", FS) is None
    configured, fsx2 = ledger(fsx={"file_systems": {FS: "shared-data"}})
    assert apply(fsx2, untagged) == "applied"
    assert configured.job("shared-data").fsx_usd > 0


def test_intelligent_tiering_and_the_hdd_ssd_cache_are_unconfirmed() -> None:
    made, fsx = ledger()
    apply(fsx, fsx_create_event("c", FS, "2026-11-30T12:00:00Z", storage_gib=1200,
                                storage_type="INTELLIGENT_TIERING",
                                tags={"training-job": "llama"}))  # fmt: skip
    cost = made.job("llama")
    assert cost.fsx_usd == 0 and cost.complete  # not unpriced: the bill will say
    assert f"fsx_intelligent_tiering:{FS}" in cost.unconfirmed
    assert made.rollup_value("llama", acc.FSX) == 0


def test_snapshot_fsx_price_carries_its_own_source_and_date() -> None:
    made = memory_ledger(config=LedgerConfig(live_prices=False))
    rate = made.deps.prices.fsx_rate("us-east-1", "PERSISTENT_2_125")
    assert rate is not None and rate.list_usd == Decimal("0.145")
    assert rate.source.value == "snapshot"
    assert rate.checked_on.isoformat() == "2026-12-01"
    assert "c3x.dev" in rate.note
    assert made.deps.prices.fsx_rate("us-east-1", "PERSISTENT_2_1000") is None


def test_describe_file_systems_answer_reads_size_tier_and_pending_resize() -> None:
    created = datetime(2026, 11, 30, 12, tzinfo=UTC)
    found = description_of(
        {
            "FileSystemId": FS, "FileSystemType": "LUSTRE", "OwnerId": "123456789012",
            "StorageCapacity": 1200, "StorageType": "SSD", "CreationTime": created,
            "Tags": [{"Key": "training-job", "Value": "llama"}],
            "LustreConfiguration": {"DeploymentType": "PERSISTENT_2",
                                    "PerUnitStorageThroughput": 125},
            "AdministrativeActions": [{
                "AdministrativeActionType": "FILE_SYSTEM_UPDATE", "Status": "IN_PROGRESS",
                "RequestTime": datetime(2026, 11, 30, 18, tzinfo=UTC),
                "TargetFileSystemValues": {"StorageCapacity": 2400}}],
        },
        "123456789012",
        "us-east-1",
    )  # fmt: skip
    assert found.facts.price_key == "PERSISTENT_2_125"
    assert found.facts.created_at == created
    assert found.changes == ((datetime(2026, 11, 30, 18, tzinfo=UTC), 2400, None),)


def test_a_creation_without_its_facts_is_malformed_and_a_failed_call_ignored() -> None:
    from shared.app.edge import MalformedEvent, parse_event
    from shared.app.event_function import logger

    raw = fsx_create_event("bad", FS, "2026-11-30T12:00:00Z", storage_gib=1200)
    del raw["detail"]["requestParameters"]["storageCapacity"]  # type: ignore[index]
    del raw["detail"]["responseElements"]["fileSystem"]["storageCapacity"]  # type: ignore[index]
    with pytest.raises(MalformedEvent):
        parse_event(raw, FsxApiCallEvent, logger)
    failed = fsx_delete_event("x", FS, "2026-12-01T06:00:00Z")
    failed["detail"]["errorCode"] = "FileSystemNotFound"  # type: ignore[index]
    failed["detail"]["responseElements"] = None  # type: ignore[index]
    _, fsx = ledger()
    assert apply(fsx, failed) == "ignored"
