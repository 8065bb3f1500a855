"""One partition's observations in the rules' window, and its status by the partition rules
(the package's doc, rules 1 to 5)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from ..catchup import duration_text
from ..inflow import clean_history, lag_seconds
from .records import PartitionInput, Point
from .statuses import OK, STALL, STOP, UNCONSUMED, WARN, Rules


def in_window(points: Sequence[Point], window_s: float) -> list[Point]:
    """The observations of the last ``window_s`` seconds (up to the newest, which is now)."""
    if not points:
        return []
    now = points[-1].t
    return [p for p in points if p.t >= now - window_s]


def unchanged_for(points: Sequence[Point]) -> float:
    """Seconds the committed offset is known not to have moved: from the first observation of
    its current value to now (a lower bound: it moved somewhere before that observation)."""
    if not points:
        return 0.0
    now = points[-1]
    first = len(points) - 1
    while first > 0 and points[first - 1].committed == now.committed:
        first -= 1
    return now.t - points[first].t


def rate(points: Sequence[Point], attr: str) -> float | None:
    """Messages per second by which ``end`` or ``committed`` moved between the first and last
    of ``points``; None without two points with that value, or when it went back."""
    known = [(p.t, getattr(p, attr)) for p in points if getattr(p, attr) is not None]
    if len(known) < 2 or known[-1][0] <= known[0][0]:
        return None
    (t0, v0), (t1, v1) = known[0], known[-1]
    return (v1 - v0) / (t1 - t0) if v1 >= v0 else None


def partition_status(
    p: PartitionInput, rules: Rules, consumers: bool, consumer_word: str = "member"
) -> tuple[str, str]:
    """(status, reason) of one partition by the partition rules (module doc); ``consumers``:
    whether the group has any consumer at all."""
    window = in_window(p.points, rules.window_s)
    now = p.now
    if now is None or now.lag is None:
        return OK, "lag unknown"
    lags = [q.lag for q in window if q.lag is not None]
    if now.lag == 0 or 0 in lags:
        return OK, "caught up in the window"
    commits = [q.committed for q in window if q.committed is not None]
    if any(b < a for a, b in pairwise(commits)):
        return WARN, f"committed offset went back (to {commits[-1]:,})"
    still = unchanged_for(p.points)
    if still >= rules.window_s:
        since = duration_text(still)
        lag = f"{now.lag:,}"
        if p.owner is not None:
            return STALL, f"no progress for {since} with lag {lag} ({consumer_word} {p.owner} holds it)"
        if not consumers:
            return STOP, f"no commit for {since} with lag {lag}, and nobody consumes the group"
        return UNCONSUMED, f"nobody holds it; no commit for {since} with lag {lag}"
    advancing = len(commits) >= 2 and commits[-2] < commits[-1]  # moved since the previous look
    if len(window) >= rules.min_points and advancing:
        steps = [b - a for a, b in pairwise(lags)]
        consumed = rate(window, "committed") or 0.0
        behind = consumed <= 0 or now.lag > consumed * rules.steady_s  # more than lag between commits
        if lags[-1] > lags[0] and all(s >= 0 for s in steps) and behind:
            return WARN, f"lag grew from {lags[0]:,} to {lags[-1]:,} while commits advance"
    return OK, "keeps up"


def partition_lag_seconds(p: PartitionInput) -> float | None:
    """Seconds since the end offset was where the consumer is now (``core.inflow``), from the
    older end offsets and the observations; None when unknown."""
    now = p.now
    if now is None or now.end is None or now.lag is None:
        return None
    series = clean_history([*p.ends, *((q.t, q.end) for q in p.points if q.end is not None)])
    return lag_seconds(series, now.end - now.lag)
