"""Fuzz the handlers' parsing edge: bad input is a MalformedEvent with its id, nothing else.

For every EventBridge-driven handler under ``functions/*/handler.py`` the model it
parses with is fed arbitrary JSON, real-shaped events with fields mutated, and
valid events. ``shared.app.edge.parse_event`` must either return the model or raise
``MalformedEvent`` carrying the event id (``"<no id>"`` when there is no string id).
A second layer calls each handler itself with the AWS side stubbed out: whatever
it is given, it answers, raises ``MalformedEvent``, or reaches the runtime.
"""

from __future__ import annotations

import importlib
import io
import json
import logging
import string
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter

from shared.app import runtime
from shared.app.edge import MalformedEvent, parse_event
from shared.app.event_function import EventFunction
from shared.domain.clock import utc
from shared.events.aws import (
    AlarmStateChangeEvent,
    InstanceStateChangeEvent,
    ObjectCreatedEvent,
    ObjectDeletedEvent,
    RebalanceRecommendationEvent,
    ScheduledEvent,
    SpotInterruptionEvent,
)
from shared.events.envelope import SummaryTick

_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=_SLOW_DATA)
# Whole handlers, 100k-character ids and the (narrow) valid-event generators: fewer.
FUZZ_SMALL = settings(max_examples=100, deadline=None, suppress_health_check=_SLOW_DATA)

# The handler modules fed by EventBridge and the models each one parses with.
HANDLER_MODELS: dict[str, tuple[type[BaseModel], ...]] = {
    "instance_state": (InstanceStateChangeEvent,),
    "alarm_lifecycle": (InstanceStateChangeEvent,),
    "spot_interruption": (SpotInterruptionEvent, RebalanceRecommendationEvent),
    "checkpoint": (ObjectCreatedEvent, ObjectDeletedEvent),
    "alarm_state": (AlarmStateChangeEvent,),
    "day_boundary": (ScheduledEvent,),
    "price_backfill": (ScheduledEvent,),
    "budget_tick": (ScheduledEvent,),
    "alarm_sweep": (ScheduledEvent,),
    "daily_summary": (SummaryTick,),
    "reconcile": (ScheduledEvent,),
}
CASES = [(name, model) for name, models in HANDLER_MODELS.items() for model in models]
CASE_IDS = [f"{name}-{model.__name__}" for name, model in CASES]
# parse_event's property depends on the model only: fuzz each model once, with the logger
# of the first handler that uses it (the handler -> model mapping is checked separately).
_first_user: dict[type[BaseModel], str] = {}
for _name, _model in CASES:
    _first_user.setdefault(_model, _name)
MODEL_CASES = [(name, model) for model, name in _first_user.items()]
MODEL_IDS = [model.__name__ for _, model in MODEL_CASES]

DETAIL_TYPES = [
    "EC2 Instance State-change Notification",
    "EC2 Spot Instance Interruption Warning",
    "EC2 Instance Rebalance Recommendation",
    "Object Created",
    "Object Deleted",
    "CloudWatch Alarm State Change",
    "Scheduled Event",
    "AWS API Call via CloudTrail",
    "",
]
SOURCES = ["aws.ec2", "aws.s3", "aws.cloudwatch", "aws.events", "aws.scheduler", "custom.app"]
STATES = ["pending", "running", "stopping", "stopped", "shutting-down", "terminated"]


def handler_module(name: str) -> Any:
    return importlib.import_module(f"functions.{name}.handler")


def check_parse(raw: Any, model: type[BaseModel], logger: Any) -> BaseModel | None:
    """The property: a model instance, or MalformedEvent with the event id; nothing else."""
    try:
        parsed = parse_event(raw, model, logger)
    except MalformedEvent as exc:
        expected = raw.get("id") if isinstance(raw, dict) else None
        assert exc.event_id == (expected if isinstance(expected, str) else "<no id>")
        assert str(exc).startswith(f"malformed event {exc.event_id}: ")
        return None
    assert isinstance(parsed, model)
    return parsed


# --- strategies -----------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and +-Infinity included: Python's json.loads accepts them
    | st.text(max_size=40)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=20), children, max_size=5)
    ),
    max_leaves=25,
)

