"""One local search: the costliest member exchanges partitions with cheaper ones, under count
rules, until no exchange lowers it.

A ``Search`` holds one layout (who holds which partitions, each member's lag, inflow, count
and cost, and the moves from the current owners). What a member costs, and which exchange or
re-split between two members is best, is the objective's (``objectives``); the rest is here:

1. Descent: the costliest member (equal costs: the smallest tie key) looks for an exchange
   with the cheapest few members, then with every cheaper one (those holding the smallest
   partitions first: a member stuck with one huge partition can only trade its small ones
   for smaller ones, wherever they are), then for a re-split with one of the cheapest few
   (their partitions pooled and dealt out again: several for several). A step is taken only
   if both members end strictly below the costliest one's old cost, so the sorted costs fall
   lexicographically (the largest first, then the spread) and the search always ends.
2. Sweep: every member, costliest first, exchanges with the cheapest few while that helps.
3. Home: a partition away from its owner goes back (handed over, or swapped for one that is
   away from its own owner too) wherever both members' costs stay within the lowest and
   highest cost of the layout: fewer moves, at no cost in balance.
4. 1-3 again while the largest cost falls, within a bound on the work: ``MIN_WORK`` plus
   ``WORK_PER_ITEM`` exchanges looked at per member and partition, so huge groups end with
   what the search reached by then.

Count rules (``CountRule``): each member's count stays within its range (a partition passes
from one member to another only where the giver keeps its fewest and the taker stays within
its most); or counts stay as they start and a member receives a partition only where no
subscriber of its topic holds two or more fewer partitions (Kafka's balance condition).

Partitions are the group's partition indices (``GroupSnapshot.columns``) paired with their
lag, ``(lag, index)``: each member's list is kept sorted, so its lightest partitions come first.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ..model import GroupSnapshot, TopicPartition

#: (lag, partition index): a member's partitions sort by lag, then index
Held = tuple[int, int]
#: partition indices per member id
IndexLayout = dict[str, list[int]]
Layout = dict[str, list[TopicPartition]]
#: an exchange: p leaves the costlier member; q (None: a hand-over) comes back
Exchange = tuple[Held, Held | None]
_T = TypeVar("_T")

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

    #: whether a member's cost depends on its partitions' inflow (the search then keeps it)
    timed: bool
    #: pools of two members' partitions up to this size are re-split
    resplit_max: int

    #: True: a step takes the best exchange with any cheaper member; False: the first the
    #: cheapest members allow (see ``Search._improve_member``)
    best_partner: bool

    def cost_with(self, search: Search, mid: str, load: int, flow: float) -> Any:
        """``mid``'s cost holding ``load`` of lag with ``flow`` of inflow: comparable, smaller
        is better."""

    def swap_window(
        self, search: Search, mid: str, home: str, p: Held, lo: Any, hi: Any
    ) -> tuple[float, float]:
        """The lags a partition q of ``home`` may have for a swap of ``mid``'s p for it to keep
        both members' costs within [lo, hi] (a wider range is fine: each q is checked)."""

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


@dataclass(frozen=True)
class CountRule:
    """The counts a search keeps: (fewest, most) partitions per member id, or, with
    ``ranges`` None, counts as they start and Kafka's balance condition on every receipt."""

    ranges: dict[str, tuple[int, int]] | None

    @classmethod
    def balanced(cls, counts: dict[str, int], slack: int = 0) -> CountRule:
        """lag-optimal's rule: where all counts are within one of each other, every count
        between floor(P/N) - ``slack`` and ceil(P/N) + ``slack``; otherwise frozen counts."""
        if max(counts.values()) - min(counts.values()) > 1:
            return cls(None)
        floor, extra = divmod(sum(counts.values()), len(counts))
        return cls(dict.fromkeys(counts, (floor - slack, floor + (extra > 0) + slack)))


