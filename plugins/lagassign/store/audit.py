"""The audit trail: plans, their groups' evaluations and the gate's decisions.

What a plan run leaves behind, so that anyone can later tell what was decided and why:
``plans`` (one row per run: time, DAG run, trigger and by whom, parameters, snapshot, status,
and for a failed run its error and ``failed_step``, the step it stopped at),
``plan_groups`` (per group: the evaluation's summary, or why it could not be evaluated),
``evaluations`` (per group and strategy: metrics and assignment, or the refusal) and
``decisions`` (per group: the gate's decision, its reason and numbers, and what publishing did).
Every method returns plain dicts (datetimes in UTC).

Secrets: callers pass parameters already redacted (Kafka settings live in an Airflow connection,
never in plan parameters); as a safety net, values under secret-looking keys are masked before
they are stored (``core.secrets``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from ..core.clock import utc_now
from ..core.clusters import UNKNOWN_CLUSTER, cluster_label
from ..core.results import EVALUATION_KEYS, GroupEvaluation, ResultShapeError, StrategyResult
from ..core.secrets import redact_tree
from .base import StoreBase
from .errors import StoreError
from .schema import (
    DECISION_FIELDS,
    FINAL_STATUSES,
    TRIGGERS,
    checked_utc,
    decisions_t,
    evaluations_t,
    plan_groups_t,
    plans_t,
    publication_of,
    publications_t,
)

DEFAULT_LIST_LIMIT = 50
MAX_ERROR_CHARS = 10_000


class AuditTrail(StoreBase):
    """Plans, evaluations and decisions."""

    def start_plan(
        self,
        trigger: str,
        triggered_by: str | None = None,
        dag_id: str | None = None,
        run_id: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        snapshot_uri: str | None = None,
        snapshot_at: datetime | None = None,
        created_at: datetime | None = None,
        cluster: str | None = None,
    ) -> int:
        """Record a new plan (status ``running``) and return its id.

        Idempotent per DAG run: with ``dag_id`` and ``run_id`` given, a retried task gets the
        plan already recorded for that run. ``parameters`` must be JSON-serialisable and
        redacted by the caller (see the module docstring). ``cluster``: the key of the Kafka
        cluster the plan is for (``core.clusters``), when known at start; else set later by
        ``set_snapshot`` or ``set_cluster`` (until then it is unknown, '').
        """
        if trigger not in TRIGGERS:
            raise StoreError(f"trigger must be one of {', '.join(TRIGGERS)}, got {trigger!r}")
        row = {
            "created_at": created_at or utc_now(),
            "status": "running",
            "trigger": trigger,
            "triggered_by": triggered_by,
            "dag_id": dag_id,
            "run_id": run_id,
            "parameters": _clean_parameters(parameters),
            "snapshot_uri": snapshot_uri,
            "snapshot_at": snapshot_at,
            "cluster": _checked_cluster(cluster),
        }
        run = (dag_id, run_id) if dag_id is not None and run_id is not None else None
        with self._engine.begin() as conn:
            if run and (existing := self._plan_by_run(conn, *run)) is not None:
                return existing
            try:
                with conn.begin_nested():
                    key = conn.execute(sa.insert(plans_t).values(**row)).inserted_primary_key
                    assert key is not None
                    return int(key[0])
            except sa.exc.IntegrityError:
                if run and (existing := self._plan_by_run(conn, *run)) is not None:
                    return existing
                raise

    def set_snapshot(
        self,
        plan_id: int,
        snapshot_uri: str | None,
        snapshot_at: datetime | None,
        cluster: str | None = None,
    ) -> None:
        """Where the plan's snapshot lies and when it was taken (when known only after start),
        and, when given, the cluster it was taken from."""
        more = {} if cluster is None else {"cluster": _checked_cluster(cluster)}
        self._update_plan(plan_id, snapshot_uri=snapshot_uri, snapshot_at=snapshot_at, **more)

    def set_cluster(self, plan_id: int, cluster: str) -> None:
        """The Kafka cluster the plan is for (``core.clusters.cluster_key``). Refused once the
        plan has publications: they belong to the version line of the cluster they were made on."""
        with self._engine.begin() as conn:
            plan = self._plan_row(conn, plan_id)
            key = _checked_cluster(cluster)
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
        key = _checked_cluster(cluster)
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

    def finish_plan(
        self,
        plan_id: int,
        status: str,
        error: str | None = None,
        finished_at: datetime | None = None,
        failed_step: str | None = None,
    ) -> None:
        """Close the plan as ``succeeded`` or ``failed`` (with the error, one line or more, and
        the step it failed at, ``failed_step``, when known: None keeps what was noted before)."""
        if status not in FINAL_STATUSES:
            raise StoreError(f"status must be one of {', '.join(FINAL_STATUSES)}, got {status!r}")
        if failed_step is not None and status != "failed":
            raise StoreError(f"plan {plan_id}: only a failed plan has a failed step, not a {status} one")
        step = {} if failed_step is None else {"failed_step": _checked_step(failed_step)}
        self._update_plan(
            plan_id,
            status=status,
            finished_at=finished_at or utc_now(),
            error=None if error is None else str(error)[:MAX_ERROR_CHARS],
            **step,
        )

    def note_failure(self, plan_id: int, error: str, failed_step: str | None = None) -> None:
        """Why a step of a running plan failed, and which (``failed_step``): the finish step
        keeps them as the plan's error and failed step."""
        step = {} if failed_step is None else {"failed_step": _checked_step(failed_step)}
        self._update_plan(plan_id, error=str(error)[:MAX_ERROR_CHARS], **step)

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
        unknown); ``cluster`` narrows to one.

        ``group``: plans that evaluated or decided that group, each with that group's
        ``group_type`` and ``assignor`` (what the cluster ran for it; None when unknown).
        ``since`` is inclusive; ``until`` is inclusive of a datetime, and of the whole day for a
        date.
        """
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
        q = sa.select(p, groups.label("groups"), goes.label("go"), published.label("published"))
        if group is not None:  # and what the cluster ran for that group then (null: unknown)
            pg = plan_groups_t
            mine = (pg.c.plan_id == p.c.id, pg.c.group_name == group)
            q = q.add_columns(
                sa.select(pg.c.group_type).where(*mine).scalar_subquery().label("group_type"),
                sa.select(pg.c.assignor).where(*mine).scalar_subquery().label("assignor"),
            )
            q = q.where(
                p.c.id.in_(
                    sa.union(
                        sa.select(plan_groups_t.c.plan_id).where(plan_groups_t.c.group_name == group),
                        sa.select(decisions_t.c.plan_id).where(decisions_t.c.group_name == group),
                    )
                )
            )
        if cluster is not None:
            q = q.where(p.c.cluster == cluster)
        if since is not None:
            q = q.where(p.c.created_at >= _start_of(since))
        if isinstance(until, datetime):
            q = q.where(p.c.created_at <= checked_utc(until))
        elif until is not None:
            q = q.where(p.c.created_at < _end_of(until))
        q = q.order_by(p.c.created_at.desc(), p.c.id.desc())
        if limit is not None:
            q = q.limit(limit)
        if offset:
            q = q.offset(offset)
        with self._engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

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
            out[pid].append(
                {
                    "group": name,
                    "members": s.members if s else None,
                    "partitions": s.partitions if s else None,
                    "best": s.best if s else None,
                    "lower_bound_max_lag": s.lower_bound_max_lag if s else None,
                    "error": s.error if s else None,
                    "group_type": s.group_type if s else None,
                    "assignor": s.assignor if s else None,
                    "results": results.get((pid, name), []),
                    "decision": decisions.get((pid, name)),
                    "publications": pubs.get((pid, name), []),
                }
            )
        return out

    # -- evaluations and decisions -----------------------------------------------------------

    def record_evaluations(
        self, plan_id: int, evaluations: Iterable[GroupEvaluation | Mapping[str, Any]]
    ) -> int:
        """Record groups' evaluations (also as their dict form); return how many groups.

        A group that could not be evaluated carries its error. Re-recording a group for the
        same plan replaces it (task retries are harmless).
        """
        count = 0
        with self._engine.begin() as conn:
            self._plan_row(conn, plan_id)
            for given in evaluations:
                try:
                    ev = GroupEvaluation.of(given)
                except ResultShapeError as exc:
                    raise StoreError(f"plan {plan_id}: {exc}") from None
                name = ev.group
                for t in (evaluations_t, plan_groups_t):
                    conn.execute(sa.delete(t).where(t.c.plan_id == plan_id, t.c.group_name == name))
                conn.execute(
                    sa.insert(plan_groups_t).values(
                        plan_id=plan_id,
                        group_name=name,
                        members=ev.members,
                        partitions=ev.partitions,
                        lower_bound_max_lag=ev.lower_bound_max_lag,
                        best=ev.best,
                        error=ev.error,
                        group_type=ev.group_type,
                        assignor=ev.assignor,
                    )
                )
                rows = [_evaluation_row(plan_id, name, i, r) for i, r in enumerate(ev.results)]
                if rows:
                    conn.execute(sa.insert(evaluations_t), rows)
                count += 1
        return count

    def evaluations(self, plan_id: int) -> list[GroupEvaluation]:
        """The plan's evaluated groups (not those that could not be evaluated), by group name."""
        plan = self.get_plan(plan_id)
        return [
            GroupEvaluation.from_dict({k: g[k] for k in EVALUATION_KEYS})
            for g in plan["groups"]
            if not g.get("error") and g["results"]
        ]

    def record_decision(self, plan_id: int, decision: Any) -> None:
        """Record the gate's decision for one group (a GateDecision or its ``to_dict()``)."""
        self.record_decisions(plan_id, [decision])

    def record_decisions(self, plan_id: int, decisions: Iterable[Any]) -> int:
        """Record the gate's decisions, also the ones that stop; re-recording replaces."""
        count = 0
        with self._engine.begin() as conn:
            self._plan_row(conn, plan_id)
            for d in decisions:
                d = d.to_dict() if hasattr(d, "to_dict") else dict(d)
                name, reason = d.get("group"), d.get("reason")
                if not isinstance(name, str) or not isinstance(reason, str) or "go" not in d:
                    raise StoreError(f"plan {plan_id}: a decision needs group, go and reason")
                conn.execute(
                    sa.delete(decisions_t).where(
                        decisions_t.c.plan_id == plan_id, decisions_t.c.group_name == name
                    )
                )
                conn.execute(
                    sa.insert(decisions_t).values(
                        plan_id=plan_id,
                        group_name=name,
                        decided_at=d.get("decided_at") or utc_now(),
                        **{k: d.get(k) for k in DECISION_FIELDS},
                    )
                )
                count += 1
        return count

    def record_outcome(self, plan_id: int, group: str, outcome: str) -> None:
        """What publishing did for a group that passed the gate: one line for people."""
        where = (decisions_t.c.plan_id == plan_id, decisions_t.c.group_name == group)
        with self._engine.begin() as conn:
            done = conn.execute(
                sa.update(decisions_t).where(*where).values(outcome=str(outcome)[:MAX_ERROR_CHARS])
            ).rowcount
        if not done:
            raise StoreError(f"plan {plan_id}, group {group}: no gate decision to attach an outcome to")

    # -- publications ------------------------------------------------------------------------