OFFSETS = [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
OFFSETS += [timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))]
aware_times = st.datetimes(
    # The years an event can carry (shared.events.envelope), a day in from each end.
    min_value=datetime(2006, 1, 2),  # noqa: DTZ001 - hypothesis bounds are naive by contract
    max_value=datetime(2100, 12, 30),  # noqa: DTZ001
    timezones=st.sampled_from(OFFSETS),
)


@st.composite
def time_strings(draw: st.DrawFn) -> str:
    """Event times as AWS writes them: 'Z', '+00:00', CloudWatch's '+0000', fractions."""
    at = draw(aware_times)
    style = draw(st.sampled_from(["z", "iso", "compact", "millis"]))
    if style == "z":
        return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if style == "iso":
        return at.isoformat()
    if style == "compact":
        return at.strftime("%Y-%m-%dT%H:%M:%S%z")  # e.g. +0000, -0800
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}" + at.strftime("%z")


# Times that are odd or outright wrong: naive, compact offsets, bad offsets, far years.
odd_times = st.one_of(
    time_strings(),
    aware_times.map(lambda t: t.replace(tzinfo=None).isoformat()),  # naive
    st.sampled_from(
        [
            "2026-11-01T10:00:00",
            "2026-11-01 10:00:00",
            "2026-11-01",
            "2026-11-01T10:00:00+0000",
            "2026-11-01T10:00:00.000+0000",
            "2026-11-01T10:00:00-2400",
            "2026-11-01T10:00:00+24:00",
            "2026-13-01T10:00:00Z",
            "2026-02-30T10:00:00Z",
            "0000-01-01T00:00:00Z",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "9999-12-31T23:59:59.999999+00:00",
            "1970-01-01T00:00:00Z",
            "T",
            "",
            "now",
        ]
    ),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
)

instance_ids = st.from_regex(r"\Ai-[0-9a-f]{8,17}\Z")
event_ids = st.uuids().map(str) | st.text(min_size=1, max_size=64)
regions = st.sampled_from(["us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1"])


def envelope(draw: st.DrawFn, source: str, detail_type: str, detail: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": draw(event_ids),
        "detail-type": detail_type,
        "source": source,
        "account": draw(st.from_regex(r"\A[0-9]{12}\Z")),
        "time": draw(time_strings()),
        "region": draw(regions),
        "resources": draw(st.lists(st.text(max_size=60), max_size=2)),
        "detail": detail,
    }
    if draw(st.booleans()):
        event["version"] = "0"  # AWS's doc samples omit it
    if draw(st.integers(0, 9)) == 0:
        event["replay-name"] = draw(st.text(max_size=20))
    return event


@st.composite
def instance_state_events(draw: st.DrawFn) -> dict[str, Any]:
    detail = {"instance-id": draw(instance_ids), "state": draw(st.sampled_from(STATES))}
    return envelope(draw, "aws.ec2", "EC2 Instance State-change Notification", detail)


@st.composite
def spot_interruption_events(draw: st.DrawFn) -> dict[str, Any]:
    detail = {
        "instance-id": draw(instance_ids),
        "instance-action": draw(st.sampled_from(["terminate", "stop", "hibernate"])),
    }
    return envelope(draw, "aws.ec2", "EC2 Spot Instance Interruption Warning", detail)


@st.composite
def rebalance_events(draw: st.DrawFn) -> dict[str, Any]:
    detail = {"instance-id": draw(instance_ids)}
    return envelope(draw, "aws.ec2", "EC2 Instance Rebalance Recommendation", detail)


bucket_names = st.from_regex(r"\A[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]\Z")
object_keys = st.text(min_size=1, max_size=200) | st.builds(
    "runs/{}/step-{}/shard-{}.pt".format,
    st.text(string.ascii_letters + "-_", min_size=1, max_size=20),
    st.integers(0, 10**9),
    st.integers(0, 64),
)
sequencers = st.from_regex(r"\A[0-9A-F]{0,32}\Z")


