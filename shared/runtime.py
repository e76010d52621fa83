"""Lazily built dependencies of the handlers: boto3 clients, repositories, the clock.

Built on first use (never at import) and cached for the life of the Lambda
container; the local emulator swaps the clock for its simulated one and calls
``reset()`` when it changes the environment.
"""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING, Any

from shared.clock import Clock, SystemClock
from shared.settings import FunctionSettings, settings

if TYPE_CHECKING:
    from shared.adapters.budget_store import BudgetStore
    from shared.adapters.daily_store import ReconciliationStore, SummaryStore
    from shared.adapters.price_cache_store import PriceCacheStore

_clock: Clock = SystemClock()
# Price List API endpoints exist in us-east-1, eu-central-1 and ap-south-1 only.
PRICING_ENDPOINT_REGION = "us-east-1"


def clock() -> Clock:
    return _clock


def use_clock(new_clock: Clock) -> None:
    global _clock
    _clock = new_clock


@cache
def client(service: str, region: str | None = None) -> Any:
    """A boto3 client with standard retries (throttling and 5xx back off and retry)."""
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5, read_timeout=20
    )
    return boto3.client(
        service, region_name=region or os.environ.get("AWS_REGION", "us-east-1"), config=config
    )


@cache
def accounts() -> Any:
    """Clients per (account, region): a member account's through its read-only role."""
    from shared.adapters.accounts import AccountClients, boto3_client, caller_account

    region = os.environ.get("AWS_REGION", "us-east-1")

    def make(service: str, in_region: str, credentials: Any) -> Any:
        if credentials is None:  # the function's own: the very clients runtime.client gives
            return client(service) if in_region == region else client(service, in_region)
        return boto3_client(service, in_region, credentials)

    return AccountClients(
        make,
        home_account=lambda: os.environ.get("TRACKER_ACCOUNT") or caller_account(make, region),
        role_name=settings().config.accounts.member_role_name,
        default_region=region,
    )


def current_settings() -> FunctionSettings:
    return settings()


@cache
def table() -> Any:
    from shared.adapters.table import DynamoTable

    return DynamoTable(client("dynamodb"), settings().table_name)


@cache
def stores() -> Any:
    """The record stores, kept for the container's life (they remember what they wrote)."""
    from shared.adapters.checkpoint_store import CheckpointStore
    from shared.adapters.instance_store import InstanceStore
    from shared.adapters.rollup_store import RollupStore

    t = table()
    return InstanceStore(t), RollupStore(t), CheckpointStore(t)


def budget_store() -> BudgetStore:
    """Budgets set through the API and their history."""
    from shared.adapters.budget_store import BudgetStore

    return BudgetStore(table())


def price_cache() -> PriceCacheStore:
    from shared.adapters.price_cache_store import PriceCacheStore

    return PriceCacheStore(table())


def summary_store() -> SummaryStore:
    from shared.adapters.daily_store import SummaryStore

    return SummaryStore(table())


def reconciliation_store() -> ReconciliationStore:
    from shared.adapters.daily_store import ReconciliationStore

    return ReconciliationStore(table())


@cache
def notifier() -> Any:
    from shared.notify import SnsNotifier

    s = settings()
    return SnsNotifier(
        client("sns"),
        {"finance": s.finance_topic_arn, "team": s.team_topic_arn, "admin": s.admin_topic_arn},
        chat_topics=s.team_chat_topics,
    )


@cache
def report_store() -> Any:
    from shared.reports import S3ReportStore

    bucket = os.environ.get("REPORT_BUCKET", "")
    if not bucket:
        raise RuntimeError("REPORT_BUCKET is not set: the daily reports have nowhere to go")
    return S3ReportStore(client("s3"), bucket)


@cache
def alarms() -> Any:
    from shared.alarms import CloudWatchAlarms

    return CloudWatchAlarms(client("cloudwatch"))


@cache
def stopper() -> Any:
    """Stops instances for auto-stop (the IAM policy allows only opted-in instances)."""
    from shared.services.utilization import Ec2Stopper

    return Ec2Stopper(client("ec2"))


def ledger_deps() -> Any:
    """Dependencies of the ledger services; the price book's check date is today's."""
    from shared.inventory import Ec2Inventory
    from shared.pricing import AwsLivePrices, PriceBook, bundled_snapshot
    from shared.services.instances import LedgerDeps

    config = settings().config
    live = AwsLivePrices(client("pricing", PRICING_ENDPOINT_REGION), accounts())
    now = _clock.now()
    instances, rollups, _ = stores()
    from shared.services.reservations import ReservationLedger

    prices = PriceBook(config, price_cache(), live, bundled_snapshot(), now.date())
    reservations = ReservationLedger(managed_stores()[1], capacity_reservations, config, prices)
    prices.block_pin = reservations.pin_for
    return LedgerDeps(
        table=table(),
        instances=instances,
        rollups=rollups,
        inventory=Ec2Inventory(accounts()),
        prices=prices,
        clock=_clock,
        config=config,
        reservations=reservations,
    )


# The local replay answers DescribeTrainingJob / DescribeCapacityReservations from its
# scenario (moto cannot): it sets these, the deployed functions never do.
_managed_sources: dict[str, Any] = {}


def use_managed_sources(training_jobs: Any = None, reservations: Any = None) -> None:
    _managed_sources.clear()
    if training_jobs is not None:
        _managed_sources["training_jobs"] = training_jobs
    if reservations is not None:
        _managed_sources["reservations"] = reservations


def training_jobs() -> Any:
    """``TrainingJobs`` (DescribeTrainingJob)."""
    if "training_jobs" in _managed_sources:
        return _managed_sources["training_jobs"]
    from shared.adapters.sagemaker import SageMakerTrainingJobs

    return SageMakerTrainingJobs(client("sagemaker"))


def capacity_reservations() -> Any:
    """``CapacityReservations`` (DescribeCapacityReservations)."""
    if "reservations" in _managed_sources:
        return _managed_sources["reservations"]
    from shared.adapters.reservations import Ec2CapacityReservations

    return Ec2CapacityReservations(client("ec2"))


@cache
def managed_stores() -> Any:
    """(TrainingStore, ReservationStore), kept for the container's life."""
    from shared.adapters.managed_store import ReservationStore, TrainingStore

    t = table()
    return TrainingStore(t), ReservationStore(t)


def checkpoint_store() -> Any:
    return stores()[2]


def reset() -> None:
    """Forget cached settings and clients (the environment changed)."""
    settings.cache_clear()
    client.cache_clear()
    accounts.cache_clear()
    table.cache_clear()
    stores.cache_clear()
    notifier.cache_clear()
    alarms.cache_clear()
    report_store.cache_clear()
    stopper.cache_clear()
    managed_stores.cache_clear()
