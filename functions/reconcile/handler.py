"""Daily (opt-in): reconcile the last settled days with Cost Explorer and, where configured,
by resource with the account's Data Exports (CUR 2.0 Parquet in S3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.adapters.cost_explorer import CostExplorerBills
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.domain.clock import utc
from shared.events.envelope import ScheduledEvent
from shared.services.reconcile import reconcile_recent

if TYPE_CHECKING:
    from shared.services.data_exports import DataExports


@event_function(ScheduledEvent)
def handler(event: ScheduledEvent, rt: Runtime) -> Answer:
    config = rt.settings.config
    if not config.reconcile.enabled:
        return {"enabled": False}
    bills = CostExplorerBills(rt.client("ce", "us-east-1"))
    settings = config.reconcile
    exports: DataExports | None = None
    if settings.data_exports_bucket:  # only then are the exports' modules loaded
        from shared.adapters.data_exports import S3ExportFiles
        from shared.services.data_exports import DataExports

        files = S3ExportFiles(
            rt.client("s3"), settings.data_exports_bucket, settings.data_exports_prefix
        )
        exports = DataExports(files)
    results = reconcile_recent(
        rt.ledger_deps(), rt.reconciliation_store, config, bills, utc(event.time), exports
    )
    days = {r["date"]: r["status"] for r in results}
    logger.info("reconciliation", extra={"days": days})
    return {"enabled": True, "days": days}
