"""The audit store's tables as queries see them, and the values their columns take.

The lean table objects here are only what queries need (column types drive conversion); the
DDL that created them lives in the frozen migrations (``store.migrations``), and
``tests/store`` checks that a migrated database has exactly these tables and columns (besides
the migration runner's own ``schema_version``).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from .columns import UTCDateTime, json_column

TRIGGERS = ("scheduled", "manual", "failover")
FINAL_STATUSES = ("succeeded", "failed")
PUBLICATION_STATES = ("pending", "published", "failed")
ACTIVE_STATES = ("pending", "published")  # a failed publication never reached the topic

MAX_ERROR_CHARS = 10_000  # an error or outcome text is cut there


# --------------------------------------------------------------------------------------------
# Runtime tables: what queries need (types drive conversion); the DDL lives in the migrations.

metadata = sa.MetaData()

plans_t = sa.Table(
    "plans",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("created_at", UTCDateTime),
    sa.Column("finished_at", UTCDateTime),
    sa.Column("status", sa.String),
    sa.Column("error", sa.Text),
    sa.Column("trigger", sa.String),
    sa.Column("triggered_by", sa.String),
    sa.Column("dag_id", sa.String),
    sa.Column("run_id", sa.String),
    sa.Column("parameters", json_column()),
    sa.Column("snapshot_uri", sa.Text),
    sa.Column("snapshot_at", UTCDateTime),
    sa.Column("cluster", sa.String),
    sa.Column("failed_step", sa.String),
)
plan_groups_t = sa.Table(
    "plan_groups",
    metadata,
    sa.Column("plan_id", sa.Integer, primary_key=True),
    sa.Column("group_name", sa.String, primary_key=True),
    sa.Column("members", sa.Integer),
    sa.Column("partitions", sa.Integer),
    sa.Column("lower_bound_max_lag", sa.BigInteger),
    sa.Column("best", sa.String),
    sa.Column("error", sa.Text),
    sa.Column("group_type", sa.String),
    sa.Column("assignor", sa.String),
)
evaluations_t = sa.Table(
    "evaluations",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("plan_id", sa.Integer),
    sa.Column("group_name", sa.String),
    sa.Column("position", sa.Integer),
    sa.Column("strategy", sa.String),
    sa.Column("refused", sa.Text),
    sa.Column("max_lag", sa.BigInteger),
    sa.Column("imbalance", sa.Float),
    sa.Column("moves", sa.Integer),
    sa.Column("metrics", json_column()),
    sa.Column("assignment", json_column()),
    sa.Column("withheld", json_column()),
    sa.Column("unassigned", json_column()),
)
decisions_t = sa.Table(
    "decisions",
    metadata,
    sa.Column("plan_id", sa.Integer, primary_key=True),
    sa.Column("group_name", sa.String, primary_key=True),
    sa.Column("go", sa.Boolean),
    sa.Column("reason", sa.Text),
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
    sa.Column("decided_at", UTCDateTime),
    sa.Column("outcome", sa.Text),
)
publications_t = sa.Table(
    "publications",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("plan_id", sa.Integer),
    sa.Column("cluster", sa.String),
    sa.Column("group_name", sa.String),
    sa.Column("version", sa.Integer),
    sa.Column("strategy", sa.String),
    sa.Column("state", sa.String),
    sa.Column("forced", sa.Boolean),
    sa.Column("assignment", json_column()),
    sa.Column("snapshot_at", UTCDateTime),
    sa.Column("created_at", UTCDateTime),
    sa.Column("published_at", UTCDateTime),
    sa.Column("error", sa.Text),
)
offset_history_t = sa.Table(
    "offset_history",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("cluster", sa.String),
    sa.Column("topic", sa.String),
    sa.Column("partition", sa.Integer),
    sa.Column("observed_at", UTCDateTime),
    sa.Column("end_offset", sa.BigInteger),
    sa.Column("plan_id", sa.Integer),
)
group_offset_history_t = sa.Table(
    "group_offset_history",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("cluster", sa.String),
    sa.Column("group_name", sa.String),
    sa.Column("topic", sa.String),
    sa.Column("partition", sa.Integer),
    sa.Column("observed_at", UTCDateTime),
    sa.Column("committed", sa.BigInteger),
    sa.Column("lag", sa.BigInteger),
    sa.Column("member", sa.String),
    sa.Column("plan_id", sa.Integer),
)

health_partitions_t = sa.Table(
    "health_partitions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("cluster", sa.String),
    sa.Column("group_name", sa.String),
    sa.Column("topic", sa.String),
    sa.Column("partition", sa.Integer),
    sa.Column("observed_at", UTCDateTime),
    sa.Column("end_offset", sa.BigInteger),
    sa.Column("committed", sa.BigInteger),
    sa.Column("lag", sa.BigInteger),
    sa.Column("owner", sa.String),
)
health_groups_t = sa.Table(
    "health_groups",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("cluster", sa.String),
    sa.Column("group_name", sa.String),
    sa.Column("observed_at", UTCDateTime),
    sa.Column("coarse", sa.Boolean),
    sa.Column("status", sa.String),
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
    sa.Column("kind", sa.String),
    sa.Column("group_type", sa.String),
)
health_alerts_t = sa.Table(
    "health_alerts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("cluster", sa.String),
    sa.Column("group_name", sa.String),
    sa.Column("kind", sa.String),
    sa.Column("subject", sa.String),
    sa.Column("state", json_column()),
    sa.Column("text", sa.Text),
    sa.Column("created_at", UTCDateTime),
    sa.Column("sent_at", UTCDateTime),
    sa.Column("error", sa.Text),
)
health_states_t = sa.Table(
    "health_states",
    metadata,
    sa.Column("cluster", sa.String, primary_key=True),
    sa.Column("group_name", sa.String, primary_key=True),
    sa.Column("state", json_column()),
    sa.Column("since", UTCDateTime),
    sa.Column("seen_at", UTCDateTime),
)

#: a plan group's columns besides its key (plan, group), as recorded and as ``get_plan`` lists them
GROUP_FIELDS = ("members", "partitions", "best", "lower_bound_max_lag", "error", "group_type", "assignor")
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
