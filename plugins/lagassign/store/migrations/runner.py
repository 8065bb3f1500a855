"""The ordered list of migrations and the runner that applies them at open.

``schema_version`` records every applied migration (version, description, time). ``migrate``
applies the missing ones in one transaction, serialised between processes by an advisory lock on
PostgreSQL and ``BEGIN IMMEDIATE`` on SQLite. The descriptions are stored: they are frozen too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from ...core.clock import utc_now
from ..columns import UTCDateTime
from ..connection import PG_LOCK_CLASS, safe_url
from ..errors import StoreError, StoreNotFoundError
from . import (
    m01_audit_trail,
    m02_publication_ledger,
    m03_publish_outcome,
    m04_failover_trigger,
    m05_offset_history,
    m06_group_offset_history,
    m07_group_type,
    m08_cluster,
    m09_group_health,
    m10_failed_step,
)

_PG_MIGRATION_LOCK = 1  # second key of the advisory lock migrations take

schema_version_t = sa.Table(
    "schema_version",
    sa.MetaData(),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.String, nullable=False),
    sa.Column("applied_at", UTCDateTime, nullable=False),
)

Migration = tuple[int, str, Callable[[sa.Connection], None]]
MIGRATIONS: list[Migration] = [
    (1, "audit trail: plans, plan_groups, evaluations, decisions", m01_audit_trail.apply),
    (2, "publication ledger: publications", m02_publication_ledger.apply),
    (3, "publish outcome per group: decisions.outcome", m03_publish_outcome.apply),
    (4, "failover plans: plans.trigger may be 'failover'", m04_failover_trigger.apply),
    (5, "offset history: end offsets per partition and snapshot", m05_offset_history.apply),
    (
        6,
        "group offset history: committed offset, lag and owner per group partition",
        m06_group_offset_history.apply,
    ),
    (7, "group type and assignor per plan group: plan_groups.group_type, assignor", m07_group_type.apply),
    (8, "plans and publications per Kafka cluster: plans.cluster, publications.cluster", m08_cluster.apply),
    (
        9,
        "group health: observations, status series, last status and alerts per group",
        m09_group_health.apply,
    ),
    (10, "the step a plan failed at: plans.failed_step", m10_failed_step.apply),
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
