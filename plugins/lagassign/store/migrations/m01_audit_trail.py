"""Migration 1: the audit trail's tables (plans, plan_groups, evaluations, decisions).

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from ..columns import UTCDateTime, json_column


def plans_columns() -> list[sa.Column[Any]]:
    """The plans table's columns as this migration created them (migration 4 rebuilds the table
    from them on SQLite)."""
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("triggered_by", sa.String),
        sa.Column("dag_id", sa.String),
        sa.Column("run_id", sa.String),
        sa.Column("parameters", json_column()),
        sa.Column("snapshot_uri", sa.Text),
        sa.Column("snapshot_at", UTCDateTime),
    ]


def apply(conn: sa.Connection) -> None:
    """Plans, their groups' evaluations and the gate's decisions."""
    md = sa.MetaData()
    sa.Table(
        "plans",
        md,
        *plans_columns(),
        sa.UniqueConstraint("dag_id", "run_id", name="uq_plans_dag_run"),
        sa.CheckConstraint("status IN ('running', 'succeeded', 'failed')", name="ck_plans_status"),
        sa.CheckConstraint("\"trigger\" IN ('scheduled', 'manual')", name="ck_plans_trigger"),
        sa.Index("ix_plans_created_at", "created_at"),
    )
    sa.Table(
        "plan_groups",
        md,
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("group_name", sa.String, primary_key=True),
        sa.Column("members", sa.Integer),
        sa.Column("partitions", sa.Integer),
        sa.Column("lower_bound_max_lag", sa.BigInteger),
        sa.Column("best", sa.String),
        sa.Column("error", sa.Text),
        sa.Index("ix_plan_groups_group", "group_name"),
    )
    sa.Table(
        "evaluations",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id", ondelete="CASCADE"), nullable=False),
        sa.Column("group_name", sa.String, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("strategy", sa.String, nullable=False),
        sa.Column("refused", sa.Text),
        sa.Column("max_lag", sa.BigInteger),
        sa.Column("imbalance", sa.Float),
        sa.Column("moves", sa.Integer),
        sa.Column("metrics", json_column()),
        sa.Column("assignment", json_column()),
        sa.Column("withheld", json_column()),
        sa.Column("unassigned", json_column()),
        sa.UniqueConstraint("plan_id", "group_name", "strategy", name="uq_evaluations_plan_group_strategy"),
    )
    sa.Table(
        "decisions",
        md,
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("group_name", sa.String, primary_key=True),
        sa.Column("go", sa.Boolean, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("chosen", sa.String),
        sa.Column("candidate", sa.String),
        sa.Column("current_max_lag", sa.BigInteger),
        sa.Column("current_imbalance", sa.Float),
        sa.Column("chosen_max_lag", sa.BigInteger),
        sa.Column("improvement", sa.Float),
        sa.Column("moves", sa.Integer),
        sa.Column("unconsumed", sa.Integer),
        sa.Column("threshold", sa.Float),
        sa.Column("min_improvement", sa.Float),
        sa.Column("max_moves", sa.Integer),
        sa.Column("decided_at", UTCDateTime, nullable=False),
        sa.Index("ix_decisions_group", "group_name"),
    )
    md.create_all(conn)
