"""lag-optimal: balanced counts, then the smallest possible largest member lag, with few moves.

Seeds and the choice between them live here; the local search is ``search.engine.Search`` with
``search.lag_objective.LagObjective``.

Method, in short:
1. Seeds, each already meeting the count guarantee of ``lag-aware``: a group-wide
   longest-lag-first pass (ties broken by a hash of the member id, so no member is favoured
   for sorting first; with mixed subscriptions it is lag-aware's own build with those ties),
   the sticky assignment (keeps owned partitions) and, with mixed subscriptions, the answer
   of ``lag-aware``. The plan is never worse than ``lag-aware``'s, nor than ``lag``'s where
   that meets the guarantee (the property tests check both).
2. Local search on each seed: the heaviest member exchanges load with a lighter one, by
   handing over a partition where counts allow it or by swapping two partitions, choosing the
   exchange that brings the two closest to their mean. A step is taken only if both end
   strictly below the heavier one's old load, so the sorted load vector falls
   lexicographically: the largest lag first, then the spread, and the search always ends.
   Where no such exchange is left, the heaviest and one of the lightest members pool their
   partitions and deal them out again as evenly as their counts allow (a re-split, pools of up
   to 20 partitions of one subscription), or else trade two of theirs for one or two (several
   partitions for several).
3. Partitions that left their owner are sent back (moved or swapped home) wherever that keeps
   every load within the current min and max: fewer moves at no cost in balance.
4. The best seed wins: smallest max lag, then fewest moves, then smallest spread. The sticky
   seed searches only until it matches the leader's max lag, within fewer moves than it
   needs; with mixed subscriptions, where the leader is not optimal, lag-aware's own build is
   a second start searched to the bound (another tie order, another local optimum).
5. Certificate: the search stops once the heaviest member reaches
   ``balanced_lower_bound_max_lag`` (no assignment under the count rules does better); the
   plan is then reported ``optimal``. Otherwise, with ``exact_budget`` seconds, the exact
   model of ``exact.lag_milp`` (HiGHS) starts from the plan and either proves it optimal or
   improves it (then tidied by the search: spread, moves sent home).

Count rules (what the bound and the exact model assume too): with identical subscriptions
every count is floor(P/N) or ceil(P/N), widened by ``count_slack``; with mixed ones Kafka's
balance condition holds (no member with two or more fewer partitions could take one of
another's). During the search, while all counts are within one of each other a partition may
pass from a member at the high count to one at the low count; otherwise counts are frozen and
a swap is allowed only where the condition stays true. Options:

* ``max_moves`` caps the partitions that leave their current owner; a step that would
  exceed it is not taken, and a group whose counts cannot be balanced within it is refused.
* ``count_slack`` (default 0) is the knob between count balance and lag balance: members may
  hold up to that many partitions fewer than floor(P/N) or more than ceil(P/N) when it
  lowers the largest lag (shared-subscription groups; mixed ones keep the guarantee).
* ``exact_budget`` (seconds, default off) runs the exact polish on groups of at most
  ``EXACT_MAX_PAIRS`` (partition, eligible member) pairs whose plan the bound does not
  certify. It needs the ``certify`` extra (highspy). A run that ends within the budget is
  deterministic; one the budget cuts short keeps what the solver found by then, which can
  differ between machines of different speed. ``optimal`` then means: under these count
  rules and ``max_moves``.
* ``rack`` (``off`` by default, or ``prefer``): with racks on members and replicas
  (KIP-881), the plan is polished with swaps of two partitions of one topic that make more
  partitions rack-local without raising the largest lag (``search.rack_swaps``): counts
  and guarantees unchanged. ``require`` is lag-aware's only: it breaks the count guarantee.

Worked example: members A and B share topic t with lags 8, 7, 6, 5, 4, 2 (three partitions
each). Longest-first gives 8 to A, 7 and 6 to B, 5 to A, 4 to A (a tie, broken by the hash)
and 2 to B: A holds 17, B 15. The search looks at A: the gap is 2, so the ideal exchange moves
1 of lag from A to B, and swapping A's 8 for B's 7 does exactly that: A 16 (7, 5, 4), B 16
(8, 6, 2). Both bounds are 16 (the mean), so the plan is ``optimal`` and the search stops.
Where counts bind the two bounds differ: with three members and lags 100, 40, 35, 30, 20, 5
(two partitions each) no assignment beats 100 (``lower_bound_max_lag``), but under the count
rules the hot partition's member takes a second partition, at best the 5:
``balanced_lower_bound_max_lag`` is 105, which the plan (100, 5), (40, 20), (35, 30) reaches.

Spec: lagassign's own (no Kafka proposal goes past lag-aware's greedy pass); the count rules
are the Lag-Aware Assignor KIP's, the bound is documented in ``scoring``.

Example as a test: lags 6, 5, 4, 3, 2 over two members. lag-aware ends at 11 against 9; the
optimum is 10 (6+4 and 5+3+2), reached here by moving a single partition (t0-1)::

    >>> from lagassign.core.strategies.examples import example, show
    >>> owned = {"C0": ["t0-0", "t0-1", "t0-2"], "C1": ["t0-3", "t0-4"]}
    >>> g = example({"C0": ["t0"], "C1": ["t0"]}, {"t0": [6, 5, 4, 3, 2]}, owned)
    >>> show(LagOptimalStrategy().assign(g), g)
    C0: t0-0 t0-2  (lag 10)
    C1: t0-1 t0-3 t0-4  (lag 10)
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Iterable, Sequence

from ..errors import StrategyOptionError, StrategyRefusedError
from ..exact.lag_milp import check_exact_budget, deal_to_owners, solve
from ..model import Assignment, GroupSnapshot
from ..scoring import balanced_lower_bound_max_lag
from ..search import bulk
from ..search.engine import CountRule, IndexLayout, Layout, Search
from ..search.lag_objective import LagObjective
from ..search.rack_swaps import rack_local_swaps
from ..shared import Shared
from .base import CertifiedAssignment, Strategy
from .lag_aware import lag_aware_index, lag_aware_layout
from .sticky import sticky_passes

__all__ = ["LagOptimalStrategy"]


def _tie_key(group: str):
    def key(mid: str) -> bytes:
        return hashlib.blake2b(f"{group}\x00{mid}".encode(), digest_size=8).digest()

    return key


def _capped_longest_first(group: GroupSnapshot, ties: dict[str, bytes]) -> IndexLayout:
    """Longest-lag-first to the least-loaded member that still has room under its count quota.

    For a shared subscription: every member ends with floor(P/N) or ceil(P/N) partitions,
    and only P mod N of them with the ceiling, so the zero-lag tail fills the counts last.
    Partition indices per member id; heaviest first, equal lags by index (by TopicPartition).
    """
    lags = group.lags
    n = len(group.members)
    index = group.assignable_index
    floor, ceil_slots = divmod(len(index), n)
    layout: IndexLayout = {mid: [] for mid in group.member_ids}
    # (load, tie, id, the member's list): ids are unique, so the lists are never compared,
    # and a member's count is its list's length
    heap = [(0, ties[mid], mid, layout[mid]) for mid in group.member_ids]
    heapq.heapify(heap)
    heappop, heapreplace = heapq.heappop, heapq.heapreplace
    for i in sorted(index, key=lags.__getitem__, reverse=True):  # stable: equal lags by index
        load, t, mid, held = heap[0]
        while len(held) > floor or (len(held) == floor and not ceil_slots):
            heappop(heap)  # full: dropped from the heap for good
            load, t, mid, held = heap[0]
        if len(held) == floor:
            ceil_slots -= 1
        held.append(i)
        # one entry per member, ties unique: replacing the head pops the same order as pop + push,
        # and a partition without lag leaves the head's key as it is (nothing to replace)
        if lags[i]:
            heapreplace(heap, (load + lags[i], t, mid, held))
    return layout


def _lag_aware_seed(group: GroupSnapshot, tie) -> IndexLayout:
    """lag-aware's layout (ties by ``tie``, the id if None) as partition indices per member id."""
    index = lag_aware_index(group, tie)
    if index is None:
        return to_index(group, lag_aware_layout(group, tie))
    return dict(zip(group.member_ids, index, strict=True))


