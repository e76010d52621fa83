"""One function of the catalog (``shared.app.functions``): its handler, trigger,
timeout and memory, grants and environment (no CDK import)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.app.function_grants import Feature, Grants, feature_on
from shared.app.triggers import EventRule, Every, Queue, WorkQueue

if TYPE_CHECKING:
    from shared.config.ledger import LedgerConfig


@dataclass(frozen=True)
class Function:
    """One function: ``functions/<name>/handler.py`` and how it is deployed."""

    name: str
    description: str
    timeout_seconds: int
    # None: invoked synchronously (the API), with no dead-letter queue or retries;
    # Queue / WorkQueue: an SQS queue of its own (its dead-letter queue and retries).
    trigger: EventRule | Every | Queue | WorkQueue | None
    # What it may do; every grant is a reviewed decision, never a default.
    grants: Grants
    # Grants that exist only while a feature is on.
    feature_grants: tuple[tuple[Feature, Grants], ...] = ()
    memory_mb: int = 256
    # Environment beyond COMMON_ENVIRONMENT (names; the stack fills in the values).
    environment: tuple[str, ...] = ()
    # Writes or reads Parquet (``shared.reports.parquet``): deployed with the pyarrow
    # layer, which no other function carries (docs/parquet.md).
    uses_pyarrow: bool = False

    @property
    def handler_module(self) -> str:
        return f"functions.{self.name}.handler"

    @property
    def asynchronous(self) -> bool:
        """Event- and schedule-driven: a dead-letter queue and two retries."""
        return isinstance(self.trigger, EventRule | Every)

    @property
    def event_path(self) -> bool:
        """Driven by events: the configured reserved concurrency keeps it capacity."""
        return isinstance(self.trigger, EventRule)

    def grants_for(self, config: LedgerConfig) -> Grants:
        """Its grants under ``config``: the base ones and those of the features that are on."""
        grants = self.grants
        for feature, extra in self.feature_grants:
            if feature_on(feature, config):
                grants = grants.merged(extra)
        if self.event_path and config.accounts.many_accounts:
            # The event edge's trust check (``shared.app.trust_edge``): the account list
            # and the member accounts' health records.
            grants = grants.merged(Grants(lists_organization=True))
        return grants
