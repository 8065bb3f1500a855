"""Migration 4: plans made by the failover loop (plans.trigger may be 'failover').

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

import sqlalchemy as sa

from .m01_audit_trail import plans_columns


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
        *plans_columns(),
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
