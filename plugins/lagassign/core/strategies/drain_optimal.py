"""drain-optimal: the smallest possible largest catch-up time, counts in proportion to capacity.

Spec: lagassign's own (planning in time; ``core/catchup.py`` defines catch-up time and its
bound). Lag-based assignors balance messages; a member that reads partitions with inflow, or
that is slower, needs less lag to finish at the same time. With every capacity equal and every
inflow zero, catch-up time is lag over one constant, and this strategy *is* ``lag-optimal``
(the same plan, delegated); so it is, too, for groups without capacities.

Otherwise, with capacities c_m (messages per second) and inflows r_p:
1. Count rules: with one shared subscription, member m holds floor(q_m) or ceil(q_m)
   partitions, q_m = P * c_m / sum(c): a twice as fast member reads twice as many; or, where
   they catch up sooner, lag-optimal's floor(P/N) or ceil(P/N) each (proportional counts are
   a rule of thumb for unequal members; a hot partition or inflow can make them cost time,
   and the strategy built to catch up soonest must not lose to the one that balances
   messages). With mixed subscriptions counts are free (only subscriptions bind).
2. Seeds, under each count rule: a greedy pass (heaviest partition first, to the eligible
   member with room whose catch-up time stays smallest), lag-optimal's plan brought within
   the counts, and, when members own partitions, a sticky one (owned partitions stay, up to
   each member's count); each then fills members below their fewest. With mixed
   subscriptions (free counts) the greedy pass is dealt twice more, within the most either
   rule of identical subscriptions allows (each a start from which the search may end sooner).
3. Local search from each seed: ``search.engine.Search`` with ``TimeObjective`` (the slowest
   member exchanges with whichever member lets both finish soonest, every candidate weighed
   at once; where stuck it re-splits or trades a few partitions for a few; partitions go back
   to their owner wherever that costs nothing). ``max_moves`` caps the partitions that leave
   their owner.
4. The best search wins: smallest largest time, then fewest moves. Members that can never
   catch up (inflow at or above capacity) are ranked by how far their inflow exceeds capacity.
5. Groups of up to 16 partitions (without ``max_moves``): an exact branch and bound
   (``exact.drain_branch``), under each count rule, either finds a plan that finishes strictly
   sooner or proves that none exists; a proved plan reports ``catch_up_optimal``.
6. ``exact_budget`` (seconds, default off; needs the ``certify`` extra, highspy, as
   lag-optimal's does): larger groups whose plan is above the bound (and without
   ``max_moves``) go to ``exact.drain_milp``: bisection on the largest catch-up time under each
   count rule, each step a bin-packing MILP, which either finds a plan that finishes sooner
   or proves a higher bound (``catch_up_bound`` on the plan). Within the budget it is
   deterministic; a run the budget cuts short keeps what it found by then. Without the option
   nothing changes.

Never slower to catch up than lag-optimal: its plan is one of the seeds under its own count
rule, and a search only ever lowers the largest time.

Example: four partitions of 600 messages, no inflow; C1 is three times as fast as C0.
lag-optimal splits them two and two: C0 needs 1,200 / 10 = 120 s. drain-optimal gives C0 one
partition and C1 three: both finish after 60 s, the bound (2,400 messages / 40 per second)::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t"], "C1": ["t"]}, {"t": [600] * 4}, capacities={"C0": 10, "C1": 30})
    >>> show(DrainOptimalStrategy().assign(g))
    C0: t-2
    C1: t-0 t-1 t-3
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..catchup import capacity, inflow, lower_bound_catch_up, timed
from ..errors import StrategyOptionError, StrategyRefusedError
from ..exact.drain_bounds import (
    Counts,
    balanced_counts,
    count_rules,
    counts_lower_bound,
    proportional_counts,
)
from ..exact.drain_branch import MAX_PARTITIONS, exact_drain
from ..exact.drain_milp import TOLERANCE as MILP_TOLERANCE
from ..exact.drain_milp import bisect_drain
from ..exact.lag_milp import check_exact_budget
from ..model import Assignment, GroupSnapshot, TopicPartition
from ..search.engine import CountRule, Layout, Search
from ..search.time_objective import Cost, TimeObjective, member_cost
from .base import CertifiedAssignment, Strategy, build
from .lag_optimal import LagOptimalStrategy, _tie_key


class DrainOptimalStrategy(Strategy):
    name = "drain-optimal"
    summary = "smallest largest catch-up time (lag, inflow, capacity); counts in proportion to capacity"
    options = ("max_moves", "exact_budget")

    def __init__(self, max_moves: int | None = None, exact_budget: float | None = None) -> None:
        if max_moves is not None and (
            isinstance(max_moves, bool) or not isinstance(max_moves, int) or max_moves < 0
        ):
            raise StrategyOptionError(f"max_moves must be a whole number >= 0, got {max_moves!r}")
        check_exact_budget(exact_budget)
        self.max_moves = max_moves
        self.exact_budget = exact_budget or 0

    def assign(self, group: GroupSnapshot) -> Assignment:
        if _plain(group):
            planned = LagOptimalStrategy(max_moves=self.max_moves, exact_budget=self.exact_budget).assign(
                group
            )
            planned.strategy = self.name  # lag-optimal's plan, a fresh copy for each caller, as it is
            return planned
        plan = _Planner(group, self.max_moves)
        results = []
        for counts in plan.rules:
            for seed in self._seeds(group, counts):
                search = plan.search(seed, counts)
                search.run(plan.floor)
                if self.max_moves is None or search.moves <= self.max_moves:
                    results.append(search)
        if not results:
            raise StrategyRefusedError(
                f"group {group.group}: no plan within max_moves={self.max_moves} keeps the counts "
                "in proportion to capacity, or balanced"
            )
        best = min(results, key=lambda r: (r.max_cost, r.moves))
        proven = self.max_moves is None and len(group.assignable) <= MAX_PARTITIONS
        if proven:
            for counts in plan.rules:
                best, settled = plan.settle(counts, best)
                proven = proven and settled
        bound = None
        if not proven and self.exact_budget > 0 and self.max_moves is None:
            best, proven, bound = plan.polish(best, self.exact_budget)
        # Whether it reached the bound is a metric of every plan (``catch_up_optimal``); a
        # finished exact search proves it under the count rules.
        built = build(self.name, group, best.layout())
        out = CertifiedAssignment(built.strategy, built.members, proven_catch_up=proven)
        out.catch_up_bound = bound
        return out

    def _seeds(self, group: GroupSnapshot, counts: Counts) -> Iterable[Layout]:
        yield _greedy(group, counts, {}, group.assignable)
        if not group.identical_subscriptions:
            # counts are free, but a search from a plan dealt within the room either rule of
            # identical subscriptions gives often ends sooner
            for rule in (proportional_counts(group), balanced_counts(group)):
                room = {mid: (0, most) for mid, (_, most) in rule.items()}
                yield _greedy(group, room, {}, group.assignable)
        # lag-optimal's plan, brought within these counts: the search starts no worse than it
        # where it keeps them.
        try:
            planned = LagOptimalStrategy(max_moves=self.max_moves).assign(group).members
        except StrategyRefusedError:
            planned = None
        if planned is not None:
            yield _fitted(group, counts, planned)
        if group.owner:
            owned: Layout = {}
            topics = group.topics_of
            for tp in group.assignable:
                held_by = group.owner.get(tp)
                if held_by is not None and tp.topic in topics[held_by]:
                    owned.setdefault(held_by, []).append(tp)
            yield _fitted(group, counts, owned)


class _Planner:
    """What drain-optimal's steps share on one group: the count rules, the objective, the
    searches' tie keys and floor."""

    def __init__(self, group: GroupSnapshot, max_moves: int | None) -> None:
        self.group = group
        self.max_moves = max_moves
        self.rules = count_rules(group)
        self.objective = TimeObjective(group)
        tie = _tie_key(group.group)
        self.ties = {mid: tie(mid) for mid in group.member_ids}
        #: no member can finish sooner than this (``catchup.lower_bound_catch_up``)
        self.floor = (lower_bound_catch_up(group), 0.0, 0.0)

    def search(self, layout: Layout, counts: Counts) -> Search:
        """A search of catch-up time from ``layout`` under ``counts``."""
        group = self.group
        index = group.index_of
        positions = {mid: [index[tp] for tp in layout.get(mid, ())] for mid in group.member_ids}
        return Search(group, positions, self.objective, CountRule(counts), self.ties, self.max_moves)

    def adopt(self, layout: Layout, counts: Counts) -> Search:
        """An exact solver's plan, its partitions then sent home where that costs nothing."""
        found = self.search(layout, counts)
        found.send_home()
        return found

    def settle(self, counts: Counts, best: Search) -> tuple[Search, bool]:
        """The exact search under ``counts`` (small groups): a plan strictly sooner than
        ``best`` replaces it; True when it proved that no plan under these counts is sooner."""
        exact = exact_drain(self.group, counts, best.max_cost)
        if exact.layout is None:
            return best, exact.proven
        return self.adopt(exact.layout, counts), exact.proven

    def polish(self, best: Search, budget: float) -> tuple[Search, bool, float | None]:
        """``exact.drain_milp``'s bisection from the plan under each count rule, ``budget`` shared
        between them: a plan that finishes sooner replaces it (partitions then sent home where
        free); the bound certified (the smallest of the rules') is returned with whether the
        plan meets it."""
        top = best.max_cost[0]
        if not math.isfinite(top):
            return best, False, None
        lowers = []
        for counts in self.rules:
            lower = counts_lower_bound(self.group, counts, top)
            if top > lower * (1 + 1e-9):
                result = bisect_drain(self.group, counts, top, lower, budget / len(self.rules))
                if result.layout is not None:
                    best, top = self.adopt(result.layout, counts), result.upper
                lower = result.lower
            lowers.append(lower)
        bound = min(lowers)
        return best, top <= bound * (1 + MILP_TOLERANCE), bound


