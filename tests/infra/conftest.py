"""Synthesize the CDK stack once per test session (no bundling: fast and offline)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from aws_cdk.assertions import Template  # noqa: E402

from cdk.app import build_app  # noqa: E402
from cdk.stack_settings import StackSettings  # noqa: E402

# Skip the layer's pip bundling; record each resource's construct path so tests
# can tell which function a rule or policy belongs to.
TEST_CONTEXT = {"aws:cdk:bundling-stacks": [], "aws:cdk:enable-path-metadata": True}


def cdk_json_context(**overrides: Any) -> dict[str, Any]:
    """The context of cdk.json (what `cdk synth` uses) plus the test context."""
    context = json.loads((REPO_ROOT / "cdk.json").read_text())["context"]
    return {**context, **TEST_CONTEXT, **overrides}


@dataclass(frozen=True)
class Synthesized:
    template: Template
    json: dict[str, Any]
    settings: StackSettings

    def resources(self, resource_type: str) -> dict[str, dict[str, Any]]:
        return {
            logical_id: resource
            for logical_id, resource in self.json["Resources"].items()
            if resource["Type"] == resource_type
        }

    def path_of(self, logical_id: str) -> str:
        return str(self.json["Resources"][logical_id].get("Metadata", {}).get("aws:cdk:path", ""))


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synthesized]:
    outdir = tmp_path_factory.mktemp("cdk.out")
    _, stack, settings = build_app(cdk_json_context(), outdir=str(outdir), nag=False)
    template = Template.from_stack(stack)
    yield Synthesized(template, dict(template.to_json()), settings)


@pytest.fixture(scope="session")
def template(synthesized: Synthesized) -> Template:
    return synthesized.template


# Every optional feature on: what the stack grants and adds only when asked.
FEATURED_CONTEXT = {
    "ledger.auto_stop.enabled": "true",
    "ledger.reconcile.enabled": "true",
    "ledger.reconcile.data_exports_bucket": "cur-exports",
    "ledger.reconcile.data_exports_prefix": "cur2/costtracker",
    "ledger.accounts.organization_id": "o-abcdef1234",
    "ledger.budget_actions.enabled": "true",
    "ledger.budget_actions.deny_principals": '["arn:aws:iam::123456789012:role/ml-nlp"]',
    "api_throttling": '{"rate_limit": 7, "burst_limit": 11}',
    "event_reserved_concurrency": "3",
    "api_reserved_concurrency": "4",
    # The finance day in Seoul: its schedules run on EventBridge Scheduler's local clock.
    "ledger.finance_timezone": "Asia/Seoul",
    # Team routing: filtered email subscriptions, one team with a Slack channel (Chatbot).
    "teams": '{"nlp": {"emails": ["nlp@example.com"], '
    '"slack": {"workspace_id": "T0123ABCD", "channel_id": "C0123ABCD"}}, '
    '"vision": {"emails": ["vision@example.com", "cv-lead@example.com"]}}',
}


@pytest.fixture(scope="session")
def featured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synthesized]:
    outdir = tmp_path_factory.mktemp("featured.out")
    _, stack, settings = build_app(
        cdk_json_context(**FEATURED_CONTEXT), outdir=str(outdir), nag=False
    )
    template = Template.from_stack(stack)
    yield Synthesized(template, dict(template.to_json()), settings)
