"""The real client code of the managed-training and reservation adapters, against botocore's
Stubber (responses shaped as the AWS API reference documents them; Stubber also checks them
against botocore's own service model). moto cannot answer these: it has no
DescribeCapacityReservations, no capacity-block lifecycle, and its DescribeTrainingJob has no
billable or warm-pool seconds."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from costtracker.fakes.scenario_aws import ScenarioCapacityReservations, ScenarioTrainingJobs
from costtracker.scenario import Scenario
from shared.adapters.reservations import (
    Ec2CapacityReservations,
    ReservationNotFound,
    reservations_to_refresh,
)
from shared.adapters.sagemaker import SageMakerTrainingJobs, TrainingJobNotFound
from shared.domain.clock import FixedClock
from shared.domain.managed.models import LIVE_RESERVATION_STATES, CapacityReservation
from tests.aws_events import training_job_event

ACCOUNT = "123456789012"
ARN = f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:training-job/llama-sft-spot-a"


def t(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def client(service: str) -> Any:
    return boto3.client(
        service,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


@pytest.fixture
def sagemaker() -> Iterator[tuple[Any, Stubber]]:
    sm = client("sagemaker")
    with Stubber(sm) as stub:
        yield sm, stub
        stub.assert_no_pending_responses()


@pytest.fixture
def ec2() -> Iterator[tuple[Any, Stubber]]:
    ec2 = client("ec2")
    with Stubber(ec2) as stub:
        yield ec2, stub
        stub.assert_no_pending_responses()


def describe_training_job_response(**update: Any) -> dict[str, Any]:
    """DescribeTrainingJob's response syntax (SageMaker API reference), a stopped 2-node
    managed-spot Trainium job."""
    response: dict[str, Any] = {
        "TrainingJobName": "llama-sft-spot-a",
        "TrainingJobArn": ARN,
        "ModelArtifacts": {"S3ModelArtifacts": "s3://ml-out/llama-sft-spot-a/output/model.tar.gz"},
        "TrainingJobStatus": "Stopped",
        "SecondaryStatus": "Stopped",
        "AlgorithmSpecification": {
            "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/"
            "pytorch-training-neuronx:2.1.2",
            "TrainingInputMode": "File",
        },
        "RoleArn": f"arn:aws:iam::{ACCOUNT}:role/SMRole",
        "ResourceConfig": {
            "InstanceType": "ml.trn1.32xlarge",
            "InstanceCount": 2,
            "VolumeSizeInGB": 600,
        },
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400, "MaxWaitTimeInSeconds": 172800},
        "CreationTime": t("2026-11-03T07:55:00Z"),
        "TrainingStartTime": t("2026-11-03T08:00:00Z"),
        "TrainingEndTime": t("2026-11-03T11:00:00Z"),
        "LastModifiedTime": t("2026-11-03T11:00:40Z"),
        "SecondaryStatusTransitions": [
            {
                "Status": "Starting",
                "StartTime": t("2026-11-03T07:55:00Z"),
                "EndTime": t("2026-11-03T08:00:00Z"),
                "StatusMessage": "Preparing the instances",
            },
            {
                "Status": "Stopped",
                "StartTime": t("2026-11-03T11:00:00Z"),
                "StatusMessage": "Training job stopped",
            },
        ],
        "EnableManagedSpotTraining": True,
        "TrainingTimeInSeconds": 10800,
        "BillableTimeInSeconds": 4320,
    }
    response.update(update)
    return response


def test_describe_training_job_reads_billable_training_and_spot(sagemaker: Any) -> None:
    sm, stub = sagemaker
    stub.add_response(
        "describe_training_job",
        describe_training_job_response(),
        {"TrainingJobName": "llama-sft-spot-a"},
    )
    job = SageMakerTrainingJobs(sm).describe(
        "llama-sft-spot-a", event_tags={"training-job": "llama-sft-spot"}
    )
    assert job.status == "Stopped" and job.terminal
    assert (job.instance_type, job.instance_count, job.volume_size_gb) == (
        "ml.trn1.32xlarge",
        2,
        600,
    )
    assert (job.billable_seconds, job.training_seconds) == (4320, 10800)
    assert job.warm_pool_retained_billable_seconds is None
    assert job.managed_spot
    assert job.training_start == t("2026-11-03T08:00:00Z")
    assert job.training_end == t("2026-11-03T11:00:00Z")
    assert job.tags == {"training-job": "llama-sft-spot"}  # from the event: no ListTags call
    assert (job.region, job.account) == ("us-east-1", ACCOUNT)


def test_billable_seconds_beyond_a_year_are_set_aside_naming_the_field(
    sagemaker: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A unit mistake (milliseconds) must not bill a job for 137 years: the figure is set
    aside, the job stays estimated until a plausible figure is read."""
    sm, stub = sagemaker
    stub.add_response(
        "describe_training_job",
        describe_training_job_response(BillableTimeInSeconds=4_320_000_000),
        {"TrainingJobName": "llama-sft-spot-a"},
    )
    job = SageMakerTrainingJobs(sm).describe("llama-sft-spot-a", event_tags={"a": "b"})
    assert job.billable_seconds is None and job.training_seconds == 10800
    assert "BillableTimeInSeconds=4320000000" in caplog.text


