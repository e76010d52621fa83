"""EC2 Spot Instance Interruption Warning / Rebalance Recommendation -> the instance record."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.edge import parse_event
from shared.events import RebalanceRecommendationEvent, SpotInterruptionEvent
from shared.services.instances import record_spot_notice
from shared.telemetry import count, metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if (
        isinstance(event, dict)
        and event.get("detail-type") == "EC2 Instance Rebalance Recommendation"
    ):
        rebalance = parse_event(event, RebalanceRecommendationEvent, logger)
        event_id, at, region = rebalance.id, rebalance.time, rebalance.region
        account = rebalance.account
        instance_id, action = rebalance.detail.instance_id, "rebalance"
    else:
        warning = parse_event(event, SpotInterruptionEvent, logger)
        event_id, at, region = warning.id, warning.time, warning.region
        account = warning.account
        instance_id, action = warning.detail.instance_id, warning.detail.instance_action
    logger.append_keys(event_id=event_id, instance_id=instance_id)
    outcome = record_spot_notice(
        runtime.ledger_deps(),
        event_id=event_id,
        at=at,
        instance_id=instance_id,
        action=action,
        region=region,
        account=account,
    )
    logger.info("spot notice", extra={"result": outcome.result, "action": action})
    if outcome.result == "applied" and action != "rebalance":
        count("SpotInterruptions")
    return outcome.answer()
