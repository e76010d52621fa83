"""SageMaker Training Job State Change -> the job ledger (wiring only)."""

from __future__ import annotations

from shared.adapters.telemetry import count
from shared.app.event_function import Answer, event_function, logger
from shared.app.runtime import Runtime
from shared.events.sagemaker import TrainingJobStateChangeEvent
from shared.services.training_jobs import record_training_event


@event_function(TrainingJobStateChangeEvent)
def handler(event: TrainingJobStateChangeEvent, rt: Runtime) -> Answer:
    logger.append_keys(training_job=event.detail.training_job_name)
    outcome = record_training_event(
        rt.ledger_deps(),
        rt.training_store,
        rt.training_jobs(),
        event_id=event.id,
        at=event.time,
        described=event.description(),
    )
    logger.info("training job state change", extra={"result": outcome.result})
    count("EventsProcessed")
    return outcome.answer()
