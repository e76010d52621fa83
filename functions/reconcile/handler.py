"""Daily (opt-in): reconcile the last settled days with Cost Explorer and, where configured,
by resource with the account's Data Exports (CUR 2.0 Parquet in S3)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.clock import utc
from shared.edge import parse_event
from shared.event_envelope import ScheduledEvent
from shared.services.reconcile import CostExplorerBills, reconcile_recent
from shared.telemetry import metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, ScheduledEvent, logger)
    config = runtime.current_settings().config
    if not config.reconcile.enabled:
        return {"enabled": False}
    bills = CostExplorerBills(runtime.client("ce", "us-east-1"))
    settings = config.reconcile
    exports = None
    if settings.data_exports_bucket:
        from shared.services.data_exports import S3DataExports  # only when exports are read

        exports = S3DataExports(
            runtime.client("s3"), settings.data_exports_bucket, settings.data_exports_prefix
        )
    results = reconcile_recent(
        runtime.ledger_deps(),
        runtime.reconciliation_store(),
        config,
        bills,
        utc(parsed.time),
        exports,
    )
    days = {r["date"]: r["status"] for r in results}
    logger.info("reconciliation", extra={"days": days})
    return {"enabled": True, "days": days}
