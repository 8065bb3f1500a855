"""One local search: the costliest member exchanges partitions with cheaper ones, under count
rules, until no exchange lowers it.

A ``Search`` is a ``state.State`` (one layout under count rules) and the way to improve it.
What a member costs, and which exchange or re-split between two members is best, is the
objective's (``lag_objective``, ``time_objective``); the rest is here:

1. Descent: the costliest member (equal costs: the smallest tie key) looks for an exchange
   with the cheapest few members, then with every cheaper one (those holding the smallest
   partitions first: a member stuck with one huge partition can only trade its small ones
   for smaller ones, wherever they are), then for a re-split with one of the cheapest few
   (their partitions pooled and dealt out again; where the pool is too large, or the two
   subscriptions differ, a trade of two partitions for one or two). A step is taken only
   if both members end strictly below the costliest one's old cost, so the sorted costs fall
   lexicographically (the largest first, then the spread) and the search always ends.
2. Sweep: every member, costliest first, exchanges with the cheapest few while that helps.
3. Home: a partition away from its owner goes back (handed over, or swapped for one that is
   away from its own owner too) wherever both members' costs stay within the lowest and
   highest cost of the layout: fewer moves, at no cost in balance.
4. 1-3 again while the largest cost falls, within a bound on the work: ``MIN_WORK`` plus
   ``WORK_PER_ITEM`` exchanges looked at per member and partition, so huge groups end with
   what the search reached by then.

With ``best_partner`` (the time objective) a step takes the best exchange with any other
member instead of the first the cheapest allow: with unequal capacities the cheapest member
is not always the one to trade with.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Sequence
from typing import Any, Protocol

from .state import CountRule, Exchange, Held, IndexLayout, Layout, State

# Exchanges a search may look at: a floor (small groups are cheap, search them well) plus so
# many per member and per partition of the group.
MIN_WORK = 2_000
WORK_PER_ITEM = 4
#: the cheapest members tried first, and for re-splits
PARTNERS = 4
#: a full scan's order (members holding the smallest partitions first) is sorted again after
#: this many scans: an order a little out of date only changes which partner is tried first
RESORT_EVERY = 16


class Objective(Protocol):
    """What a member costs and which exchange between two members is best (``objectives``)."""

    #: pools of two members' partitions up to this size are re-split
    resplit_max: int

    #: True: a step takes the best exchange with any cheaper member; False: the first the
    #: cheapest members allow (see ``Search._improve_member``)
    best_partner: bool

    def cost_with(self, search: State, mid: str, load: int, flow: float) -> Any:
        """``mid``'s cost holding ``load`` of lag with ``flow`` of inflow: comparable, smaller
        is better."""

    def swap_window(
        self, search: Search, mid: str, home: str, p: Held, lo: Any, hi: Any
    ) -> tuple[int, int] | None:
        """The lags a partition q of ``home`` may have for a swap of ``mid``'s p for it to keep
        both members' costs within [lo, hi], exactly; None where lag alone does not tell (each
        q is then checked)."""

    def best_exchange(self, search: Search, heavy: str, light: str) -> Exchange | None:
        """The allowed exchange that leaves both members strictly below ``heavy``'s cost and
        their larger cost lowest (ties: fewer moves, a hand-over, then partition order)."""

    def best_exchange_any(self, search: Search, heavy: str) -> tuple[str, Exchange] | None:
        """The best exchange of ``heavy`` with any other member (the smallest larger cost of
        the two after it), and that member: a step with ``best_partner``."""

    def best_trade(self, search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
        """For pools too large to re-split whole: the best trade of a few partitions, as a
        keep mask over both members' partitions like ``best_split``'s; None when none helps."""

    def best_split(self, search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
        """The partitions ``heavy`` keeps out of both members' (a bit mask over
        ``held[heavy] + held[light]``), holding one of ``sizes`` many, so that the larger
        cost of the two ends lowest and strictly below ``heavy``'s; None when none does."""