# The exact polish builds one binary variable per (partition, eligible member) pair: beyond this
# many the model alone takes longer than a plan should (the search's answer stands).
EXACT_MAX_PAIRS = 20_000


class LagOptimalStrategy(Strategy):
    name = "lag-optimal"
    summary = "lagassign: counts balanced, then the smallest largest member lag, with few moves"
    options = ("max_moves", "count_slack", "exact_budget", "rack")

    def __init__(
        self,
        max_moves: int | None = None,
        count_slack: int = 0,
        exact_budget: float | None = None,
        rack: str = "off",
    ) -> None:
        if rack not in ("off", "prefer"):
            raise StrategyOptionError(f"rack must be off or prefer for lag-optimal, got {rack!r}")
        self.rack = rack
        for name, value in (("max_moves", max_moves), ("count_slack", count_slack)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise StrategyOptionError(f"{name} must be a non-negative integer, got {value!r}")
        check_exact_budget(exact_budget)
        self.max_moves = max_moves
        self.count_slack = count_slack or 0
        self.exact_budget = exact_budget or 0

    def _seeds(self, group: GroupSnapshot, tie, ties: dict[str, bytes]) -> Iterable[tuple[str, IndexLayout]]:
        """(name, layout) of each seed, in the order they are searched."""
        if group.identical_subscriptions:
            yield "longest-first", _capped_longest_first(group, ties)
        else:
            # lag-aware's own build, ties by the hash: no member is favoured for sorting first.
            yield "longest-first", _lag_aware_seed(group, tie)
        if group.owned_count:
            yield "sticky", to_index(group, sticky_passes(group))
        # with mixed subscriptions lag-aware's own build is a second start (step 4)
        if not group.identical_subscriptions:
            yield "lag-aware", _lag_aware_seed(group, None)

    def assign(self, group: GroupSnapshot) -> Assignment:
        """The plan, computed once per group and options (drain-optimal asks for it again on
        groups it cannot plan in time); each caller gets its own lists."""
        options = (self.max_moves, self.count_slack, self.exact_budget, self.rack)
        positions, proven = _PLANS.get(group, lambda: self._plan(group), options)
        own = {mid: list(idx) for mid, idx in positions.items()}
        return CertifiedAssignment.indexed(self.name, group, own, proven_optimal=proven)

    def _plan(self, group: GroupSnapshot) -> tuple[IndexLayout, bool]:
        """Sorted partition indices per member id, and whether no plan under the count rules
        has a smaller max lag."""
        tie = _tie_key(group.group)
        ties = {mid: tie(mid) for mid in group.member_ids}
        # count_slack relaxes counts only where all members share one subscription; mixed
        # groups keep Kafka's balance condition whatever it says.
        slack = self.count_slack if group.identical_subscriptions else 0
        floor = balanced_lower_bound_max_lag(group, slack)
        if bulk.applies(group, self.max_moves, self.count_slack, self.rack):
            positions, max_lag = bulk.plan(group, ties, floor)  # very large groups: numpy rounds
            return positions, max_lag <= floor
        results: list[Search] = []
        fewest_moves = math.inf
        for name, layout in self._seeds(group, tie, ties):
            leader = pick(results)
            search = _search(group, layout, ties, slack, self.max_moves)
            fewest_moves = min(fewest_moves, search.moves)
            if self.max_moves is not None and search.moves > self.max_moves:
                continue
            results.append(search)
            if name == "lag-aware" and leader is not None and leader.max_lag <= floor:
                continue  # the leader is optimal: nothing to start again for
            if leader is None:
                search.run(floor)
            elif name == "sticky":
                # there to reach the leader's max lag with fewer moves: it need not go lower,
                # and it may spend fewer moves than the leader
                cap = leader.moves if self.max_moves is None else self.max_moves
                search.max_moves = min(leader.moves - 1, cap)
                if search.moves <= search.max_moves:
                    search.run(max(floor, leader.max_lag), sweep=False)
            else:
                search.run(floor, sweep=False)
        best = pick(results)
        if best is None:
            raise StrategyRefusedError(
                f"group {group.group}: balancing partition counts alone needs {fewest_moves} moves, "
                f"more than max_moves={self.max_moves}"
            )
        proven = best.max_lag <= floor
        if not proven and self.exact_budget > 0 and _pairs(group) <= EXACT_MAX_PAIRS:
            best, proven = self._polish(group, best, floor, slack, ties)
        positions = best.layout_index()
        if self.rack == "prefer" and group.rack_aware:
            local = rack_local_swaps(group, best.layout(), best.max_lag, self.max_moves)
            positions = to_index(group, local)
        return {mid: sorted(positions.get(mid, [])) for mid in group.member_ids}, proven

    def _polish(
        self, group: GroupSnapshot, best: Search, floor: int, slack: int, ties: dict[str, bytes]
    ) -> tuple[Search, bool]:
        """The exact model (``exact.lag_milp.solve``) started from the search's answer, within the budget:
        a better answer replaces it (spread and moves then tidied by a search from there)."""
        result = solve(
            group, self.exact_budget, slack, self.max_moves, start=best.layout(), known_bound=floor
        )
        if result.layout is not None and result.max_lag is not None and result.max_lag < best.max_lag:
            layout = result.layout
            if group.identical_subscriptions and self.max_moves is None and group.owner:
                # identical members are interchangeable: each set to the member owning most of it
                layout = deal_to_owners(group.owner, group.member_ids, [layout[m] for m in sorted(layout)])
            better = _search(group, to_index(group, layout), ties, slack, self.max_moves)
            better.run(better.max_lag)
            if better.max_lag < best.max_lag:
                best = better
        return best, best.max_lag <= result.bound


def _pairs(group: GroupSnapshot) -> int:
    """(partition, eligible member) pairs: the exact model's binary variables."""
    return sum(len(group.subscribers[t]) * len(tps) for t, tps in group.topic_partitions.items())


_LAG = LagObjective()
#: the plan (sorted partition indices per member id, proven optimal), per group and options:
#: drain-optimal asks for it again. Plain data: nothing in it refers back to the group.
_PLANS: Shared[tuple[IndexLayout, bool]] = Shared("lag-optimal's plan")


def _search(
    group: GroupSnapshot, layout: IndexLayout, ties: dict[str, bytes], slack: int, max_moves: int | None
) -> Search:
    """A lag search from ``layout`` under lag-optimal's count rule."""
    rule = CountRule.balanced({mid: len(idx) for mid, idx in layout.items()}, slack)
    return Search(group, layout, _LAG, rule, ties, max_moves)


def to_index(group: GroupSnapshot, layout: Layout) -> IndexLayout:
    """A layout of TopicPartitions as partition indices."""
    index = group.index_of
    return {mid: list(map(index.__getitem__, tps)) for mid, tps in layout.items()}


def pick(results: Sequence[Search]) -> Search | None:
    """Smallest max lag; among answers that equal it, fewest moves, then smallest spread.

    Each search already lowers the spread as far as its exchanges can; between answers with
    the same max lag, keeping partitions where they are is worth more than a smaller spread.
    """
    return min(results, key=lambda r: (r.max_lag, r.moves, r.spread), default=None)
