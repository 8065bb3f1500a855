"""The offset history: each snapshot's end offset per partition, and each group's committed
offset, lag and owner per partition, sliding windows of them.

Successive observations give a partition's inflow, a consumer's lag in seconds and a
saturated member's processing rate (``core.inflow``). Kept compact: after each recording, a
partition keeps at most ``keep`` observations, none older than ``max_age`` except its newest
(the next run's reference), and that one only up to ``stale`` (a deleted topic's rows go away
in the end).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from .base import StoreBase
from .columns import checked_utc
from .errors import StoreError
from .schema import group_offset_history_t, offset_history_t

TP = tuple[str, int]
#: (group, topic, partition, committed offset, lag, owning member) of one group partition
GroupPosition = tuple[str, str, int, int | None, int | None, str | None]

KEEP = 60  # observations per partition (kafka-lag-exporter's default lookup table size)
KEEP_POSITIONS = 10  # per group partition: only the previous one is read
MAX_AGE = timedelta(hours=24)
STALE = timedelta(days=7)


class OffsetHistory(StoreBase):
    """End offsets per (cluster, topic, partition) over time."""

    def record_offsets(
        self,
        cluster: str | None,
        observed_at: datetime,
        ends: Mapping[TP, int],
        plan_id: int | None = None,
        keep: int = KEEP,
        max_age: timedelta = MAX_AGE,
        stale: timedelta = STALE,
    ) -> int:
        """Record one snapshot's end offsets (a retry of the same plan's snapshot replaces the
        rows it left), then prune the cluster's history; returns how many were recorded."""
        rows = [
            {"topic": str(tp[0]), "partition": int(tp[1]), "end_offset": int(end)}
            for tp, end in sorted(ends.items())
            if end is not None
        ]
        by = ("topic", "partition")
        return self._write_observation(
            offset_history_t, by, cluster, observed_at, plan_id, rows, keep, max_age, stale
        )

    def _write_observation(
        self,
        h: sa.Table,
        by: tuple[str, ...],
        cluster: str | None,
        observed_at: datetime,
        plan_id: int | None,
        rows: list[dict[str, Any]],
        keep: int,
        max_age: timedelta,
        stale: timedelta,
    ) -> int:
        """Write one observation's ``rows`` into ``h``, each with the observation's cluster ('' when
        unknown), time and plan (replacing the rows a retry of the same plan, or an observation at
        the same time, left), then prune the cluster's history, kept per ``by``; returns how many
        rows were written."""
        at = checked_utc(observed_at)
        if keep < 1:
            raise StoreError("the offset history keeps at least one observation per partition")
        cluster = cluster or ""
        with self._engine.begin() as conn:
            if plan_id is not None:
                conn.execute(sa.delete(h).where(h.c.cluster == cluster, h.c.plan_id == plan_id))
            conn.execute(sa.delete(h).where(h.c.cluster == cluster, h.c.observed_at == at))
            if rows:
                shared = sa.insert(h).values(cluster=cluster, observed_at=at, plan_id=plan_id)
                conn.execute(shared, rows)
            self._prune(conn, h, by, cluster, at, keep, max_age, stale)
        return len(rows)

    def _prune(
        self,
        conn: sa.Connection,
        h: sa.Table,
        by: tuple[str, ...],
        cluster: str,
        now: datetime,
        keep: int,
        max_age: timedelta,
        stale: timedelta,
    ) -> None:
        rank = (
            sa.func.row_number()
            .over(partition_by=[h.c[k] for k in by], order_by=h.c.observed_at.desc())
            .label("rank")
        )
        ranked = sa.select(h.c.id, h.c.observed_at, rank).where(h.c.cluster == cluster).subquery()
        doomed = sa.select(ranked.c.id).where(
            sa.or_(
                ranked.c.rank > keep,
                sa.and_(ranked.c.rank > 1, ranked.c.observed_at < now - max_age),
                ranked.c.observed_at < now - stale,
            )
        )
        conn.execute(sa.delete(h).where(h.c.id.in_(doomed)))

    def offset_history(
        self, cluster: str | None, partitions: Iterable[TP], before: datetime | None = None
    ) -> dict[TP, list[tuple[datetime, int]]]:
        """Per partition asked for, its observations (time, end offset) oldest first, only those
        before ``before`` when given; partitions never observed are left out."""
        wanted = {(str(t), int(p)) for t, p in partitions}
        if not wanted:
            return {}
        h = offset_history_t
        q: Any = sa.select(h.c.topic, h.c.partition, h.c.observed_at, h.c.end_offset).where(
            h.c.cluster == (cluster or ""), h.c.topic.in_(sorted({t for t, _ in wanted}))
        )
        if before is not None:
            q = q.where(h.c.observed_at < checked_utc(before))
        out: dict[TP, list[tuple[datetime, int]]] = {}
        with self._engine.connect() as conn:
            for r in conn.execute(q.order_by(h.c.observed_at)):
                key = (r.topic, r.partition)
                if key in wanted:
                    out.setdefault(key, []).append((r.observed_at, int(r.end_offset)))
        return out

    def record_positions(
        self,
        cluster: str | None,
        observed_at: datetime,
        positions: Iterable[GroupPosition],
        plan_id: int | None = None,
        keep: int = KEEP_POSITIONS,
        max_age: timedelta = MAX_AGE,
        stale: timedelta = STALE,
    ) -> int:
        """Record one snapshot's committed offsets, lags and owners per group partition (a
        retried snapshot of the same plan replaces its rows), then prune; returns how many."""
        rows = [
            {
                "group_name": str(group),
                "topic": str(topic),
                "partition": int(part),
                "committed": committed,
                "lag": lag,
                "member": member,
            }
            for group, topic, part, committed, lag, member in positions
        ]
        by = ("group_name", "topic", "partition")
        return self._write_observation(
            group_offset_history_t, by, cluster, observed_at, plan_id, rows, keep, max_age, stale
        )

    def previous_positions(
        self, cluster: str | None, groups: Iterable[str], before: datetime
    ) -> dict[str, tuple[datetime, dict[TP, tuple[int | None, int | None, str | None]]]]:
        """Per group, its newest observation before ``before``: (time, {(topic, partition):
        (committed, lag, member)}); groups never observed are left out."""
        names = sorted(set(groups))
        if not names:
            return {}
        h = group_offset_history_t
        name = cluster or ""
        at = checked_utc(before)
        newest = (
            sa.select(h.c.group_name, sa.func.max(h.c.observed_at).label("at"))
            .where(h.c.cluster == name, h.c.group_name.in_(names), h.c.observed_at < at)
            .group_by(h.c.group_name)
            .subquery()
        )
        q = sa.select(h).join(
            newest, sa.and_(h.c.group_name == newest.c.group_name, h.c.observed_at == newest.c.at)
        )
        out: dict[str, tuple[datetime, dict[TP, tuple[int | None, int | None, str | None]]]] = {}
        with self._engine.connect() as conn:
            for r in conn.execute(q.where(h.c.cluster == name)):
                entry = out.setdefault(r.group_name, (r.observed_at, {}))
                entry[1][(r.topic, r.partition)] = (r.committed, r.lag, r.member)
        return out
