"""Describe calls in a member account go through its assumed read-only role (moto keeps
each account's resources apart and maps assumed-role keys to the role's account)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from shared.adapters.accounts import AccountClients, boto3_client, caller_account
from shared.adapters.inventory import Ec2Inventory, InstanceNotFound
from shared.adapters.sagemaker import SageMakerTrainingJobs, TrainingJobNotFound
from tests.support import moto_instance

MEMBER = "222222222222"
ROLE = "costtracker-member-read"


def make(service: str, region: str, credentials: Any) -> Any:
    return boto3_client(service, region, credentials)


@pytest.fixture
def factory() -> Iterator[AccountClients]:
    with mock_aws():
        yield AccountClients(
            make,
            home_account=lambda: caller_account(make, "us-east-1"),
            role_name=ROLE,
            default_region="us-east-1",
        )


def launch(ec2: Any, tags: dict[str, str]) -> str:
    return moto_instance(ec2, "p4d.24xlarge", tags)


def test_member_instance_is_described_in_its_account_and_region(factory: AccountClients) -> None:
    home = factory.home_account
    assert home != MEMBER
    member_ec2 = factory.client_for("ec2", MEMBER, "eu-west-1")
    instance_id = launch(member_ec2, {"training-job": "eu-run"})
    inventory = Ec2Inventory(factory)

    profile = inventory.describe(instance_id, "eu-west-1", MEMBER)
    assert profile.account == MEMBER
    assert profile.region == "eu-west-1"
    assert profile.tags == {"training-job": "eu-run"}
    # Neither the tracker's own account nor the member's other region knows it.
    with pytest.raises(InstanceNotFound):
        inventory.describe(instance_id, "eu-west-1", home)
    with pytest.raises(InstanceNotFound):
        inventory.describe(instance_id, "us-east-1", MEMBER)
    assert factory.assume_calls == 1  # one AssumeRole for the account, both regions


def test_home_instance_needs_no_assumed_role(factory: AccountClients) -> None:
    instance_id = launch(boto3.client("ec2", region_name="us-east-1"), {"training-job": "home"})
    profile = Ec2Inventory(factory).describe(instance_id, "us-east-1", factory.home_account)
    assert profile.account == factory.home_account
    assert factory.assume_calls == 0


def test_training_job_of_a_member_account(factory: AccountClients) -> None:
    sagemaker = factory.client_for("sagemaker", MEMBER, "eu-west-1")
    sagemaker.create_training_job(
        TrainingJobName="eu-train",
        AlgorithmSpecification={"TrainingImage": "img", "TrainingInputMode": "File"},
        RoleArn=f"arn:aws:iam::{MEMBER}:role/sm",
        OutputDataConfig={"S3OutputPath": "s3://out/"},
        ResourceConfig={
            "InstanceType": "ml.p4d.24xlarge",
            "InstanceCount": 1,
            "VolumeSizeInGB": 50,
        },
        StoppingCondition={"MaxRuntimeInSeconds": 3600},
    )
    theirs = SageMakerTrainingJobs(factory, account=MEMBER, region="eu-west-1")
    described = theirs.describe("eu-train", event_tags={"team": "nlp"})
    assert (described.account, described.region) == (MEMBER, "eu-west-1")
    # The tracker's own account does not have it (moto words it "Could not find").
    with pytest.raises((TrainingJobNotFound, ClientError)):
        SageMakerTrainingJobs(factory, region="eu-west-1").describe(
            "eu-train", event_tags={"a": "b"}
        )
