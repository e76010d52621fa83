"""The one stopper of instances (auto-stop of idle instances today; budget actions and
member accounts later): each instance is stopped on its own, and only if it may be.

Just before each stop the instance is read again (DescribeInstances): a tag read when the
ledger first saw the instance may have been removed since, and only the tag as it is now
(opt-in value exactly ``true``, as the IAM condition on StopInstances compares it) lets it
be stopped. An instance no longer running is left alone. A stop that fails (throttled,
refused, the instance gone meanwhile) is logged with its id and reported; it never stops
the others.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from shared.adapters.instance_stops import InstanceNow
from shared.adapters.training_job_stops import TrainingJobNow

logger = logging.getLogger("costtracker.stopper")

StopResult = Literal["stopped", "opted_out", "not_running", "stop_failed"]
# States in which StopInstances has something to stop.
STOPPABLE_STATES = frozenset({"pending", "running"})
# SageMaker statuses in which StopTrainingJob has something to stop.
STOPPABLE_TRAINING = frozenset({"InProgress"})


class InstanceStops(Protocol):
    def current(self, instance_id: str, region: str, account: str = "") -> InstanceNow | None: ...

    def stop(self, instance_id: str, region: str, account: str = "") -> None: ...


class TrainingJobStops(Protocol):
    def current(self, name: str, region: str, account: str = "") -> TrainingJobNow | None: ...

    def stop(self, name: str, region: str, account: str = "") -> None: ...


@dataclass(frozen=True)
class StopRequest:
    instance_id: str
    region: str
    account: str = ""


@dataclass(frozen=True)
class StopOutcome:
    instance_id: str
    result: StopResult
    detail: str = ""


class Stopper:
    def __init__(
        self,
        stops: InstanceStops,
        opt_in_tag_key: str,
        training_stops: TrainingJobStops | None = None,
    ) -> None:
        self._stops = stops
        self._tag_key = opt_in_tag_key
        self._training = training_stops

    def stop(self, request: StopRequest) -> StopOutcome:
        """Re-read the instance, then stop it if it still opts in and runs; never raises."""
        iid = request.instance_id
        try:
            now = self._stops.current(iid, request.region, request.account)
            if now is None or now.state not in STOPPABLE_STATES:
                state = "unknown to EC2" if now is None else now.state
                return self._outcome(request, "not_running", f"EC2 says {state}")
            if now.tags.get(self._tag_key, "") != "true":
                return self._outcome(
                    request, "opted_out", f"tag {self._tag_key} is no longer 'true'"
                )
            self._stops.stop(iid, request.region, request.account)
        except Exception as exc:  # one failed stop never stops the others
            logger.exception("stop failed", extra={"instance_id": iid, "account": request.account})
            return StopOutcome(iid, "stop_failed", f"{type(exc).__name__}: {exc}")
        return self._outcome(request, "stopped")

    def training_job_now(self, request: StopRequest) -> TrainingJobNow | None:
        """What SageMaker says of a training job now (None: unknown, or unreadable)."""
        if self._training is None:
            return None
        try:
            return self._training.current(request.instance_id, request.region, request.account)
        except Exception:  # read again at the stop; here only to plan
            logger.exception(
                "training job not described", extra={"training_job": request.instance_id}
            )
            return None

    def stop_training_job(self, request: StopRequest) -> StopOutcome:
        """The same for a SageMaker training job (``instance_id`` is the job's name):
        re-read it (DescribeTrainingJob, ListTags), stop it if it still opts in and is in
        progress; never raises."""
        name = request.instance_id
        if self._training is None:
            return self._outcome(request, "stop_failed", "no training-job stopper configured")
        try:
            now = self._training.current(name, request.region, request.account)
            if now is None or now.status not in STOPPABLE_TRAINING:
                status = "unknown to SageMaker" if now is None else now.status
                return self._outcome(request, "not_running", f"SageMaker says {status}")
            if now.tags.get(self._tag_key, "") != "true":
                return self._outcome(
                    request, "opted_out", f"tag {self._tag_key} is no longer 'true'"
                )
            self._training.stop(name, request.region, request.account)
        except Exception as exc:  # one failed stop never stops the others
            logger.exception("stop failed", extra={"training_job": name})
            return StopOutcome(name, "stop_failed", f"{type(exc).__name__}: {exc}")
        return self._outcome(request, "stopped")

    def stop_each(self, requests: Iterable[StopRequest]) -> list[StopOutcome]:
        return [self.stop(request) for request in requests]

    @staticmethod
    def _outcome(request: StopRequest, result: StopResult, detail: str = "") -> StopOutcome:
        logger.info(
            f"stop: {result}" + (f" ({detail})" if detail else ""),
            extra={"instance_id": request.instance_id, "account": request.account},
        )
        return StopOutcome(request.instance_id, result, detail)
