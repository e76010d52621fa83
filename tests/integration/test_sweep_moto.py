"""The hourly sweep for missed events, against moto's EC2."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker.lambda_context import FakeLambdaContext
from shared.adapters.inventory import Ec2Inventory
from shared.app import runtime
from shared.config.ledger import LedgerConfig
from shared.domain.clock import FixedClock
from shared.domain.instance import InstanceHead
from shared.services.sweep import sweep_missed_events
from tests.aws_events import ec2_state_event
from tests.support import moto_instance, moto_ledger

TABLE = "ledger-sweep"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    with mock_aws():
        moto_ledger(
            monkeypatch,
            TABLE,
            LedgerConfig.model_validate(
                {"live_prices": False, "prices": {"ec2": {"trn1.32xlarge": "10"}}}
            ).model_dump_json(),
        )
        ec2 = boto3.client("ec2", region_name="us-east-1")

        def launch(itype: str, tags: dict[str, str]) -> str:
            return moto_instance(ec2, itype, tags)

        clock = FixedClock(datetime.now(UTC))
        with runtime.override(clock):
            yield {"ec2": ec2, "launch": launch, "clock": clock}


def record_of(instance_id: str, account: str = "123456789012") -> InstanceHead:
    deps = runtime.ledger_deps()
    pointer = deps.instances.pointer(account, instance_id)
    assert pointer is not None and pointer.job_id is not None
    head = deps.instances.head(pointer.job_id, account, instance_id)
    assert head is not None
    return head


def test_stop_event_that_never_came_is_inferred_from_ec2(aws: dict[str, Any]) -> None:
    from functions.instance_state.handler import handler

    iid = aws["launch"]("trn1.32xlarge", {"training-job": "llama"})
    started = aws["clock"].now() - timedelta(hours=2)
    handler(
        ec2_state_event("r1", iid, "running", started),
        FakeLambdaContext("test"),
    )
    aws["ec2"].stop_instances(InstanceIds=[iid])  # ... and its `stopped` event is lost
    result = sweep_missed_events(runtime.ledger_deps(), Ec2Inventory(aws["ec2"]), "us-east-1")
    assert result.closed == [iid]
    record = record_of(iid)
    (segment,) = record.segments
    assert segment.span.end is not None and segment.span.end_state == "stopped"
    assert segment.span.inferred and any(t.inferred for t in record.window)
    # Idempotent: the next sweep finds nothing to do.
    again = sweep_missed_events(runtime.ledger_deps(), Ec2Inventory(aws["ec2"]), "us-east-1")
    assert again.closed == [] and again.opened == []


def test_running_instance_never_heard_of_gets_an_inferred_segment(aws: dict[str, Any]) -> None:
    iid = aws["launch"]("trn1.32xlarge", {"training-job": "ghost-run"})
    cpu = aws["launch"]("m5.large", {})  # not tracked: ignored
    aws["clock"].advance_to(datetime.now(UTC) + timedelta(minutes=30))
    result = sweep_missed_events(runtime.ledger_deps(), Ec2Inventory(aws["ec2"]), "us-east-1")
    assert result.opened == [iid]
    record = record_of(iid)
    (segment,) = record.segments
    assert segment.span.end is None and record.window[0].inferred
    pointer = runtime.ledger_deps().instances.pointer("123456789012", cpu)
    assert pointer is not None and pointer.job_id is None  # remembered as not tracked
    again = sweep_missed_events(runtime.ledger_deps(), Ec2Inventory(aws["ec2"]), "us-east-1")
    assert again.opened == []


def test_terminated_instance_is_closed_as_terminated(aws: dict[str, Any]) -> None:
    from functions.instance_state.handler import handler

    iid = aws["launch"]("trn1.32xlarge", {"training-job": "llama"})
    handler(
        ec2_state_event("r1", iid, "running", aws["clock"].now() - timedelta(hours=1)),
        FakeLambdaContext("test"),
    )
    aws["ec2"].terminate_instances(InstanceIds=[iid])
    result = sweep_missed_events(runtime.ledger_deps(), Ec2Inventory(aws["ec2"]), "us-east-1")
    assert result.closed == [iid]
    (segment,) = record_of(iid).segments
    assert segment.span.end_state == "terminated"
