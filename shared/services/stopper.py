"""The one stopper of instances, for auto-stop of idle instances and for budget actions,
in each instance's own account: each instance is stopped on its own, and only if it may be.

Just before each stop the instance is read again (DescribeInstances): a tag read when the
ledger first saw the instance may have been removed since, and only the tag as it is now
(opt-in value exactly ``true``, as the IAM condition on StopInstances compares it) lets it
be stopped. An instance no longer running is left alone. A stop that fails (throttled,
refused, the instance gone meanwhile) is logged with its id and reported; it never stops
the others.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from shared.adapters.instance_stops import InstanceNow
from shared.adapters.training_job_stops import TrainingJobNow

logger = logging.getLogger("costtracker.stopper")

StopResult = Literal["stopped", "opted_out", "not_running", "stop_failed"]
# States in which StopInstances has something to stop.
STOPPABLE_STATES = frozenset({"pending", "running"})
# SageMaker statuses in which StopTrainingJob has something to stop.
STOPPABLE_TRAINING = frozenset({"InProgress"})
# What a stop reads just before it: an instance or a training job as it is now.
Now = TypeVar("Now", InstanceNow, TrainingJobNow)


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
        stops = self._stops
        return self._stop_checked(
            request,
            lambda: stops.current(request.instance_id, request.region, request.account),
            lambda: stops.stop(request.instance_id, request.region, request.account),
            lambda now: now.state in STOPPABLE_STATES,
            lambda now: now.state,
            ("EC2", "instance_id"),
        )

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
        training = self._training
        if training is None:
            return self._outcome(request, "stop_failed", "no training-job stopper configured")
        return self._stop_checked(
            request,
            lambda: training.current(request.instance_id, request.region, request.account),
            lambda: training.stop(request.instance_id, request.region, request.account),
            lambda now: now.status in STOPPABLE_TRAINING,
            lambda now: now.status,
            ("SageMaker", "training_job"),
        )

    def _stop_checked(
        self,
        request: StopRequest,
        current: Callable[[], Now | None],
        stop: Callable[[], None],
        stoppable: Callable[[Now], bool],
        state_of: Callable[[Now], str],
        service: tuple[str, str],
    ) -> StopOutcome:
        """The one check-then-stop of instances and training jobs: read the resource as
        it is now, leave it alone unless it still runs and opts in (the tag exactly
        ``true``), stop it; one failure is logged and reported, never raised."""
        name, log_key = service
        try:
            now = current()
            if now is None or not stoppable(now):
                state = f"unknown to {name}" if now is None else state_of(now)
                return self._outcome(request, "not_running", f"{name} says {state}")
            if now.tags.get(self._tag_key, "") != "true":
                return self._outcome(
                    request, "opted_out", f"tag {self._tag_key} is no longer 'true'"
                )
            stop()
        except Exception as exc:  # one failed stop never stops the others
            extra = {log_key: request.instance_id, "account": request.account}
            logger.exception("stop failed", extra=extra)
            return StopOutcome(request.instance_id, "stop_failed", f"{type(exc).__name__}: {exc}")
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
