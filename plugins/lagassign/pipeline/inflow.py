"""Inflow, lag in seconds and saturated members' capacity for a fresh snapshot, from the
audit store's offset history.

The snapshot's end offsets are compared with those earlier snapshots recorded
(``core.inflow``): each partition row gains ``rate`` (messages produced per second) and
``lag_s`` (seconds since the end offset was the group's position) where they can be known; a
member that states no capacity gets its commit rate as one when it held the same partitions,
all behind, at the previous snapshot and now (``saturated_capacity``). Then the snapshot's end
offsets, committed offsets, lags and owners join the history for the next run. Without
history every value stays null and planning is exactly what it was.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ..core.clock import parse_utc
from ..core.inflow import MIN_SPAN_S, Point, Position, inflow_rates, lag_seconds, saturated_capacity
from .ports import OffsetHistoryPort

Log = Callable[[str], None]


def add_inflow(
    store: OffsetHistoryPort, plan_id: int | None, snap: Any, log: Log | None = None
) -> dict[str, Any]:
    """Fill ``rate`` and ``lag_s`` of ``snap``'s partition rows and the capacity of members that
    state none (a ``tables.snapshot.Snapshot``, changed in place, not written) from the
    history, then record its offsets; returns counts: partitions observed, with a rate, group
    partitions with a lag in seconds, capacities filled."""
    at = parse_utc(snap.manifest.get("snapshot_at"))
    if at is None:
        return {"partitions": 0, "rates": 0, "lag_s": 0, "capacities": 0}
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
    capacities = _capacities(store, plan_id, snap, cluster, at)
    summary = {"partitions": len(ends), "rates": len(rates), "lag_s": timed, "capacities": capacities}
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
        if capacities:
            log(f"capacity: {capacities} members that state none, from their commit rate while behind")
    return summary


def _member_id(row: dict[str, Any]) -> str:
    return str(row.get("instance_id") or row.get("member_id"))


def _capacities(store: OffsetHistoryPort, plan_id: int | None, snap: Any, cluster: Any, at: datetime) -> int:
    """Fill the capacity of members that state none from their commit rate while saturated;
    record every group partition's committed offset, lag and owner. Returns how many filled."""
    ok = {g["group"] for g in snap.groups if not g.get("error")}
    owner: dict[tuple[str, str, int], str] = {}
    for m in snap.members:
        for a in m.get("assignment") or ():
            owner[(m["group"], a["topic"], int(a["partition"]))] = _member_id(m)
    now: dict[str, dict[tuple[str, int], tuple[int | None, int | None, str | None]]] = {}
    for row in snap.partitions:
        if row.get("group") in ok and row.get("topic") is not None:
            key = (row["group"], row["topic"], int(row["partition"]))
            now.setdefault(row["group"], {})[key[1:]] = (row.get("committed"), row.get("lag"), owner.get(key))
    wanted = {m["group"] for m in snap.members if m.get("capacity") is None and m["group"] in now}
    before = at - timedelta(seconds=MIN_SPAN_S)
    previous = store.previous_positions(cluster, wanted, before) if wanted else {}
    t1 = at.timestamp()
    filled = 0
    for m in snap.members:
        group, mid = m["group"], _member_id(m)
        if m.get("capacity") is not None or group not in previous:
            continue
        t0, then = previous[group]
        mine_now = {tp: v for tp, v in now[group].items() if v[2] == mid}
        mine_then = {tp: v for tp, v in then.items() if v[2] == mid}
        if any(v[0] is None or v[1] is None for v in (*mine_now.values(), *mine_then.values())):
            continue
        rate = saturated_capacity(_positions(t0.timestamp(), mine_then), _positions(t1, mine_now))
        if rate is not None:
            m["capacity"] = rate
            filled += 1
    positions = [
        (group, tp[0], tp[1], c, lag, member)
        for group, parts in sorted(now.items())
        for tp, (c, lag, member) in sorted(parts.items())
    ]
    store.record_positions(cluster, at, positions, plan_id)
    return filled


def _positions(t: float, parts: dict[Any, tuple[Any, Any, Any]]) -> dict[Any, Position]:
    return {tp: (t, int(c), int(lag)) for tp, (c, lag, _m) in parts.items()}


def _seconds(value: datetime) -> float:
    return value.timestamp()
