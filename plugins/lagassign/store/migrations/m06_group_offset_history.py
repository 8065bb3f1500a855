"""Migration 6: committed offset, lag and owner per group partition (group_offset_history).

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

import sqlalchemy as sa

from ..columns import UTCDateTime


def apply(conn: sa.Connection) -> None:
    """Per group and partition, each snapshot's committed offset, lag and owner: commit rates of
    saturated members (their capacity when they state none). Pruned like ``offset_history``."""
    md = sa.MetaData()
    sa.Table(
        "group_offset_history",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cluster", sa.String, nullable=False),
        sa.Column("group_name", sa.String, nullable=False),
        sa.Column("topic", sa.String, nullable=False),
        sa.Column("partition", sa.Integer, nullable=False),
        sa.Column("observed_at", UTCDateTime, nullable=False),
        sa.Column("committed", sa.BigInteger),
        sa.Column("lag", sa.BigInteger),
        sa.Column("member", sa.String),
        sa.Column("plan_id", sa.Integer),
        sa.UniqueConstraint(
            "cluster", "group_name", "topic", "partition", "observed_at", name="uq_group_offset_history_point"
        ),
        sa.Index("ix_group_offset_history_group", "cluster", "group_name", "observed_at"),
        sa.Index("ix_group_offset_history_plan", "plan_id"),
    )
    md.create_all(conn)
