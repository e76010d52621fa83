"""Parsing real AWS samples at the edge; configuration validation with named fields."""

import json
from pathlib import Path

import pytest
from aws_lambda_powertools import Logger
from pydantic import ValidationError

from shared.app.edge import MalformedEvent, parse_event
from shared.config.ledger import LedgerConfig, TrackingConfig
from shared.events.aws import InstanceStateChangeEvent

EVENTS = Path(__file__).parent.parent / "events"
logger = Logger(service="test")


def load(name: str) -> dict:
    return json.loads((EVENTS / name).read_text())


def test_real_state_change_sample_parses_with_hyphenated_keys() -> None:
    event = parse_event(load("ec2-state-change.json"), InstanceStateChangeEvent, logger)
    assert (event.detail.instance_id, event.detail.state) == ("i-abcd1111", "pending")
    assert event.detail_type == "EC2 Instance State-change Notification"


def test_doc_sample_without_version_still_parses() -> None:
    event = parse_event(
        load("ec2-state-change-doc-no-version.json"), InstanceStateChangeEvent, logger
    )
    assert event.version == "0"


def test_powertools_sample_with_underscore_key_is_rejected_with_its_id() -> None:
    with pytest.raises(MalformedEvent) as info:
        parse_event(load("powertools-eventbridge-wrong-key.json"), InstanceStateChangeEvent, logger)
    assert info.value.event_id == "6a7e8feb-b491-4cf7-a9f1-bf3703467718"
    assert "instance-id" in info.value.detail


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda e: e["detail"].update(state="exploded"), "detail.state"),
        (lambda e: e["detail"].pop("instance-id"), "detail.instance-id"),
        (lambda e: e.update(time="yesterday"), "time"),
    ],
)
def test_malformed_events_name_the_bad_field(mutate, expected) -> None:  # type: ignore[no-untyped-def]
    event = load("ec2-state-change.json")
    mutate(event)
    with pytest.raises(MalformedEvent) as info:
        parse_event(event, InstanceStateChangeEvent, logger)
    assert expected in info.value.detail
    assert info.value.event_id == "7bf73129-1428-4cd3-a780-95db273d1602"


def test_not_an_object_is_rejected() -> None:
    with pytest.raises(MalformedEvent, match="not a JSON object"):
        parse_event("not json", InstanceStateChangeEvent, logger)


@pytest.mark.parametrize(
    ("instance_type", "tags", "job"),
    [
        ("m5.large", {"training-job": "prep"}, "prep"),  # a CPU node of a job counts
        ("p5.48xlarge", {}, "untagged:i-1"),
        ("trn1.32xlarge", {"training-job": "  "}, "untagged:i-1"),
        ("m5.large", {}, None),
        ("g6e.xlarge", {"team": "x"}, "untagged:i-1"),
    ],
)
def test_job_mapping_follows_the_spec(instance_type: str, tags: dict, job: str | None) -> None:
    assert TrackingConfig().job_of("i-1", instance_type, tags) == job


def test_first_present_job_tag_key_wins() -> None:
    tracking = TrackingConfig(job_tag_keys=("training-job", "job"))
    assert tracking.job_of("i-1", "m5.large", {"job": "b", "training-job": "a"}) == "a"
    assert tracking.job_of("i-1", "m5.large", {"job": "b"}) == "b"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"tracking": {"tracked_families": ["P5!"]}}, "tracked_families"),
        ({"discounts": {"trn1": "1.5"}}, "discounts"),
        ({"prices": {"ec2": {"trn1.32xlarge": "0"}}}, "ec2"),
        ({"tracking": {"job_tag_keys": []}}, "job_tag_keys"),
    ],
)
def test_bad_config_is_rejected_naming_the_field(raw: dict, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        LedgerConfig.model_validate(raw)
    assert field in str(info.value)
