"""The audit store's schema: column types, the tables queries use, and the frozen migrations.

``schema_version`` records every applied migration; ``MIGRATIONS`` is an ordered list of
functions applied at open, in one transaction (serialised between processes by an advisory lock
on PostgreSQL and ``BEGIN IMMEDIATE`` on SQLite). Each migration holds its own frozen DDL: never
edit one that has shipped, append a new one. The lean table objects are only what queries need.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from ..core.clock import as_utc, utc_now
from .connection import safe_url
from .errors import StoreError, StoreNotFoundError

TRIGGERS = ("scheduled", "manual", "failover")
FINAL_STATUSES = ("succeeded", "failed")
PUBLICATION_STATES = ("pending", "published", "failed")
ACTIVE_STATES = ("pending", "published")  # a failed publication never reached the topic

PG_LOCK_CLASS = 0x1A6A  # first key of PostgreSQL advisory locks taken by lagassign
_PG_MIGRATION_LOCK = 1


# --------------------------------------------------------------------------------------------
# Types


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


def _json() -> sa.JSON:
    return sa.JSON(none_as_null=True)


# --------------------------------------------------------------------------------------------
# Runtime tables: what queries need (types drive conversion); the DDL lives in the migrations.

metadata = sa.MetaData()

schema_version_t = sa.Table(
    "schema_version",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.String, nullable=False),
    sa.Column("applied_at", UTCDateTime, nullable=False),
)
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
    sa.Column("parameters", _json()),
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
    sa.Column("metrics", _json()),
    sa.Column("assignment", _json()),
    sa.Column("withheld", _json()),
    sa.Column("unassigned", _json()),
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
    sa.Column("assignment", _json()),
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
    sa.Column("state", _json()),
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
    sa.Column("state", _json()),
    sa.Column("since", UTCDateTime),
    sa.Column("seen_at", UTCDateTime),
)

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


# --------------------------------------------------------------------------------------------
# Migrations: frozen DDL, in order. Never edit one that has shipped; append a new one.


def _m1_audit_trail(conn: sa.Connection) -> None:
    """Plans, their groups' evaluations and the gate's decisions."""
    md = sa.MetaData()
    sa.Table(
        "plans",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("triggered_by", sa.String),
        sa.Column("dag_id", sa.String),
        sa.Column("run_id", sa.String),
        sa.Column("parameters", _json()),
        sa.Column("snapshot_uri", sa.Text),
        sa.Column("snapshot_at", UTCDateTime),
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
        sa.Column("metrics", _json()),
        sa.Column("assignment", _json()),
        sa.Column("withheld", _json()),
        sa.Column("unassigned", _json()),
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


def _m2_publication_ledger(conn: sa.Connection) -> None:
    """Publications per group: monotonic versions, pending -> published | failed, snapshot time."""
    md = sa.MetaData()
    sa.Table("plans", md, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table(
        "publications",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), nullable=False),
        sa.Column("group_name", sa.String, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("strategy", sa.String, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("forced", sa.Boolean, nullable=False),
        sa.Column("assignment", _json(), nullable=False),
        sa.Column("snapshot_at", UTCDateTime, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("published_at", UTCDateTime),
        sa.Column("error", sa.Text),
        sa.UniqueConstraint("group_name", "version", name="uq_publications_group_version"),
        sa.CheckConstraint("state IN ('pending', 'published', 'failed')", name="ck_publications_state"),
        sa.CheckConstraint("version > 0", name="ck_publications_version"),
        sa.Index("ix_publications_state", "state", "group_name"),
        sa.Index("ix_publications_plan", "plan_id"),
    )
    md.tables["publications"].create(conn)


def _m3_publish_outcome(conn: sa.Connection) -> None:
    """What the publish step did per group (published vN, unchanged, skipped and why, apply off)."""
    conn.execute(sa.text("ALTER TABLE decisions ADD COLUMN outcome TEXT"))


def _m4_failover_trigger(conn: sa.Connection) -> None:
    """Plans made by the failover loop: plans.trigger may be 'failover'.

    PostgreSQL swaps the CHECK constraint. SQLite cannot alter one, so the table is rebuilt
    (SQLite's documented procedure: new table, copy, drop, rename; ``migrate`` runs SQLite
    migrations with foreign keys off, so dropping the old table cascades nothing, and checks
    them before committing).
    """
    allowed = "\"trigger\" IN ('scheduled', 'manual', 'failover')"
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("ALTER TABLE plans DROP CONSTRAINT ck_plans_trigger"))
        conn.execute(sa.text(f"ALTER TABLE plans ADD CONSTRAINT ck_plans_trigger CHECK ({allowed})"))
        return
    md = sa.MetaData()
    new = sa.Table(
        "plans_m4",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("triggered_by", sa.String),
        sa.Column("dag_id", sa.String),
        sa.Column("run_id", sa.String),
        sa.Column("parameters", _json()),
        sa.Column("snapshot_uri", sa.Text),
        sa.Column("snapshot_at", UTCDateTime),
        sa.UniqueConstraint("dag_id", "run_id", name="uq_plans_dag_run"),
        sa.CheckConstraint("status IN ('running', 'succeeded', 'failed')", name="ck_plans_status"),
        sa.CheckConstraint(allowed, name="ck_plans_trigger"),
    )
    new.create(conn)
    columns = ", ".join(f'"{c.name}"' for c in new.columns)
    conn.execute(sa.text(f"INSERT INTO plans_m4 ({columns}) SELECT {columns} FROM plans"))
    conn.execute(sa.text("DROP TABLE plans"))
    conn.execute(sa.text("ALTER TABLE plans_m4 RENAME TO plans"))
    conn.execute(sa.text("CREATE INDEX ix_plans_created_at ON plans (created_at)"))


def _m5_offset_history(conn: sa.Connection) -> None:
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


def _m6_group_offset_history(conn: sa.Connection) -> None:
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


def _m7_group_type(conn: sa.Connection) -> None:
    """What the cluster runs per group, from the snapshot: its type (``classic`` | ``consumer``)
    and assignor; nullable, so groups recorded before (and groups from case files) say nothing."""
    conn.execute(sa.text("ALTER TABLE plan_groups ADD COLUMN group_type VARCHAR"))
    conn.execute(sa.text("ALTER TABLE plan_groups ADD COLUMN assignor VARCHAR"))


def _m8_cluster(conn: sa.Connection) -> None:
    """Plans and publications per Kafka cluster: ``plans.cluster`` and ``publications.cluster``
    (the key of ``core.clusters``, '' when unknown); versions unique per (cluster, group).

    Rows recorded before are traced back to their cluster where the store or the disk still
    says which it was (``_m8_trace_clusters``); the rest keep '' (unknown): a version line of its
    own, which ``lagassign plans claim`` assigns to a cluster. SQLite cannot drop a table's
    UNIQUE constraint, so ``publications`` is rebuilt as in migration 4.
    """
    conn.execute(sa.text("ALTER TABLE plans ADD COLUMN cluster VARCHAR NOT NULL DEFAULT ''"))
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("ALTER TABLE publications ADD COLUMN cluster VARCHAR NOT NULL DEFAULT ''"))
        conn.execute(sa.text("ALTER TABLE publications DROP CONSTRAINT uq_publications_group_version"))
        conn.execute(
            sa.text(
                "ALTER TABLE publications ADD CONSTRAINT uq_publications_cluster_group_version "
                "UNIQUE (cluster, group_name, version)"
            )
        )
    else:
        md = sa.MetaData()
        sa.Table("plans", md, sa.Column("id", sa.Integer, primary_key=True))
        new = sa.Table(
            "publications_m8",
            md,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), nullable=False),
            sa.Column("group_name", sa.String, nullable=False),
            sa.Column("version", sa.Integer, nullable=False),
            sa.Column("strategy", sa.String, nullable=False),
            sa.Column("state", sa.String(16), nullable=False),
            sa.Column("forced", sa.Boolean, nullable=False),
            sa.Column("assignment", _json(), nullable=False),
            sa.Column("snapshot_at", UTCDateTime, nullable=False),
            sa.Column("created_at", UTCDateTime, nullable=False),
            sa.Column("published_at", UTCDateTime),
            sa.Column("error", sa.Text),
            sa.Column("cluster", sa.String, nullable=False, server_default=""),
            sa.UniqueConstraint(
                "cluster", "group_name", "version", name="uq_publications_cluster_group_version"
            ),
            sa.CheckConstraint("state IN ('pending', 'published', 'failed')", name="ck_publications_state"),
            sa.CheckConstraint("version > 0", name="ck_publications_version"),
        )
        new.create(conn)
        columns = ", ".join(f'"{c.name}"' for c in new.columns if c.name != "cluster")
        conn.execute(sa.text(f"INSERT INTO publications_m8 ({columns}) SELECT {columns} FROM publications"))
        conn.execute(sa.text("DROP TABLE publications"))
        conn.execute(sa.text("ALTER TABLE publications_m8 RENAME TO publications"))
        conn.execute(sa.text("CREATE INDEX ix_publications_state ON publications (state, group_name)"))
        conn.execute(sa.text("CREATE INDEX ix_publications_plan ON publications (plan_id)"))
    conn.execute(sa.text("CREATE INDEX ix_plans_cluster ON plans (cluster, created_at)"))
    _m8_trace_clusters(conn)


#: noida-db's cluster id, the same on every instance (frozen copy of ``core.clusters``' rule)
_M8_NON_UNIQUE_IDS = frozenset({"MkU3OEVBNTctOEUyRi00"})


def _m8_key(cluster_id: Any, bootstrap: Any) -> str:
    """Frozen copy of ``core.clusters.cluster_key`` as it was when migration 8 shipped."""
    if isinstance(cluster_id, str) and cluster_id.strip() and cluster_id.strip() not in _M8_NON_UNIQUE_IDS:
        return cluster_id.strip()
    text = bootstrap if isinstance(bootstrap, str) else ""
    servers = sorted({s.strip() for s in text.split(",") if s.strip()})
    return "bootstrap:" + ",".join(servers) if servers else ""


def _m8_manifest_cluster(snapshot_uri: Any) -> str:
    """The cluster key from a snapshot's manifest.json on this machine, '' if gone or unreadable."""
    import json
    from pathlib import Path

    if not isinstance(snapshot_uri, str) or not snapshot_uri or "://" in snapshot_uri:
        return ""
    try:
        manifest = json.loads((Path(snapshot_uri) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if not isinstance(manifest, dict):
        return ""
    return _m8_key(manifest.get("cluster_id"), manifest.get("bootstrap_servers"))


def _m8_trace_clusters(conn: sa.Connection) -> None:
    """Each existing plan's cluster, oldest first: from its snapshot's manifest (cluster id and
    bootstrap servers), else from the offset history its snapshot recorded (cluster id only), else
    from the plan it acts on (a review publishes a reviewed plan, a rollback republishes the
    version a plan published); its publications follow it."""
    history: dict[int, str] = {}
    for table in ("offset_history", "group_offset_history"):
        rows = conn.execute(
            sa.text(f"SELECT plan_id, MIN(cluster) FROM {table} WHERE plan_id IS NOT NULL GROUP BY plan_id")
        )
        for plan_id, cluster in rows:
            key = _m8_key(cluster, None)
            if key and not key.startswith("bootstrap:"):
                history.setdefault(int(plan_id), key)
    publishers = {
        (group, int(version)): int(plan_id)
        for plan_id, group, version in conn.execute(
            sa.text("SELECT plan_id, group_name, version FROM publications")
        )
    }
    traced: dict[int, str] = {}
    plans = conn.execute(sa.text("SELECT id, snapshot_uri, parameters FROM plans ORDER BY id")).all()
    for plan_id, snapshot_uri, parameters in plans:
        key = _m8_manifest_cluster(snapshot_uri) or history.get(plan_id, "")
        if not key:
            params = parameters if isinstance(parameters, dict) else _m8_json(parameters)
            if params.get("action") == "publish" and isinstance(params.get("reviewed_plan"), int):
                key = traced.get(params["reviewed_plan"], "")
            elif params.get("action") == "rollback" and isinstance(params.get("version"), int):
                source = publishers.get((params.get("group"), params["version"]))
                key = traced.get(source, "") if source is not None else ""
        if key:
            traced[plan_id] = key
            conn.execute(sa.text("UPDATE plans SET cluster = :c WHERE id = :id"), {"c": key, "id": plan_id})
    conn.execute(
        sa.text(
            "UPDATE publications SET cluster = "
            "(SELECT plans.cluster FROM plans WHERE plans.id = publications.plan_id)"
        )
    )


def _m8_json(value: Any) -> dict[str, Any]:
    import json

    try:
        found = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _m9_group_health(conn: sa.Connection) -> None:
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
        sa.Column("state", _json()),
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
        sa.Column("state", _json(), nullable=False),
        sa.Column("since", UTCDateTime, nullable=False),
        sa.Column("seen_at", UTCDateTime, nullable=False),
    )
    md.create_all(conn)


def _m10_failed_step(conn: sa.Connection) -> None:
    """The step a plan failed at as data of its own: ``plans.failed_step`` (null: none recorded).

    Plans recorded before said it only in their error text ("step snapshot failed: ..."); it is
    read from that text once, here, by the rule the plans page used (``_m10_step_of``)."""
    conn.execute(sa.text("ALTER TABLE plans ADD COLUMN failed_step VARCHAR"))
    rows = conn.execute(sa.text("SELECT id, error FROM plans WHERE error LIKE 'step %'")).all()
    for plan_id, error in rows:
        step = _m10_step_of(error)
        if step is not None:
            conn.execute(
                sa.text("UPDATE plans SET failed_step = :step WHERE id = :id"), {"step": step, "id": plan_id}
            )


def _m10_step_of(error: Any) -> str | None:
    """NAME when ``error`` begins "step NAME failed" (NAME: letters, digits, underscores), else None."""
    head, _, rest = str(error or "").partition(" ")
    name, space, tail = rest.partition(" ")
    named = bool(name) and all(c.isalnum() or c == "_" for c in name)
    return name if head == "step" and named and space and tail.startswith("failed") else None


Migration = tuple[int, str, Callable[[sa.Connection], None]]
MIGRATIONS: list[Migration] = [
    (1, "audit trail: plans, plan_groups, evaluations, decisions", _m1_audit_trail),
    (2, "publication ledger: publications", _m2_publication_ledger),
    (3, "publish outcome per group: decisions.outcome", _m3_publish_outcome),
    (4, "failover plans: plans.trigger may be 'failover'", _m4_failover_trigger),
    (5, "offset history: end offsets per partition and snapshot", _m5_offset_history),
    (
        6,
        "group offset history: committed offset, lag and owner per group partition",
        _m6_group_offset_history,
    ),
    (7, "group type and assignor per plan group: plan_groups.group_type, assignor", _m7_group_type),
    (8, "plans and publications per Kafka cluster: plans.cluster, publications.cluster", _m8_cluster),
    (9, "group health: observations, status series, last status and alerts per group", _m9_group_health),
    (10, "the step a plan failed at: plans.failed_step", _m10_failed_step),
]
LATEST_VERSION = MIGRATIONS[-1][0]


def migrate(engine: sa.Engine, create: bool = True, target: int | None = None) -> int:
    """Bring the database to ``target`` (default: the latest) schema version; return the version.

    Idempotent; one transaction; refuses a database newer than this code knows. With
    ``create=False`` a database without lagassign's tables raises StoreNotFoundError.
    """
    target = LATEST_VERSION if target is None else target
    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        raw: Any = conn.connection.driver_connection
        if sqlite:  # table rebuilds must not cascade: foreign keys off, checked before commit
            raw.execute("PRAGMA foreign_keys = OFF")
        try:
            with conn.begin():
                current = _migrate(conn, create, target)
                if sqlite and conn.execute(sa.text("PRAGMA foreign_key_check")).first() is not None:
                    raise StoreError("audit store migration broke a foreign key; nothing was changed")
        finally:
            if sqlite:
                raw.execute("PRAGMA foreign_keys = ON")
    return current


def _migrate(conn: sa.Connection, create: bool, target: int) -> int:
    if conn.dialect.name == "postgresql":
        conn.execute(
            sa.text("SELECT pg_advisory_xact_lock(:cls, :key)"),
            {"cls": PG_LOCK_CLASS, "key": _PG_MIGRATION_LOCK},
        )
    if not sa.inspect(conn).has_table("schema_version"):
        if not create:
            raise StoreNotFoundError(f"no lagassign audit store at {safe_url(conn.engine.url)}")
        schema_version_t.create(conn)
    current = conn.execute(sa.select(sa.func.max(schema_version_t.c.version))).scalar() or 0
    if current > LATEST_VERSION:
        raise StoreError(
            f"audit store schema is version {current}, newer than this lagassign knows "
            f"({LATEST_VERSION}): upgrade lagassign"
        )
    for version, description, apply in MIGRATIONS:
        if current < version <= target:
            apply(conn)
            conn.execute(
                sa.insert(schema_version_t).values(
                    version=version, description=description, applied_at=utc_now()
                )
            )
            current = version
    return current


def publication_of(row: sa.Row) -> dict[str, Any]:
    """A publications row as the dict the store returns (``group`` for ``group_name``)."""
    m = dict(row._mapping)
    m["group"] = m.pop("group_name")
    return m
