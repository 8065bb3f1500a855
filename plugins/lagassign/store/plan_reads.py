"""Reading plans back: one plan whole, many at once, or a page of them with their counts."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from ..core.results import EVALUATION_KEYS, GroupEvaluation, StrategyResult
from .base import StoreBase
from .columns import checked_utc
from .schema import (
    DECISION_FIELDS,
    GROUP_FIELDS,
    decisions_t,
    evaluations_t,
    plan_groups_t,
    plans_t,
    publication_of,
    publications_t,
)

DEFAULT_LIST_LIMIT = 50


class PlanReads(StoreBase):
    """Plans with their groups' evaluations, decisions and publications, as plain dicts."""

    def list_plans(
        self,
        group: str | None = None,
        since: datetime | date | None = None,
        until: datetime | date | None = None,
        limit: int | None = DEFAULT_LIST_LIMIT,
        offset: int = 0,
        cluster: str | None = None,
    ) -> list[dict[str, Any]]:
        """Plans, newest first, with counts of groups, go decisions and publications
        (``offset``: skip that many, for paging). Each carries its ``cluster`` ('' when
        unknown; ``cluster`` narrows to one) and ``failed_step`` (the step a failed plan stopped
        at; None when none is recorded).

        ``group``: plans that evaluated or decided that group, each with that group's
        ``group_type`` and ``assignor`` (what the cluster ran for it; None when unknown).
        ``since`` is inclusive; ``until`` is inclusive of a datetime, and of the whole day for a
        date.
        """
        q = sa.select(plans_t, *_counts())
        if group is not None:
            q = _of_group(q, group)
        if cluster is not None:
            q = q.where(plans_t.c.cluster == cluster)
        q = _created_within(q, since, until).order_by(plans_t.c.created_at.desc(), plans_t.c.id.desc())
        if limit is not None:
            q = q.limit(limit)
        if offset:
            q = q.offset(offset)
        with self._engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    def get_plan(self, plan_id: int, evaluations: bool = True) -> dict[str, Any]:
        """One plan with, per group, its evaluation (the results' dict form), decision and
        publications. Unknown id raises PlanNotFoundError. ``evaluations=False`` leaves every
        group's ``results`` empty: a daily plan holds an assignment per group and strategy,
        which a list of plans does not show."""
        with self._engine.connect() as conn:
            plan = self._plan_row(conn, plan_id)
            return {**plan, "groups": self._groups_of(conn, [plan_id], evaluations)[plan_id]}

    def plan_details(self, plan_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """``get_plan(id, evaluations=False)`` for many plans at once, in a few queries (the list
        page shows a page of plans); unknown ids are left out."""
        ids = sorted(set(plan_ids))
        if not ids:
            return {}
        with self._engine.connect() as conn:
            found = conn.execute(sa.select(plans_t).where(plans_t.c.id.in_(ids)))
            plans = {r.id: dict(r._mapping) for r in found}
            groups = self._groups_of(conn, list(plans), False)
        return {pid: {**plan, "groups": groups[pid]} for pid, plan in plans.items()}

    def evaluations(self, plan_id: int) -> list[GroupEvaluation]:
        """The plan's evaluated groups (not those that could not be evaluated), by group name."""
        plan = self.get_plan(plan_id)
        return [
            GroupEvaluation.from_dict({k: g[k] for k in EVALUATION_KEYS})
            for g in plan["groups"]
            if not g.get("error") and g["results"]
        ]

    def _groups_of(
        self, conn: sa.Connection, plan_ids: list[int], evaluations: bool
    ) -> dict[int, list[dict[str, Any]]]:
        def by_plan(table: sa.Table) -> Any:
            return table.c.plan_id.in_(plan_ids)

        summaries = {
            (r.plan_id, r.group_name): r
            for r in conn.execute(sa.select(plan_groups_t).where(by_plan(plan_groups_t)))
        }
        results: dict[tuple[int, str], list[dict[str, Any]]] = {}
        order = (evaluations_t.c.group_name, evaluations_t.c.position)
        query = sa.select(evaluations_t).where(by_plan(evaluations_t)).order_by(*order)
        rows = conn.execute(query) if evaluations else ()
        for r in rows:
            results.setdefault((r.plan_id, r.group_name), []).append(_result_of(r))
        decisions = {
            (r.plan_id, r.group_name): _decision_of(r)
            for r in conn.execute(sa.select(decisions_t).where(by_plan(decisions_t)))
        }
        pubs: dict[tuple[int, str], list[dict[str, Any]]] = {}
        for r in conn.execute(
            sa.select(publications_t).where(by_plan(publications_t)).order_by(publications_t.c.version)
        ):
            pubs.setdefault((r.plan_id, r.group_name), []).append(publication_of(r))
        out: dict[int, list[dict[str, Any]]] = {pid: [] for pid in plan_ids}
        for pid, name in sorted(set(summaries) | set(results) | set(decisions) | set(pubs)):
            s = summaries.get((pid, name))
            summary = s._mapping if s is not None else {}
            out[pid].append(
                {
                    "group": name,
                    **{k: summary.get(k) for k in GROUP_FIELDS},
                    "results": results.get((pid, name), []),
                    "decision": decisions.get((pid, name)),
                    "publications": pubs.get((pid, name), []),
                }
            )
        return out


def _counts() -> list[sa.Label[Any]]:
    """Per plan: how many groups it evaluated, how many passed the gate, how many it published."""
    p = plans_t
    groups = sa.select(sa.func.count()).where(plan_groups_t.c.plan_id == p.c.id).scalar_subquery()
    goes = (
        sa.select(sa.func.count())
        .where(decisions_t.c.plan_id == p.c.id, decisions_t.c.go.is_(True))
        .scalar_subquery()
    )
    published = (
        sa.select(sa.func.count())
        .where(publications_t.c.plan_id == p.c.id, publications_t.c.state == "published")
        .scalar_subquery()
    )
    return [groups.label("groups"), goes.label("go"), published.label("published")]


def _of_group(q: sa.Select[Any], group: str) -> sa.Select[Any]:
    """``q`` narrowed to plans that evaluated or decided ``group``, with what the cluster ran for
    that group then (``group_type``, ``assignor``; null: unknown)."""
    p, pg = plans_t, plan_groups_t
    mine = (pg.c.plan_id == p.c.id, pg.c.group_name == group)
    q = q.add_columns(
        sa.select(pg.c.group_type).where(*mine).scalar_subquery().label("group_type"),
        sa.select(pg.c.assignor).where(*mine).scalar_subquery().label("assignor"),
    )
    return q.where(
        p.c.id.in_(
            sa.union(
                sa.select(plan_groups_t.c.plan_id).where(plan_groups_t.c.group_name == group),
                sa.select(decisions_t.c.plan_id).where(decisions_t.c.group_name == group),
            )
        )
    )


def _created_within(
    q: sa.Select[Any], since: datetime | date | None, until: datetime | date | None
) -> sa.Select[Any]:
    """``q`` narrowed to plans created from ``since`` (inclusive) to ``until`` (inclusive of a
    datetime, and of the whole day for a date)."""
    created = plans_t.c.created_at
    if since is not None:
        q = q.where(created >= _start_of(since))
    if isinstance(until, datetime):
        q = q.where(created <= checked_utc(until))
    elif until is not None:
        q = q.where(created < _end_of(until))
    return q


def _start_of(value: datetime | date) -> datetime:
    if isinstance(value, datetime):
        return checked_utc(value)
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def _end_of(day: date) -> datetime:
    return _start_of(day) + timedelta(days=1)


def _result_of(row: sa.Row) -> dict[str, Any]:
    """A results row back in the result's dict form (``StrategyResult.to_dict``)."""
    return StrategyResult.from_dict(
        {
            "strategy": row.strategy,
            "refused": row.refused,
            "metrics": row.metrics,
            "assignment": row.assignment,
            "withheld": row.withheld,
            "unassigned": row.unassigned,
        }
    ).to_dict()


def _decision_of(row: sa.Row) -> dict[str, Any]:
    m = row._mapping
    return {
        "group": row.group_name,
        **{k: m[k] for k in DECISION_FIELDS},
        "decided_at": row.decided_at,
        "outcome": m["outcome"],
    }
