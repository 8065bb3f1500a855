"""The exact model behind lag-optimal's certificate: a mixed-integer program solved by HiGHS.

Minimise T, the largest member lag, over x[p, m] in {0, 1} (partition p to member m, only for
members subscribed to p's topic), with every partition assigned once, every member's lag at
most T, and lag-optimal's count rules (``count_rules``):

* identical subscriptions: every count within [floor(P/N) - s, ceil(P/N) + s], s the
  ``count_slack`` (s = 0: counts within one, which is Kafka's balance condition there);
* mixed subscriptions: Kafka's balance condition (a member holding a partition of topic t has
  at most one partition more than any other subscriber of t), as big-M rows on y[m, t] =
  "m holds some partition of t";
* ``max_moves``: at most that many owned partitions end with another owner.

HiGHS (``highspy``) is an optional extra (``pip install lagassign[certify]``): without it
``solver_available()`` is False and nothing here is called. Lags are integers, so the optimum
is an integer and a dual bound D proves ceil(D); the solver stops once its incumbent is
within one of that.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from ..model import GroupSnapshot, TopicPartition

Layout = dict[str, list[TopicPartition]]


def solver_available() -> bool:
    """Whether the optional solver (highspy) can be imported."""
    try:
        import highspy  # noqa: F401
    except ImportError:
        return False
    return True


def count_rules(group: GroupSnapshot, count_slack: int = 0) -> str:
    """The count rules lag-optimal keeps on this group, in words (for people and docs)."""
    if group.identical_subscriptions:
        if count_slack:
            return f"counts within floor(P/N)-{count_slack} .. ceil(P/N)+{count_slack}"
        return "counts within one"
    return "Kafka's balance condition"


def count_range(group: GroupSnapshot, count_slack: int = 0) -> tuple[int, int]:
    """Smallest and largest count a member may have under the count rules (identical subs)."""
    floor, extra = divmod(len(group.assignable), len(group.members))
    return max(0, floor - count_slack), floor + (extra > 0) + count_slack


@dataclass
class ExactResult:
    """What the solver found: an assignment (or None), its max lag, and a proven lower bound
    on the max lag of every assignment under the same rules; ``optimal`` when they meet."""

    layout: Layout | None
    max_lag: int | None
    bound: int
    optimal: bool
    seconds: float
    status: str


def solve(
    group: GroupSnapshot,
    time_limit: float,
    count_slack: int = 0,
    max_moves: int | None = None,
    start: Layout | None = None,
    known_bound: int = 0,
) -> ExactResult:
    """Minimise the largest member lag under ``count_rules`` (and ``max_moves``) within
    ``time_limit`` seconds. ``start``, a layout that meets the rules, is the first incumbent;
    ``known_bound`` (a valid lower bound) lets the solver stop as soon as it reaches it."""
    import highspy
    import numpy as np

    started = time.perf_counter()
    lag = group.lag
    members = group.member_ids
    index = {mid: i for i, mid in enumerate(members)}
    tps = sorted(group.assignable, key=lambda tp: (-lag[tp], tp))
    identical = group.identical_subscriptions
    symmetric = identical and max_moves is None
    # Columns: x[p, m] for eligible pairs, then T, then (mixed) y[m, t].
    cols: list[tuple[int, int]] = []
    for pi, tp in enumerate(tps):
        subs = group.subscribers[tp.topic]
        for mid in subs:
            mi = index[mid]
            # Identical members are interchangeable: the i-th heaviest partition may go only to
            # the first i+1 members, which removes most symmetric copies of every answer.
            if symmetric and mi > pi:
                continue
            cols.append((pi, mi))
    n_x = len(cols)
    t_col = n_x
    y_cols: dict[tuple[int, str], int] = {}
    if not identical:
        for m in group.members:
            for t in sorted(m.topics):
                y_cols[(index[m.id], t)] = n_x + 1 + len(y_cols)
    n_cols = n_x + 1 + len(y_cols)
    total = sum(lag.values())
    big = max(1, len(tps))

    rows_lo: list[float] = []
    rows_hi: list[float] = []
    starts: list[int] = [0]
    idx: list[int] = []
    val: list[float] = []

    def row(entries: list[tuple[int, float]], lo: float, hi: float) -> None:
        for c, v in entries:
            idx.append(c)
            val.append(v)
        starts.append(len(idx))
        rows_lo.append(lo)
        rows_hi.append(hi)

    by_part: list[list[int]] = [[] for _ in tps]
    by_member: list[list[int]] = [[] for _ in members]
    for c, (pi, mi) in enumerate(cols):
        by_part[pi].append(c)
        by_member[mi].append(c)
    for cs in by_part:  # every partition exactly once
        row([(c, 1.0) for c in cs], 1.0, 1.0)
    for cs in by_member:  # load <= T
        row([*((c, float(lag[tps[cols[c][0]]])) for c in cs), (t_col, -1.0)], -math.inf, 0.0)
    inf = highspy.kHighsInf
    if identical:
        low, high = count_range(group, count_slack)
        for cs in by_member:
            row([(c, 1.0) for c in cs], float(low), float(high))
    else:
        topic_of = [tp.topic for tp in tps]
        for (mi, t), yc in y_cols.items():
            held = [c for c in by_member[mi] if topic_of[cols[c][0]] == t]
            if not held:
                continue
            # y >= x for each partition of t held: sum(x) - |t| * y <= 0
            row([*((c, 1.0) for c in held), (yc, -float(len(held)))], -inf, 0.0)
            # y = 1 -> count(s) >= count(m) - 1 for every other subscriber s of t:
            # count(m) - count(s) + big * y <= big + 1
            for sid in group.subscribers[t]:
                si = index[sid]
                if si == mi:
                    continue
                diff = [*((c, 1.0) for c in by_member[mi]), *((c, -1.0) for c in by_member[si])]
                row([*diff, (yc, float(big))], -inf, float(big + 1))
    if max_moves is not None:
        owner = group.owner
        kept = [c for c, (pi, mi) in enumerate(cols) if owner.get(tps[pi]) == members[mi]]
        owned_assignable = sum(1 for tp in owner if tp in lag and tp.topic in group.subscribers)
        gone = len(owner) - owned_assignable  # owned partitions nobody may hold any more
        # moves = gone + owned_assignable - sum(kept x) <= max_moves
        row([(c, 1.0) for c in kept], float(gone + owned_assignable - max_moves), inf)

    lp = highspy.HighsLp()
    lp.num_col_ = n_cols
    lp.num_row_ = len(rows_lo)
    lp.col_cost_ = np.array([0.0] * n_x + [1.0] + [0.0] * len(y_cols))
    lp.col_lower_ = np.array([0.0] * n_x + [float(max(known_bound, 0))] + [0.0] * len(y_cols))
    lp.col_upper_ = np.array([1.0] * n_x + [float(total)] + [1.0] * len(y_cols))
    lp.row_lower_ = np.array(rows_lo)
    lp.row_upper_ = np.array(rows_hi)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(idx, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(val)
    lp.a_matrix_.num_col_ = n_cols
    lp.a_matrix_.num_row_ = len(rows_lo)
    lp.integrality_ = (
        [highspy.HighsVarType.kInteger] * n_x
        + [highspy.HighsVarType.kContinuous]
        + [highspy.HighsVarType.kInteger] * len(y_cols)
    )

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", 0)
    h.setOptionValue("time_limit", max(0.01, float(time_limit)))
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.999)
    h.passModel(lp)
    if start is not None:
        if symmetric:
            start = _relabel(start, tps, members)
        sol = highspy.HighsSolution()
        sol.col_value = _start_vector(start, cols, tps, members, index, n_cols, t_col, y_cols, lag)
        sol.value_valid = True
        h.setSolution(sol)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    dual = info.mip_dual_bound
    bound = known_bound
    if dual is not None and math.isfinite(dual):
        # Lags are integers: no assignment has a max lag below ceil(dual bound), give or take
        # the solver's tolerance on numbers this large.
        bound = max(bound, math.ceil(dual - 1e-9 * max(1.0, abs(dual))))
    layout: Layout | None = None
    max_lag = None
    if info.primal_solution_status == 2 or h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
        x = h.getSolution().col_value
        layout = {mid: [] for mid in members}
        for c, (pi, mi) in enumerate(cols):
            if x[c] > 0.5:
                layout[members[mi]].append(tps[pi])
        if sum(len(v) for v in layout.values()) == len(tps):
            max_lag = max(sum(lag[tp] for tp in v) for v in layout.values())
        else:  # should not happen; never trust a broken answer
            layout = None
    optimal = max_lag is not None and max_lag <= bound
    return ExactResult(layout, max_lag, bound, optimal, time.perf_counter() - started, status)


def _relabel(start: Layout, tps: list[TopicPartition], members: list[str]) -> Layout:
    """The same layout with members renamed (identical members are interchangeable) so that
    the i-th heaviest partition sits on one of the first i+1 members, as the model requires."""
    where = {tp: mid for mid, held in start.items() for tp in held}
    order: list[str] = []
    for tp in tps:
        mid = where[tp]
        if mid not in order:
            order.append(mid)
    order += [mid for mid in members if mid not in order]
    return {new: list(start[old]) for new, old in zip(members, order, strict=True)}


def _start_vector(start, cols, tps, members, index, n_cols, t_col, y_cols, lag) -> list[float]:
    where = {tp: index[mid] for mid, held in start.items() for tp in held}
    vec = [0.0] * n_cols
    for c, (pi, mi) in enumerate(cols):
        if where.get(tps[pi]) == mi:
            vec[c] = 1.0
    vec[t_col] = float(max(sum(lag[tp] for tp in held) for held in start.values()))
    for (mi, t), yc in y_cols.items():
        if any(tp.topic == t for tp in start[members[mi]]):
            vec[yc] = 1.0
    return vec
