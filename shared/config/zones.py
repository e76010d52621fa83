"""Time zone names in the configuration (the finance day's zone, a scenario's): IANA names
this runtime knows, checked when the configuration is validated."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def check_zone(name: str) -> str:
    """``name`` if it is an IANA time zone this runtime knows; a ValueError that says so."""
    if not name or name.startswith(("/", ".")) or ".." in name:
        raise ValueError(f"not an IANA time zone name: {name!r} (e.g. Asia/Seoul, UTC)")
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(
            f"unknown IANA time zone {name!r} (e.g. Asia/Seoul, America/New_York, UTC)"
        ) from exc
    return name
