"""One group across plans: what each plan saw and did for it, and what changed since the last."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from .plan_reads import PlanReads
from .schema import evaluations_t, plan_groups_t, plans_t


class GroupHistory(PlanReads):
    """A group's plans, newest first, and its previous evaluation."""

    def group_history(self, group: str, limit: int = 200, cluster: str | None = None) -> list[dict[str, Any]]:
        """One group across plans, newest first: per plan its time, cluster, trigger, status, the
        gate's verdict and reason, max lag and imbalance now (``current``) and under the plan's
        chosen (or candidate) strategy, the evaluation error if any, and its publications.
        ``cluster``: only that cluster's plans (a group id names a different group on each)."""
        plans = self.list_plans(group=group, limit=limit, cluster=cluster)
        details = self.plan_details(p["id"] for p in plans)
        ids = [p["id"] for p in plans]
        measured: dict[tuple[int, str], tuple[Any, Any]] = {}
        with self._engine.connect() as conn:
            e = evaluations_t
            for r in conn.execute(
                sa.select(e.c.plan_id, e.c.strategy, e.c.max_lag, e.c.imbalance).where(
                    e.c.plan_id.in_(ids), e.c.group_name == group
                )
            ):
                measured[(r.plan_id, r.strategy)] = (r.max_lag, r.imbalance)
        times = self.max_catch_up(ids, group)
        out = []
        for p in plans:
            found = details.get(p["id"], {}).get("groups", [])
            g: dict[str, Any] = next((x for x in found if x["group"] == group), {})
            d = g.get("decision") or {}
            strategy = d.get("chosen") or d.get("candidate")
            now = measured.get((p["id"], "current"), (d.get("current_max_lag"), d.get("current_imbalance")))
            then = measured.get((p["id"], strategy), (None, None)) if strategy else (None, None)
            pubs = g.get("publications") or []
            # planning in time: the largest catch-up seconds now and under the plan (None:
            # never), only where the group was planned with capacities
            timed = {
                f"{key}_max_catch_up_s": times[(p["id"], group, name)]
                for key, name in (("current", "current"), ("plan", strategy))
                if name is not None and (p["id"], group, name) in times
            }
            out.append(
                {
                    "plan_id": p["id"],
                    "created_at": p["created_at"],
                    "cluster": p["cluster"],
                    "trigger": p["trigger"],
                    "triggered_by": p["triggered_by"],
                    "status": p["status"],
                    "go": d.get("go"),
                    "reason": d.get("reason"),
                    "error": g.get("error"),
                    "strategy": strategy,
                    "current_max_lag": now[0],
                    "current_imbalance": now[1],
                    "plan_max_lag": then[0],
                    "plan_imbalance": then[1],
                    "publications": pubs,
                    "published": any(x.get("state") == "published" for x in pubs),
                    **timed,
                }
            )
        return out

    def max_catch_up(
        self, plan_ids: Iterable[int], group: str | None = None
    ) -> dict[tuple[int, str, str], Any]:
        """(plan id, group, strategy) -> the largest catch-up seconds of that evaluation (None:
        never), for evaluations planned in time (others are left out); ``group`` narrows."""
        ids = sorted(set(plan_ids))
        if not ids:
            return {}
        e = evaluations_t
        query = sa.select(e.c.plan_id, e.c.group_name, e.c.strategy, e.c.metrics).where(e.c.plan_id.in_(ids))
        if group is not None:
            query = query.where(e.c.group_name == group)
        out = {}
        with self._engine.connect() as conn:
            for r in conn.execute(query):
                metrics = r.metrics if isinstance(r.metrics, dict) else {}
                if "max_catch_up_s" in metrics:
                    out[(r.plan_id, r.group_name, r.strategy)] = metrics["max_catch_up_s"]
        return out

    def previous_groups(self, plan_id: int, groups: Iterable[str]) -> dict[str, tuple[int, dict[str, Any]]]:
        """Per group, the newest earlier plan of the same cluster that evaluated it: (plan id, its
        group dict without results), for "what changed since the previous plan"."""
        out: dict[str, tuple[int, dict[str, Any]]] = {}
        with self._engine.connect() as conn:
            cluster = self._plan_row(conn, plan_id)["cluster"]
            same = sa.select(plans_t.c.id).where(plans_t.c.cluster == cluster)
            for name in groups:
                pg = plan_groups_t
                prev = conn.execute(
                    sa.select(sa.func.max(pg.c.plan_id)).where(
                        pg.c.group_name == name, pg.c.plan_id < plan_id, pg.c.plan_id.in_(same)
                    )
                ).scalar()
                if prev is not None:
                    found = self._groups_of(conn, [prev], False)[prev]
                    match = next((g for g in found if g["group"] == name), None)
                    if match is not None:
                        out[name] = (int(prev), match)
        return out
