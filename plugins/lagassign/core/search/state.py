"""The state of a local search: one layout, the count rules it keeps, and its changes.

A ``State`` holds who holds which partitions (each member's list of ``(lag, index)`` pairs,
kept sorted, so its lightest partitions come first), each member's lag, inflow, count and cost
(the objective's), the ranking of members by cost, and the moves from the current owners. It
says what the count rules allow and carries out exchanges; ``engine.Search`` decides which.

Count rules (``CountRule``): each member's count stays within its range (a partition passes
from one member to another only where the giver keeps its fewest and the taker stays within
its most); or counts stay as they start and a member receives a partition only where no
subscriber of its topic holds two or more fewer partitions (Kafka's balance condition).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..model import GroupSnapshot, TopicPartition

if TYPE_CHECKING:
    from .engine import Objective

#: (lag, partition index): a member's partitions sort by lag, then index
Held = tuple[int, int]
#: partition indices per member id
IndexLayout = dict[str, list[int]]
Layout = dict[str, list[TopicPartition]]
#: an exchange: p leaves the costlier member; q (None: a hand-over) comes back
Exchange = tuple[Held, Held | None]
_T = TypeVar("_T")


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


class State:
    """One layout under count rules, as a search changes it (see the module doc)."""

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
        ids, owners = group.member_ids, group.owner_index
        # the current owner id of each owned partition index (of the partitions the group lists)
        self.before = {i: ids[m] for i, m in enumerate(owners) if m >= 0} if group.owned_count else {}
        self.held = {mid: sorted([(lags[i], i) for i in idx]) for mid, idx in layout.items()}
        # each member's lags, in the order of its held list: kept alongside it on every change
        self.lags_of = {mid: [lag for lag, _ in held] for mid, held in self.held.items()}
        self.load = {mid: sum(lg) for mid, lg in self.lags_of.items()}
        # inflow per partition index and per member (what a timed cost reads besides lag)
        self.rates = [r or 0.0 for r in group.columns.rates or [None] * len(lags)]
        self.flow = {mid: sum(self.rates[i] for i in idx) for mid, idx in layout.items()}
        self.count = {mid: len(held) for mid, held in self.held.items()}
        # owned partitions that end with another owner, or with none (also those the group does
        # not list, or whose topic nobody subscribes to any more: they move whatever we do)
        kept = sum(list(map(self.before.get, idx)).count(mid) for mid, idx in layout.items())
        self.moves = group.owned_count - kept
        self.kafka_balance = rule.ranges is None
        self.ranges = rule.ranges or {mid: (n, n) for mid, n in self.count.items()}
        # with frozen counts: the smallest count among each topic's subscribers
        subscribers = group.subscribers.items() if self.kafka_balance else ()
        self.fewest = {t: min(self.count[m] for m in subs) for t, subs in subscribers}
        # members that hold only topics they subscribe to: two whose subscriptions share no
        # topic can then exchange nothing
        self._held_subscribed = all(
            self.topics[m].issuperset(map(self.topic.__getitem__, idx)) for m, idx in layout.items()
        )
        # every member may receive every partition it could be offered: one subscription, of
        # every topic held, and counts that may move
        self._receives_all = (
            not self.kafka_balance and self._held_subscribed and len({self.topics[m] for m in self.held}) == 1
        )
        self.cost = {mid: objective.cost_with(self, mid, self.load[mid], self.flow[mid]) for mid in self.held}
        # (cost, tie, member) of every member: the cheapest first, the costliest last (kept by
        # the state; others read it, never change it)
        self.ranked: list[tuple[Any, bytes, str]] = sorted((c, ties[m], m) for m, c in self.cost.items())
        self._derived: dict[str, dict[Hashable, Any]] = {}  # see ``derived``
        self._start()

    def _start(self) -> None:
        """Set up what a subclass keeps besides the layout (a search: its work so far)."""

    def may_hand_over(self, giver: str, taker: str) -> bool:
        """Whether one partition may pass from ``giver`` to ``taker`` under the count rules."""
        return self.count[giver] > self.ranges[giver][0] and self.count[taker] < self.ranges[taker][1]

    def may_receive(self, mid: str, index: int) -> bool:
        """Whether ``mid`` may take partition ``index``: it subscribes to its topic, and with
        frozen counts Kafka's balance condition stays true."""
        topic = self.topic[index]
        if topic not in self.topics[mid]:
            return False
        return not self.kafka_balance or self.fewest[topic] > self.count[mid] - 2

    def receivable(self, taker: str, giver: str) -> tuple[list[Held], list[int]]:
        """The partitions of ``giver`` that ``taker`` may receive, and their lags."""
        if self._receives_all:
            return self.held[giver], self.lags_of[giver]
        return self.derived(giver, ("receivable", taker), lambda: self._receivable(taker, giver))

    def receiver_key(self, taker: str) -> str | None:
        """What ``receivable``'s answer depends on besides the giver: ``taker``, or nothing
        (None) where every member may receive every partition."""
        return None if self._receives_all else taker

    def _receivable(self, taker: str, giver: str) -> tuple[list[Held], list[int]]:
        topics = self.topics[taker]
        if self.kafka_balance:
            count = self.count[taker]
            topics = frozenset(t for t in topics if self.fewest[t] > count - 2)
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
        passing = self.passing(heavy, light, keep)
        if not all(self.may_receive(dst, p[1]) for p, _, dst in passing):
            return False
        cost = sum(self.move_cost(p[1], src, dst) for p, src, dst in passing)
        return self.max_moves is None or self.moves + cost <= self.max_moves

    def passing(self, heavy: str, light: str, keep: int) -> list[tuple[Held, str, str]]:
        """(partition, from, to) of each partition that changes member when ``heavy`` keeps the
        partitions of mask ``keep`` (over ``held[heavy] + held[light]``) and ``light`` the rest."""
        n_heavy = len(self.held[heavy])
        return [
            (p, heavy, light) if i < n_heavy else (p, light, heavy)
            for i, p in enumerate(self.held[heavy] + self.held[light])
            if bool(keep >> i & 1) != (i < n_heavy)
        ]

    def _apart(self, heavy: str, light: str) -> bool:
        """Whether no exchange can be allowed because ``light`` subscribes to none of the topics
        ``heavy`` holds (e.g. Kafka's benchmark buckets)."""
        return self._held_subscribed and self.topics[heavy].isdisjoint(self.topics[light])

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
        self.flow[giver] -= self.rates[p[1]]
        self.flow[taker] += self.rates[p[1]]
        self.count[giver] -= 1
        self.count[taker] += 1
        self._derived.pop(giver, None)
        self._derived.pop(taker, None)

    def _reranked(self, *members: str) -> None:
        """Members whose partitions changed: their costs and places in the ranking."""
        for m in members:
            old = (self.cost[m], self.tie[m], m)
            del self.ranked[bisect_left(self.ranked, old)]
            self.cost[m] = self.objective.cost_with(self, m, self.load[m], self.flow[m])
            insort(self.ranked, (self.cost[m], self.tie[m], m))

    def heaviest(self) -> str:
        """The costliest member; among equal costs the smallest tie key."""
        ranked = self.ranked
        return ranked[bisect_left(ranked, (ranked[-1][0],))][2]

    def cost_after(self, mid: str, out: Held | None, into: Held | None) -> Any:
        """``mid``'s cost after giving ``out`` away and taking ``into``."""
        load, flow = self.load[mid], self.flow[mid]
        if out is not None:
            load, flow = load - out[0], flow - self.rates[out[1]]
        if into is not None:
            load, flow = load + into[0], flow + self.rates[into[1]]
        return self.objective.cost_with(self, mid, load, flow)

    def _split_cost(self, heavy: str, light: str, keep: int) -> Any:
        """The larger cost of the two after ``heavy`` keeps mask ``keep`` of both's partitions."""
        pool = self.held[heavy] + self.held[light]
        lag = sum(p[0] for i, p in enumerate(pool) if keep >> i & 1)
        flow = sum(self.rates[p[1]] for i, p in enumerate(pool) if keep >> i & 1)
        total_lag = self.load[heavy] + self.load[light]
        total_flow = self.flow[heavy] + self.flow[light]
        return max(
            self.objective.cost_with(self, heavy, lag, flow),
            self.objective.cost_with(self, light, total_lag - lag, total_flow - flow),
        )

    def layout(self) -> Layout:
        """TopicPartitions per member id, each member's by lag."""
        tps = self.group.tps
        return {mid: [tps[i] for _, i in held] for mid, held in self.held.items()}

    def layout_index(self) -> IndexLayout:
        """Partition indices per member id, each member's by lag."""
        return {mid: [i for _, i in held] for mid, held in self.held.items()}

    @property
    def max_cost(self) -> Any:
        return self.ranked[-1][0]

    @property
    def max_lag(self) -> int:
        return max(self.load.values())

    @property
    def spread(self) -> int:
        """The largest member lag less the smallest."""
        return self.max_lag - min(self.load.values())


__all__ = ["CountRule", "Exchange", "Held", "IndexLayout", "Layout", "State"]
