"""Migration 4: plans made by the failover loop (plans.trigger may be 'failover').

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

import sqlalchemy as sa

from ..columns import UTCDateTime, json_column


def apply(conn: sa.Connection) -> None:
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
        sa.Column("parameters", json_column()),
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
