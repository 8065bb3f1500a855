"""The Kafka cluster of each plan: set once known, listed, and claimed for plans of unknown
cluster (each cluster's publications form their own version line, ``store.ledger``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from ..core.clusters import UNKNOWN_CLUSTER, cluster_label
from .base import StoreBase
from .errors import StoreError
from .schema import plans_t, publications_t


class PlanClusters(StoreBase):
    """Which cluster each plan (and so its publications) belongs to."""

    def set_cluster(self, plan_id: int, cluster: str) -> None:
        """The Kafka cluster the plan is for (``core.clusters.cluster_key``). Refused once the
        plan has publications: they belong to the version line of the cluster they were made on."""
        with self._engine.begin() as conn:
            plan = self._plan_row(conn, plan_id)
            key = checked_cluster(cluster)
            if plan["cluster"] == key:
                return
            held = conn.execute(
                sa.select(sa.func.count()).where(publications_t.c.plan_id == plan_id)
            ).scalar()
            if held:
                raise StoreError(
                    f"plan {plan_id} has publications on cluster {cluster_label(plan['cluster'])}; "
                    f"it cannot move to cluster {cluster_label(key)}"
                )
            conn.execute(sa.update(plans_t).where(plans_t.c.id == plan_id).values(cluster=key))

    def clusters(self) -> list[dict[str, Any]]:
        """Every cluster the store knows plans of ('' for unknown): plans, newest plan time."""
        p = plans_t
        q = (
            sa.select(
                p.c.cluster, sa.func.count().label("plans"), sa.func.max(p.c.created_at).label("newest")
            )
            .group_by(p.c.cluster)
            .order_by(p.c.cluster)
        )
        with self._engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    def claim_cluster(self, cluster: str, plan_ids: Iterable[int] | None = None) -> dict[str, Any]:
        """Assign plans of unknown cluster (all of them, or those of ``plan_ids``) and their
        publications to ``cluster``: their versions join that cluster's version line.

        Refused as a whole (StoreError naming the first clash) when a version being claimed is
        already recorded on that cluster for the same group: then claim the plans that belong
        there with ``plan_ids`` and leave the others unknown. Returns what was claimed."""
        key = checked_cluster(cluster)
        if key == UNKNOWN_CLUSTER:
            raise StoreError("name the cluster to claim plans for (its id, or bootstrap:HOST:PORT)")
        with self._engine.begin() as conn:
            which = plans_t.c.cluster == UNKNOWN_CLUSTER
            if plan_ids is not None:
                wanted = sorted(set(plan_ids))
                for pid in wanted:
                    row = self._plan_row(conn, pid)
                    if row["cluster"] != UNKNOWN_CLUSTER:
                        raise StoreError(
                            f"plan {pid} is recorded on cluster {row['cluster']} already; "
                            "only plans of unknown cluster can be claimed"
                        )
                which = sa.and_(which, plans_t.c.id.in_(wanted))
            ids = [r.id for r in conn.execute(sa.select(plans_t.c.id).where(which).order_by(plans_t.c.id))]
            pubs = publications_t
            mine = conn.execute(
                sa.select(pubs.c.plan_id, pubs.c.group_name, pubs.c.version).where(pubs.c.plan_id.in_(ids))
            ).all()
            for plan_id, group, version in mine:
                clash = conn.execute(
                    sa.select(pubs.c.plan_id).where(
                        pubs.c.cluster == key, pubs.c.group_name == group, pubs.c.version == version
                    )
                ).scalar()
                if clash is not None:
                    raise StoreError(
                        f"cannot claim plan {plan_id}: version {version} of group {group} is recorded "
                        f"on cluster {key} already (plan {clash}); claim the plans of that cluster "
                        "with --plan ID and leave the others unknown"
                    )
            if ids:
                conn.execute(sa.update(plans_t).where(plans_t.c.id.in_(ids)).values(cluster=key))
                conn.execute(sa.update(pubs).where(pubs.c.plan_id.in_(ids)).values(cluster=key))
        return {"cluster": key, "plans": ids, "publications": len(mine)}


def checked_cluster(cluster: str | None) -> str:
    """A cluster key to store: '' (unknown) for None; StoreError for anything but a string."""
    if cluster is None:
        return UNKNOWN_CLUSTER
    if not isinstance(cluster, str):
        raise StoreError(f"a cluster is a string (its id), got {cluster!r}")
    return cluster.strip()