class Search(State):
    """A layout and the search that improves it (see the module doc)."""

    def _start(self) -> None:
        self.attempts = 0  # exchanges looked at: the search's work, bounded by run()
        self.budget = 0
        self._scans = 0
        self._order: list[str] = []

    def _cheapest(self, k: int) -> list[str]:
        return [entry[2] for entry in self.ranked[:k]]

    def _scan_order(self) -> list[str]:
        """Members by (smallest partition held, cost, tie): the order of a full scan, sorted
        again every ``RESORT_EVERY`` scans (the sort counted as work)."""
        self._scans += 1
        if self._scans % RESORT_EVERY == 1:
            held, cost, tie = self.held, self.cost, self.tie
            self._order = sorted(held, key=lambda m: (held[m][0][0] if held[m] else 0, cost[m], tie[m]))
            self.attempts += len(self._order) // RESORT_EVERY
        return self._order

    def _improve_member(self, heavy: str, partners: int | None) -> bool:
        """One exchange lowering ``heavy`` with the cheapest member that allows one: among the
        ``partners`` cheapest, or (None) every cheaper member in scan order."""
        if self.objective.best_partner:
            return self._improve_best(heavy)
        order: Sequence[str] = self._scan_order() if partners is None else self._cheapest(partners)
        for light in order:
            if self.attempts >= self.budget:
                return False
            if self.cost[light] >= self.cost[heavy]:
                if partners is None:
                    continue
                return False
            self.attempts += 1
            exchange = None if self._apart(heavy, light) else self.objective.best_exchange(self, heavy, light)
            if exchange is not None:
                self.apply(heavy, light, *exchange)
                return True
        return False

    def _others(self, heavy: str) -> list[str]:
        """Every member but ``heavy``, cheapest first: with unequal members (time) an exchange
        can leave both below ``heavy`` even with a member that costs as much."""
        return [m for _, _, m in self.ranked if m != heavy]

    def _improve_best(self, heavy: str) -> bool:
        """The objective's ``best_partner`` way: of every other member's best exchange with
        ``heavy``, the one with the smallest larger cost of the two after it (then fewer
        moves, then the cheaper partner)."""
        self.attempts += 1
        found = self.objective.best_exchange_any(self, heavy)
        if found is None:
            return False
        light, (p, q) = found
        self.apply(heavy, light, p, q)
        return True

    def run(self, floor: Any = None, sweep: bool = True) -> None:
        """Lower the costliest member while possible, then (``sweep``) the others for the
        spread, then send partitions home; again while the largest cost falls. Stops once the
        costliest is at ``floor`` (None: no floor) and when the work runs out."""
        items = len(self.held) + sum(self.count.values())
        self.budget = self.attempts + MIN_WORK + WORK_PER_ITEM * items
        while True:
            before = self.max_cost
            self._descend(floor)
            if sweep:
                by_tie = sorted(self.held, key=self.tie.__getitem__)
                for heavy in sorted(by_tie, key=self.cost.__getitem__, reverse=True):
                    while self._improve_member(heavy, PARTNERS):
                        pass
            self.send_home()
            # Sweeping and sending partitions home reshape the cheaper members; that can open
            # an exchange for the costliest again: one more descent while it pays.
            done = floor is not None and self.max_cost <= floor
            if done or self.max_cost >= before or self.attempts >= self.budget:
                break

    def _descend(self, floor: Any) -> None:
        while True:
            heavy = self.heaviest()
            if floor is not None and self.cost[heavy] <= floor:
                return
            if not (
                self._improve_member(heavy, PARTNERS)
                or (not self.objective.best_partner and self._improve_member(heavy, None))
                or self._resplit_member(heavy)
            ):
                return

    def _resplit_member(self, heavy: str) -> bool:
        """Lower ``heavy`` by re-splitting its partitions with one of the cheapest few's (with
        ``best_partner``: of every other member's, the best)."""
        best_partner = self.objective.best_partner
        partners = self._others(heavy) if best_partner else self._cheapest(PARTNERS)
        best: tuple[Any, int, str, int] | None = None
        for rank, light in enumerate(partners):
            if self.attempts >= self.budget:
                break
            if light == heavy or (not best_partner and self.cost[light] >= self.cost[heavy]):
                continue
            n_heavy, n_light = len(self.held[heavy]), len(self.held[light])
            pool = n_heavy + n_light
            # a whole re-split for small pools of one subscription; else a trade of a few
            whole = pool <= self.objective.resplit_max and self.topics[heavy] == self.topics[light]
            sizes = [n_heavy]
            if self.may_hand_over(heavy, light):
                sizes.append(sizes[0] - 1)
            if self.may_hand_over(light, heavy):
                sizes.append(sizes[0] + 1)
            # counted as work like the exchanges: one per 16 subset sums looked at; a re-split
            # the work left cannot pay for is not started
            if not whole:
                work = 1 + len(sizes) * (n_heavy * n_heavy + n_light * n_light) // 32
            else:
                work = 1 + (len(sizes) * (1 << (pool // 2)) + (1 << (pool - pool // 2))) // 16
            if self.attempts + work > self.budget:
                continue
            self.attempts += work
            if not whole:
                keep = self.objective.best_trade(self, heavy, light, sizes)
            else:
                keep = self.objective.best_split(self, heavy, light, sizes)
            if keep is None:
                continue
            if not best_partner:
                self._replace(heavy, light, keep)
                return True
            elif best is None or (self._split_cost(heavy, light, keep), rank) < best[:2]:
                best = (self._split_cost(heavy, light, keep), rank, light, keep)
        if best is None:
            return False
        self._replace(heavy, best[2], best[3])
        return True

    def _replace(self, heavy: str, light: str, keep: int) -> None:
        """``heavy`` keeps the partitions of mask ``keep``; ``light`` gets the rest of both's."""
        for p, src, dst in self.passing(heavy, light, keep):
            self._move(src, dst, p)
        self._reranked(heavy, light)

    def send_home(self) -> None:
        """Displaced partitions go back home where no member's cost leaves [lowest, highest]."""
        if not self.before:
            return  # nothing was owned: nothing to send home
        before, cost_after = self.before, self.cost_after
        lo, hi = self.ranked[0][0], self.ranked[-1][0]
        # Per member, its partitions that are not at home there (displaced, or owned by nobody),
        # by lag: the only ones a member can give back in a swap; kept up to date below.
        away = {m: [q for q in held if before.get(q[1]) != m] for m, held in self.held.items()}
        for mid in sorted(self.held):
            # the member's displaced partitions as its list reads when the loop gets here; of
            # these only the one at hand leaves ``mid`` (what it gets back is not in the list)
            for p in [p for p in away[mid] if p[1] in before]:
                home = before[p[1]]
                if (
                    self.may_hand_over(mid, home)
                    and lo <= cost_after(mid, p, None)
                    and cost_after(home, None, p) <= hi
                    and self.allowed(mid, home, p, None) is not None
                ):
                    self.apply(mid, home, p, None)
                    away[mid].remove(p)
                    continue
                # A swap for a q away from home at ``home`` (one at home there would move, not
                # come back): every such exchange lowers the moves.
                theirs = away[home]
                if not theirs:
                    continue
                window = self.objective.swap_window(self, mid, home, p, lo, hi)
                low, high = window or (0, math.inf)
                for k in range(bisect_left(theirs, (low,)), len(theirs)):
                    q = theirs[k]
                    if q[0] > high:
                        break
                    if window is None and not (
                        lo <= cost_after(mid, p, q) <= hi and lo <= cost_after(home, q, p) <= hi
                    ):
                        continue
                    cost = self.allowed(mid, home, p, q)
                    if cost is not None and cost < 0:
                        self.apply(mid, home, p, q)
                        away[mid].remove(p)
                        del theirs[k]
                        if before.get(q[1]) != mid:
                            insort(away[mid], q)
                        break


__all__ = [
    "CountRule",
    "Exchange",
    "Held",
    "IndexLayout",
    "Layout",
    "Objective",
    "Search",
]
