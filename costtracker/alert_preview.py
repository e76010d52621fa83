"""Previewing alerts from a replay document: the list the human output ends with (time,
audience, subject) and, with ``replay --alerts``, each message as its audience receives
it (who, subject, body, the attributes subscriptions filter on)."""

from __future__ import annotations

import json
from typing import Any

from costtracker.render.text import WIDTH, table

# Keys of a document alert that are not message attributes.
_NOT_ATTRIBUTES = ("subject", "body", "audience", "at")


def audience_of(alert: dict[str, Any]) -> str:
    audience = str(alert.get("audience") or "")
    if audience == "team":
        return f"team {alert['team']}" if alert.get("team") else "team (no team tag)"
    return audience


def recipients_of(alert: dict[str, Any]) -> str:
    """Who gets the message, in words (the subscriptions that match it)."""
    audience = alert.get("audience")
    if audience == "team":
        team = alert.get("team")
        if not team:
            return "no team: the job has no team tag, so no team subscription matches"
        return f"the subscribers of team {team} (context teams.{team}: email, Slack)"
    if audience == "finance":
        who = "the finance topic's subscribers (finance_emails)"
        named = json.loads(alert["recipients"]) if alert.get("recipients") else []
        if named:
            who += f" and this budget's recipients: {', '.join(named)}"
        return who
    return "the admin topic's subscribers (admin_emails)"


def alert_list(document: dict[str, Any]) -> str:
    """Every alert the replay sent, in order: a table (or one line saying none); then the
    other messages (the daily summaries to finance), as a table of their own."""
    alerts = document.get("alerts", [])
    if not alerts:
        out = "alerts: none would be sent"
    else:
        rows = [("AT", "AUDIENCE", "SUBJECT")]
        rows += [
            (str(a.get("at") or "-"), audience_of(a), str(a.get("subject") or "")) for a in alerts
        ]
        out = f"alerts ({len(alerts)}; replay --alerts shows each message):\n" + table(rows)
    messages = document.get("messages", [])
    if messages:
        rows = [("AT", "AUDIENCE", "SUBJECT")]
        rows += [
            (str(m.get("at") or "-"), audience_of(m), str(m.get("subject") or "")) for m in messages
        ]
        out += f"\ndaily summaries ({len(messages)}; replay --alerts shows each):\n" + table(rows)
    return out


def alert_messages(document: dict[str, Any]) -> str:
    """Each alert and each daily summary as its audience receives it, in time order."""
    blocks = []
    sent = [*document.get("alerts", []), *document.get("messages", [])]
    sent.sort(key=lambda a: (a.get("at") or "", a.get("kind") or "", a.get("subject") or ""))
    for alert in sent:
        attributes = {
            k: v for k, v in alert.items() if k not in _NOT_ATTRIBUTES and v not in (None, "")
        }
        blocks.append(
            "\n".join(
                [
                    "=" * WIDTH,
                    f"To:       {recipients_of(alert)}",
                    f"Sent:     {alert.get('at') or '-'}",
                    f"Subject:  {alert.get('subject') or ''}",
                    "Attributes: " + ", ".join(f"{k}={v}" for k, v in sorted(attributes.items())),
                    "",
                    str(alert.get("body") or ""),
                ]
            )
        )
    return "\n".join(blocks) if blocks else "No alert would be sent."
