"""Inflow and lag in seconds from successive observations of a partition's end offset.

Each planning run observes every partition's end offset at the snapshot's time; the audit store
keeps these observations for a while (``store.offsets``). From them, per partition:

* inflow (``rate``): messages produced per second, Δend / Δt between the newest earlier
  observation at least ``MIN_SPAN_S`` old and now. An end offset that went down (the topic was
  deleted and created again, or the log truncated) or no earlier observation: unknown (None),
  never a guess: without inflow the planner behaves as before.
* lag in seconds (``lag_seconds``): how long ago the end offset was where the consumer's
  position is now, read off the history of (time, end offset) points as kafka-lag-exporter
  does: interpolated between the two points around the position, else extrapolated along the
  trend of the oldest and newest points. 0 when the position is the end; unknown (None) with
  fewer than two points, or when the end never moved (no trend to extrapolate along).

Times are seconds (any epoch, e.g. ``datetime.timestamp()``); offsets whole numbers.

Example: ends 1,000 at t=0 and 1,600 at t=60: inflow 10 msg/s; a consumer at 1,300 is 30 s
behind (the end was 1,300 at t=30), one at 700 is 90 s behind (extrapolated).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from .catchup import duration_text

Point = tuple[float, int]
"""(time in seconds, end offset) of one partition at one observation."""

K = TypeVar("K")

#: Observations closer together than this give no rate (a retried run seconds after the first
#: would turn a burst of a few messages into a rate).
MIN_SPAN_S = 10.0


def clean_history(points: Iterable[Point]) -> list[Point]:
    """Points in time order, one per time, cut to the newest run in which the end offset never
    went down (what came before a reset belongs to another log)."""
    by_time: dict[float, int] = {}
    for t, end in points:
        by_time[float(t)] = int(end)  # one reading per time (the last one given)
    ordered = sorted(by_time.items())
    start = 0
    for i in range(1, len(ordered)):
        if ordered[i][1] < ordered[i - 1][1]:
            start = i
    return ordered[start:]


def inflow_rate(earlier: Iterable[Point], now: Point, min_span: float = MIN_SPAN_S) -> float | None:
    """Messages per second produced since the newest ``earlier`` point at least ``min_span``
    before ``now``; None when there is none or the end offset went down since."""
    t_now, end_now = float(now[0]), int(now[1])
    usable = [(t, e) for t, e in earlier if t_now - t >= min_span]
    if not usable:
        return None
    t0, end0 = max(usable, key=lambda p: p[0])
    if end_now < end0:
        return None
    return (end_now - end0) / (t_now - t0)


def inflow_rates(
    history: Mapping[K, Sequence[Point]], now: Mapping[K, Point], min_span: float = MIN_SPAN_S
) -> dict[K, float]:
    """``inflow_rate`` for every key of ``now`` whose rate is known (the others are left out)."""
    rates = {key: inflow_rate(history.get(key, ()), point, min_span) for key, point in now.items()}
    return {key: rate for key, rate in rates.items() if rate is not None}


def lag_seconds(history: Iterable[Point], position: int) -> float | None:
    """Seconds since the end offset was ``position`` (the consumer's next offset to read), from
    the partition's points, the newest being now. See the module doc for the rules."""
    points = clean_history(history)
    if not points:
        return None
    t_now, end_now = points[-1]
    if position >= end_now:
        return 0.0
    if len(points) < 2:
        return None
    # newest segment whose ends enclose the position: when the end stood still at the position
    # for a while, the moment it last was there counts
    for (t0, e0), (t1, e1) in zip(reversed(points[:-1]), reversed(points[1:]), strict=True):
        if e0 <= position <= e1 and e1 > e0:
            return max(0.0, t_now - _at(position, (t0, e0), (t1, e1)))
    (t0, e0), (t1, e1) = points[0], points[-1]
    if e1 == e0:
        return None  # the end never moved in the window: no trend to read the time off
    return max(0.0, t_now - _at(position, (t0, e0), (t1, e1)))


def _at(offset: int, left: Point, right: Point) -> float:
    """When the line through ``left`` and ``right`` reached ``offset``."""
    (t0, e0), (t1, e1) = left, right
    return t1 - (e1 - offset) * (t1 - t0) / (e1 - e0)


def lag_time_text(times: Mapping[tuple[str, int], float] | None) -> str | None:
    """'lag in time up to 3 min (orders-2)': the partition furthest behind in seconds; None when
    no partition is known to be behind (0 s says nothing of partitions whose time is unknown)."""
    if not times:
        return None
    (topic, part), worst = max(times.items(), key=lambda kv: (kv[1], kv[0]))
    if worst <= 0:
        return None
    return f"lag in time up to {duration_text(worst)} ({topic}-{part})"


Position = tuple[float, int, int]
"""(time in seconds, committed offset, lag) of one group's partition at one observation."""


def saturated_capacity(
    earlier: Mapping[K, Position], now: Mapping[K, Position], min_span: float = MIN_SPAN_S
) -> float | None:
    """Messages per second a member processed while it was saturated, from its partitions'
    committed offsets at two observations: Σ Δcommitted / Δt, known only when it held the same
    partitions both times (``earlier`` and ``now`` have the same keys), each one behind (lag >
    0) at both, no committed offset went back, the observations are at least ``min_span``
    apart, and it committed something. A member that caught up somewhere in between may have
    idled, so its figure is a floor of what it can do; one that never caught up shows it."""
    if not now or set(earlier) != set(now):
        return None
    times = {p[0] for p in now.values()} | {p[0] for p in earlier.values()}
    t0 = max(p[0] for p in earlier.values())
    t1 = min(p[0] for p in now.values())
    if len(times) > 2 or t1 - t0 < min_span:
        return None  # one time per observation, far enough apart
    done = 0
    for key, (_, committed, lag) in now.items():
        _, before, lag_before = earlier[key]
        if lag <= 0 or lag_before <= 0 or committed < before:
            return None
        done += committed - before
    return done / (t1 - t0) if done > 0 else None