def test_describe_training_job_warm_pool_and_tags_from_list_tags(sagemaker: Any) -> None:
    """No tags in the event: ListTags, all pages; WarmPoolStatus' retained billable time."""
    sm, stub = sagemaker
    stub.add_response(
        "describe_training_job",
        describe_training_job_response(
            TrainingJobStatus="Completed",
            SecondaryStatus="Completed",
            EnableManagedSpotTraining=False,
            TrainingTimeInSeconds=9000,
            BillableTimeInSeconds=9000,
            ResourceConfig={
                "InstanceType": "ml.trn1.32xlarge",
                "InstanceCount": 2,
                "VolumeSizeInGB": 288,
                "KeepAlivePeriodInSeconds": 1800,
            },
            WarmPoolStatus={"Status": "Terminated", "ResourceRetainedBillableTimeInSeconds": 1800},
        ),
        {"TrainingJobName": "llama-sft-spot-a"},
    )
    stub.add_response(
        "list_tags",
        {"Tags": [{"Key": "training-job", "Value": "llama-eval"}], "NextToken": "page-2"},
        {"ResourceArn": ARN, "MaxResults": 100},
    )
    stub.add_response(
        "list_tags",
        {"Tags": [{"Key": "team", "Value": "nlp"}]},
        {"ResourceArn": ARN, "MaxResults": 100, "NextToken": "page-2"},
    )
    job = SageMakerTrainingJobs(sm).describe("llama-sft-spot-a", event_tags={})
    assert job.warm_pool_retained_billable_seconds == 1800
    assert not job.managed_spot
    assert job.tags == {"training-job": "llama-eval", "team": "nlp"}


def test_in_progress_job_has_no_billable_seconds_yet(sagemaker: Any) -> None:
    sm, stub = sagemaker
    response = describe_training_job_response(
        TrainingJobStatus="InProgress", SecondaryStatus="Training"
    )
    for key in ("TrainingEndTime", "TrainingTimeInSeconds", "BillableTimeInSeconds"):
        del response[key]
    stub.add_response("describe_training_job", response, {"TrainingJobName": "llama-sft-spot-a"})
    job = SageMakerTrainingJobs(sm).describe("llama-sft-spot-a", event_tags={"a": "b"})
    assert not job.terminal
    assert (job.billable_seconds, job.training_seconds, job.training_end) == (None, None, None)


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("ValidationException", "Requested resource not found."),  # what SageMaker really sends
        ("ResourceNotFound", "Training job not found"),  # what its model declares
    ],
)
def test_unknown_training_job_is_a_clear_error(sagemaker: Any, code: str, message: str) -> None:
    sm, stub = sagemaker
    stub.add_client_error(
        "describe_training_job",
        service_error_code=code,
        service_message=message,
        http_status_code=400,
    )
    with pytest.raises(TrainingJobNotFound, match="training job 'gone' not found in us-east-1"):
        SageMakerTrainingJobs(sm).describe("gone")


def test_other_sagemaker_errors_are_not_swallowed(sagemaker: Any) -> None:
    sm, stub = sagemaker
    stub.add_client_error(
        "describe_training_job",
        service_error_code="ValidationException",
        service_message="1 validation error detected",
        http_status_code=400,
    )
    with pytest.raises(ClientError):
        SageMakerTrainingJobs(sm).describe("bad_name")


