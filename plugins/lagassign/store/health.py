"""Group health between planning runs: observations of groups' partitions, each group's status
over time, its last status, and the alerts sent.

Written by the health job (``pipeline.health``: the ``lagassign_health`` DAG, or
``lagassign groups --record``) once per observation; read by the groups page, the metrics and
``lagassign groups``. Per Kafka cluster (``core.clusters`` key): group ids are unique only
within one.

* ``health_partitions``: each observation of each group partition (end offset, committed
  offset, lag, owner): the window the rules judge, pruned to ``keep`` (a little more than the
  window).
* ``health_groups``: each group's status and figures per observation, for the chart: every one
  for ``FINE_FOR``, then one per ``COARSE_EVERY`` (``coarse``) up to ``KEEP_FOR``.
* ``health_states``: each group's last status (``core.health.GroupHealth.key``), what the
  alerts compare with; a group no longer observed loses its row.
* ``health_alerts``: every alert, ``subject`` unique per cluster and kind, claimed before it is
  sent, so two health runs at once never send the same one twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from .base import StoreBase
from .columns import checked_utc
from .schema import (
    decisions_t,
    health_alerts_t,
    health_groups_t,
    health_partitions_t,
    health_states_t,
    plan_groups_t,
    plans_t,
)

#: (group, topic, partition, end offset, committed offset, lag, owner) of one observation
PartitionRow = tuple[str, str, int, int | None, int | None, int | None, str | None]
#: (time, end offset, committed offset, lag, owner) of one partition at one observation
Observed = tuple[datetime, int | None, int | None, int | None, str | None]

FINE_FOR = timedelta(hours=2)
COARSE_EVERY = timedelta(minutes=10)
KEEP_FOR = timedelta(days=3)
GROUP_FIGURES = (
    "status",
    "reason",
    "total_lag",
    "max_lag",
    "max_lag_s",
    "catch_up_s",
    "never",
    "inflow",
    "consumed",
    "alive",
    "dead",
    "plan_version",
    "kind",
    "group_type",
)


class HealthStore(StoreBase):
    """Observations, statuses over time, last statuses and alerts of groups, per cluster."""

    # -- observations ----------------------------------------------------------------------

    def record_observation(
        self, cluster: str, observed_at: datetime, rows: Iterable[PartitionRow], keep: timedelta
    ) -> int:
        """Record one observation of group partitions (replacing one recorded at the same time),
        then drop the cluster's observations older than ``keep``; returns how many rows."""
        at = checked_utc(observed_at)
        h = health_partitions_t
        values = [
            {
                "cluster": cluster,
                "group_name": g,
                "topic": t,
                "partition": int(p),
                "observed_at": at,
                "end_offset": end,
                "committed": committed,
                "lag": lag,
                "owner": owner,
            }
            for g, t, p, end, committed, lag, owner in rows
        ]
        with self._engine.begin() as conn:
            conn.execute(sa.delete(h).where(h.c.cluster == cluster, h.c.observed_at == at))
            if values:
                conn.execute(sa.insert(h), values)
            conn.execute(sa.delete(h).where(h.c.cluster == cluster, h.c.observed_at < at - keep))
        return len(values)

    def observations(
        self, cluster: str, since: datetime, groups: Iterable[str] | None = None
    ) -> dict[str, dict[tuple[str, int], list[Observed]]]:
        """Per group and partition, the observations since ``since``, oldest first."""
        h = health_partitions_t
        # the time column comes raw (one parse per distinct time, not per row: an observation
        # of a whole cluster shares one time)
        raw_at = sa.type_coerce(h.c.observed_at, sa.types.NullType()).label("at")
        q: Any = sa.select(
            h.c.group_name,
            h.c.topic,
            h.c.partition,
            raw_at,
            h.c.end_offset,
            h.c.committed,
            h.c.lag,
            h.c.owner,
        ).where(h.c.cluster == cluster, h.c.observed_at >= checked_utc(since))
        names = sorted(set(groups)) if groups is not None else None
        if names is not None:
            if not names:
                return {}
            if len(names) <= 500:
                q = q.where(h.c.group_name.in_(names))
        wanted = set(names) if names is not None else None
        out: dict[str, dict[tuple[str, int], list[Observed]]] = {}
        times: dict[Any, datetime] = {}
        with self._engine.connect() as conn:
            for group, topic, part, at, end, committed, lag, owner in conn.execute(
                q.order_by(h.c.observed_at)
            ):
                if wanted is not None and group not in wanted:
                    continue
                when = times.get(at)
                if when is None:
                    when = times[at] = _utc(at)
                out.setdefault(group, {}).setdefault((topic, part), []).append(
                    (when, end, committed, lag, owner)
                )
        return out

    # -- statuses over time ------------------------------------------------------------------

    def record_statuses(
        self,
        cluster: str,
        observed_at: datetime,
        groups: Iterable[Mapping[str, Any]],
        fine_for: timedelta = FINE_FOR,
        coarse_every: timedelta = COARSE_EVERY,
        keep_for: timedelta = KEEP_FOR,
    ) -> bool:
        """Record each group's status and figures at one observation (``GROUP_FIGURES`` keys,
        plus ``group``), then thin the series; returns whether this point is a coarse one
        (kept for ``keep_for``, the others for ``fine_for``)."""
        at = checked_utc(observed_at)
        h = health_groups_t
        with self._engine.begin() as conn:
            newest = conn.execute(
                sa.select(sa.func.max(h.c.observed_at)).where(h.c.cluster == cluster, h.c.coarse.is_(True))
            ).scalar()
            coarse = newest is None or at - newest >= coarse_every or at < newest
            rows = [
                {
                    "cluster": cluster,
                    "group_name": str(g["group"]),
                    "observed_at": at,
                    "coarse": coarse,
                    **{k: g.get(k) for k in GROUP_FIGURES},
                }
                for g in groups
            ]
            conn.execute(sa.delete(h).where(h.c.cluster == cluster, h.c.observed_at == at))
            if rows:
                conn.execute(sa.insert(h), rows)
            conn.execute(
                sa.delete(h).where(
                    h.c.cluster == cluster,
                    sa.or_(
                        h.c.observed_at < at - keep_for,
                        sa.and_(h.c.coarse.is_(False), h.c.observed_at < at - fine_for),
                    ),
                )
            )
        return coarse

    def status_series(self, cluster: str, group: str, since: datetime | None = None) -> list[dict[str, Any]]:
        """One group's recorded statuses and figures, oldest first (``observed_at`` and the
        ``GROUP_FIGURES``)."""
        h = health_groups_t
        q = sa.select(h).where(h.c.cluster == cluster, h.c.group_name == group)
        if since is not None:
            q = q.where(h.c.observed_at >= checked_utc(since))
        with self._engine.connect() as conn:
            return [_figures(r) for r in conn.execute(q.order_by(h.c.observed_at))]

    def latest_statuses(self, cluster: str) -> dict[str, dict[str, Any]]:
        """Each group's newest recorded status and figures (with ``observed_at``)."""
        h = health_groups_t
        newest = (
            sa.select(h.c.group_name, sa.func.max(h.c.observed_at).label("at"))
            .where(h.c.cluster == cluster)
            .group_by(h.c.group_name)
            .subquery()
        )
        q = sa.select(h).join(
            newest, sa.and_(h.c.group_name == newest.c.group_name, h.c.observed_at == newest.c.at)
        )
        with self._engine.connect() as conn:
            return {r.group_name: _figures(r) for r in conn.execute(q.where(h.c.cluster == cluster))}

    def health_clusters(self) -> list[dict[str, Any]]:
        """Clusters with recorded statuses, newest observation first: cluster, observed_at, groups."""
        h = health_groups_t
        q = (
            sa.select(h.c.cluster, sa.func.max(h.c.observed_at).label("observed_at"))
            .group_by(h.c.cluster)
            .order_by(sa.desc("observed_at"))
        )
        with self._engine.connect() as conn:
            return [{"cluster": r.cluster, "observed_at": r.observed_at} for r in conn.execute(q)]

    def last_plans(self, cluster: str, groups: Iterable[str] | None = None) -> dict[str, int]:
        """Each group's newest plan on ``cluster`` (one that evaluated or decided it)."""
        newest: dict[str, int] = {}
        wanted = set(groups) if groups is not None else None
        with self._engine.connect() as conn:
            for t in (plan_groups_t, decisions_t):
                q = (
                    sa.select(t.c.group_name, sa.func.max(t.c.plan_id).label("plan_id"))
                    .join(plans_t, plans_t.c.id == t.c.plan_id)
                    .where(plans_t.c.cluster == cluster)
                    .group_by(t.c.group_name)
                )
                for r in conn.execute(q):
                    if wanted is None or r.group_name in wanted:
                        newest[r.group_name] = max(newest.get(r.group_name, 0), int(r.plan_id))
        return newest

    # -- last statuses (alerts once per change) ------------------------------------------------

    def last_states(self, cluster: str) -> dict[str, tuple[str, ...]]:
        """Each group's last status key, as ``save_states`` kept it."""
        s = health_states_t
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(s.c.group_name, s.c.state).where(s.c.cluster == cluster))
            return {r.group_name: tuple(r.state or ()) for r in rows}

    def save_states(
        self, cluster: str, states: Mapping[str, Sequence[str]], at: datetime, forget_others: bool = True
    ) -> None:
        """Keep each group's status key now (``since`` moves only when it changed); groups not
        in ``states`` are forgotten when ``forget_others`` (they are gone from the cluster)."""
        at = checked_utc(at)
        s = health_states_t
        with self._engine.begin() as conn:
            held = {
                r.group_name: tuple(r.state or ())
                for r in conn.execute(sa.select(s.c.group_name, s.c.state).where(s.c.cluster == cluster))
            }
            gone = sorted(set(held) - set(states)) if forget_others else []
            for i in range(0, len(gone), 500):
                conn.execute(
                    sa.delete(s).where(s.c.cluster == cluster, s.c.group_name.in_(gone[i : i + 500]))
                )
            for group, key in states.items():
                state = list(key)
                where = (s.c.cluster == cluster, s.c.group_name == group)
                if group not in held:
                    conn.execute(
                        sa.insert(s).values(
                            cluster=cluster, group_name=group, state=state, since=at, seen_at=at
                        )
                    )
                elif held[group] != tuple(key):
                    conn.execute(sa.update(s).where(*where).values(state=state, since=at, seen_at=at))
                else:
                    conn.execute(sa.update(s).where(*where).values(seen_at=at))

    def state_since(self, cluster: str) -> dict[str, datetime]:
        """Since when each group has its last status."""
        s = health_states_t
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(s.c.group_name, s.c.since).where(s.c.cluster == cluster))
            return {r.group_name: r.since for r in rows}

    # -- alerts ------------------------------------------------------------------------------

    def claim_alert(
        self,
        cluster: str,
        group: str,
        kind: str,
        subject: str,
        text: str,
        at: datetime,
        state: Sequence[str] | None = None,
    ) -> int | None:
        """Record an alert about to be sent; None when one with this subject was recorded before
        (by this or another health run): then it is not sent again."""
        a = health_alerts_t
        values = {
            "cluster": cluster,
            "group_name": group,
            "kind": kind,
            "subject": subject,
            "state": list(state) if state is not None else None,
            "text": text,
            "created_at": checked_utc(at),
        }
        try:
            with self._engine.begin() as conn:
                found = conn.execute(
                    sa.select(a.c.id).where(a.c.cluster == cluster, a.c.kind == kind, a.c.subject == subject)
                ).first()
                if found is not None:
                    return None
                key = conn.execute(sa.insert(a).values(**values)).inserted_primary_key
                return int(key[0]) if key else None
        except sa.exc.IntegrityError:  # claimed by another run between the check and the insert
            return None

    def alert_sent(self, alert_id: int, at: datetime, error: str | None = None) -> None:
        """Whether a claimed alert reached the notifier (``error`` says why not)."""
        a = health_alerts_t
        values: dict[str, Any] = {"error": error} if error else {"sent_at": checked_utc(at)}
        with self._engine.begin() as conn:
            conn.execute(sa.update(a).where(a.c.id == alert_id).values(**values))

    def alerts(
        self, cluster: str, group: str | None = None, since: datetime | None = None, limit: int = 200
    ) -> list[dict[str, Any]]:
        """Alerts recorded, newest first (``group``: of one group)."""
        a = health_alerts_t
        q = sa.select(a).where(a.c.cluster == cluster)
        if group is not None:
            q = q.where(a.c.group_name == group)
        if since is not None:
            q = q.where(a.c.created_at >= checked_utc(since))
        with self._engine.connect() as conn:
            rows = conn.execute(q.order_by(a.c.created_at.desc(), a.c.id.desc()).limit(limit))
            out = []
            for r in rows:
                m = dict(r._mapping)
                m["group"] = m.pop("group_name")
                out.append(m)
            return out


def _utc(raw: Any) -> datetime:
    """A time column read raw: SQLite's text (naive UTC) or PostgreSQL's aware datetime."""
    value = datetime.fromisoformat(raw) if isinstance(raw, str) else raw
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _figures(row: Any) -> dict[str, Any]:
    m = row._mapping
    return {"group": m["group_name"], "observed_at": m["observed_at"], **{k: m[k] for k in GROUP_FIGURES}}
