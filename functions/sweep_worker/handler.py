"""The sweep's worker: SQS batches of units (one account x region x DescribeInstances
page each); a unit that fails is reported back as a batch item failure, so SQS retries
it alone and, after the queue's receive count, sets it aside in the dead-letter queue."""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from shared.adapters.account_store import AccountStore
from shared.adapters.alarm_census import alarms_in_place
from shared.adapters.inventory import Ec2Inventory
from shared.adapters.telemetry import metrics
from shared.adapters.work_queue import SqsWorkQueue
from shared.app import runtime
from shared.app.event_function import logger
from shared.app.trust_edge import trust_of
from shared.events.sweep_unit import SweepUnit
from shared.services.sweep_fanout import run_unit

processor = BatchProcessor(event_type=EventType.SQS)


def _unit(record: SQSRecord) -> dict[str, Any]:
    rt = runtime.current()
    unit = SweepUnit.model_validate_json(record.body)
    logger.append_keys(unit=unit.label, sweep_id=unit.sweep_id)
    prefix = rt.settings.config.utilization.alarm_prefix
    result = run_unit(
        rt.ledger_deps(),
        Ec2Inventory(rt.accounts),
        unit,
        trust=trust_of(rt),
        store=AccountStore(rt.table),
        queue=SqsWorkQueue(rt.client("sqs"), os.environ["SWEEP_QUEUE_URL"]),
        alarms_in_place=lambda account, region: alarms_in_place(
            rt.accounts, account, region, prefix
        ),
    )
    return asdict(result)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    answer = process_partial_response(
        event=event, record_handler=_unit, processor=processor, context=context
    )
    return dict(answer)
