"""Migration 5: end offsets per partition and snapshot (offset_history).

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

import sqlalchemy as sa

from ..columns import UTCDateTime


def apply(conn: sa.Connection) -> None:
    """End offsets per partition and snapshot, a sliding window of them (inflow, lag in time).

    ``cluster`` is the cluster id ('' when unknown): two clusters may share topic names.
    ``plan_id`` is the plan whose snapshot observed it (no foreign key: history outlives plans
    that are cleaned up, and a retried snapshot replaces its plan's rows)."""
    md = sa.MetaData()
    sa.Table(
        "offset_history",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cluster", sa.String, nullable=False),
        sa.Column("topic", sa.String, nullable=False),
        sa.Column("partition", sa.Integer, nullable=False),
        sa.Column("observed_at", UTCDateTime, nullable=False),
        sa.Column("end_offset", sa.BigInteger, nullable=False),
        sa.Column("plan_id", sa.Integer),
        sa.UniqueConstraint("cluster", "topic", "partition", "observed_at", name="uq_offset_history_point"),
        sa.Index("ix_offset_history_plan", "plan_id"),
        sa.Index("ix_offset_history_time", "cluster", "observed_at"),
    )
    md.create_all(conn)
