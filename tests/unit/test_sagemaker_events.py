"""The SageMaker Training Job State Change model against AWS's own sample, and the Capacity
Block events.

Decision on the sample's placeholder ``"InstanceType": "InstanceType"``: ACCEPTED. An event is
never dropped for an instance type we do not recognise (its time still counts, as an
unknown EC2 type's does); the model says the type is not a SageMaker one
(``well_formed_instance_type`` False), no price is found for it, and the job is reported
``unpriced`` with the type named.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from shared.domain.managed.training_cost import training_job_cost
from shared.events.sagemaker import (
    CAPACITY_BLOCK_EVENT,
    TrainingJobStateChangeEvent,
    epoch_millis,
    parse_sagemaker_event,
)
from tests.aws_events import capacity_block_event as capacity_block

SAMPLE = Path(__file__).parents[1] / "events" / "sagemaker-training-job-state-change.json"


def sample() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SAMPLE.read_text())
    return data


def with_detail(**detail: Any) -> dict[str, Any]:
    event = sample()
    event["detail"] = {**event["detail"], **detail}
    return event


def test_the_aws_sample_parses() -> None:
    event = parse_sagemaker_event(sample())
    d = event.detail
    assert event.time == datetime(2018, 10, 6, 12, 26, 13, tzinfo=UTC)
    assert d.training_job_name == "89c96cc8-dded-4739-afcc-6f1dc936701d"
    assert d.training_job_status == "Completed" and event.terminal
    assert d.resource_config.groups() == (("InstanceType", 3),)
    assert d.resource_config.volume_size_gb == 20
    assert d.stopping_condition.max_runtime_seconds == 60
    # "1583831889050" ms = 2020-03-10 09:18:09.050 UTC, for all four times.
    when = datetime(2020, 3, 10, 9, 18, 9, 50000, tzinfo=UTC)
    assert (d.creation_time, d.training_start_time, d.training_end_time, d.last_modified_time) == (
        when,
        when,
        when,
        when,
    )
    assert d.tags == {}
    assert not d.enable_managed_spot_training


def test_the_placeholder_instance_type_is_accepted_and_found_unpriced() -> None:
    event = parse_sagemaker_event(sample())
    assert not event.detail.resource_config.well_formed_instance_type
    job = event.description()
    assert (job.instance_type, job.instance_count, job.region, job.account) == (
        "InstanceType",
        3,
        "us-east-1",
        "123456789012",
    )
    # The pricing layer has no rate for it: unpriced, the type named, never $0 silently.
    cost = training_job_cost(job, now=event.time, hourly_usd=None, storage_gb_month_usd=None)
    assert cost.instance_usd is None and not cost.complete
    assert "InstanceType" in cost.unpriced[0]


def test_a_real_instance_type_is_well_formed() -> None:
    config = {"InstanceType": "ml.trn1.32xlarge", "InstanceCount": 2, "VolumeSizeInGB": 600}
    event = parse_sagemaker_event(with_detail(ResourceConfig=config))
    assert event.detail.resource_config.well_formed_instance_type


def test_times_as_numbers_strings_or_iso_all_read_the_same() -> None:
    expected = datetime(2026, 11, 3, 8, 0, tzinfo=UTC)
    for value in (1793692800000, "1793692800000", 1793692800000.0, "2026-11-03T08:00:00Z"):
        event = parse_sagemaker_event(with_detail(TrainingStartTime=value))
        assert event.detail.training_start_time == expected
    assert epoch_millis("1793692800123") == datetime(2026, 11, 3, 8, 0, 0, 123000, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    [
        True,
        "soon",
        -1,
        "99999999999999999999",
        float("inf"),
        "2026-11-03T08:00:00",
        "0",  # 1970: outside the years an event can carry (2006-2100)
        "4133980800000",  # 2101-01-01
    ],
)
def test_bad_times_are_clear_errors(value: object) -> None:
    with pytest.raises(ValidationError, match="TrainingStartTime"):
        parse_sagemaker_event(with_detail(TrainingStartTime=value))


def test_tags_map_or_key_value_list() -> None:
    tags = {"training-job": "llama-sft", "team": "nlp"}
    assert parse_sagemaker_event(with_detail(Tags=tags)).detail.tags == tags
    as_list = [{"Key": k, "Value": v} for k, v in tags.items()]
    assert parse_sagemaker_event(with_detail(Tags=as_list)).detail.tags == tags
    with pytest.raises(ValidationError, match="Tags"):
        parse_sagemaker_event(with_detail(Tags=["training-job"]))


def test_managed_spot_and_stopping_condition() -> None:
    event = parse_sagemaker_event(
        with_detail(
            EnableManagedSpotTraining=True,
            TrainingJobStatus="Stopping",
            StoppingCondition={"MaxRuntimeInSeconds": 86400, "MaxWaitTimeInSeconds": 172800},
        )
    )
    assert event.detail.enable_managed_spot_training
    assert event.detail.stopping_condition.max_wait_seconds == 172800
    assert not event.terminal
    assert event.description().managed_spot


def test_heterogeneous_cluster_groups() -> None:
    groups = [
        {"InstanceType": "ml.trn1.32xlarge", "InstanceCount": 4, "InstanceGroupName": "a"},
        {"InstanceType": "ml.c5.2xlarge", "InstanceCount": 1, "InstanceGroupName": "b"},
    ]
    event = parse_sagemaker_event(
        with_detail(ResourceConfig={"InstanceGroups": groups, "VolumeSizeInGB": 30})
    )
    assert event.detail.resource_config.groups() == (("ml.trn1.32xlarge", 4), ("ml.c5.2xlarge", 1))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("TrainingJobStatus", "Deleting", "TrainingJobStatus"),
        ("TrainingJobName", "bad_name", "TrainingJobName"),
        ("TrainingJobArn", "kmeans-1", "not a training job ARN"),
        ("ResourceConfig", {"VolumeSizeInGB": 20}, "neither InstanceType nor InstanceGroups"),
        ("ResourceConfig", {"InstanceType": "ml.p5.48xlarge"}, "InstanceCount is required"),
        ("ResourceConfig", {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 0}, "InstanceCount"),
        # Plausibility bounds (shared.domain.managed.models): beyond what AWS allows.
        (
            "ResourceConfig",
            {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 10**9},
            "InstanceCount",
        ),
        (
            "ResourceConfig",
            {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 1, "VolumeSizeInGB": 10**7},
            "VolumeSizeInGB",
        ),
        (
            "ResourceConfig",
            {
                "InstanceType": "ml.p5.48xlarge",
                "InstanceCount": 1,
                "KeepAlivePeriodInSeconds": 3601,
            },
            "KeepAlivePeriodInSeconds",
        ),
        ("StoppingCondition", {"MaxRuntimeInSeconds": 10**12}, "MaxRuntimeInSeconds"),
        ("StoppingCondition", {"MaxPendingTimeInSeconds": 10**8}, "MaxPendingTimeInSeconds"),
    ],
)
def test_malformed_details_are_rejected_naming_the_field(
    field: str, value: object, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        parse_sagemaker_event(with_detail(**{field: value}))


def test_wrong_source_or_detail_type_is_not_this_event() -> None:
    for key, value in (("source", "aws.ec2"), ("detail-type", "SageMaker Endpoint State Change")):
        event = copy.deepcopy(sample())
        event[key] = value
        with pytest.raises(ValidationError):
            TrainingJobStateChangeEvent.model_validate(event)


def capacity_block_event(detail_type: str) -> dict[str, Any]:
    """The EC2 user guide's Capacity Block event ("Monitor Capacity Blocks using EventBridge")
    with its placeholders filled in and in EventBridge's envelope (the guide's sample writes
    ``detail_type`` and ``customer_event_id``, which EventBridge does not deliver)."""
    return capacity_block(
        "5f8b1c2e-0000-4000-8000-000000000001",
        "cr-0b1c000000000000b",
        detail_type,
        "2026-11-12T10:50:00Z",
        end="2026-11-12T11:30:00Z",
    )


@pytest.mark.parametrize(
    ("detail_type", "kind"),
    [
        ("Capacity Block Delivered", "delivered"),
        ("Capacity Block Expiration Warning", "expiration_warning"),
        ("Capacity Block Reservation Expiration Warning", "expiration_warning"),
    ],
)
def test_capacity_block_events(detail_type: str, kind: str) -> None:
    event = CAPACITY_BLOCK_EVENT.validate_python(capacity_block_event(detail_type))
    assert event.kind == kind
    assert event.detail.capacity_reservation_id == "cr-0b1c000000000000b"
    assert event.detail.end_date == datetime(2026, 11, 12, 11, 30, tzinfo=UTC)


def test_capacity_block_event_needs_a_zone_and_an_id() -> None:
    bad = capacity_block_event("Capacity Block Delivered")
    bad["detail"]["end-date"] = "2026-11-12T11:30:00"
    with pytest.raises(ValidationError, match="end-date needs a zone"):
        CAPACITY_BLOCK_EVENT.validate_python(bad)
    bad["detail"] = {"end-date": "2026-11-12T11:30:00Z"}
    with pytest.raises(ValidationError, match="capacity-reservation-id"):
        CAPACITY_BLOCK_EVENT.validate_python(bad)


def test_scenario_events_parse() -> None:
    """Every SageMaker event of the managed_training scenario is a valid event."""
    path = Path(__file__).parents[1] / "scenarios" / "managed_training.json"
    events = [e for e in json.loads(path.read_text())["events"] if e["source"] == "aws.sagemaker"]
    parsed = [parse_sagemaker_event(e) for e in events]
    assert {p.detail.training_job_name for p in parsed} == {
        "llama-sft-spot-a",
        "llama-sft-spot-b",
        "llama-eval-c",
    }
    assert all(p.detail.resource_config.well_formed_instance_type for p in parsed)
    assert len(parsed) == 11
