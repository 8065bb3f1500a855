"""Migration 2: the publication ledger (publications).

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from ..columns import UTCDateTime, json_column


def publications_columns() -> list[sa.Column[Any]]:
    """The publications table's columns as this migration created them (migration 8 rebuilds the
    table from them on SQLite)."""
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), nullable=False),
        sa.Column("group_name", sa.String, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("strategy", sa.String, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("forced", sa.Boolean, nullable=False),
        sa.Column("assignment", json_column(), nullable=False),
        sa.Column("snapshot_at", UTCDateTime, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("published_at", UTCDateTime),
        sa.Column("error", sa.Text),
    ]


def apply(conn: sa.Connection) -> None:
    """Publications per group: monotonic versions, pending -> published | failed, snapshot time."""
    md = sa.MetaData()
    sa.Table("plans", md, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table(
        "publications",
        md,
        *publications_columns(),
        sa.UniqueConstraint("group_name", "version", name="uq_publications_group_version"),
        sa.CheckConstraint("state IN ('pending', 'published', 'failed')", name="ck_publications_state"),
        sa.CheckConstraint("version > 0", name="ck_publications_version"),
        sa.Index("ix_publications_state", "state", "group_name"),
        sa.Index("ix_publications_plan", "plan_id"),
    )
    md.tables["publications"].create(conn)