# -- DescribeCapacityReservations ------------------------------------------------------------

BLOCK_ITEM: dict[str, Any] = {
    "CapacityReservationId": "cr-0b1c000000000000b",
    "OwnerId": ACCOUNT,
    "CapacityReservationArn": (
        f"arn:aws:ec2:us-east-1:{ACCOUNT}:capacity-reservation/cr-0b1c000000000000b"
    ),
    "AvailabilityZoneId": "use1-az6",
    "InstanceType": "p5.48xlarge",
    "InstancePlatform": "Linux/UNIX",
    "AvailabilityZone": "us-east-1a",
    "Tenancy": "default",
    "TotalInstanceCount": 4,
    "AvailableInstanceCount": 0,
    "EbsOptimized": True,
    "EphemeralStorage": False,
    "State": "active",
    "StartDate": t("2026-11-10T11:30:00Z"),
    "EndDate": t("2026-11-12T11:30:00Z"),
    "EndDateType": "limited",
    "InstanceMatchCriteria": "targeted",
    "CreateDate": t("2026-11-02T09:12:44Z"),
    "Tags": [{"Key": "project", "Value": "llama"}],
    "CapacityAllocations": [{"AllocationType": "used", "Count": 4}],
    "ReservationType": "capacity-block",
    "CapacityBlockId": "cb-0123456789abcdef0",
}
ODCR_ITEM: dict[str, Any] = {
    # The user guide's describe-capacity-reservations example (open-ended: no EndDate).
    "CapacityReservationId": "cr-1234abcd56EXAMPLE",
    "OwnerId": ACCOUNT,
    "EndDateType": "unlimited",
    "AvailabilityZone": "eu-west-1a",
    "InstanceMatchCriteria": "open",
    "Tags": [{"Key": "training-job", "Value": "trn-odcr-job"}],
    "EphemeralStorage": False,
    "CreateDate": t("2019-08-16T09:03:18Z"),
    "StartDate": t("2019-08-16T09:03:18Z"),
    "AvailableInstanceCount": 1,
    "InstancePlatform": "Linux/UNIX",
    "TotalInstanceCount": 1,
    "State": "active",
    "Tenancy": "default",
    "EbsOptimized": True,
    "InstanceType": "a1.medium",
    "ReservationType": "default",
}
LIVE_FILTER = [{"Name": "state", "Values": sorted(LIVE_RESERVATION_STATES)}]


def test_list_live_reads_every_page_and_both_kinds(ec2: Any) -> None:
    client_, stub = ec2
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [BLOCK_ITEM], "NextToken": "t1"},
        {"Filters": LIVE_FILTER},
    )
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [ODCR_ITEM]},
        {"Filters": LIVE_FILTER, "NextToken": "t1"},
    )
    block, odcr = Ec2CapacityReservations(client_).list_live()
    assert block == CapacityReservation(
        reservation_id="cr-0b1c000000000000b",
        kind="capacity-block",
        instance_type="p5.48xlarge",
        instance_count=4,
        start=t("2026-11-10T11:30:00Z"),
        end=t("2026-11-12T11:30:00Z"),
        state="active",
        tags={"project": "llama"},
        availability_zone="us-east-1a",
        account=ACCOUNT,
        instance_platform="Linux/UNIX",
    )
    assert block.block_seconds == 172800
    assert odcr.kind == "odcr"
    assert odcr.end is None and odcr.block_seconds is None
    assert odcr.tags == {"training-job": "trn-odcr-job"}


def test_describe_one_reservation_and_a_missing_one(ec2: Any) -> None:
    client_, stub = ec2
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [BLOCK_ITEM]},
        {"CapacityReservationIds": ["cr-0b1c000000000000b"]},
    )
    stub.add_client_error(
        "describe_capacity_reservations",
        service_error_code="InvalidCapacityReservationId.NotFound",
        service_message="The capacity reservation ID 'cr-0000000000000000f' does not exist",
        http_status_code=400,
    )
    adapter = Ec2CapacityReservations(client_)
    assert adapter.describe("cr-0b1c000000000000b").kind == "capacity-block"
    with pytest.raises(ReservationNotFound, match="cr-0000000000000000f"):
        adapter.describe("cr-0000000000000000f")


