"""SageMaker Training Job State Change -> the job ledger (wiring only)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared import runtime
from shared.edge import parse_event
from shared.sagemaker_events import TrainingJobStateChangeEvent
from shared.services.training_jobs import record_training_event
from shared.telemetry import count, metrics

logger = Logger(service="costtracker")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    parsed = parse_event(event, TrainingJobStateChangeEvent, logger)
    logger.append_keys(event_id=parsed.id, training_job=parsed.detail.training_job_name)
    outcome = record_training_event(
        runtime.ledger_deps(),
        runtime.managed_stores()[0],
        runtime.training_jobs(),
        event_id=parsed.id,
        at=parsed.time,
        described=parsed.description(),
    )
    logger.info("training job state change", extra={"result": outcome.result})
    count("EventsProcessed")
    return outcome.answer()
