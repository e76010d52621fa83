"""The daily FSx refresh against moto's FSx (cost rule 13, "Many accounts"): through the
client factory, per account and region; a place that cannot be read is reported and the
others still refresh; a file system no longer listed ends at the refresh."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
from moto import mock_aws

from shared.adapters.accounts import MemberAccountUnreachable
from shared.adapters.file_system_store import FileSystemStore
from shared.adapters.fsx import FsxFileSystems
from shared.config.ledger import LedgerConfig
from shared.services.file_systems import FileSystemLedger
from tests.support import memory_ledger

HOME, MEMBER = "123456789012", "222233334444"
NOW = datetime(2026, 11, 20, 0, 25, tzinfo=UTC)


class Factory:
    """The tracker's own clients; the member account's role cannot be assumed.
    (moto's CreateFileSystem gives no CreationTime: the refresh dates it at its own run.)"""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, str]] = []

    def client_for(self, service: str, account: str = "", region: str = "") -> Any:
        self.asked.append((service, account, region))
        if account == MEMBER:
            raise MemberAccountUnreachable(MEMBER, f"arn:aws:iam::{MEMBER}:role/x", "denied")
        return boto3.client(service, region_name=region)


def test_refresh_learns_tagged_file_systems_and_reports_an_unreachable_account() -> None:
    with mock_aws():
        fsx = boto3.client("fsx", region_name="us-east-1")
        made = fsx.create_file_system(
            FileSystemType="LUSTRE",
            StorageCapacity=1200,
            SubnetIds=["subnet-0123456789abcdef0"],
            LustreConfiguration={"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125},
            Tags=[{"Key": "training-job", "Value": "llama"}],
        )["FileSystem"]
        fsx.create_file_system(  # untagged: left out
            FileSystemType="LUSTRE",
            StorageCapacity=2400,
            SubnetIds=["subnet-0123456789abcdef0"],
            LustreConfiguration={"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125},
        )
        ledger = memory_ledger(
            config=LedgerConfig.model_validate(
                {"live_prices": False, "prices": {"fsx_gb_month": {"PERSISTENT_2_125": "0.145"}}}
            ),
            now=NOW,
        )
        store = FileSystemStore(ledger.table)
        factory = Factory()
        source = FsxFileSystems(factory)
        result = FileSystemLedger(ledger.deps, store).refresh(
            source, NOW, [(HOME, "us-east-1"), (MEMBER, "us-east-1")]
        )
        assert result["failed"] == [f"{MEMBER}/us-east-1"]
        assert ("fsx", HOME, "us-east-1") in factory.asked
        (live,) = store.live()
        assert (live.file_system_id, live.job_id) == (made["FileSystemId"], "llama")
        # Deleted without an event the ledger saw: billed until the next refresh.
        fsx.delete_file_system(FileSystemId=made["FileSystemId"])
        later = NOW + timedelta(days=1)
        ledger.clock.advance_to(later)
        FileSystemLedger(ledger.deps, store).refresh(source, later, [(HOME, "us-east-1")])
        assert store.live() == []
        cost = ledger.job("llama", later + timedelta(days=3))
        assert cost.fsx_usd == Decimal(1200) * Decimal("0.145") / 30  # one November day


def test_each_account_and_region_is_a_unit_of_its_own() -> None:
    """The refresh is planned as (account, region) units and each runs alone through that
    place's client, so a fan-out can hand one unit to each worker."""
    with mock_aws():
        east = boto3.client("fsx", region_name="us-east-1")
        west = boto3.client("fsx", region_name="us-west-2")
        for client, job in ((east, "east-job"), (west, "west-job")):
            client.create_file_system(
                FileSystemType="LUSTRE",
                StorageCapacity=1200,
                SubnetIds=["subnet-0123456789abcdef0"],
                LustreConfiguration={
                    "DeploymentType": "PERSISTENT_2",
                    "PerUnitStorageThroughput": 125,
                },
                Tags=[{"Key": "training-job", "Value": job}],
            )
        ledger = memory_ledger(config=LedgerConfig.model_validate({"live_prices": False}), now=NOW)
        store = FileSystemStore(ledger.table)
        factory = Factory()
        source = FsxFileSystems(factory)
        files = FileSystemLedger(ledger.deps, store)
        assert files.places_to_refresh([(HOME, "us-east-1")]) == [(HOME, "us-east-1")]
        west_unit = files.refresh_place(source, HOME, "us-west-2", NOW)
        assert (west_unit.applied, west_unit.failed) == (1, False)
        assert factory.asked == [("fsx", HOME, "us-west-2")]
        # A place learnt once is planned every day after, with the tracker's own.
        assert files.places_to_refresh([(HOME, "us-east-1")]) == [
            (HOME, "us-east-1"),
            (HOME, "us-west-2"),
        ]
        files.refresh_place(source, HOME, "us-east-1", NOW)
        assert sorted(h.job_id or "" for h in store.live()) == ["east-job", "west-job"]
        # us-east-1's answer does not list the us-west-2 file system: it is not gone.
        later = NOW + timedelta(days=1)
        ledger.clock.advance_to(later)
        files.refresh_place(source, HOME, "us-east-1", later)
        assert sorted(h.job_id or "" for h in store.live()) == ["east-job", "west-job"]
        member = files.refresh_place(source, MEMBER, "us-east-1", later)
        assert member.failed and member.applied == 0
