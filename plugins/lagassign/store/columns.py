"""Column types every back end reads alike: UTC datetimes and JSON.

Shared by the runtime tables (``schema``) and the frozen migrations: a migration's DDL names
these types, so changing how one is declared would change what a migration creates.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

from ..core.clock import as_utc
from .errors import StoreError


class UTCDateTime(sa.types.TypeDecorator):
    """Timezone-aware UTC datetimes on every back end (SQLite stores naive UTC text)."""

    impl = sa.DateTime
    cache_ok = True

    def __init__(self) -> None:
        super().__init__(timezone=True)

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        value = checked_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def checked_utc(value: datetime) -> datetime:
    """``value`` in UTC (naive is taken as UTC); StoreError for anything but a datetime."""
    if not isinstance(value, datetime):
        raise StoreError(f"expected a datetime, got {value!r}")
    return as_utc(value)


def json_column() -> sa.JSON:
    """A JSON column whose Python None is SQL NULL (not the JSON text 'null')."""
    return sa.JSON(none_as_null=True)