@st.composite
def object_created_events(draw: st.DrawFn) -> dict[str, Any]:
    obj: dict[str, Any] = {"key": draw(object_keys), "size": draw(st.integers(0, 5 * 1024**4))}
    if draw(st.booleans()):
        obj["sequencer"] = draw(sequencers)
    if draw(st.booleans()):
        obj["etag"] = draw(st.text(string.hexdigits, max_size=32))
    detail = {"version": "0", "bucket": {"name": draw(bucket_names)}, "object": obj}
    return envelope(draw, "aws.s3", "Object Created", detail)


@st.composite
def object_deleted_events(draw: st.DrawFn) -> dict[str, Any]:
    obj: dict[str, Any] = {"key": draw(object_keys)}
    if draw(st.booleans()):
        obj["sequencer"] = draw(sequencers)
    detail = {
        "bucket": {"name": draw(bucket_names)},
        "object": obj,
        "deletion-type": "Permanently Deleted",
    }
    return envelope(draw, "aws.s3", "Object Deleted", detail)


@st.composite
def alarm_events(draw: st.DrawFn) -> dict[str, Any]:
    metric = {
        "id": "m1",
        "metricStat": {
            "metric": {
                "namespace": draw(st.sampled_from(["AWS/EC2", "CWAgent", "NeuronMonitor"])),
                "name": draw(st.sampled_from(["CPUUtilization", "nvidia_smi_utilization_gpu"])),
                "dimensions": {"InstanceId": draw(instance_ids)},
            },
            "period": 300,
            "stat": "Average",
        },
        "returnData": True,
    }
    metrics = draw(st.sampled_from([[metric], [metric, {"id": "e1"}], []]))
    detail: dict[str, Any] = {
        "alarmName": draw(st.text(min_size=1, max_size=255)),
        "state": {
            "value": draw(st.sampled_from(["OK", "ALARM", "INSUFFICIENT_DATA"])),
            "reason": draw(st.text(max_size=80)),
            "timestamp": draw(time_strings()),
        },
        "previousState": {"value": "OK", "timestamp": "2026-11-01T10:00:00.000+0000"},
    }
    if draw(st.booleans()):
        detail["configuration"] = {"metrics": metrics, "description": ""}
    return envelope(draw, "aws.cloudwatch", "CloudWatch Alarm State Change", detail)


@st.composite
def scheduled_events(draw: st.DrawFn) -> dict[str, Any]:
    source = draw(st.sampled_from(["aws.events", "aws.scheduler"]))
    detail: Any = {}
    if source == "aws.scheduler" and draw(st.booleans()):
        detail = "{}"  # EventBridge Scheduler's empty payload
    return envelope(draw, source, "Scheduled Event", detail)


VALID: dict[type[BaseModel], st.SearchStrategy[dict[str, Any]]] = {
    InstanceStateChangeEvent: instance_state_events(),
    SpotInterruptionEvent: spot_interruption_events(),
    RebalanceRecommendationEvent: rebalance_events(),
    ObjectCreatedEvent: object_created_events(),
    ObjectDeletedEvent: object_deleted_events(),
    AlarmStateChangeEvent: alarm_events(),
    ScheduledEvent: scheduled_events(),
    SummaryTick: scheduled_events(),
}

