"""SageMaker training jobs as the ledger sees them: ``TrainingJobs`` over DescribeTrainingJob.

The state-change event carries no billable seconds; when a job reaches a terminal status the
ledger asks ``TrainingJobs.describe`` once for ``BillableTimeInSeconds``,
``TrainingTimeInSeconds`` and ``WarmPoolStatus.ResourceRetainedBillableTimeInSeconds``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from botocore.exceptions import ClientError

from shared.adapters.accounts import factory_of
from shared.domain.managed.models import MAX_TRAINING_SECONDS, TrainingJobDescription

logger = logging.getLogger("costtracker.sagemaker")


class TrainingJobNotFound(Exception):
    """SageMaker does not know the training job (deleted, another account or region, or a
    name typed wrong). DescribeTrainingJob says so with a ``ValidationException`` "Requested
    resource not found", not the ``ResourceNotFound`` its model declares (aws/aws-sdk#165);
    both are caught."""

    def __init__(self, name: str, region: str) -> None:
        super().__init__(f"training job {name!r} not found in {region or 'this region'}")
        self.name = name
        self.region = region


class TrainingJobs(Protocol):
    def describe(
        self,
        name: str,
        *,
        event_tags: Mapping[str, str] | None = None,
        account: str = "",
        region: str = "",
    ) -> TrainingJobDescription:
        """The job as SageMaker describes it now in ``account`` and ``region`` (empty: the
        tracker's own). ``event_tags`` (the event's ``Tags`` map) spare a ListTags call
        when present; raises ``TrainingJobNotFound``."""
        ...


def _not_found(exc: ClientError) -> bool:
    error = exc.response.get("Error", {})
    code, message = error.get("Code", ""), str(error.get("Message", ""))
    if code in {"ResourceNotFound", "ResourceNotFoundException"}:
        return True
    return code == "ValidationException" and "not found" in message.lower()


def arn_region_account(arn: str) -> tuple[str, str]:
    """(region, account) of an ARN ``arn:partition:service:region:account:resource``."""
    parts = arn.split(":", 5)
    if len(parts) < 6 or parts[0] != "arn":
        return "", ""
    return parts[3], parts[4]


def _seconds(response: Mapping[str, Any], field: str, name: str) -> int | None:
    """A seconds figure of DescribeTrainingJob, or None (not reported yet, or beyond what a
    training job can run: set aside with a warning naming it, so the job stays estimated)."""
    value = response.get(field)
    if value is None:
        return None
    seconds = int(value)
    if not 0 <= seconds <= MAX_TRAINING_SECONDS:
        logger.warning(
            f"{field}={seconds} of training job {name} is outside 0..{MAX_TRAINING_SECONDS} "
            "seconds: set aside",
            extra={"training_job": name, "field": field},
        )
        return None
    return seconds


def description_of(
    response: Mapping[str, Any], tags: Mapping[str, str], *, region: str = ""
) -> TrainingJobDescription:
    """A DescribeTrainingJob response (boto3's parsed dict) as a ``TrainingJobDescription``."""
    resource = response.get("ResourceConfig") or {}
    groups = resource.get("InstanceGroups") or []
    if resource.get("InstanceType"):
        instance_type, count = resource["InstanceType"], int(resource.get("InstanceCount") or 1)
    elif groups:  # a heterogeneous cluster: its first group (see TrainingJobStateChangeEvent)
        instance_type, count = groups[0]["InstanceType"], int(groups[0].get("InstanceCount") or 1)
    else:
        instance_type, count = "unknown", 1
    arn_region, account = arn_region_account(str(response.get("TrainingJobArn", "")))
    warm_pool = response.get("WarmPoolStatus") or {}
    start: datetime | None = response.get("TrainingStartTime")
    end: datetime | None = response.get("TrainingEndTime")
    name = str(response["TrainingJobName"])
    return TrainingJobDescription(
        name=name,
        status=response["TrainingJobStatus"],
        instance_type=instance_type,
        instance_count=max(count, 1),
        volume_size_gb=int(resource.get("VolumeSizeInGB") or 0),
        training_start=start,
        training_end=end,
        billable_seconds=_seconds(response, "BillableTimeInSeconds", name),
        training_seconds=_seconds(response, "TrainingTimeInSeconds", name),
        warm_pool_retained_billable_seconds=_seconds(
            warm_pool, "ResourceRetainedBillableTimeInSeconds", name
        ),
        managed_spot=bool(response.get("EnableManagedSpotTraining", False)),
        tags=dict(tags),
        region=arn_region or region,
        account=account,
    )


class SageMakerTrainingJobs:
    """``TrainingJobs`` over a boto3 SageMaker client (DescribeTrainingJob, ListTags), or
    over a ``ClientFactory`` (``shared.adapters.accounts``) for the jobs of ``account`` in
    ``region`` (empty: the tracker's own; a member account through its read-only role)."""

    def __init__(self, sagemaker: Any, *, account: str = "", region: str = "") -> None:
        self._clients = factory_of(sagemaker)
        self._account = account
        self._region_name = region

    def describe(
        self,
        name: str,
        *,
        event_tags: Mapping[str, str] | None = None,
        account: str = "",
        region: str = "",
    ) -> TrainingJobDescription:
        sagemaker = self._clients.client_for(
            "sagemaker", account or self._account, region or self._region_name
        )
        in_region = str(getattr(getattr(sagemaker, "meta", None), "region_name", "") or region)
        try:
            response = sagemaker.describe_training_job(TrainingJobName=name)
        except ClientError as exc:
            if _not_found(exc):
                raise TrainingJobNotFound(name, in_region) from exc
            raise
        tags = dict(event_tags) if event_tags else self._tags(sagemaker, response["TrainingJobArn"])
        return description_of(response, tags, region=in_region)

    @staticmethod
    def _tags(sagemaker: Any, arn: str) -> dict[str, str]:
        tags: dict[str, str] = {}
        kwargs: dict[str, Any] = {"ResourceArn": arn, "MaxResults": 100}
        while True:
            page = sagemaker.list_tags(**kwargs)
            tags.update({t["Key"]: t.get("Value", "") for t in page.get("Tags", [])})
            token = page.get("NextToken")
            if not token:
                return tags
            kwargs["NextToken"] = token