def test_an_instance_launched_into_a_capacity_block(ec2: Any) -> None:
    """DescribeInstances says ``InstanceLifecycle: capacity-block`` and the reservation id;
    an ODCR instance has the id without that lifecycle; others have neither."""
    client_, stub = ec2

    def reservation(instance: dict[str, Any]) -> dict[str, Any]:
        base = {
            "InstanceId": "",
            "InstanceType": "p5.48xlarge",
            "ImageId": "ami-12c6146b",
            "LaunchTime": t("2026-11-10T12:00:00Z"),
            "State": {"Code": 16, "Name": "running"},
            "Placement": {"AvailabilityZone": "us-east-1a"},
        }
        return {
            "Reservations": [
                {
                    "ReservationId": "r-0123456789abcdef0",
                    "OwnerId": ACCOUNT,
                    "Instances": [{**base, **instance}],
                }
            ]
        }

    block_instance = {
        "InstanceId": "i-0a000000000000001",
        "InstanceLifecycle": "capacity-block",
        "CapacityReservationId": "cr-0b1c000000000000b",
        "CapacityReservationSpecification": {
            "CapacityReservationTarget": {"CapacityReservationId": "cr-0b1c000000000000b"}
        },
    }
    stub.add_response(
        "describe_instances", reservation(block_instance), {"InstanceIds": ["i-0a000000000000001"]}
    )
    stub.add_response(
        "describe_instances",
        reservation(
            {
                "InstanceId": "i-0d0000000000000d1",
                "InstanceType": "trn1.32xlarge",
                "CapacityReservationId": "cr-0dc0000000000000d",
            }
        ),
        {"InstanceIds": ["i-0d0000000000000d1"]},
    )
    stub.add_response(
        "describe_instances",
        reservation({"InstanceId": "i-0c0000000000000c1"}),
        {"InstanceIds": ["i-0c0000000000000c1"]},
    )
    stub.add_client_error(
        "describe_instances",
        service_error_code="InvalidInstanceID.NotFound",
        service_message="The instance ID does not exist",
        http_status_code=400,
    )
    adapter = Ec2CapacityReservations(client_)
    ref = adapter.instance_reservation("i-0a000000000000001")
    assert ref is not None and ref.capacity_block
    assert ref.reservation_id == "cr-0b1c000000000000b"
    odcr = adapter.instance_reservation("i-0d0000000000000d1")
    assert odcr is not None and not odcr.capacity_block
    assert adapter.instance_reservation("i-0c0000000000000c1") is None
    assert adapter.instance_reservation("i-0ffffffffffffffff") is None


# -- the daily refresh and the scenario fakes behind the same protocols ----------------------


def _scenario() -> Scenario:
    return Scenario.model_validate(
        {
            "capacity_reservations": [
                {
                    "reservation_id": "cr-0b1c000000000000b",
                    "kind": "capacity-block",
                    "instance_type": "p5.48xlarge",
                    "instance_count": 4,
                    "start": "2026-11-10T11:30:00Z",
                    "end": "2026-11-12T11:30:00Z",
                    "upfront_fee_usd": "6000",
                },
                {
                    "reservation_id": "cr-0dc0000000000000d",
                    "kind": "odcr",
                    "instance_type": "trn1.32xlarge",
                    "instance_count": 2,
                    "start": "2026-11-20T00:00:00Z",
                    "end": "2026-11-21T00:00:00Z",
                },
            ],
            "instances": [
                {
                    "instance_id": "i-0a000000000000001",
                    "instance_type": "p5.48xlarge",
                    "lifecycle": "capacity-block",
                    "capacity_reservation_id": "cr-0b1c000000000000b",
                }
            ],
        }
    )


def test_fake_reservations_follow_the_clock() -> None:
    clock = FixedClock(t("2026-11-11T00:00:00Z"))
    fake = ScenarioCapacityReservations(_scenario(), clock)
    assert fake.describe("cr-0b1c000000000000b").state == "active"
    assert fake.describe("cr-0dc0000000000000d").state == "scheduled"
    ref = fake.instance_reservation("i-0a000000000000001")
    assert ref is not None and ref.capacity_block
    assert fake.fees_by_id() == {"cr-0b1c000000000000b": 6000}
    clock.advance_to(t("2026-11-13T00:00:00Z"))
    assert fake.describe("cr-0b1c000000000000b").state == "expired"
    assert [r.reservation_id for r in fake.list_live()] == ["cr-0dc0000000000000d"]
    with pytest.raises(ReservationNotFound):
        fake.describe("cr-0123456789abcdef0")


