"""Real S3, spot, rebalance, CloudWatch alarm and Cost Explorer samples at the edge."""

import json
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools import Logger

from shared.adapters.cost_explorer import CostExplorerBills
from shared.app.edge import MalformedEvent, parse_event
from shared.events.aws import (
    AlarmStateChangeEvent,
    ObjectCreatedEvent,
    ObjectDeletedEvent,
    RebalanceRecommendationEvent,
    SpotInterruptionEvent,
)

EVENTS = Path(__file__).parent.parent / "events"
logger = Logger(service="test")


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return data


def test_s3_object_created_samples() -> None:
    docs = parse_event(load("s3-object-created.json"), ObjectCreatedEvent, logger)
    assert (docs.detail.bucket.name, docs.detail.object.key, docs.detail.object.size) == (
        "amzn-s3-demo-bucket1",
        "example-key",
        5,
    )
    powertools = parse_event(load("s3-object-created-powertools.json"), ObjectCreatedEvent, logger)
    assert powertools.detail.object.size == 184662


def test_s3_object_deleted_sample_has_no_size() -> None:
    event = parse_event(load("s3-object-deleted.json"), ObjectDeletedEvent, logger)
    assert event.detail.object.key == "IMG_m7fzo3.jpg"


def test_spot_interruption_and_rebalance_samples() -> None:
    raw = load("spot-interruption-warning.json")
    # The sample's placeholders (account "<account_number>", time 1970-01-01) are no
    # real event's: set aside, naming both; filled in, the sample parses.
    with pytest.raises(MalformedEvent) as refused:
        parse_event(raw, SpotInterruptionEvent, logger)
    assert "account" in str(refused.value) and "2006-2100" in str(refused.value)
    raw |= {"account": "123456789012", "time": "2020-10-26T14:14:14Z"}
    warning = parse_event(raw, SpotInterruptionEvent, logger)
    assert (warning.detail.instance_id, warning.detail.instance_action) == (
        "i-0b662ef9931388ba0",
        "terminate",
    )
    rebalance = parse_event(
        load("rebalance-recommendation.json"), RebalanceRecommendationEvent, logger
    )
    assert rebalance.detail.instance_id == "i-0b662ef9931388ba0"


def test_alarm_samples_single_metric_is_read_anomaly_detection_is_not_ours() -> None:
    single = parse_event(
        load("alarm-state-change-single-metric.json"), AlarmStateChangeEvent, logger
    )
    metric = single.watched()
    assert metric is not None and (metric.namespace, metric.name) == ("AWS/EC2", "CPUUtilization")
    # The real event carries what the tracker compares: dimension, period and statistic.
    assert (metric.dimensions, metric.period, metric.stat) == (
        (("InstanceId", "i-12345678901234567"),),
        300,
        "Average",
    )
    assert single.detail.state.value == "ALARM"
    assert single.detail.state.timestamp.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
    anomaly = parse_event(
        load("alarm-state-change-anomaly-detection.json"), AlarmStateChangeEvent, logger
    )
    assert anomaly.watched() is None


def test_cost_explorer_sample_groups_parse_by_tag() -> None:
    class FakeCe:
        def get_cost_and_usage(self, **kwargs: Any) -> dict[str, Any]:
            response: dict[str, Any] = load("ce-get-cost-and-usage-groupby-tag.json")["response"]
            # The sample groups by SERVICE then tag; ask for tag then SERVICE like we do.
            for result in response["ResultsByTime"]:
                for group in result["Groups"]:
                    group["Keys"] = list(reversed(group["Keys"]))
            return response

    billed = CostExplorerBills(FakeCe()).billed_day(date(2017, 9, 1), "Environment")
    assert billed.final is True
    # S3 cost untagged ("Environment$") and of "Dev", as the bill says.
    assert billed.by_job == {
        "(no job tag)": {"checkpoint_storage": Decimal("40.3543773134")},
        "Dev": {"checkpoint_storage": Decimal("0.2682364644")},
    }