huge_strings = st.builds(
    lambda ch, n: ch * n,
    st.sampled_from(["a", "0", "é", "\u202e", "\U0001f600", "\x00", "i-", "/"]),
    st.sampled_from([1_000, 10_000, 100_000]),
)
unicode_text = st.text(
    st.characters(codec="utf-8", categories=["L", "M", "N", "P", "S", "Z", "C"]), max_size=50
)
bad_values = st.one_of(
    json_values,
    huge_strings,
    unicode_text,
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([-1, -(2**63), 2**63, 2**64, 5 * 1024**4 + 1, 10**30, -0.0]),
    st.floats(),
    odd_times,
    st.sampled_from(DETAIL_TYPES + SOURCES + STATES),
)


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key/index path inside nested dicts and lists."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*prefix, key)
            yield from paths_of(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield (*prefix, index)
            yield from paths_of(child, (*prefix, index))


def container_at(event: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        event = event[step]
    return event


@st.composite
def mutated_events(draw: st.DrawFn, model: type[BaseModel]) -> dict[str, Any]:
    """A real-shaped event for ``model`` with one to four fields broken."""
    event = json.loads(json.dumps(draw(VALID[model])))  # a deep copy
    for _ in range(draw(st.integers(1, 4))):
        paths = list(paths_of(event))
        kind = draw(st.sampled_from(["set", "set", "delete", "add", "detail-type", "time"]))
        if kind == "detail-type":
            event["detail-type"] = draw(st.sampled_from(DETAIL_TYPES) | unicode_text)
        elif kind == "time":
            event["time"] = draw(odd_times)
        elif kind == "add":
            target = event if not isinstance(event.get("detail"), dict) else event["detail"]
            target[draw(unicode_text | st.sampled_from(["instance_id", "Instance-Id"]))] = draw(
                bad_values
            )
        elif paths:
            path = draw(st.sampled_from(paths))
            parent = container_at(event, path)
            if kind == "delete":
                del parent[path[-1]]
            else:
                parent[path[-1]] = draw(bad_values)
    return event


# --- the handlers still use these models ---------------------------------------------


@pytest.mark.parametrize("name", sorted(HANDLER_MODELS))
def test_each_handler_parses_with_the_fuzzed_models(name: str) -> None:
    handler = handler_module(name).handler
    assert isinstance(handler, EventFunction)  # parses with shared.app.edge.parse_event
    if isinstance(handler.model, TypeAdapter):  # a discriminated union: each member parses
        for model in HANDLER_MODELS[name]:
            assert isinstance(handler.model.validate_python(_sample(model)), model)
    else:
        assert (handler.model,) == HANDLER_MODELS[name]


# --- parse_event properties -----------------------------------------------------------


@pytest.mark.parametrize(("name", "model"), MODEL_CASES, ids=MODEL_IDS)
@FUZZ
@given(raw=json_values)
def test_arbitrary_json_is_parsed_or_rejected_with_its_id(
    name: str, model: type[BaseModel], raw: Any
) -> None:
    check_parse(raw, model, handler_module(name).logger)


@pytest.mark.parametrize(("name", "model"), MODEL_CASES, ids=MODEL_IDS)
@FUZZ_SMALL
@given(data=st.data())
def test_objects_with_an_id_are_rejected_with_that_id(
    name: str, model: type[BaseModel], data: st.DataObject
) -> None:
    raw = data.draw(st.dictionaries(st.text(max_size=20), json_values, max_size=6))
    raw["id"] = data.draw(event_ids | huge_strings | st.just(""))
    check_parse(raw, model, handler_module(name).logger)


@pytest.mark.parametrize(("name", "model"), MODEL_CASES, ids=MODEL_IDS)
@FUZZ
@given(data=st.data())
def test_mutated_events_are_parsed_or_rejected_with_their_id(
    name: str, model: type[BaseModel], data: st.DataObject
) -> None:
    raw = data.draw(mutated_events(model))
    check_parse(raw, model, handler_module(name).logger)


@pytest.mark.parametrize(("name", "model"), MODEL_CASES, ids=MODEL_IDS)
@FUZZ_SMALL
@given(data=st.data())
def test_valid_events_parse(name: str, model: type[BaseModel], data: st.DataObject) -> None:
    raw = data.draw(VALID[model])
    parsed = check_parse(raw, model, handler_module(name).logger)
    assert parsed is not None, "a valid event was rejected"
    assert parsed.id == raw["id"]  # type: ignore[attr-defined]
    assert parsed.time.tzinfo is not None  # type: ignore[attr-defined]
    assert utc(parsed.time) == datetime.fromisoformat(raw["time"])  # type: ignore[attr-defined]


@FUZZ_SMALL
@given(event=alarm_events())
def test_cloudwatch_compact_offsets_parse_to_the_same_instant(event: dict[str, Any]) -> None:
    parsed = parse_event(event, AlarmStateChangeEvent, handler_module("alarm_state").logger)
    assert utc(parsed.detail.state.timestamp) == datetime.fromisoformat(
        event["detail"]["state"]["timestamp"]
    )


# --- whole handlers, AWS stubbed --------------------------------------------------------


class _ReachedRuntime(Exception):
    """The handler got past its edge and asked for an AWS-backed dependency."""


class _Context:
    function_name = "fuzz"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:fuzz"
    aws_request_id = "fuzz-1"


RUNTIME_ENTRY_POINTS = ["current"]  # what the decorator asks for the function's dependencies


def _reach(*_: Any, **__: Any) -> Any:
    raise _ReachedRuntime


@contextmanager
def stubbed_runtime() -> Iterator[None]:
    with mock.patch.multiple(runtime, **dict.fromkeys(RUNTIME_ENTRY_POINTS, _reach)):
        yield


def call_handler(name: str, raw: Any) -> str:
    """'answered', 'malformed' or 'reached-runtime'; any other exception propagates."""
    handler: Callable[[Any, Any], Any] = handler_module(name).handler
    with stubbed_runtime():
        try:
            result = handler(raw, _Context())
        except MalformedEvent as exc:
            expected = raw.get("id") if isinstance(raw, dict) else None
            assert exc.event_id == (expected if isinstance(expected, str) else "<no id>")
            return "malformed"
        except _ReachedRuntime:
            return "reached-runtime"
    assert isinstance(result, dict)
    return "answered"


def handler_inputs(name: str) -> st.SearchStrategy[Any]:
    models = HANDLER_MODELS[name]
    return st.one_of(
        json_values,
        *(VALID[m] for m in models),
        *(mutated_events(m) for m in models),
    )


# Handlers wrapped in Metrics.log_metrics warn when they publish nothing; not our concern.
@pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning")
@pytest.mark.parametrize("name", sorted(HANDLER_MODELS))
@FUZZ_SMALL
@given(data=st.data())
def test_handlers_answer_reject_or_reach_the_runtime(name: str, data: st.DataObject) -> None:
    raw = data.draw(handler_inputs(name))
    call_handler(name, raw)


@pytest.mark.parametrize(("name", "model"), CASES, ids=CASE_IDS)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_valid_events_reach_the_runtime(
    name: str, model: type[BaseModel], data: st.DataObject
) -> None:
    raw = data.draw(VALID[model])
    outcome = call_handler(name, raw)
    assert outcome == "reached-runtime"  # the decorator asks for the runtime once parsed


# --- found by fuzzing: times at the ends of the calendar that UTC cannot hold -----------

FAR_OFFSET_TIMES = [
    "9999-12-31T23:59:59-23:59",
    "9999-12-31T23:00:00-01:00",
    "0001-01-01T00:00:00+23:59",
    "0001-01-01T00:59:59+01:00",
]


@pytest.mark.parametrize(("name", "model"), MODEL_CASES, ids=MODEL_IDS)
def test_accepted_event_times_are_representable_in_utc(name: str, model: type[BaseModel]) -> None:
    for time in FAR_OFFSET_TIMES:
        raw = _sample(model)
        raw["time"] = time
        parsed = check_parse(raw, model, handler_module(name).logger)
        if parsed is not None:
            utc(parsed.time)  # type: ignore[attr-defined]  # what every service does next


def test_alarm_timestamp_outside_utc_range_is_rejected_as_malformed() -> None:
    raw = _sample(AlarmStateChangeEvent)
    raw["detail"]["state"]["timestamp"] = "9999-12-31T23:59:59.000-2359"
    parsed = check_parse(raw, AlarmStateChangeEvent, handler_module("alarm_state").logger)
    assert parsed is None  # MalformedEvent, with the event id (checked by check_parse)


@pytest.mark.parametrize("name", ["day_boundary", "budget_tick", "daily_summary"])
def test_far_offset_time_is_rejected_as_malformed_by_the_handler(name: str) -> None:
    for time in FAR_OFFSET_TIMES:
        raw = _sample(ScheduledEvent)
        raw["time"] = time
        assert call_handler(name, raw) == "malformed", time


@pytest.mark.parametrize(
    "time",
    [
        "0001-01-09T00:00:00Z",
        "0999-12-31T23:59:59Z",
        "2005-12-31T23:59:59Z",
        "2101-01-01T00:00:00Z",
    ],
)
@pytest.mark.parametrize("name", ["instance_state", "budget_tick", "daily_summary"])
def test_a_time_outside_the_years_events_carry_is_rejected_as_malformed(
    name: str, time: str
) -> None:
    """Years 2006 to 2100 only: a replay of an event from year 999 walked every minute since."""
    model = InstanceStateChangeEvent if name == "instance_state" else ScheduledEvent
    raw = _sample(model)
    raw["time"] = time
    assert call_handler(name, raw) == "malformed"
    raw["time"] = "2006-01-01T00:00:00Z"
    assert call_handler(name, raw) == "reached-runtime"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("account", "123456789012#x"),
        ("account", "12345678901"),
        ("account", "\u0661" * 12),  # Arabic-Indic digits: not an account id
        ("region", "us-east-1#x"),
    ],
)
def test_an_account_or_region_of_the_wrong_form_is_rejected_as_malformed(
    field: str, value: str
) -> None:
    """``123456789012#x`` would key a second record of the same account."""
    raw = _sample(InstanceStateChangeEvent)
    raw[field] = value
    assert call_handler("instance_state", raw) == "malformed"


