"""Per-function settings from the environment, validated once, on first use.

Nothing is read at import time, so a module imports cleanly in tests and the
local emulator can set the environment before the first event. The runtime
(``shared.app.runtime``) loads them once per cold start, and again after
``runtime.reset()``.
"""

from __future__ import annotations

import json
import os

from pydantic import BaseModel, ConfigDict, Field

from shared.config.ledger import LedgerConfig


class FunctionSettings(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    table_name: str = Field(min_length=3)
    finance_topic_arn: str = ""
    team_topic_arn: str = ""
    admin_topic_arn: str = ""
    # team -> the SNS topic its Slack channel (AWS Chatbot) reads
    team_chat_topics: dict[str, str] = {}
    config: LedgerConfig = Field(default_factory=LedgerConfig)


def load_settings() -> FunctionSettings:
    """The validated settings of this environment; raises with the offending variable named."""
    raw_config = os.environ.get("LEDGER_CONFIG", "{}")
    return FunctionSettings(
        table_name=os.environ.get("TABLE_NAME", ""),
        finance_topic_arn=os.environ.get("FINANCE_TOPIC_ARN", ""),
        team_topic_arn=os.environ.get("TEAM_TOPIC_ARN", ""),
        admin_topic_arn=os.environ.get("ADMIN_TOPIC_ARN", ""),
        team_chat_topics=json.loads(os.environ.get("TEAM_CHAT_TOPICS") or "{}"),
        config=LedgerConfig.model_validate_json(raw_config),
    )
