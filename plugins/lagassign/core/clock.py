"""Time as lagassign writes it: timezone-aware UTC, ISO 8601 with a Z in text."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """A datetime in UTC; a naive one is taken as UTC already."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def now_text(timespec: str = "milliseconds") -> str:
    """Now as ISO 8601 UTC text with a Z: the format of every timestamp lagassign writes."""
    return utc_now().isoformat(timespec=timespec).replace("+00:00", "Z")


def iso_z(value: datetime | str | None, timespec: str = "milliseconds") -> str | None:
    """A datetime as ISO 8601 UTC text with a Z; text passes through and None stays None."""
    if value is None or isinstance(value, str):
        return value
    return as_utc(value).isoformat(timespec=timespec).replace("+00:00", "Z")


def parse_utc(text: str | None) -> datetime | None:
    """A timestamp we wrote (or any ISO 8601 text) as an aware datetime; None for empty."""
    if not text:
        return None
    return as_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
