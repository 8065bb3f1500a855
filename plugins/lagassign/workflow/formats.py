"""The one way the pages write numbers, lag and times: 1,120; '1,120 messages'; UTC as ``<time>``.

Shared by the plans and groups pages and their charts, so that a value reads the same wherever
it is shown. ``-`` stands for a value that is not known.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import Any


def esc(value: Any) -> str:
    """A value as escaped HTML text ('-' for None)."""
    return escape("-" if value is None else str(value), quote=True)


def fmt_int(value: Any) -> str:
    """The one number format of the pages: 1,120 (and '-' for unknown)."""
    return "-" if value is None else f"{round(value):,}"


def fmt_rate(value: Any) -> str:
    """A rate in the same format, with one decimal where it has one: 1,120 or 120.5."""
    if value is None:
        return "-"
    return fmt_int(value) if float(value).is_integer() else f"{float(value):,.1f}"


def lag_text(value: Any) -> str:
    """Lag with its unit: '1,120 messages' ('-' for unknown)."""
    return "-" if value is None else f"{fmt_int(value)} messages"


def ratio_text(value: Any) -> str:
    """A ratio (imbalance) with three decimals: 1.250."""
    return "-" if value is None else f"{float(value):.3f}"


def iso_utc(value: datetime) -> str:
    """A time in ISO 8601 in UTC, to the second (a naive time is taken as UTC)."""
    return (
        value.astimezone(UTC).isoformat(timespec="seconds") if value.tzinfo else value.isoformat() + "+00:00"
    )


def utc_text(value: datetime | None) -> str:
    """A time as plain text, '2026-05-01 12:00:00' ('-' for unknown)."""
    return value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, datetime) else "-"


def when(value: datetime | None, fmt: str = "full") -> str:
    """A time as ``<time>``: written in UTC, shown by the page's script in the Airflow UI's zone."""
    if not isinstance(value, datetime):
        return "-"
    utc = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    return f'<time datetime="{iso_utc(utc)}" data-f="{fmt}">{utc.strftime("%Y-%m-%d %H:%M:%S")} UTC</time>'