def _sample(model: type[BaseModel]) -> dict[str, Any]:
    samples: dict[type[BaseModel], dict[str, Any]] = {
        InstanceStateChangeEvent: {"instance-id": "i-0123456789abcdef0", "state": "running"},
        SpotInterruptionEvent: {"instance-id": "i-0123456789abcdef0", "instance-action": "stop"},
        RebalanceRecommendationEvent: {"instance-id": "i-0123456789abcdef0"},
        ObjectCreatedEvent: {"bucket": {"name": "ckpt"}, "object": {"key": "k", "size": 1}},
        ObjectDeletedEvent: {"bucket": {"name": "ckpt"}, "object": {"key": "k"}},
        AlarmStateChangeEvent: {
            "alarmName": "a",
            "state": {"value": "OK", "timestamp": "2026-11-01T10:00:00.000+0000"},
        },
        ScheduledEvent: {},
        SummaryTick: {},
    }
    sources = {
        InstanceStateChangeEvent: ("aws.ec2", "EC2 Instance State-change Notification"),
        SpotInterruptionEvent: ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
        RebalanceRecommendationEvent: ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
        ObjectCreatedEvent: ("aws.s3", "Object Created"),
        ObjectDeletedEvent: ("aws.s3", "Object Deleted"),
        AlarmStateChangeEvent: ("aws.cloudwatch", "CloudWatch Alarm State Change"),
        ScheduledEvent: ("aws.events", "Scheduled Event"),
        SummaryTick: ("aws.events", "Scheduled Event"),
    }
    source, detail_type = sources[model]
    return {
        "version": "0", "id": "fuzz-sample", "detail-type": detail_type, "source": source,
        "account": "123456789012", "time": "2026-11-01T10:00:00Z", "region": "us-east-1",
        "resources": [], "detail": samples[model],
    }  # fmt: skip


def test_malformed_event_with_a_lone_surrogate_is_still_logged() -> None:
    raw = json.loads('{"id": "evt-\\ud800", "detail-type": "x", "detail": {}}')
    logger = handler_module("instance_state").logger
    buffer = io.BytesIO()
    stream = io.TextIOWrapper(buffer, encoding="utf-8", write_through=True)  # Lambda's stdout
    log_handler = logger.registered_handler
    assert isinstance(log_handler, logging.StreamHandler)
    previous = log_handler.setStream(stream)
    try:
        with (
            pytest.raises(MalformedEvent) as info,
            mock.patch.object(logging, "raiseExceptions", False),
        ):
            parse_event(raw, InstanceStateChangeEvent, logger)
    finally:
        log_handler.setStream(previous)  # type: ignore[arg-type]
    # The id is kept, its lone surrogate escaped so that the log line can be written.
    assert info.value.event_id == "evt-\\ud800"
    assert b"event failed validation" in buffer.getvalue()