def _checked_cluster(cluster: str | None) -> str:
    """A cluster key to store: '' (unknown) for None; StoreError for anything but a string."""
    if cluster is None:
        return UNKNOWN_CLUSTER
    if not isinstance(cluster, str):
        raise StoreError(f"a cluster is a string (its id), got {cluster!r}")
    return cluster.strip()


def _checked_step(step: str) -> str:
    """A step name to store (the task that failed: ``snapshot``, ``publish``, ...)."""
    if not isinstance(step, str) or not step.strip():
        raise StoreError(f"a failed step is a step's name, got {step!r}")
    return step.strip()


def _is_day(value: datetime | date) -> bool:
    return isinstance(value, date) and not isinstance(value, datetime)


def _start_of(value: datetime | date) -> datetime:
    if isinstance(value, datetime):
        return checked_utc(value)
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def _end_of(day: date) -> datetime:
    return _start_of(day) + timedelta(days=1)


def _clean_parameters(parameters: Mapping[str, Any] | None) -> Any:
    if parameters is None:
        return None
    try:
        plain = json.loads(json.dumps(parameters, default=str))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"plan parameters must be JSON-serialisable: {exc}") from None
    return redact_tree(plain)


def _evaluation_row(plan_id: int, group: str, position: int, result: StrategyResult) -> dict[str, Any]:
    """The columns of one result: the result's own dict form, split over the frozen columns."""
    data = result.to_dict()
    metrics = result.metrics or {}
    return {
        "plan_id": plan_id,
        "group_name": group,
        "position": position,
        "strategy": result.strategy,
        "refused": result.refused,
        "max_lag": metrics.get("max_lag"),
        "imbalance": metrics.get("imbalance"),
        "moves": metrics.get("moves"),
        "metrics": data.get("metrics"),
        "assignment": data.get("assignment"),
        "withheld": data.get("withheld"),
        "unassigned": data.get("unassigned"),
    }


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
