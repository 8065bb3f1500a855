"""Inflow and lag in seconds for a fresh snapshot, from the audit store's offset history.

The snapshot's end offsets are compared with those earlier snapshots recorded
(``core.inflow``): each partition row gains ``rate`` (messages produced per second) and
``lag_s`` (seconds since the end offset was the group's position) where they can be known,
and the snapshot's end offsets join the history for the next run. Without history every
value stays null and planning is exactly what it was without inflow.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..core.clock import parse_utc
from ..core.inflow import Point, inflow_rates, lag_seconds

Log = Callable[[str], None]


def add_inflow(store: Any, plan_id: int | None, snap: Any, log: Log | None = None) -> dict[str, Any]:
    """Fill ``rate`` and ``lag_s`` of ``snap``'s partition rows (a ``tables.snapshot.Snapshot``,
    changed in place, not written) from the history, then record its end offsets; returns
    counts for the log: partitions observed, with a rate, with a lag in seconds."""
    at = parse_utc(snap.manifest.get("snapshot_at"))
    if at is None:
        return {"partitions": 0, "rates": 0, "lag_s": 0}
    cluster = snap.manifest.get("cluster_id")
    ends: dict[tuple[str, int], int] = {}
    for row in snap.partitions:
        if row.get("end") is not None and row.get("topic") is not None:
            ends[(row["topic"], int(row["partition"]))] = int(row["end"])
    history = store.offset_history(cluster, ends, before=at) if ends else {}
    now_s = at.timestamp()
    points = {tp: [(_seconds(t), e) for t, e in pts] for tp, pts in history.items()}
    rates = inflow_rates(points, {tp: (now_s, end) for tp, end in ends.items()})
    timed = 0
    for row in snap.partitions:
        if row.get("end") is None or row.get("topic") is None:
            continue
        tp = (row["topic"], int(row["partition"]))
        row["rate"] = rates.get(tp)
        row["lag_s"] = None
        if row.get("lag") is not None and tp in points:
            series: list[Point] = [*points[tp], (now_s, int(row["end"]))]
            row["lag_s"] = lag_seconds(series, int(row["end"]) - int(row["lag"]))
            timed += row["lag_s"] is not None
    store.record_offsets(cluster, at, ends, plan_id)
    summary = {"partitions": len(ends), "rates": len(rates), "lag_s": timed}
    if log is not None:
        if history:
            newest = max(t for pts in history.values() for t, _ in pts)
            ago = (at - newest).total_seconds()
            log(
                f"inflow: rates for {len(rates)} of {len(ends)} partitions, lag in seconds for "
                f"{timed} group partitions, from the offset history (previous snapshot {ago:.0f} s "
                "earlier)"
            )
        else:
            log(f"inflow: no offset history yet for {len(ends)} partitions; recorded for the next run")
    return summary


def _seconds(value: datetime) -> float:
    return value.timestamp()
