"""What the plans pages read besides the audit store: the plan's snapshot (per group its row,
its partitions' lag in messages and in seconds) and the status topic (a group's live
instances). Each read is best effort: a snapshot gone or unreadable from the API server, or no
Kafka connection there, leaves that part of the page out rather than failing it."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from ..core.case import parse_case
from ..kafka.status import read_status
from ..tables.snapshot import group_rows, partition_lag_seconds, read_snapshot
from .hooks import LagassignKafkaHook


def group_rows_of(snapshot_uri: str | None, groups: set[str]) -> dict[str, dict[str, Any]]:
    """Per group, its snapshot row (kind assign | subscribe, the plan version in force when it
    was taken); empty when the snapshot is gone or unreadable from the API server."""
    if not snapshot_uri:
        return {}
    try:
        return {g: dict(r) for g, r in group_rows(snapshot_uri).items() if g in groups}
    except Exception:
        return {}


def kinds_of(rows: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Per group, ``assign`` or ``subscribe`` as its snapshot row recorded it (``group_rows_of``)."""
    return {g: str(r["kind"]) for g, r in rows.items() if r.get("kind")}


def partition_lags(snapshot_uri: str | None, groups: set[str]) -> dict[str, dict[tuple[str, int], int]]:
    """Per group, the lag of each partition in the plan's snapshot (for the moves table); empty
    when the snapshot is gone or unreadable from the API server (a page, not an error)."""
    if not snapshot_uri:
        return {}
    try:
        out = {}
        for row, case in read_snapshot(snapshot_uri):
            if case is not None and row["group"] in groups:
                parsed = parse_case(case)
                out[row["group"]] = {(tp.topic, tp.partition): st.lag for tp, st in parsed.partitions.items()}
        return out
    except Exception:
        return {}


def partition_times(snapshot_uri: str | None, groups: set[str]) -> dict[str, dict[tuple[str, int], float]]:
    """Per group, each partition's lag in seconds in the plan's snapshot (from the offset
    history); empty when unknown or unreadable."""
    if not snapshot_uri:
        return {}
    try:
        return {g: t for g, t in partition_lag_seconds(snapshot_uri).items() if g in groups}
    except Exception:
        return {}


def live_instances(group: str, timeout: float = 3.0) -> list[dict[str, Any]] | None:
    """The group's instances from the status topic (alive or not, newest record each), or None
    when the topic cannot be read from here (no Kafka connection in the API server)."""
    try:
        liveness = read_status(LagassignKafkaHook().get_config(), timeout=timeout, groups=[group])
    except Exception:
        return None
    return instance_rows(liveness, group, int(time.time() * 1000))


def instance_rows(liveness: Any, group: str, now_ms: int) -> list[dict[str, Any]]:
    """The group's instances in a ``core.liveness.Liveness`` table, for the page: alive or dead
    (silent longer than its session timeout), plan version, lag, rate, host, last seen (UTC)."""
    rows = []
    for instance in sorted(liveness.known(group)):
        st = liveness.status(group, instance)
        if st is None:
            continue
        rows.append(
            {
                "instance": instance,
                "alive": liveness.is_alive(group, instance, now_ms),
                "version": st.version,
                "lag": st.lag,
                "rate": st.rate,
                "host": st.host,
                "last_seen": datetime.fromtimestamp(st.time_ms / 1000, UTC),
            }
        )
    return rows