def test_daily_refresh_lists_live_ones_and_recently_ended_known_ones() -> None:
    """On 11-13 the block (ended 11-12 11:30, under a day ago) is described again; an
    unknown known-id is reported as gone; on 11-14 the ended block is no longer refreshed."""
    clock = FixedClock(t("2026-11-13T00:00:00Z"))
    fake = ScenarioCapacityReservations(_scenario(), clock)
    known = [fake.describe("cr-0b1c000000000000b")]
    clock_before = FixedClock(t("2026-11-11T00:00:00Z"))
    ghost = (
        ScenarioCapacityReservations(_scenario(), clock_before)
        .describe("cr-0b1c000000000000b")
        .model_copy(update={"reservation_id": "cr-0ffffffffffffffff"})
    )
    fresh, gone = reservations_to_refresh(fake, [*known, ghost], clock.now())
    assert [r.reservation_id for r in fresh] == ["cr-0b1c000000000000b", "cr-0dc0000000000000d"]
    assert fresh[0].state == "expired"
    assert gone == ["cr-0ffffffffffffffff"]
    clock.advance_to(t("2026-11-14T00:00:00Z"))
    fresh, gone = reservations_to_refresh(fake, [fresh[0]], clock.now())
    assert [r.reservation_id for r in fresh] == ["cr-0dc0000000000000d"]
    assert gone == []


def _sm_event(eid: str, at: str, status: str, **detail: Any) -> dict[str, Any]:
    described = {
        "TrainingJobName": "llama-sft-spot-a",
        "TrainingJobArn": ARN,
        "TrainingJobStatus": status,
        "SecondaryStatus": status,
        "ResourceConfig": {
            "InstanceType": "ml.trn1.32xlarge",
            "InstanceCount": 2,
            "VolumeSizeInGB": 600,
        },
        "Tags": {"training-job": "llama-sft-spot"},
        **detail,
    }
    return training_job_event(eid, at, described, account=ACCOUNT)


def test_fake_training_jobs_answer_as_describe_training_job_would_at_the_clock() -> None:
    scenario = Scenario.model_validate(
        {
            "training_jobs": [
                {
                    "name": "llama-sft-spot-a",
                    "instance_type": "ml.trn1.32xlarge",
                    "instance_count": 2,
                    "volume_gb": 600,
                    "training_seconds": 10800,
                    "billable_seconds": 4320,
                    "spot": True,
                    "tags": {"training-job": "llama-sft-spot"},
                }
            ],
            "events": [
                _sm_event(
                    "s2",
                    "2026-11-03T11:00:40Z",
                    "Stopped",
                    TrainingStartTime="1793692800000",
                    TrainingEndTime=1793703600000,
                ),
                _sm_event(
                    "s1", "2026-11-03T08:00:30Z", "InProgress", TrainingStartTime="1793692800000"
                ),
                {"source": "aws.sagemaker", "detail": "unreadable"},
            ],
        }
    )
    clock = FixedClock(t("2026-11-03T07:00:00Z"))
    fake = ScenarioTrainingJobs(scenario, clock)
    with pytest.raises(TrainingJobNotFound):
        fake.describe("llama-sft-spot-a")  # not created yet at 07:00
    clock.advance_to(t("2026-11-03T09:00:00Z"))
    running = fake.describe("llama-sft-spot-a")
    assert running.status == "InProgress" and running.billable_seconds is None
    assert running.training_start == t("2026-11-03T08:00:00Z")
    clock.advance_to(t("2026-11-03T12:00:00Z"))
    ended = fake.describe("llama-sft-spot-a")
    assert (ended.status, ended.billable_seconds, ended.training_seconds) == (
        "Stopped",
        4320,
        10800,
    )
    assert ended.training_end == t("2026-11-03T11:00:00Z")
    assert ended.managed_spot and ended.tags == {"training-job": "llama-sft-spot"}
