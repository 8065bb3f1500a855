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

    >>> from lagassign.core.strategies.examples import example
    >>> g = example({"A": ["t"], "B": ["t"], "C": ["t"]}, {"t": [600, 500, 400, 300, 200, 200, 200]},
    ...             capacities={"A": 100, "B": 100, "C": 100})
    >>> found = exact_drain(g, None, incumbent=(9.0, 0.0, 0.0))
    >>> found.proven, found.cost[0], sorted(len(tps) for tps in found.layout.values())
    (True, 8.0, [2, 2, 3])
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from ..catchup import capacity, inflow, seconds_to_catch_up
from ..model import GroupSnapshot, TopicPartition
from ..search.time_objective import member_cost, sooner

Cost = tuple[float, float, float]
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
    group: GroupSnapshot,
    counts: dict[str, tuple[int, int]] | None,
    incumbent: Cost,
    budget: int = NODE_BUDGET,
) -> ExactResult:
    """Branch and bound below ``incumbent`` (the largest cost of the plan in hand)."""
    members = group.member_ids
    caps, rates = capacity(group), inflow(group)
    tps = sorted(group.assignable, key=lambda tp: (-group.lag[tp], -rates[tp], tp))
    lags = [group.lag[tp] for tp in tps]
    flows = [rates[tp] for tp in tps]
    topics = group.topics_of
    eligible = [[i for i, m in enumerate(members) if tp.topic in topics[m]] for tp in tps]
    cap = [caps[m] for m in members]
    low = [counts[m][0] if counts else 0 for m in members]
    high = [counts[m][1] if counts else len(tps) for m in members]
    # members alike (capacity, subscription, counts): while empty, only the first is tried
    kind = [(cap[i], topics[m], low[i], high[i]) for i, m in enumerate(members)]
    first_of: dict[tuple, int] = {}
    for i, k in enumerate(kind):
        first_of.setdefault(k, i)
    twin_of = [first_of[k] for k in kind]
    load = [0] * len(members)
    flow = [0.0] * len(members)
    held: list[list[int]] = [[] for _ in members]
    best: list = [incumbent, None]  # cost, layout (indices per member) or None
    nodes = 0
    short = sum(low)  # partitions the members still need to reach their fewest

    def visit(at: int) -> bool:  # False: out of budget
        nonlocal nodes, short
        if at == len(tps):
            if short:  # some member below its fewest: not a plan under the count rules
                return True
            worst = max(member_cost(load[i], flow[i], cap[i]) for i in range(len(members)))
            if sooner(worst, best[0]):
                best[0], best[1] = worst, [list(h) for h in held]
            return True
        nodes += 1
        if nodes > budget:
            return False
        if short > len(tps) - at:
            return True
        options = []
        for i in eligible[at]:
            if len(held[i]) >= high[i]:
                continue
            twin = twin_of[i]
            if not held[i] and twin != i and not held[twin]:
                continue
            c = member_cost(load[i] + lags[at], flow[i] + flows[at], cap[i])
            if sooner(c, best[0]):
                options.append((c, i))
        options.sort()
        for _, i in options:
            if not sooner(member_cost(load[i] + lags[at], flow[i] + flows[at], cap[i]), best[0]):
                continue  # the best plan got better since the options were listed
            filled = len(held[i]) < low[i]
            load[i] += lags[at]
            flow[i] += flows[at]
            held[i].append(at)
            short -= filled
            ok = visit(at + 1)
            short += filled
            held[i].pop()
            load[i] -= lags[at]
            flow[i] -= flows[at]
            if not ok:
                return False
        return True

    finished = visit(0)
    layout = None
    if best[1] is not None:
        layout = {m: [tps[j] for j in best[1][i]] for i, m in enumerate(members)}
    return ExactResult(layout, best[0], finished)


#: nodes the heavy-partition bound may visit (per size of the heavy set) before it gives up
HEAVY_BUDGET = 1_000


def heavy_bound(
    group: GroupSnapshot,
    counts: dict[str, tuple[int, int]],
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
    members = group.member_ids
    caps, rates = capacity(group), inflow(group)
    tps = sorted(group.assignable, key=lambda tp: (-group.lag[tp], -rates[tp], tp))
    top, rest = tps[:heavy], tps[heavy:]
    lag_fill = [0, *itertools.accumulate(sorted(group.lag[tp] for tp in rest))]
    lags = [group.lag[tp] for tp in top]
    flows = [rates[tp] for tp in top]
    cap = [caps[m] for m in members]
    low = [counts[m][0] for m in members]
    high = [counts[m][1] for m in members]
    topics = group.topics_of
    first_of: dict[tuple, int] = {}
    twin_of = [first_of.setdefault((cap[i], low[i], high[i], topics[m]), i) for i, m in enumerate(members)]
    eligible = [[i for i, m in enumerate(members) if tp.topic in topics[m]] for tp in top]
    load = [0] * len(members)
    flow = [0.0] * len(members)
    held = [0] * len(members)

    def time_of(i: int, extra_lag: int, extra_flow: float, n: int) -> float:
        need = min(len(rest), max(0, low[i] - n))
        return seconds_to_catch_up(load[i] + extra_lag + lag_fill[need], flow[i] + extra_flow, cap[i])

    base = max((time_of(i, 0, 0.0, 0) for i in range(len(members))), default=0.0)
    best = [upper]
    nodes = 0

    def visit(at: int, worst: float) -> bool:
        nonlocal nodes
        if at == len(top):
            best[0] = min(best[0], worst)
            return True
        nodes += 1
        if nodes > budget:
            return False
        options = []
        for i in eligible[at]:
            if held[i] >= high[i]:
                continue
            if not held[i] and twin_of[i] != i and not held[twin_of[i]]:
                continue  # alike and still empty: only the first of them is tried
            t = time_of(i, lags[at], flows[at], held[i] + 1)
            if t < best[0]:
                options.append((t, i))
        options.sort()
        for t, i in options:
            if t >= best[0]:
                continue
            load[i] += lags[at]
            flow[i] += flows[at]
            held[i] += 1
            ok = visit(at + 1, max(worst, t))
            held[i] -= 1
            load[i] -= lags[at]
            flow[i] -= flows[at]
            if not ok:
                return False
        return True

    if not visit(0, base):
        return None
    return best[0]


__all__ = [
    "HEAVY_BUDGET",
    "MAX_PARTITIONS",
    "ExactResult",
    "exact_drain",
    "heavy_bound",
    "member_cost",
    "sooner",
]
