"""The audit store's tables as queries see them, and the values their columns take.

The tables are what the frozen migrations (``store.migrations``) produce, read back once from
an in-memory SQLite database: the DDL is written only in the migrations. ``tests/store`` checks
that a database migrated on PostgreSQL has the same tables and columns.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from .columns import UTCDateTime, json_column
from .migrations import migrate

TRIGGERS = ("scheduled", "manual", "failover")
FINAL_STATUSES = ("succeeded", "failed")
PUBLICATION_STATES = ("pending", "published", "failed")
ACTIVE_STATES = ("pending", "published")  # a failed publication never reached the topic

MAX_ERROR_CHARS = 10_000  # an error or outcome text is cut there


# --------------------------------------------------------------------------------------------
# Runtime tables: read back from a scratch database the migrations bring to the latest version.


def _query_type(inspector: sa.Inspector, table: sa.Table, column: dict[str, Any]) -> None:
    """Give a reflected column the type queries convert through (SQLite reflects the plain
    DATETIME and JSON the migrations' ``UTCDateTime`` and ``json_column`` declare)."""
    if isinstance(column["type"], sa.DateTime):
        column["type"] = UTCDateTime()
    elif isinstance(column["type"], sa.JSON):
        column["type"] = json_column()


def _migrated_tables() -> sa.MetaData:
    """The latest schema's tables as the migrations create them (an in-memory SQLite database)."""
    migrated = sa.MetaData()
    sa.event.listen(migrated, "column_reflect", _query_type)
    engine = sa.create_engine("sqlite://")
    try:
        migrate(engine)
        migrated.reflect(engine)
    finally:
        engine.dispose()
    return migrated


metadata = _migrated_tables()
plans_t = metadata.tables["plans"]
plan_groups_t = metadata.tables["plan_groups"]
evaluations_t = metadata.tables["evaluations"]
decisions_t = metadata.tables["decisions"]
publications_t = metadata.tables["publications"]
offset_history_t = metadata.tables["offset_history"]
group_offset_history_t = metadata.tables["group_offset_history"]
health_partitions_t = metadata.tables["health_partitions"]
health_groups_t = metadata.tables["health_groups"]
health_alerts_t = metadata.tables["health_alerts"]
health_states_t = metadata.tables["health_states"]

DECISION_FIELDS = (
    "go",
    "reason",
    "chosen",
    "candidate",
    "current_max_lag",
    "current_imbalance",
    "chosen_max_lag",
    "improvement",
    "moves",
    "unconsumed",
    "threshold",
    "min_improvement",
    "max_moves",
)


def publication_of(row: sa.Row) -> dict[str, Any]:
    """A publications row as the dict the store returns (``group`` for ``group_name``)."""
    m = dict(row._mapping)
    m["group"] = m.pop("group_name")
    return m