def _plain(group: GroupSnapshot) -> bool:
    """No time to plan with: no capacities, or equal capacities and no inflow anywhere."""
    if not timed(group):
        return True
    return len(set(capacity(group).values())) == 1 and not any(inflow(group).values())


def _fitted(group: GroupSnapshot, counts: Counts, layout: Layout) -> Layout:
    """``layout`` within ``counts``: each member keeps its heaviest partitions of it up to its
    most, and the group's others are dealt as ``_greedy`` deals (then members below their
    fewest take from members above theirs)."""
    lag = group.lag
    kept = {mid: sorted(tps, key=lambda tp: (-lag[tp], tp))[: counts[mid][1]] for mid, tps in layout.items()}
    held = {tp for tps in kept.values() for tp in tps}
    return _greedy(group, counts, kept, [tp for tp in group.assignable if tp not in held])


def _greedy(group: GroupSnapshot, counts: Counts, start: Layout, tps: Iterable[TopicPartition]) -> Layout:
    """From ``start``: the partitions ``tps``, heaviest first, each to the eligible member with
    room whose catch-up time stays smallest; then members below their fewest take
    partitions from members above theirs, each the one that leaves the two soonest done."""
    lag, rate, cap = group.lag, inflow(group), capacity(group)
    layout: Layout = {mid: list(start.get(mid, ())) for mid in group.member_ids}
    load = {mid: sum(lag[tp] for tp in held) for mid, held in layout.items()}
    flow = {mid: sum(rate[tp] for tp in held) for mid, held in layout.items()}

    def cost(mid: str, tp: TopicPartition, sign: int) -> Cost:
        return member_cost(load[mid] + sign * lag[tp], flow[mid] + sign * rate[tp], cap[mid])

    def move(tp: TopicPartition, src: str | None, dst: str) -> None:
        if src is not None:
            layout[src].remove(tp)
            load[src] -= lag[tp]
            flow[src] -= rate[tp]
        layout[dst].append(tp)
        load[dst] += lag[tp]
        flow[dst] += rate[tp]

    subs = group.subscribers
    for tp in sorted(tps, key=lambda tp: (-lag[tp], -rate[tp], tp)):
        room = [m for m in subs[tp.topic] if len(layout[m]) < counts[m][1]]
        move(tp, None, min(room or subs[tp.topic], key=lambda m: (cost(m, tp, 1), m)))
    for mid in group.member_ids:
        while len(layout[mid]) < counts[mid][0]:
            donors = [d for d in group.member_ids if d != mid and len(layout[d]) > counts[d][0]]
            choices = [(tp, d) for d in donors for tp in layout[d]]
            tp, donor = min(choices, key=lambda c: (max(cost(mid, c[0], 1), cost(c[1], c[0], -1)), c))
            move(tp, donor, mid)
    return layout


__all__ = ["DrainOptimalStrategy"]
