"""The ledger of publications: per cluster and group, versions that only grow,
pending -> published | failed.

Group ids are unique only within a Kafka cluster, so each (cluster, group) has its own version
line; a publication belongs to the cluster of its plan (``plans.cluster``). Methods that name a
publication by group and version take ``cluster``; without it they find the one publication of
that group and version on any cluster and refuse to guess between several.

A publication is reserved *pending* before anything is written to Kafka (a compare-and-set on
the version the run saw in force), marked published once the broker acknowledged it, or failed
when the broker refused it; one left pending by a run that died between the topic and the store
is found by ``pending_publications`` and reconciled against the topic by a later run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from ..core.clock import utc_now
from ..core.clusters import cluster_label
from .base import StoreBase
from .columns import checked_utc
from .connection import PG_LOCK_CLASS
from .errors import StalePlanError, StoreError, VersionConflictError
from .schema import (
    ACTIVE_STATES,
    MAX_ERROR_CHARS,
    decisions_t,
    evaluations_t,
    plans_t,
    publication_of,
    publications_t,
)


class Ledger(StoreBase):
    """Reservations and their outcome, per group and version."""

    def mark_publication_pending(
        self,
        plan_id: int,
        group: str,
        strategy: str | None = None,
        assignment: Mapping[str, Any] | None = None,
        snapshot_at: datetime | None = None,
        force: bool = False,
        min_version: int | None = None,
        expected_version: int | None = None,
        topic_version: int | None = None,
    ) -> dict[str, Any]:
        """Record, before publishing, that this plan is about to be published for ``group``.

        Returns the publication (with its ``version``). Defaults come from the audit record:
        the decision's chosen strategy, that strategy's evaluated assignment, the plan's
        snapshot time. Refused unless ``force``: a group whose recorded decision is not go,
        and a snapshot older than that of the group's newest pending or published plan
        (StalePlanError). Versions only grow: max recorded + 1, at least ``min_version``
        (e.g. the version last seen on the plans topic + 1). Idempotent: a pending or published
        publication of the same plan and group is returned as it is.

        ``expected_version`` makes the reservation a compare-and-set: the version this run saw
        in force. If another run has since reserved or published a newer one, this one raises
        VersionConflictError (naming it), even with ``force``: two planners racing on a group
        make one new version, and the loser can say why it stopped.

        The version line is that of the plan's cluster (``plans.cluster``). ``topic_version``:
        the version the plans topic holds now, read after a conflict with a *published* version:
        published versions above it are not on the topic (it was deleted and created again, or
        the cluster rebuilt behind the same key) and are no rivals; pending ones still are.
        """
        with self._engine.begin() as conn:
            plan = self._plan_row(conn, plan_id)
            cluster = plan["cluster"]
            self._lock_group(conn, cluster, group)
            mine = _active(cluster, group).where(publications_t.c.plan_id == plan_id)
            held = conn.execute(mine).first()
            if held is not None:
                return publication_of(held)
            strategy, assignment = _what_to_publish(conn, plan_id, group, strategy, assignment, force)
            snapshot_at = _snapshot_time(plan, snapshot_at)
            if not force:
                _refuse_if_stale(conn, plan_id, cluster, group, snapshot_at)
            if expected_version is not None:
                _refuse_if_overtaken(conn, cluster, group, expected_version, topic_version)
            version = _next_version(conn, cluster, group, min_version, expected_version)
            values = dict(
                plan_id=plan_id,
                cluster=cluster,
                group_name=group,
                version=version,
                strategy=strategy,
                state="pending",
                forced=bool(force),
                assignment=dict(assignment),
                snapshot_at=snapshot_at,
                created_at=utc_now(),
            )
            return _insert_pending(conn, values)

    def mark_published(
        self,
        group: str,
        version: int,
        published_at: datetime | None = None,
        cluster: str | None = None,
    ) -> dict[str, Any]:
        """The plan ``version`` of ``group`` is on the plans topic (also after it was marked failed:
        what the topic holds is the truth). Idempotent."""
        return self._set_state(cluster, group, version, "published", published_at=published_at or utc_now())

    def mark_publication_failed(
        self, group: str, version: int, error: str, cluster: str | None = None
    ) -> dict[str, Any]:
        """The plan ``version`` of ``group`` definitely did not reach the topic. When that is not
        certain (a timeout), leave it pending for reconciliation instead."""
        return self._set_state(cluster, group, version, "failed", error=str(error)[:MAX_ERROR_CHARS])

    def pending_publications(
        self,
        group: str | None = None,
        settled_after: timedelta | None = None,
        cluster: str | None = None,
    ) -> list[dict[str, Any]]:
        """Publications recorded as pending: published or not, the plans topic will tell
        (``cluster``: only that cluster's, whose topic can tell).

        ``settled_after``: only those that cannot be in flight any more: their run has
        finished, or they were reserved longer ago than this (a run killed mid-publish).
        """
        q = sa.select(publications_t).where(publications_t.c.state == "pending")
        if cluster is not None:
            q = q.where(publications_t.c.cluster == cluster)
        if group is not None:
            q = q.where(publications_t.c.group_name == group)
        if settled_after is not None:
            running = sa.select(plans_t.c.id).where(plans_t.c.status == "running")
            q = q.where(
                sa.or_(
                    publications_t.c.plan_id.not_in(running),
                    publications_t.c.created_at < utc_now() - settled_after,
                )
            )
        with self._engine.connect() as conn:
            rows = conn.execute(q.order_by(publications_t.c.group_name, publications_t.c.version))
            return [publication_of(r) for r in rows]

    def ledger_state(
        self, groups: Iterable[str], cluster: str | None = None
    ) -> dict[str, tuple[dict[str, Any] | None, int]]:
        """Per group of ``cluster``: its newest pending or published publication (or None) and
        the highest version recorded in any state (failed ones too: versions are never reused).
        Without ``cluster``, every cluster's publications count (a store of one cluster only)."""
        names = sorted(set(groups))
        out: dict[str, tuple[dict[str, Any] | None, int]] = {g: (None, 0) for g in names}
        if not names:
            return out
        pubs = publications_t
        here = (pubs.c.group_name.in_(names),) + (() if cluster is None else (pubs.c.cluster == cluster,))
        with self._engine.connect() as conn:
            tops = dict(
                conn.execute(
                    sa.select(pubs.c.group_name, sa.func.max(pubs.c.version))
                    .where(*here)
                    .group_by(pubs.c.group_name)
                ).all()
            )
            rows = conn.execute(
                sa.select(pubs)
                .where(*here, pubs.c.state.in_(ACTIVE_STATES))
                .order_by(pubs.c.group_name, pubs.c.version)
            )
            newest = {r.group_name: publication_of(r) for r in rows}
        return {g: (newest.get(g), int(tops.get(g) or 0)) for g in names}

    def publication(self, group: str, version: int, cluster: str | None = None) -> dict[str, Any] | None:
        """The publication of ``group`` at ``version`` (any state) on ``cluster``, or None.
        Without ``cluster``: the one on any cluster (StoreError when several clusters hold it)."""
        with self._engine.connect() as conn:
            row = _one_publication(conn, cluster, group, version)
        return publication_of(row) if row is not None else None

    def last_published(self, group: str, cluster: str | None = None) -> dict[str, Any] | None:
        """The group's published plan with the highest version (on ``cluster``), or None."""
        q = (
            sa.select(publications_t)
            .where(publications_t.c.group_name == group, publications_t.c.state == "published")
            .order_by(publications_t.c.version.desc(), publications_t.c.id.desc())
            .limit(1)
        )
        if cluster is not None:
            q = q.where(publications_t.c.cluster == cluster)
        with self._engine.connect() as conn:
            row = conn.execute(q).first()
        return publication_of(row) if row is not None else None

    def _lock_group(self, conn: sa.Connection, cluster: str, group: str) -> None:
        """Serialise publications of one group of one cluster (SQLite transactions are already
        exclusive)."""
        if conn.dialect.name == "postgresql":
            conn.execute(
                sa.text("SELECT pg_advisory_xact_lock(:cls, hashtext(:g))"),
                {"cls": PG_LOCK_CLASS, "g": f"{cluster} {group}"},
            )

    def _set_state(
        self, cluster: str | None, group: str, version: int, state: str, **values: Any
    ) -> dict[str, Any]:
        with self._engine.begin() as conn:
            row = _one_publication(conn, cluster, group, version)
            if row is None:
                on = "" if cluster is None else f" on cluster {cluster_label(cluster)}"
                raise StoreError(f"no publication of version {version} for group {group}{on}")
            if row.state == state:
                return publication_of(row)
            if row.state == "published":
                raise StoreError(f"group {group} version {version} is published; it cannot become {state}")
            where = publications_t.c.id == row.id
            conn.execute(sa.update(publications_t).where(where).values(state=state, **values))
            return publication_of(conn.execute(sa.select(publications_t).where(where)).one())


def _iso(value: datetime) -> str:
    return checked_utc(value).isoformat(timespec="seconds")


def _active(cluster: str, group: str) -> Any:
    """A query for the group's pending or published publications on ``cluster``."""
    return sa.select(publications_t).where(
        publications_t.c.cluster == cluster,
        publications_t.c.group_name == group,
        publications_t.c.state.in_(ACTIVE_STATES),
    )


def _one_publication(conn: Any, cluster: str | None, group: str, version: int) -> Any:
    """The row of ``group`` at ``version`` on ``cluster`` (None: on whichever cluster holds it;
    StoreError when several do), or None."""
    pubs = publications_t
    q = sa.select(pubs).where(pubs.c.group_name == group, pubs.c.version == version)
    if cluster is not None:
        return conn.execute(q.where(pubs.c.cluster == cluster)).first()
    rows = conn.execute(q.order_by(pubs.c.cluster)).all()
    if len(rows) > 1:
        names = ", ".join(cluster_label(r.cluster) for r in rows)
        raise StoreError(
            f"group {group} has a version {version} on several clusters ({names}); name the cluster"
        )
    return rows[0] if rows else None


def _what_to_publish(
    conn: Any,
    plan_id: int,
    group: str,
    strategy: str | None,
    assignment: Mapping[str, Any] | None,
    force: bool,
) -> tuple[str, Mapping[str, Any]]:
    """The strategy and assignment to reserve: as given, else the gate's choice as evaluated.
    Without ``force`` only a group the gate let through."""
    decision = conn.execute(
        sa.select(decisions_t).where(decisions_t.c.plan_id == plan_id, decisions_t.c.group_name == group)
    ).first()
    if not force and (decision is None or not decision.go):
        why = "no gate decision is recorded" if decision is None else "the gate said stop"
        raise StoreError(f"plan {plan_id}, group {group}: {why}; not publishing without force")
    strategy = strategy or (decision.chosen if decision is not None else None)
    if not strategy:
        raise StoreError(f"plan {plan_id}, group {group}: no strategy to publish")
    if assignment is None:
        assignment = conn.execute(
            sa.select(evaluations_t.c.assignment).where(
                evaluations_t.c.plan_id == plan_id,
                evaluations_t.c.group_name == group,
                evaluations_t.c.strategy == strategy,
            )
        ).scalar()
        if assignment is None:
            raise StoreError(
                f"plan {plan_id}, group {group}: no evaluated assignment of {strategy} to publish"
            )
    return strategy, assignment


def _snapshot_time(plan: Mapping[str, Any], given: datetime | None) -> datetime:
    """The snapshot time a reservation is checked against: as given, else the plan's."""
    snapshot_at = given or plan["snapshot_at"]
    if snapshot_at is None:
        raise StoreError(f"plan {plan['id']}: snapshot time unknown; cannot check it is not stale")
    return snapshot_at


def _next_version(
    conn: Any, cluster: str, group: str, min_version: int | None, expected_version: int | None
) -> int:
    """The version to reserve: above every one recorded for the group on ``cluster``, at least
    ``min_version`` and above ``expected_version`` (versions only grow)."""
    top = conn.execute(
        sa.select(sa.func.max(publications_t.c.version)).where(
            publications_t.c.cluster == cluster, publications_t.c.group_name == group
        )
    ).scalar()
    return max((top or 0) + 1, min_version or 1, (expected_version or 0) + 1)


def _insert_pending(conn: Any, values: dict[str, Any]) -> dict[str, Any]:
    """Insert the pending publication ``values`` and return it as the store does; StoreError when
    another run recorded the same version meanwhile."""
    try:
        with conn.begin_nested():
            inserted = conn.execute(sa.insert(publications_t).values(**values)).inserted_primary_key
    except sa.exc.IntegrityError:
        raise StoreError(
            f"group {values['group_name']}: version {values['version']} was recorded concurrently; retry"
        ) from None
    assert inserted is not None
    row = conn.execute(sa.select(publications_t).where(publications_t.c.id == inserted[0])).one()
    return publication_of(row)


def _refuse_if_stale(conn: Any, plan_id: int, cluster: str, group: str, snapshot_at: datetime) -> None:
    """StalePlanError when a pending or published plan of the group came from a newer snapshot."""
    newest = conn.execute(
        _active(cluster, group).order_by(publications_t.c.snapshot_at.desc()).limit(1)
    ).first()
    if newest is not None and newest.snapshot_at > checked_utc(snapshot_at):
        raise StalePlanError(
            f"plan {plan_id}, group {group}: snapshot of {_iso(snapshot_at)} is older than that "
            f"of version {newest.version} (plan {newest.plan_id}, {_iso(newest.snapshot_at)}); "
            "not publishing without force"
        )


def _refuse_if_overtaken(
    conn: Any, cluster: str, group: str, expected_version: int, topic_version: int | None
) -> None:
    """VersionConflictError when a version above the one this run saw in force is reserved or out
    (with ``topic_version``: published ones above it are gone from the topic, no rivals)."""
    pubs = publications_t
    query = _active(cluster, group).where(pubs.c.version > expected_version)
    if topic_version is not None:
        query = query.where(sa.or_(pubs.c.state == "pending", pubs.c.version <= topic_version))
    rival = conn.execute(query.order_by(pubs.c.version.desc()).limit(1)).first()
    if rival is None:
        return
    saw = f"version {expected_version} in force" if expected_version else "no plan in force"
    where = f"group {group} on cluster {cluster_label(cluster)}"
    if rival.state == "pending":
        what = (
            f"version {rival.version} of {where} is being published by plan {rival.plan_id} "
            f"(reserved {_iso(rival.created_at)}), and this run saw {saw}: let that run finish, "
            "then plan the group again; if it died, the next planning run settles its reservation "
            "against the plans topic"
        )
    else:
        what = (
            f"version {rival.version} of {where} was published by plan {rival.plan_id} after this "
            f"run saw {saw}: this plan was made for an assignment no longer in force; plan the group "
            f"again from a new snapshot"
            + (f", or roll it back to version {expected_version}" if expected_version else "")
            + f" if plan {rival.plan_id} was wrong"
        )
    raise VersionConflictError(
        what, version=rival.version, state=rival.state, plan_id=rival.plan_id, cluster=cluster
    )
