"""Migration 9: groups' health between runs (health_partitions, health_groups, health_alerts,
health_states).

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

import sqlalchemy as sa

from ..columns import UTCDateTime, json_column


def apply(conn: sa.Connection) -> None:
    """Group health between planning runs: each observation of each group's partitions (end,
    committed offset, lag, owner: the rules' window, pruned to it), each group's status and lag
    figures per observation (the groups page's chart: every one for two hours, one per ten
    minutes, ``coarse``, for three days), each group's last status (alerts once per change) and
    the alerts sent (``subject`` unique per cluster and kind: a failover is sent once)."""
    md = sa.MetaData()
    sa.Table(
        "health_partitions",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cluster", sa.String, nullable=False),
        sa.Column("group_name", sa.String, nullable=False),
        sa.Column("topic", sa.String, nullable=False),
        sa.Column("partition", sa.Integer, nullable=False),
        sa.Column("observed_at", UTCDateTime, nullable=False),
        sa.Column("end_offset", sa.BigInteger),
        sa.Column("committed", sa.BigInteger),
        sa.Column("lag", sa.BigInteger),
        sa.Column("owner", sa.String),
        sa.Index("ix_health_partitions_group", "cluster", "group_name", "observed_at"),
        sa.Index("ix_health_partitions_time", "cluster", "observed_at"),
    )
    sa.Table(
        "health_groups",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cluster", sa.String, nullable=False),
        sa.Column("group_name", sa.String, nullable=False),
        sa.Column("observed_at", UTCDateTime, nullable=False),
        sa.Column("coarse", sa.Boolean, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("total_lag", sa.BigInteger),
        sa.Column("max_lag", sa.BigInteger),
        sa.Column("max_lag_s", sa.Float),
        sa.Column("catch_up_s", sa.Float),
        sa.Column("never", sa.Boolean),
        sa.Column("inflow", sa.Float),
        sa.Column("consumed", sa.Float),
        sa.Column("alive", sa.Integer),
        sa.Column("dead", sa.Integer),
        sa.Column("plan_version", sa.Integer),
        sa.Column("kind", sa.String(16)),
        sa.Column("group_type", sa.String(16)),
        sa.UniqueConstraint("cluster", "group_name", "observed_at", name="uq_health_groups_point"),
        sa.Index("ix_health_groups_time", "cluster", "observed_at"),
    )
    sa.Table(
        "health_alerts",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cluster", sa.String, nullable=False),
        sa.Column("group_name", sa.String, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("subject", sa.String, nullable=False),
        sa.Column("state", json_column()),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("sent_at", UTCDateTime),
        sa.Column("error", sa.Text),
        sa.UniqueConstraint("cluster", "kind", "subject", name="uq_health_alerts_subject"),
        sa.Index("ix_health_alerts_group", "cluster", "group_name", "created_at"),
    )
    sa.Table(
        "health_states",
        md,
        sa.Column("cluster", sa.String, primary_key=True),
        sa.Column("group_name", sa.String, primary_key=True),
        sa.Column("state", json_column(), nullable=False),
        sa.Column("since", UTCDateTime, nullable=False),
        sa.Column("seen_at", UTCDateTime, nullable=False),
    )
    md.create_all(conn)
