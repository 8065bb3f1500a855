"""drain-optimal's exact polish: the smallest largest catch-up time by bisection on MILPs (HiGHS).

A member m of capacity c_m holding partitions with lags L_p and inflows R_p catches up after
sum(L) / (c_m - sum(R)) seconds; that is at most T exactly when

    sum_p (L_p + T * R_p) * x[p, m] <= T * c_m

which, for a fixed T, is linear: whether some plan catches up within T is the feasibility of a
bin-packing MILP (x[p, m] binary for eligible pairs, every partition once, drain-optimal's count
rules ``counts``). Bisection between a lower bound and the plan in hand settles the optimum:
each T the solver shows feasible gives a plan that finishes by T (the new upper end: its own
time), each T it proves infeasible is a certified lower bound (no plan under the count rules
finishes by it). Within a budget of seconds the answer is a plan and a bound around it;
``proven`` when they meet (to a relative 1e-6).

Members alike (same capacity, subscription and counts) are interchangeable: within each such
class the j-th member may hold only partitions from the j-th heaviest on, which removes their
symmetric copies of every plan (as ``lag_milp`` does for lag-optimal).

HiGHS (``highspy``) is the optional ``certify`` extra; without it ``lag_milp.solver_available()``
is False and nothing here runs.

Example: three equal members, partitions of 6, 5, 4, 3, 2, 2 and 2 seconds of work, a plan of
9 s and a bound of 7 s: bisection finds 8 s (6+2, 5+3, 4+2+2) and proves nothing finishes by
less (needs highspy)::

    >>> from lagassign.core.exact.drain_bounds import free_counts
    >>> from lagassign.core.strategies.examples import example
    >>> g = example({"A": ["t"], "B": ["t"], "C": ["t"]}, {"t": [600, 500, 400, 300, 200, 200, 200]},
    ...             capacities={"A": 100, "B": 100, "C": 100})
    >>> r = bisect_drain(g, free_counts(g), 9.0, 7.0, budget=10.0)  # doctest: +SKIP
    >>> r.proven, round(r.upper, 6), sorted(len(tps) for tps in r.layout.values())  # doctest: +SKIP
    (True, 8.0, [2, 2, 3])
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from ..catchup import capacity, inflow, member_times
from ..model import GroupSnapshot
from .drain_branch import Counts, Members, heaviest_first
from .highs import Layout, PairColumns, Row, quiet_solver, rowwise_milp
from .lag_milp import deal_to_owners

#: bisection stops once the plan is within this factor of the certified bound
TOLERANCE = 1e-6


@dataclass
class DrainMilpResult:
    """The best plan found (``layout`` None: none better than the one given), its largest
    catch-up time ``upper``, a certified lower bound ``lower``, and whether they meet."""

    layout: Layout | None
    upper: float
    lower: float
    proven: bool


class _Feasibility:
    """The bin-packing model for one group; ``test(T)`` builds it for one time T."""

    def __init__(self, group: GroupSnapshot, counts: Counts) -> None:
        self.group = group
        self.members = group.member_ids
        self.caps, self.rates = capacity(group), inflow(group)
        self.tps = heaviest_first(group, self.rates)
        self.counts = counts
        # the members alike (``Members.twin``), and each one's place among them
        twin = Members.of(group, counts).twin
        self.classes: dict[int, list[str]] = {}
        rank = []
        for mi, m in enumerate(self.members):
            alike = self.classes.setdefault(twin[mi], [])
            rank.append(len(alike))
            alike.append(m)
        topics = group.topics_of
        pairs = [
            (pi, mi)
            for pi, tp in enumerate(self.tps)
            for mi, m in enumerate(self.members)
            if tp.topic in topics[m] and rank[mi] <= pi
        ]
        self.cols = PairColumns(pairs, self.tps, self.members)

    def highs(self, t: float, time_limit: float) -> Any:
        """A HiGHS instance of the model at ``t`` seconds: every partition on one member, every
        member done by ``t`` and within its counts."""
        lag, tps, pairs = self.group.lag, self.tps, self.cols.pairs
        rows: list[Row] = [(dict.fromkeys(cs, 1.0), 1.0, 1.0) for cs in self.cols.by_part]
        for m, cs in zip(self.members, self.cols.by_member, strict=True):
            # work in seconds: (L + T R) / c <= T
            work = {c: (lag[tps[pairs[c][0]]] + t * self.rates[tps[pairs[c][0]]]) / self.caps[m] for c in cs}
            rows.append((work, -math.inf, t))
            low, high = self.counts[m]
            if low > 0 or high < len(tps):
                rows.append((dict.fromkeys(cs, 1.0), float(low), float(high)))
        n = len(pairs)
        return quiet_solver(rowwise_milp([0.0] * n, ([0.0] * n, [1.0] * n), rows, [True] * n), time_limit)

    def test(self, t: float, time_limit: float) -> tuple[str, Layout | None]:
        """('feasible', a plan finishing by ``t``), ('infeasible', None) or ('unknown', None)."""
        import highspy

        h = self.highs(t, time_limit)
        h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return "infeasible", None
        if h.getInfo().primal_solution_status == 2:
            layout = self.cols.layout(h.getSolution().col_value)
            if layout is not None:
                return "feasible", layout
        return "unknown", None

    def keep_owners(self, layout: Layout) -> Layout:
        """The same plan with its partition sets dealt within each class of interchangeable
        members to the member that owns most of a set now (greedy): no more moves than needed."""
        owner = self.group.owner
        out: Layout = {}
        for alike in self.classes.values():
            out.update(deal_to_owners(owner, alike, [layout[m] for m in alike]))
        return out


def bisect_drain(
    group: GroupSnapshot, counts: Counts, upper: float, lower: float, budget: float
) -> DrainMilpResult:
    """Bisection on the largest catch-up time between ``lower`` (a valid bound) and ``upper``
    (the time of the plan in hand) within ``budget`` seconds of solver time."""
    started = time.perf_counter()
    model = _Feasibility(group, counts)
    best: Layout | None = None
    if not math.isfinite(upper) or lower <= 0:
        return DrainMilpResult(None, upper, lower, upper <= lower * (1 + TOLERANCE))
    ceiling = upper  # tests at or above this gave no answer in time: go no lower than needed
    while upper > lower * (1 + TOLERANCE):
        left = budget - (time.perf_counter() - started)
        if left <= 0.01:
            break
        t = math.sqrt(upper * (lower if ceiling >= upper else max(lower, ceiling)))
        if not lower < t < upper:
            break
        # no single test may take the whole budget: an unanswered one is retried nearer the plan
        status, layout = model.test(t, max(0.01, min(left, budget / 3)))
        if status == "feasible" and layout is not None:
            found = max(member_times(group, layout).values())
            if not found < upper:
                break  # the solver's tolerance at the edge: no progress to make
            best, upper = layout, found
        elif status == "infeasible":
            lower = t
        else:
            ceiling = t
    if best is not None and group.owner:
        best = model.keep_owners(best)
    proven = upper <= lower * (1 + TOLERANCE)
    return DrainMilpResult(best, upper, lower, proven)


__all__ = ["DrainMilpResult", "bisect_drain"]
