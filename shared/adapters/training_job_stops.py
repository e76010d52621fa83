"""SageMaker StopTrainingJob, one job at a time, in the job's own account and region (the
one client factory), and what DescribeTrainingJob says of a job just before: its status,
its tags now and where it writes checkpoints (``CheckpointConfig.S3Uri``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from shared.adapters.accounts import factory_of


@dataclass(frozen=True)
class TrainingJobNow:
    status: str
    tags: dict[str, str]
    checkpoint_uri: str = ""


class SageMakerTrainingJobStops:
    def __init__(self, sagemaker: Any) -> None:
        self._clients = factory_of(sagemaker)

    def current(self, name: str, region: str, account: str = "") -> TrainingJobNow | None:
        """The job's status, tags and checkpoint location now; None when SageMaker no
        longer knows it."""
        sagemaker = self._clients.client_for("sagemaker", account, region)
        try:
            described = sagemaker.describe_training_job(TrainingJobName=name)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("ValidationException",):
                return None
            raise
        tags: dict[str, str] = {}
        paginator = sagemaker.get_paginator("list_tags")
        for page in paginator.paginate(ResourceArn=described["TrainingJobArn"]):
            tags.update({t["Key"]: t["Value"] for t in page.get("Tags", [])})
        return TrainingJobNow(
            status=str(described.get("TrainingJobStatus", "")),
            tags=tags,
            checkpoint_uri=str(described.get("CheckpointConfig", {}).get("S3Uri", "")),
        )

    def stop(self, name: str, region: str, account: str = "") -> None:
        sagemaker = self._clients.client_for("sagemaker", account, region)
        sagemaker.stop_training_job(TrainingJobName=name)
