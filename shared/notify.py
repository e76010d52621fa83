"""The only SNS code: alerts to finance, teams and admins, with filterable attributes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Audience = Literal["finance", "team", "admin"]
# SNS limits a subject to 100 printable ASCII characters.
_SUBJECT_LIMIT = 100


@dataclass(frozen=True)
class Alert:
    audience: Audience
    kind: str
    subject: str
    message: str
    attributes: dict[str, str] = field(default_factory=dict)


class Notifier(Protocol):
    def send(self, alert: Alert) -> None: ...


class SnsNotifier:
    def __init__(self, sns_client: Any, topics: dict[str, str]) -> None:
        self._sns = sns_client
        self._topics = topics

    def send(self, alert: Alert) -> None:
        topic = self._topics.get(alert.audience)
        if not topic:
            raise RuntimeError(f"no topic configured for {alert.audience} alerts")
        subject = alert.subject.encode("ascii", "replace").decode()[:_SUBJECT_LIMIT]
        attributes = {
            key: {"DataType": "String", "StringValue": value}
            for key, value in {"kind": alert.kind, **alert.attributes}.items()
            if value
        }
        self._sns.publish(
            TopicArn=topic, Subject=subject, Message=alert.message, MessageAttributes=attributes
        )