class Search:
    """Mutable state of one local search (see the module doc)."""

    def __init__(
        self,
        group: GroupSnapshot,
        layout: IndexLayout,
        objective: Objective,
        rule: CountRule,
        ties: dict[str, bytes],
        max_moves: int | None = None,
    ) -> None:
        """``layout``: partition indices per member id; ``ties``: each member id's tie key."""
        self.group = group
        self.objective = objective
        self.tie = ties
        self.max_moves = max_moves
        lags = group.lags
        self.topic = group.columns.topics  # topic of each partition index
        self.topics = group.topics_of
        self.before = _owners(group)
        self.held = {mid: sorted([(lags[i], i) for i in idx]) for mid, idx in layout.items()}
        # each member's lags, in the order of its held list: kept alongside it on every change
        self.lags_of = {mid: [lag for lag, _ in held] for mid, held in self.held.items()}
        self.load = {mid: sum(lg) for mid, lg in self.lags_of.items()}
        # inflow per partition index and per member, kept only where the objective reads it
        self.rates: list[float] = []
        self.flow: dict[str, float] = {}
        if objective.timed:
            rates = group.columns.rates or [None] * len(lags)
            self.rates = [r or 0.0 for r in rates]
            self.flow = {mid: sum(self.rates[i] for i in idx) for mid, idx in layout.items()}
        self.count = {mid: len(held) for mid, held in self.held.items()}
        self.moves = _moves(group, self.before, layout)
        self.kafka_balance = rule.ranges is None
        self.ranges = rule.ranges or {mid: (n, n) for mid, n in self.count.items()}
        self._min_count: dict[str, int] | None = None
        # members that hold only topics they subscribe to: two whose subscriptions share no
        # topic can then exchange nothing
        self._held_subscribed = all(
            self.topics[m].issuperset(map(self.topic.__getitem__, idx)) for m, idx in layout.items()
        )
        self._apart_cache: dict[tuple[int, int], bool] = {}
        # every member may receive every partition it could be offered: one subscription, of
        # every topic held, and counts that may move
        self._receives_all = (
            not self.kafka_balance and self._held_subscribed and len({self.topics[m] for m in self.held}) == 1
        )
        self.cost = {
            mid: objective.cost_with(self, mid, self.load[mid], self.flow.get(mid, 0.0)) for mid in self.held
        }
        # members by (cost, tie): the cheapest first, the costliest last
        self._ranked = sorted((cost, ties[mid], mid) for mid, cost in self.cost.items())
        self._scans = 0
        self._derived: dict[str, dict[Hashable, Any]] = {}  # see ``derived``
        # changes per member, and the pairs (with the changes and moves they rest on) a
        # re-split found nothing for: the same pair meets the same pool again after a sweep
        self._changes = dict.fromkeys(self.held, 0)
        self._no_split: set[tuple[str, int, str, int, int]] = set()
        self._order: list[str] = []
        self.attempts = 0  # exchanges looked at: the search's work, bounded by run()
        self.budget = 0

    # -- the rules ---------------------------------------------------------------------------

    def may_hand_over(self, giver: str, taker: str) -> bool:
        """Whether one partition may pass from ``giver`` to ``taker`` under the count rules."""
        return self.count[giver] > self.ranges[giver][0] and self.count[taker] < self.ranges[taker][1]

    def may_receive(self, mid: str, index: int) -> bool:
        """Whether ``mid`` may take partition ``index``: it subscribes to its topic, and with
        frozen counts Kafka's balance condition stays true."""
        topic = self.topic[index]
        if topic not in self.topics[mid]:
            return False
        return not self.kafka_balance or self._fewest(topic) > self.count[mid] - 2

    def _fewest(self, topic: str) -> int:
        """Smallest count among the topic's subscribers (counts are frozen where this is asked)."""
        if self._min_count is None:
            self._min_count = {
                t: min(self.count[mid] for mid in subs) for t, subs in self.group.subscribers.items()
            }
        return self._min_count[topic]

    def receivable(self, taker: str, giver: str) -> tuple[list[Held], list[int]]:
        """The partitions of ``giver`` that ``taker`` may receive, and their lags."""
        if self._receives_all:
            return self.held[giver], self.lags_of[giver]
        return self.derived(giver, ("receivable", taker), lambda: self._receivable(taker, giver))

    def _receivable(self, taker: str, giver: str) -> tuple[list[Held], list[int]]:
        topics = self.topics[taker]
        if self.kafka_balance:
            count = self.count[taker]
            topics = frozenset(t for t in topics if self._fewest(t) > count - 2)
        held, topic = self.held[giver], self.topic
        if self._held_subscribed and self.topics[giver] <= topics:
            return held, self.lags_of[giver]
        out = [p for p in held if topic[p[1]] in topics]
        return out, [lag for lag, _ in out]

    def derived(self, mid: str, key: Hashable, compute: Callable[[], _T]) -> _T:
        """A value computed from ``mid``'s partitions (and what does not change during the
        search), kept until they change."""
        kept = self._derived.setdefault(mid, {})
        if key not in kept:
            kept[key] = compute()
        return kept[key]

    def move_cost(self, index: int, src: str, dst: str) -> int:
        """How the moves change when partition ``index`` passes from ``src`` to ``dst``."""
        owner = self.before.get(index)
        if owner is None:
            return 0
        return (dst != owner) - (src != owner)

    def allowed(self, heavy: str, light: str, p: Held, q: Held | None) -> int | None:
        """The change in moves of an exchange, or None where subscriptions, counts or
        ``max_moves`` forbid it."""
        if not self._receives_all and (
            not self.may_receive(light, p[1]) or (q is not None and not self.may_receive(heavy, q[1]))
        ):
            return None
        cost = self.move_cost(p[1], heavy, light)
        if q is not None:
            cost += self.move_cost(q[1], light, heavy)
        if self.max_moves is not None and self.moves + cost > self.max_moves:
            return None
        return cost

    def split_allowed(self, heavy: str, light: str, keep: int) -> bool:
        """Whether ``heavy`` may keep the partitions of mask ``keep`` (over both members'
        partitions) and ``light`` the rest: receipts allowed, within ``max_moves``."""
        pool = self.held[heavy] + self.held[light]
        n_heavy = len(self.held[heavy])
        cost = 0
        for i, p in enumerate(pool):
            stays = bool(keep >> i & 1)
            was_heavy = i < n_heavy
            if stays == was_heavy:
                continue
            src, dst = (heavy, light) if was_heavy else (light, heavy)
            if not self.may_receive(dst, p[1]):
                return False
            cost += self.move_cost(p[1], src, dst)
        return self.max_moves is None or self.moves + cost <= self.max_moves

    def _apart(self, heavy: str, light: str) -> bool:
        """Whether no exchange can be allowed because ``light`` subscribes to none of the topics
        ``heavy`` holds (e.g. Kafka's benchmark buckets): known per pair of subscriptions."""
        if not self._held_subscribed:
            return False
        a, b = self.topics[heavy], self.topics[light]
        key = (id(a), id(b))
        apart = self._apart_cache.get(key)
        if apart is None:
            apart = self._apart_cache[key] = a.isdisjoint(b)
        return apart

    # -- changes -----------------------------------------------------------------------------

    def apply(self, giver: str, taker: str, p: Held, q: Held | None) -> None:
        """Hand ``p`` from giver to taker and, for a swap, ``q`` back."""
        self._move(giver, taker, p)
        if q is not None:
            self._move(taker, giver, q)
        self._reranked(giver, taker)

    def _move(self, giver: str, taker: str, p: Held) -> None:
        self.moves += self.move_cost(p[1], giver, taker)
        held, lags = self.held[giver], self.lags_of[giver]
        i = bisect_left(held, p)  # held lists are sorted and hold each pair once
        del held[i], lags[i]
        held, lags = self.held[taker], self.lags_of[taker]
        i = bisect_left(held, p)
        held.insert(i, p)
        lags.insert(i, p[0])
        self.load[giver] -= p[0]
        self.load[taker] += p[0]
        if self.rates:
            self.flow[giver] -= self.rates[p[1]]
            self.flow[taker] += self.rates[p[1]]
        self.count[giver] -= 1
        self.count[taker] += 1
        self._derived.pop(giver, None)
        self._derived.pop(taker, None)
        self._changes[giver] += 1
        self._changes[taker] += 1

    def small_subsets(self, giver: str, taker: str) -> dict[int, list[tuple[int, int]]]:
        """``small_subsets`` of the partitions of ``giver`` that ``taker`` may receive (bit
        masks by place in ``giver``'s list)."""

        def subsets() -> dict[int, list[tuple[int, int]]]:
            ok = set(self.receivable(taker, giver)[0])
            return small_subsets([(p[0], i) for i, p in enumerate(self.held[giver]) if p in ok])

        return self.derived(giver, ("subsets", taker), subsets)

    def _reranked(self, *members: str) -> None:
        """Members whose partitions changed: their costs and places in the ranking."""
        for m in members:
            old = (self.cost[m], self.tie[m], m)
            del self._ranked[bisect_left(self._ranked, old)]
            self.cost[m] = self.objective.cost_with(self, m, self.load[m], self.flow.get(m, 0.0))
            insort(self._ranked, (self.cost[m], self.tie[m], m))

    # -- which members to pair ---------------------------------------------------------------

    def heaviest(self) -> str:
        """The costliest member; among equal costs the smallest tie key."""
        ranked = self._ranked
        return ranked[bisect_left(ranked, (ranked[-1][0],))][2]

    def _cheapest(self, k: int) -> list[str]:
        return [entry[2] for entry in self._ranked[:k]]

    def _scan_order(self) -> list[str]:
        """Members by (smallest partition held, cost, tie): the order of a full scan, sorted
        again every ``RESORT_EVERY`` scans (the sort counted as work)."""
        self._scans += 1
        if self._scans % RESORT_EVERY == 1:
            held, cost, tie = self.held, self.cost, self.tie
            self._order = sorted(held, key=lambda m: (held[m][0][0] if held[m] else 0, cost[m], tie[m]))
            self.attempts += len(self._order) // RESORT_EVERY
        return self._order

    def _exchange(self, heavy: str, light: str) -> Exchange | None:
        self.attempts += 1
        if self._apart(heavy, light):
            return None
        return self.objective.best_exchange(self, heavy, light)

    def _improve_member(self, heavy: str, partners: int | None, stuck: set[str] | None = None) -> bool:
        """One exchange lowering ``heavy`` with the cheapest member that allows one: among the
        ``partners`` cheapest, or (None) every cheaper member in scan order.

        ``stuck``: partners found without an exchange are added to it; a full scan that follows
        with nothing changed in between counts those as looked at, without a look."""
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
            if stuck is not None and partners is None and light in stuck:
                self.attempts += 1
                continue
            exchange = self._exchange(heavy, light)
            if exchange is not None:
                self.apply(heavy, light, *exchange)
                return True
            if stuck is not None:
                stuck.add(light)
        return False

    @property
    def ranked(self) -> list[tuple[Any, bytes, str]]:
        """(cost, tie, member) of every member, cheapest first (read, never change)."""
        return self._ranked

    def _others(self, heavy: str) -> list[str]:
        """Every member but ``heavy``, cheapest first: with unequal members (time) an exchange
        can leave both below ``heavy`` even with a member that costs as much."""
        return [m for _, _, m in self._ranked if m != heavy]

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

    def cost_after(self, mid: str, out: Held | None, into: Held | None) -> Any:
        """``mid``'s cost after giving ``out`` away and taking ``into``."""
        load, flow = self.load[mid], self.flow.get(mid, 0.0)
        if out is not None:
            load, flow = load - out[0], flow - (self.rates[out[1]] if self.rates else 0.0)
        if into is not None:
            load, flow = load + into[0], flow + (self.rates[into[1]] if self.rates else 0.0)
        return self.objective.cost_with(self, mid, load, flow)

    def _split_cost(self, heavy: str, light: str, keep: int) -> Any:
        """The larger cost of the two after ``heavy`` keeps mask ``keep`` of both's partitions."""
        pool = self.held[heavy] + self.held[light]
        rates = self.rates or [0.0] * len(self.topic)
        lag = sum(p[0] for i, p in enumerate(pool) if keep >> i & 1)
        flow = sum(rates[p[1]] for i, p in enumerate(pool) if keep >> i & 1)
        total_lag = self.load[heavy] + self.load[light]
        total_flow = self.flow.get(heavy, 0.0) + self.flow.get(light, 0.0)
        return max(
            self.objective.cost_with(self, heavy, lag, flow),
            self.objective.cost_with(self, light, total_lag - lag, total_flow - flow),
        )

    # -- the search --------------------------------------------------------------------------

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
            stuck: set[str] = set()
            if not (
                self._improve_member(heavy, PARTNERS, stuck)
                or (not self.objective.best_partner and self._improve_member(heavy, None, stuck))
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
            pool = len(self.held[heavy]) + len(self.held[light])
            # a whole re-split for small pools of one subscription; else a trade of a few
            whole = pool <= self.objective.resplit_max and self.topics[heavy] == self.topics[light]
            sizes = [len(self.held[heavy])]
            if self.may_hand_over(heavy, light):
                sizes.append(sizes[0] - 1)
            if self.may_hand_over(light, heavy):
                sizes.append(sizes[0] + 1)
            # counted as work like the exchanges: one per 16 subset sums looked at; a re-split
            # the work left cannot pay for is not started
            n_heavy, n_light = len(self.held[heavy]), len(self.held[light])
            if not whole:
                work = 1 + len(sizes) * (n_heavy * n_heavy + n_light * n_light) // 32
            else:
                work = 1 + (len(sizes) * (1 << (pool // 2)) + (1 << (pool - pool // 2))) // 16
            if self.attempts + work > self.budget:
                continue
            self.attempts += work
            known = (heavy, self._changes[heavy], light, self._changes[light], self.moves)
            if known in self._no_split:
                continue
            if not whole:
                keep = self.objective.best_trade(self, heavy, light, sizes)
            else:
                keep = self.objective.best_split(self, heavy, light, sizes)
            if keep is None:
                self._no_split.add(known)
            elif not best_partner:
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
        n_heavy = len(self.held[heavy])
        for i, p in enumerate(self.held[heavy] + self.held[light]):
            stays = bool(keep >> i & 1)
            if i < n_heavy and not stays:
                self._move(heavy, light, p)
            elif i >= n_heavy and stays:
                self._move(light, heavy, p)
        self._reranked(heavy, light)

    def send_home(self) -> None:
        """Displaced partitions go back home where no member's cost leaves [lowest, highest]."""
        if not self.before:
            return  # nothing was owned: nothing to send home
        before, cost_after = self.before, self.cost_after
        lo, hi = self._ranked[0][0], self._ranked[-1][0]
        # Per member, its partitions that are not at home there (displaced, or owned by nobody),
        # by lag: the only ones a member can give back in a swap; kept up to date below.
        away = {m: [q for q in held if before.get(q[1]) != m] for m, held in self.held.items()}
        for mid in sorted(self.held):
            # the member's displaced partitions as its list reads when the loop gets here; of
            # these only the one at hand leaves ``mid`` (what it gets back is not in the list)
            for p in [p for p in away[mid] if p[1] in before]:
                home = before[p[1]]
                if (
                    lo <= cost_after(mid, p, None)
                    and cost_after(home, None, p) <= hi
                    and self.may_hand_over(mid, home)
                    and self.allowed(mid, home, p, None) is not None
                ):
                    self.apply(mid, home, p, None)
                    away[mid].remove(p)
                    continue
                # A swap for a q away from home at ``home`` (one at home there would move, not
                # come back): every such exchange lowers the moves.
                low, high = self.objective.swap_window(self, mid, home, p, lo, hi)
                theirs = away[home]
                for k in range(bisect_left(theirs, (low,)), len(theirs)):
                    q = theirs[k]
                    if q[0] > high:
                        break
                    if not (lo <= cost_after(mid, p, q) <= hi and lo <= cost_after(home, q, p) <= hi):
                        continue
                    cost = self.allowed(mid, home, p, q)
                    if cost is not None and cost < 0:
                        self.apply(mid, home, p, q)
                        away[mid].remove(p)
                        del theirs[k]
                        if before.get(q[1]) != mid:
                            insort(away[mid], q)
                        break

    # -- results -----------------------------------------------------------------------------

    def layout(self) -> Layout:
        """TopicPartitions per member id, each member's by lag."""
        tps = self.group.tps
        return {mid: [tps[i] for _, i in held] for mid, held in self.held.items()}

    def layout_index(self) -> IndexLayout:
        """Partition indices per member id, each member's by lag."""
        return {mid: [i for _, i in held] for mid, held in self.held.items()}

    @property
    def max_cost(self) -> Any:
        return self._ranked[-1][0]

    @property
    def max_lag(self) -> int:
        return max(self.load.values())

    @property
    def spread(self) -> int:
        return self.max_lag - min(self.load.values())


def small_subsets(items: list[Held]) -> dict[int, list[tuple[int, int]]]:
    """Subsets of one or two of ``items``, (lag, place), as (sum of lags, bit mask of their
    places), by size, each sorted."""
    ones = [(lag, 1 << i) for lag, i in items]
    twos = [(a[0] + b[0], a[1] | b[1]) for k, a in enumerate(ones) for b in ones[:k]]
    ones.sort()
    twos.sort()
    return {1: ones, 2: twos}


def _owners(group: GroupSnapshot) -> dict[int, str]:
    """Current owner id of each owned partition index (owned partitions the group lists)."""
    ids = group.member_ids
    return {i: ids[m] for i, m in enumerate(group.owner_index) if m >= 0} if group.owned_count else {}


def _moves(group: GroupSnapshot, before: dict[int, str], layout: IndexLayout) -> int:
    """Owned partitions that end with another owner, or with none (also those the group does
    not list, or whose topic nobody subscribes to any more: they move whatever we do)."""
    if not group.owned_count:
        return 0
    kept = sum(1 for mid, idx in layout.items() for i in idx if before.get(i) == mid)
    return group.owned_count - kept


def layout_moves(group: GroupSnapshot, layout: IndexLayout) -> int:
    """``_moves`` of a layout given as partition indices per member id."""
    return _moves(group, _owners(group), layout)


__all__ = ["CountRule", "Exchange", "Held", "IndexLayout", "Layout", "Objective", "Search", "layout_moves"]
