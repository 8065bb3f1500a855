"""The exact model behind lag-optimal's certificate: a mixed-integer program solved by HiGHS.

Minimise T, the largest member lag, over x[p, m] in {0, 1} (partition p to member m, only for
members subscribed to p's topic), with every partition assigned once, every member's lag at
most T, and lag-optimal's count rules:

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
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..bounds import count_range
from ..errors import StrategyOptionError
from ..model import GroupSnapshot, TopicPartition
from .highs import Layout, PairColumns, Row, quiet_solver, rowwise_milp


def solver_available() -> bool:
    """Whether the optional solver (highspy) can be imported."""
    try:
        import highspy  # noqa: F401
    except ImportError:
        return False
    return True


def deal_to_owners(
    owner: dict[TopicPartition, str], members: list[str], sets: list[list[TopicPartition]]
) -> dict[str, list[TopicPartition]]:
    """Give interchangeable ``members`` the partition ``sets`` of a solved plan, each set to the
    member that owns most of it now (greedy, largest overlap first), the rest in member order:
    the same plan with no more moves than it must make. Example: C0 owns t-0, C1 owns t-1, sets
    [[t-1, t-2], [t-0]] -> C0 [t-0], C1 [t-1, t-2]."""
    alike = set(members)
    overlap = []
    for i, tps in enumerate(sets):
        held = Counter(m for m in map(owner.get, tps) if m in alike)
        overlap += [(-n, i, m) for m, n in held.items()]
    given: dict[str, list[TopicPartition]] = {}
    used: set[int] = set()
    for _, i, m in sorted(overlap):
        if i not in used and m not in given:
            given[m] = sets[i]
            used.add(i)
    rest = iter(i for i in range(len(sets)) if i not in used)
    for m in members:
        if m not in given:
            given[m] = sets[next(rest)]
    return given


def check_exact_budget(exact_budget: float | None) -> None:
    """Refuse an ``exact_budget`` option that is not a finite number of seconds >= 0, or that
    asks for the solver (> 0) where it is not installed: one line, before any work."""
    if exact_budget is None:
        return
    if (
        isinstance(exact_budget, bool)
        or not isinstance(exact_budget, int | float)
        or not (0 <= exact_budget < float("inf"))
    ):
        raise StrategyOptionError(
            f"exact_budget must be a non-negative number of seconds, got {exact_budget!r}"
        )
    if exact_budget > 0 and not solver_available():
        raise StrategyOptionError(
            "exact_budget needs the optional solver: pip install 'lagassign[certify]' (highspy)"
        )


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
    """Minimise the largest member lag under the count rules (and ``max_moves``) within
    ``time_limit`` seconds. ``start``, a layout that meets the rules, is the first incumbent;
    ``known_bound`` (a valid lower bound) lets the solver stop as soon as it reaches it."""
    import highspy

    started = time.perf_counter()
    model = _Model(group, count_slack, max_moves)
    h = quiet_solver(model.highs_lp(known_bound), time_limit, mip_rel_gap=0.0, mip_abs_gap=0.999)
    if start is not None:
        if model.symmetric:
            start = _relabel(start, model.tps, model.members)
        sol = highspy.HighsSolution()
        sol.col_value = model.start_vector(start)
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
        layout = model.cols.layout(h.getSolution().col_value)
        if layout is not None:
            max_lag = max(sum(group.lag[tp] for tp in v) for v in layout.values())
    optimal = max_lag is not None and max_lag <= bound
    return ExactResult(layout, max_lag, bound, optimal, time.perf_counter() - started, status)


class _Model:
    """The mixed-integer model: columns x[p, m] for eligible (partition, member) pairs, then T
    (the max lag, minimised), then (mixed subscriptions) y[m, t] for "member m holds a
    partition of topic t"; its rows as ``highs.Row``."""

    def __init__(self, group: GroupSnapshot, count_slack: int, max_moves: int | None) -> None:
        lag = group.lag
        self.group = group
        self.members = group.member_ids
        self.index = {mid: i for i, mid in enumerate(self.members)}
        self.tps = sorted(group.assignable, key=lambda tp: (-lag[tp], tp))  # heaviest first
        identical = group.identical_subscriptions
        self.symmetric = identical and max_moves is None
        pairs = [
            (pi, self.index[mid])
            for pi, tp in enumerate(self.tps)
            for mid in group.subscribers[tp.topic]
            # Identical members are interchangeable: the i-th heaviest partition may go only to
            # the first i+1 members, which removes most symmetric copies of every answer.
            if not (self.symmetric and self.index[mid] > pi)
        ]
        self.cols = PairColumns(pairs, self.tps, self.members)
        self.t_col = len(pairs)
        self.y_cols: dict[tuple[int, str], int] = {}
        if not identical:
            for m in group.members:
                for t in sorted(m.topics):
                    self.y_cols[(self.index[m.id], t)] = self.t_col + 1 + len(self.y_cols)
        self.rows = self._rows(count_slack, max_moves)

    def _rows(self, count_slack: int, max_moves: int | None) -> list[Row]:
        group, tps, lag = self.group, self.tps, self.group.lag
        pairs, by_member = self.cols.pairs, self.cols.by_member
        inf = math.inf
        rows: list[Row] = [(dict.fromkeys(cs, 1.0), 1.0, 1.0) for cs in self.cols.by_part]  # each once
        for cs in by_member:  # load <= T
            rows.append(({**{c: float(lag[tps[pairs[c][0]]]) for c in cs}, self.t_col: -1.0}, -inf, 0.0))
        if not self.y_cols:
            low, high = count_range(group, count_slack)
            rows += [(dict.fromkeys(cs, 1.0), float(low), float(high)) for cs in by_member]
        else:
            big = max(1, len(tps))
            for (mi, t), yc in self.y_cols.items():
                held = [c for c in by_member[mi] if tps[pairs[c][0]].topic == t]
                if not held:
                    continue
                # y >= x for each partition of t held: sum(x) - |t| * y <= 0
                rows.append(({**dict.fromkeys(held, 1.0), yc: -float(len(held))}, -inf, 0.0))
                # y = 1 -> count(s) >= count(m) - 1 for every other subscriber s of t:
                # count(m) - count(s) + big * y <= big + 1
                for sid in group.subscribers[t]:
                    si = self.index[sid]
                    if si != mi:
                        diff = {**dict.fromkeys(by_member[mi], 1.0), **dict.fromkeys(by_member[si], -1.0)}
                        rows.append(({**diff, yc: float(big)}, -inf, float(big + 1)))
        if max_moves is not None:
            owner = group.owner
            kept = [c for c, (pi, mi) in enumerate(pairs) if owner.get(tps[pi]) == self.members[mi]]
            owned_assignable = sum(1 for tp in owner if tp in lag and tp.topic in group.subscribers)
            gone = len(owner) - owned_assignable  # owned partitions nobody may hold any more
            # moves = gone + owned_assignable - sum(kept x) <= max_moves
            rows.append((dict.fromkeys(kept, 1.0), float(gone + owned_assignable - max_moves), inf))
        return rows

    def highs_lp(self, known_bound: int) -> Any:
        """The model as a ``highspy.HighsLp``; T starts at ``known_bound``."""
        n_x, n_y = self.t_col, len(self.y_cols)
        total = sum(self.group.lag.values())
        lower = [0.0] * n_x + [float(max(known_bound, 0))] + [0.0] * n_y
        upper = [1.0] * n_x + [float(total)] + [1.0] * n_y
        return rowwise_milp(
            [0.0] * n_x + [1.0] + [0.0] * n_y,
            (lower, upper),
            self.rows,
            [True] * n_x + [False] + [True] * n_y,
        )

    def start_vector(self, start: Layout) -> list[float]:
        """Column values of a layout, for the solver's first incumbent."""
        where = {tp: self.index[mid] for mid, held in start.items() for tp in held}
        vec = [0.0] * (self.t_col + 1 + len(self.y_cols))
        for c, (pi, mi) in enumerate(self.cols.pairs):
            if where.get(self.tps[pi]) == mi:
                vec[c] = 1.0
        vec[self.t_col] = float(max(sum(self.group.lag[tp] for tp in held) for held in start.values()))
        for (mi, t), yc in self.y_cols.items():
            if any(tp.topic == t for tp in start[self.members[mi]]):
                vec[yc] = 1.0
        return vec


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
