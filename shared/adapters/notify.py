"""The only SNS code: alerts to finance, teams and admins, with filterable attributes.

Every alert has a ``kind``, an ``audience`` and a stable ``alert_id`` (a function of what
it is about, never of when it was computed), also sent as a message attribute so that a
subscriber can drop repeats. Messages to teams carry the ``team`` attribute.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from shared.domain.limits import ALERT_BODY_BYTES

Audience = Literal["finance", "team", "admin"]
# SNS limits a subject to 100 printable ASCII characters.
_SUBJECT_LIMIT = 100
# Attributes sent as String.Array (a JSON list): a budget's recipients, which their
# email subscriptions filter on.
ARRAY_ATTRIBUTES = ("recipients",)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


@dataclass(frozen=True)
class Alert:
    audience: Audience
    kind: str
    subject: str
    message: str
    attributes: dict[str, str] = field(default_factory=dict)
    alert_id: str = ""
    at: str = ""  # when it was (first) due, ISO 8601 UTC

    def __post_init__(self) -> None:
        if not self.alert_id:
            raise ValueError(f"a {self.kind} alert needs its alert_id")
        # Bounded by construction: whatever built the body, SNS and the outbox take it.
        object.__setattr__(self, "message", fit_body(self.message))


def fit_body(text: str, limit: int = ALERT_BODY_BYTES) -> str:
    """The body cut at a line end to at most ``limit`` UTF-8 bytes (a last guard: the
    bodies are built bounded), saying that it was cut."""
    if len(text.encode()) <= limit:
        return text
    note = "\n(cut to fit the message limit; the API has the rest)"
    room = limit - len(note.encode())
    cut = text.encode()[:room].decode("utf-8", "ignore")
    return cut[: cut.rfind("\n")] + note if "\n" in cut else cut + note


class Notifier(Protocol):
    def send(self, alert: Alert) -> None: ...


def clean_subject(subject: str) -> str:
    """SNS subjects: printable ASCII, no line breaks, at most 100 characters."""
    text = _CONTROL.sub(" ", subject).encode("ascii", "replace").decode().strip()
    return text[:_SUBJECT_LIMIT] or "(alert)"


def message_attributes(alert: Alert) -> dict[str, dict[str, str]]:
    values = {
        "kind": alert.kind,
        "audience": alert.audience,
        "alert_id": alert.alert_id,
        "at": alert.at,
        **alert.attributes,
    }
    attributes = {
        key: {"DataType": "String", "StringValue": value[:256]}
        for key, value in values.items()
        if value and key not in ARRAY_ATTRIBUTES
    }
    for key in ARRAY_ATTRIBUTES:  # whole: a cut JSON array would be refused
        if values.get(key):
            attributes[key] = {"DataType": "String.Array", "StringValue": values[key]}
    return attributes


def chat_message(alert: Alert) -> str:
    """An AWS Chatbot custom notification (Chatbot shows no plain-text SNS message)."""
    return json.dumps(
        {
            "version": "1.0",
            "source": "custom",
            "id": alert.alert_id,
            "content": {
                "textType": "client-markdown",
                "title": clean_subject(alert.subject),
                "description": alert.message[:8000],
            },
            "metadata": {"additionalContext": {"alert_id": alert.alert_id}},
        }
    )


class SnsNotifier:
    def __init__(
        self,
        sns_client: Any,
        topics: dict[str, str],
        chat_topics: dict[str, str] | None = None,
    ) -> None:
        self._sns = sns_client
        self._topics = topics
        self._chat_topics = chat_topics or {}

    def send(self, alert: Alert) -> None:
        """Publish; raises when SNS refuses (the outbox sends it again later). A team's
        Slack copy goes first: a repeat after a partial failure carries the same
        ``alert_id``, which subscribers drop."""
        topic = self._topics.get(alert.audience)
        if not topic:
            raise RuntimeError(f"no topic configured for {alert.audience} alerts")
        chat = self._chat_topics.get(alert.attributes.get("team", ""))
        if alert.audience == "team" and chat:
            self._sns.publish(
                TopicArn=chat,
                Message=chat_message(alert),
                MessageAttributes=message_attributes(alert),
            )
        self._sns.publish(
            TopicArn=topic,
            Subject=clean_subject(alert.subject),
            Message=alert.message,
            MessageAttributes=message_attributes(alert),
        )


def error_code(exc: Exception) -> str:
    """The AWS error code of a failed call (empty for errors without an answer)."""
    response: Any = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def not_answering(exc: Exception) -> bool:
    """SNS did not answer (timeouts, no connection): the rest would wait the same."""
    from botocore.exceptions import ConnectionError as BotoConnectionError
    from botocore.exceptions import ConnectTimeoutError, ReadTimeoutError

    return isinstance(exc, ConnectTimeoutError | ReadTimeoutError | BotoConnectionError)
