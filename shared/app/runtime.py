"""The functions' dependencies, typed, built once per cold start (never at import): a
frozen clock, replay's sources and the settings; clients, the table, stores and adapters
on first use, kept for the container's life (``ledger_deps()`` per call: its price book
dates from the call's day). ``current()`` is the container's runtime; ``override(...)``
and ``using(...)`` hand in another and restore the previous one; ``reset()`` rebuilds it
from a changed environment, keeping its clock and sources."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from datetime import date
from functools import cached_property
from typing import TYPE_CHECKING

from shared.app.function_settings import FunctionSettings, load_settings
from shared.app.sources import Sources as Sources
from shared.domain.clock import Clock, SystemClock

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from shared.adapters.accounts import AccountClients, Credentials
    from shared.adapters.alarms import CloudWatchAlarms
    from shared.adapters.budget_store import BudgetStore
    from shared.adapters.checkpoint_store import CheckpointStore
    from shared.adapters.daily_store import ReconciliationStore, SummaryStore
    from shared.adapters.file_system_store import FileSystemStore
    from shared.adapters.fsx import FileSystems
    from shared.adapters.instance_store import InstanceStore
    from shared.adapters.inventory import Inventory
    from shared.adapters.managed_store import ReservationStore, TrainingStore
    from shared.adapters.metric_reads import CloudWatchMetrics
    from shared.adapters.notify import SnsNotifier
    from shared.adapters.outbox import OutboxStore
    from shared.adapters.price_cache_store import PriceCacheStore
    from shared.adapters.pricing import PriceBook
    from shared.adapters.pricing_live import AwsLivePrices
    from shared.adapters.report_store import S3ReportStore
    from shared.adapters.reservations import CapacityReservations
    from shared.adapters.rollup_store import RollupStore
    from shared.adapters.sagemaker import TrainingJobs
    from shared.adapters.table import Table
    from shared.adapters.utilization_store import UtilizationStore
    from shared.services.deps import LedgerDeps
    from shared.services.reservations import ReservationLedger
    from shared.services.stopper import Stopper

# Price List API endpoints exist in us-east-1, eu-central-1 and ap-south-1 only.
PRICING_ENDPOINT_REGION = "us-east-1"


@dataclass(frozen=True, eq=False)
class Runtime:
    """A container's dependencies (module docstring), named by one rule: a store is
    ``<record>_store``, an AWS adapter is named for what it reads or does."""

    clock: Clock = field(default_factory=SystemClock)
    sources: Sources = field(default_factory=Sources)
    given_settings: FunctionSettings | None = None  # None: the environment's, on first use
    # None: the DynamoDB table the settings name; local mode hands in its in-memory table.
    given_table: Table | None = None
    _clients: dict[tuple[str, str], BaseClient] = field(default_factory=dict, repr=False)

    @cached_property
    def settings(self) -> FunctionSettings:
        """The validated settings; raises with the offending variable named."""
        return self.given_settings or load_settings()

    @property
    def region(self) -> str:
        return os.environ.get("AWS_REGION", "us-east-1")

    def client(self, service: str, region: str | None = None) -> BaseClient:
        """A client of the function's own account, made by the one client factory
        (``shared.adapters.accounts.boto3_client``)."""
        key = (service, region or self.region)
        if key not in self._clients:
            from shared.adapters.accounts import boto3_client

            made: BaseClient = boto3_client(service, key[1], None)
            self._clients[key] = made
        return self._clients[key]

    @cached_property
    def accounts(self) -> AccountClients:
        """Clients per (account, region): a member account's through its read-only role."""
        from shared.adapters.accounts import AccountClients, boto3_client, caller_account

        region = self.region

        def make(service: str, in_region: str, credentials: Credentials | None) -> BaseClient:
            if credentials is None:  # the function's own: the very clients ``client`` gives
                return self.client(service, in_region)
            client: BaseClient = boto3_client(service, in_region, credentials)
            return client

        return AccountClients(
            make,
            home_account=lambda: os.environ.get("TRACKER_ACCOUNT") or caller_account(make, region),
            role_name=self.settings.config.accounts.member_role_name,
            default_region=region,
        )

    # -- the table and one store per kind of record (they remember what they wrote) ----------
    @cached_property
    def table(self) -> Table:
        if self.given_table is not None:
            return self.given_table
        from shared.adapters.table import DynamoTable

        return DynamoTable(self.client("dynamodb"), self.settings.table_name)

    @cached_property
    def outbox_store(self) -> OutboxStore:
        from shared.adapters.outbox import OutboxStore

        return OutboxStore(self.table)

    @cached_property
    def instance_store(self) -> InstanceStore:
        from shared.adapters.instance_store import InstanceStore

        return InstanceStore(self.table)

    @cached_property
    def rollup_store(self) -> RollupStore:
        from shared.adapters.rollup_store import RollupStore

        return RollupStore(self.table)

    @cached_property
    def checkpoint_store(self) -> CheckpointStore:
        from shared.adapters.checkpoint_store import CheckpointStore

        return CheckpointStore(self.table)

    @cached_property
    def training_store(self) -> TrainingStore:
        from shared.adapters.managed_store import TrainingStore

        return TrainingStore(self.table)

    @cached_property
    def reservation_store(self) -> ReservationStore:
        from shared.adapters.managed_store import ReservationStore

        return ReservationStore(self.table)

    @cached_property
    def file_system_store(self) -> FileSystemStore:
        from shared.adapters.file_system_store import FileSystemStore

        return FileSystemStore(self.table)

    @cached_property
    def budget_store(self) -> BudgetStore:
        """Budgets set through the API and their history."""
        from shared.adapters.budget_store import BudgetStore

        return BudgetStore(self.table)

    @cached_property
    def price_cache_store(self) -> PriceCacheStore:
        from shared.adapters.price_cache_store import PriceCacheStore

        return PriceCacheStore(self.table)

    @cached_property
    def utilization_store(self) -> UtilizationStore:
        from shared.adapters.utilization_store import UtilizationStore

        return UtilizationStore(self.table)

    @cached_property
    def summary_store(self) -> SummaryStore:
        from shared.adapters.daily_store import SummaryStore

        return SummaryStore(self.table)

    @cached_property
    def reconciliation_store(self) -> ReconciliationStore:
        from shared.adapters.daily_store import ReconciliationStore

        return ReconciliationStore(self.table)

    # -- the other adapters -------------------------------------------------------------------
    @cached_property
    def notifier(self) -> SnsNotifier:
        from shared.adapters.notify import SnsNotifier

        s = self.settings
        return SnsNotifier(
            self.client("sns"),
            {"finance": s.finance_topic_arn, "team": s.team_topic_arn, "admin": s.admin_topic_arn},
            chat_topics=s.team_chat_topics,
        )

    @cached_property
    def report_store(self) -> S3ReportStore:
        from shared.adapters.report_store import S3ReportStore

        bucket = os.environ.get("REPORT_BUCKET", "")
        if not bucket:
            raise RuntimeError("REPORT_BUCKET is not set: the daily reports have nowhere to go")
        return S3ReportStore(self.client("s3"), bucket)

    @cached_property
    def alarms(self) -> CloudWatchAlarms:
        from shared.adapters.alarms import CloudWatchAlarms

        return CloudWatchAlarms(self.client("cloudwatch"))

    @cached_property
    def metric_reader(self) -> CloudWatchMetrics:
        """GetMetricData in each instance's own account and region (clients only)."""
        from shared.adapters.metric_reads import CloudWatchMetrics

        return CloudWatchMetrics(self.accounts)

    @cached_property
    def stopper(self) -> Stopper:
        """Stops instances and training jobs one by one, re-reading their tags first."""
        from shared.adapters.instance_stops import Ec2InstanceStops
        from shared.adapters.training_job_stops import SageMakerTrainingJobStops
        from shared.services.stopper import Stopper

        stops = self.sources.instance_stops or Ec2InstanceStops(self.client("ec2"))
        training = self.sources.training_stops or SageMakerTrainingJobStops(self.accounts)
        return Stopper(stops, self.settings.config.auto_stop.tag_key, training)

    def training_jobs(self) -> TrainingJobs:
        """``TrainingJobs`` (DescribeTrainingJob)."""
        if self.sources.training_jobs is not None:
            return self.sources.training_jobs
        from shared.adapters.sagemaker import SageMakerTrainingJobs

        return SageMakerTrainingJobs(self.client("sagemaker"))

    def capacity_reservations(self) -> CapacityReservations:
        """``CapacityReservations`` (DescribeCapacityReservations)."""
        if self.sources.reservations is not None:
            return self.sources.reservations
        from shared.adapters.reservations import Ec2CapacityReservations

        return Ec2CapacityReservations(self.client("ec2"))

    def file_systems(self) -> FileSystems:
        """``FileSystems`` (DescribeFileSystems), in each account and region through the
        one client factory (``accounts``)."""
        if self.sources.file_systems is not None:
            return self.sources.file_systems
        from shared.adapters.fsx import FsxFileSystems

        return FsxFileSystems(self.accounts)

    # -- the ledger services' dependencies ----------------------------------------------------
    @cached_property
    def live_prices(self) -> AwsLivePrices:
        """The Price List API and spot history (clients only: kept by the container)."""
        from shared.adapters.pricing_live import AwsLivePrices

        return AwsLivePrices(self.client("pricing", PRICING_ENDPOINT_REGION), self.accounts)

    @cached_property
    def inventory(self) -> Inventory:
        """DescribeInstances in each event's account and region (clients only)."""
        if self.sources.inventory is not None:
            return self.sources.inventory
        from shared.adapters.inventory import Ec2Inventory

        return Ec2Inventory(self.accounts)

    def price_book(self, today: date) -> PriceBook:
        """A price book per invocation: what it looked up (spot series) is that
        invocation's; the price cache and the clients are the container's."""
        from shared.adapters.pricing import PriceBook
        from shared.adapters.pricing_snapshot import bundled_snapshot

        cache, live = self.price_cache_store, self.live_prices
        return PriceBook(self.settings.config, cache, live, bundled_snapshot(), today)

    def reservation_ledger(self, prices: PriceBook) -> ReservationLedger:
        from shared.services.reservations import ReservationLedger

        ledger = ReservationLedger(
            self.reservation_store, self.capacity_reservations, self.settings.config, prices
        )
        prices.block_pin = ledger.pin_for
        return ledger

    def ledger_deps(self) -> LedgerDeps:
        """Dependencies of the ledger services; the price book's check date is today's."""
        from shared.services.deps import LedgerDeps

        prices = self.price_book(self.clock.now().date())
        return LedgerDeps(
            table=self.table,
            instances=self.instance_store,
            rollups=self.rollup_store,
            inventory=self.inventory,
            prices=prices,
            clock=self.clock,
            config=self.settings.config,
            reservations=self.reservation_ledger(prices),
        )


