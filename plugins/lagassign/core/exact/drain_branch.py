"""An exact search for drain-optimal on small groups: the plan is proved, or bettered.

drain-optimal's local search ends where no move, swap or re-split of two members helps; on a
group of a dozen partitions that can still be a few percent above the best plan, and its
lower bound alone cannot tell. This module settles small groups by branch and bound: the
partitions, heaviest first, each to every eligible member with room, pruned as soon as one
member finishes no sooner than the best plan known (a member's catch-up time only grows with
what it is given), as soon as the partitions left cannot fill the members' fewest, and across
members that are alike and still empty (only the first of them is tried). Starting from the
local search's plan, it either finds one that finishes strictly sooner or proves that none
exists under the count rules, within a budget of nodes.

Example: three equal members, partitions of 6, 5, 4, 3, 2, 2 and 2 seconds of work; whatever
the search found, the search proves 8 s the best (6+2, 5+3, 4+2+2)::

    >>> from lagassign.core.exact.drain_bounds import free_counts
    >>> from lagassign.core.strategies.examples import example
    >>> g = example({"A": ["t"], "B": ["t"], "C": ["t"]}, {"t": [600, 500, 400, 300, 200, 200, 200]},
    ...             capacities={"A": 100, "B": 100, "C": 100})
    >>> found = exact_drain(g, free_counts(g), incumbent=(9.0, 0.0, 0.0))
    >>> found.proven, found.cost[0], sorted(len(tps) for tps in found.layout.values())
    (True, 8.0, [2, 2, 3])
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..catchup import capacity, inflow, seconds_to_catch_up
from ..model import GroupSnapshot, TopicPartition
from ..search.time_objective import member_cost, sooner

Cost = tuple[float, float, float]
#: (fewest, most) partitions per member id: the count rules a plan keeps
Counts = dict[str, tuple[int, int]]
#: partitions above which the exact search is not tried (its work grows as members^partitions)
MAX_PARTITIONS = 16
NODE_BUDGET = 200_000


@dataclass
class ExactResult:
    """A plan strictly sooner than the incumbent (``layout`` None when there is none), its
    cost, and whether the search finished: then nothing under the count rules is sooner."""

    layout: dict[str, list[TopicPartition]] | None
    cost: Cost
    proven: bool


def exact_drain(
    group: GroupSnapshot, counts: Counts, incumbent: Cost, budget: int = NODE_BUDGET
) -> ExactResult:
    """Branch and bound below ``incumbent`` (the largest cost of the plan in hand)."""
    search = _Exact(group, counts, incumbent, budget)
    finished = search.visit(0)
    layout = None
    if search.found is not None:
        tps = search.tps
        layout = {m: [tps[j] for j in search.found[i]] for i, m in enumerate(group.member_ids)}
    return ExactResult(layout, search.best, finished)


def heaviest_first(group: GroupSnapshot, rates: dict[TopicPartition, float]) -> list[TopicPartition]:
    """The group's partitions by lag, then inflow (``rates``, as ``catchup.inflow`` gives them),
    heaviest first (the exact searches' order)."""
    return sorted(group.assignable, key=lambda tp: (-group.lag[tp], -rates[tp], tp))


@dataclass
class Members:
    """What the exact searches read of the members, by place in ``group.member_ids``: capacity,
    fewest and most partitions, and the first of the members alike (capacity, subscription,
    counts), which are interchangeable: while a member and that first one are both empty,
    only the first is tried."""

    cap: list[float]
    low: list[int]
    high: list[int]
    twin: list[int]

    @classmethod
    def of(cls, group: GroupSnapshot, counts: Counts) -> Members:
        members, caps, topics = group.member_ids, capacity(group), group.topics_of
        cap = [caps[m] for m in members]
        low = [counts[m][0] for m in members]
        high = [counts[m][1] for m in members]
        first_of: dict[tuple, int] = {}
        twin = [first_of.setdefault((cap[i], topics[m], low[i], high[i]), i) for i, m in enumerate(members)]
        return cls(cap, low, high, twin)

    def skipped(self, i: int, held: Sequence[Any]) -> bool:
        """Whether member ``i`` is not tried: it holds nothing (``held``: its partitions or their
        count), and nor does the first member alike to it."""
        return not held[i] and self.twin[i] != i and not held[self.twin[i]]


def _eligible(group: GroupSnapshot, tps: list[TopicPartition]) -> list[list[int]]:
    """Per partition, the places of the members subscribing to its topic."""
    topics = group.topics_of
    return [[i for i, m in enumerate(group.member_ids) if tp.topic in topics[m]] for tp in tps]


class _Branch:
    """What both branch and bounds keep: partitions ``tps`` (heaviest first), each placed on a
    member that may take it (``rates``: the partitions' inflows); the members' lag, inflow and
    partitions so far; the nodes."""

    def __init__(
        self,
        group: GroupSnapshot,
        counts: Counts,
        tps: list[TopicPartition],
        rates: dict[TopicPartition, float],
        budget: int,
    ) -> None:
        self.lags = [group.lag[tp] for tp in tps]
        self.flows = [rates[tp] for tp in tps]
        self.eligible = _eligible(group, tps)
        self.members = Members.of(group, counts)
        n = len(group.members)
        self.load, self.flow = [0] * n, [0.0] * n
        self.held: list[list[int]] = [[] for _ in range(n)]
        self.nodes, self.budget = 0, budget

    def cost(self, i: int, at: int) -> Any:
        """Member ``i``'s cost once it takes partition ``at``."""
        raise NotImplementedError

    def better(self, cost: Any) -> bool:
        """Whether ``cost`` is below the best found (a branch at or above it is pruned)."""
        raise NotImplementedError

    def options(self, at: int) -> list[tuple[Any, int]]:
        """The members partition ``at`` may go to, with their costs after it, cheapest first."""
        held, members = self.held, self.members
        options = []
        for i in self.eligible[at]:
            if len(held[i]) >= members.high[i] or members.skipped(i, held):
                continue
            c = self.cost(i, at)
            if self.better(c):
                options.append((c, i))
        options.sort()
        return options

    def place(self, i: int, at: int, sign: int) -> None:
        """Member ``i`` takes partition ``at`` (``sign`` 1) or gives it back (-1)."""
        self.load[i] += sign * self.lags[at]
        self.flow[i] += sign * self.flows[at]
        if sign > 0:
            self.held[i].append(at)
        else:
            self.held[i].pop()


class _Exact(_Branch):
    """``exact_drain``'s branch and bound: partition ``at`` (heaviest first) to each member
    that may take it and still finish sooner than the best plan, cheapest first."""

    def __init__(self, group: GroupSnapshot, counts: Counts, incumbent: Cost, budget: int) -> None:
        rates = inflow(group)
        self.tps = heaviest_first(group, rates)
        super().__init__(group, counts, self.tps, rates, budget)
        self.best = incumbent
        self.found: list[list[int]] | None = None  # the best plan's partitions per member
        self.short = sum(self.members.low)  # partitions the members still need to reach their fewest

    def cost(self, i: int, at: int) -> Cost:
        return member_cost(self.load[i] + self.lags[at], self.flow[i] + self.flows[at], self.members.cap[i])

    def better(self, cost: Cost) -> bool:
        return sooner(cost, self.best)

    def visit(self, at: int) -> bool:
        """Every plan from partition ``at`` on; False when the budget ran out."""
        if at == len(self.tps):
            self._finish()
            return True
        self.nodes += 1
        if self.nodes > self.budget:
            return False
        if self.short > len(self.tps) - at:
            return True
        held, low = self.held, self.members.low
        for _, i in self.options(at):
            if not sooner(self.cost(i, at), self.best):
                continue  # the best plan got better since the options were listed
            filled = len(held[i]) < low[i]
            self.place(i, at, 1)
            self.short -= filled
            ok = self.visit(at + 1)
            self.short += filled
            self.place(i, at, -1)
            if not ok:
                return False
        return True

    def _finish(self) -> None:
        """A plan, when every member holds its fewest: kept when sooner than the best."""
        if self.short:
            return
        cap = self.members.cap
        worst = max(member_cost(self.load[i], self.flow[i], cap[i]) for i in range(len(cap)))
        if sooner(worst, self.best):
            self.best, self.found = worst, [list(h) for h in self.held]


#: nodes the heavy-partition bound may visit (per size of the heavy set) before it gives up
HEAVY_BUDGET = 1_000


def heavy_bound(
    group: GroupSnapshot,
    counts: Counts,
    heavy: int,
    upper: float = math.inf,
    budget: int = HEAVY_BUDGET,
) -> float | None:
    """A largest catch-up time no plan under ``counts`` beats, from its ``heavy`` heaviest
    partitions: every plan puts each of them on some member, and a member m holding k of them
    holds at least (fewest_m - k) others too, at best the lightest of the rest (the smallest
    lags, counted without inflow: so a member's time only grows as it takes more). The
    smallest largest time over every placement of the heavy partitions, each member topped
    up so, is a bound (a relaxation of the plan); branch and bound finds it, pruning at
    ``upper`` (a plan's time: the bound is then at most that). None when the search does not
    finish within ``budget`` nodes. Each partition goes only to its topic's subscribers (with
    mixed subscriptions drain-optimal's counts are free: fewest 0, most all).

    Where it helps: a hot partition on a member whose count forces more partitions onto it,
    or more hot partitions than fast members (the pooled bound spreads them thin)."""
    search = _HeavyBound(group, counts, heavy, upper, budget)
    n = len(group.members)
    base = max((search.time_of(i, 0, 0.0, 0) for i in range(n)), default=0.0)
    return search.best if search.visit(0, base) else None


class _HeavyBound(_Branch):
    """``heavy_bound``'s branch and bound: heavy partition ``at`` to each member that may take
    it, the largest time so far ``worst``, pruned at the best found."""

    def __init__(self, group: GroupSnapshot, counts: Counts, heavy: int, upper: float, budget: int) -> None:
        rates = inflow(group)
        tps = heaviest_first(group, rates)
        top, self.rest = tps[:heavy], tps[heavy:]
        super().__init__(group, counts, top, rates, budget)
        self.lag_fill = [0, *itertools.accumulate(sorted(group.lag[tp] for tp in self.rest))]
        self.best = upper

    def time_of(self, i: int, extra_lag: int, extra_flow: float, n: int) -> float:
        """Member ``i``'s time holding ``n`` heavy partitions and these extras, topped up to its
        fewest with the lightest of the rest."""
        need = min(len(self.rest), max(0, self.members.low[i] - n))
        load = self.load[i] + extra_lag + self.lag_fill[need]
        return seconds_to_catch_up(load, self.flow[i] + extra_flow, self.members.cap[i])

    def cost(self, i: int, at: int) -> float:
        return self.time_of(i, self.lags[at], self.flows[at], len(self.held[i]) + 1)

    def better(self, cost: float) -> bool:
        return cost < self.best

    def visit(self, at: int, worst: float) -> bool:
        """Every placement from heavy partition ``at`` on; False when the budget ran out."""
        if at == len(self.lags):
            self.best = min(self.best, worst)
            return True
        self.nodes += 1
        if self.nodes > self.budget:
            return False
        for t, i in self.options(at):
            if t >= self.best:
                continue
            self.place(i, at, 1)
            ok = self.visit(at + 1, max(worst, t))
            self.place(i, at, -1)
            if not ok:
                return False
        return True


__all__ = [
    "HEAVY_BUDGET",
    "MAX_PARTITIONS",
    "Counts",
    "ExactResult",
    "Members",
    "exact_drain",
    "heaviest_first",
    "heavy_bound",
    "member_cost",
    "sooner",
]
