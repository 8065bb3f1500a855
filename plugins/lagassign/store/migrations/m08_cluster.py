"""Migration 8: plans and publications per Kafka cluster (plans.cluster, publications.cluster).

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from .m02_publication_ledger import publications_columns


def apply(conn: sa.Connection) -> None:
    """Plans and publications per Kafka cluster: ``plans.cluster`` and ``publications.cluster``
    (the key of ``core.clusters``, '' when unknown); versions unique per (cluster, group).

    Rows recorded before are traced back to their cluster where the store or the disk still
    says which it was (``_trace_clusters``); the rest keep '' (unknown): a version line of its
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
            *publications_columns(),
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
    _trace_clusters(conn)


#: noida-db's cluster id, the same on every instance (frozen copy of ``core.clusters``' rule)
_NON_UNIQUE_IDS = frozenset({"MkU3OEVBNTctOEUyRi00"})


def _key(cluster_id: Any, bootstrap: Any) -> str:
    """Frozen copy of ``core.clusters.cluster_key`` as it was when migration 8 shipped."""
    if isinstance(cluster_id, str) and cluster_id.strip() and cluster_id.strip() not in _NON_UNIQUE_IDS:
        return cluster_id.strip()
    text = bootstrap if isinstance(bootstrap, str) else ""
    servers = sorted({s.strip() for s in text.split(",") if s.strip()})
    return "bootstrap:" + ",".join(servers) if servers else ""


def _manifest_cluster(snapshot_uri: Any) -> str:
    """The cluster key from a snapshot's manifest.json on this machine, '' if gone or unreadable."""
    if not isinstance(snapshot_uri, str) or not snapshot_uri or "://" in snapshot_uri:
        return ""
    try:
        manifest = json.loads((Path(snapshot_uri) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if not isinstance(manifest, dict):
        return ""
    return _key(manifest.get("cluster_id"), manifest.get("bootstrap_servers"))


def _trace_clusters(conn: sa.Connection) -> None:
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
            key = _key(cluster, None)
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
        key = _manifest_cluster(snapshot_uri) or history.get(plan_id, "")
        if not key:
            params = parameters if isinstance(parameters, dict) else _json_object(parameters)
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


def _json_object(value: Any) -> dict[str, Any]:
    """The object a JSON text holds, {} for anything else (SQLite returns JSON columns as text here)."""
    try:
        found = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
