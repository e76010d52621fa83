"""FSx CloudTrail records against a real one (tests/events/PROVENANCE.md): AWS's own
``TagResource`` example entry from the FSx for Lustre user guide. No real
``CreateFileSystem`` record is public; the built one must name its CloudTrail fields as
the real record does, and the real record's call is not one the ledger acts on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from costtracker.routing import matches
from shared.app.functions import event_rules
from shared.events.fsx import CloudTrailFsxRecord, FsxApiCallEvent
from tests.aws_events import fsx_record_delivered

EVENTS = Path(__file__).resolve().parents[1] / "events"
REAL = json.loads((EVENTS / "fsx-tag-resource-cloudtrail-record.json").read_text())
BUILT = json.loads((EVENTS / "fsx-create-file-system-cloudtrail.json").read_text())


def delivered(record: dict[str, Any]) -> dict[str, Any]:
    return fsx_record_delivered(record, "6f1d3c2e-0000-4000-8000-000000000000")


def test_the_fields_the_parser_reads_are_named_as_in_the_real_record() -> None:
    aliases = {f.alias for f in CloudTrailFsxRecord.model_fields.values()}
    # errorCode appears only on a failed call, which this real record is not.
    assert aliases - {"errorCode"} <= set(REAL)
    assert REAL["eventSource"] == BUILT["detail"]["eventSource"] == "fsx.amazonaws.com"
    assert set(REAL) <= set(BUILT["detail"])  # the built record lacks none of its fields
    assert REAL["apiVersion"] == BUILT["detail"]["apiVersion"]


def test_the_rule_routes_the_built_create_and_not_the_real_tag_call() -> None:
    pattern = event_rules()["fsx_event"]
    assert matches(pattern, BUILT)
    assert not matches(pattern, delivered(REAL))  # TagResource: no size, no lifecycle


def test_a_tag_call_that_reaches_the_parser_is_refused_not_costed() -> None:
    with pytest.raises(ValidationError, match="eventName"):
        FsxApiCallEvent.model_validate(delivered(REAL))


def test_the_real_records_account_region_and_id_read_through_the_parser() -> None:
    """The real record's envelope, account and region read through the parser when its
    call is one the ledger acts on (a deletion names its id in ``requestParameters``)."""
    record = dict(
        REAL,
        eventName="DeleteFileSystem",
        requestParameters={"fileSystemId": "fs-ab12cd34ef56gh789"},
    )
    event = FsxApiCallEvent.model_validate(delivered(record))
    assert event.detail.file_system_id == "fs-ab12cd34ef56gh789"
    assert (event.account_id, event.region_name) == ("111122223333", "us-east-1")
    assert event.detail.event_id == "bEXAMPLE-gl12-3f5h-3sh4-ab6EXAMPLE9p"