_current: Runtime | None = None


def current() -> Runtime:
    """The container's runtime, created on first use (from the environment, system clock)."""
    global _current
    if _current is None:
        _current = Runtime()
    return _current


def reset() -> None:
    """The environment changed: settings and clients are built again on next use (the
    clock and sources of the current runtime stay)."""
    global _current
    if _current is not None:
        _current = replace(_current, _clients={})


@contextmanager
def using(runtime: Runtime) -> Iterator[Runtime]:
    """``runtime`` is the current one until the block ends; then the previous one again."""
    global _current
    previous = _current
    _current = runtime
    try:
        yield runtime
    finally:
        _current = previous


def override(
    clock: Clock | None = None,
    sources: Sources | None = None,
    settings: FunctionSettings | None = None,
    table: Table | None = None,
) -> AbstractContextManager[Runtime]:
    """``using`` a fresh runtime with the given clock, sources, settings and table (None:
    the system clock, no sources, the environment's settings, its DynamoDB table)."""
    return using(Runtime(clock or SystemClock(), sources or Sources(), settings, table))


# -- the current runtime's parts for the CLI, the benchmarks and tests: ``current().<part>``.
def clock() -> Clock:
    return current().clock


def client(service: str, region: str | None = None) -> BaseClient:
    return current().client(service, region)


def current_settings() -> FunctionSettings:
    return current().settings


def budget_store() -> BudgetStore:
    return current().budget_store


def price_cache_store() -> PriceCacheStore:
    return current().price_cache_store


def summary_store() -> SummaryStore:
    return current().summary_store


def reconciliation_store() -> ReconciliationStore:
    return current().reconciliation_store


def ledger_deps() -> LedgerDeps:
    return current().ledger_deps()


def notifier() -> SnsNotifier:
    return current().notifier


def report_store() -> S3ReportStore:
    return current().report_store


def alarms() -> CloudWatchAlarms:
    return current().alarms


def checkpoint_store() -> CheckpointStore:
    return current().checkpoint_store
