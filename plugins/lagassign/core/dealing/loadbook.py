"""Partition counts and lags per member, with a fast "least-loaded eligible member" lookup.

Members with the same subscription form a class sharing one lazy min-heap, so a lookup for a
topic looks only at the heads of the classes that subscribe to it: one heap in the common case
of identical subscriptions, however many members there are. Shared by the count-balancing
strategies (sticky and cooperative-sticky with Kafka's rack rules, lag-aware); fair's circles
and lag-aware's rounds (``rounds``) give its answers where it would be slower.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping

from ..model import GroupSnapshot, TopicPartition


class LoadBook:
    """Who holds which partitions, kept consistent with counts, lags and the class heaps.

    ``by_lag`` makes the least-loaded order (count, lag, tie) instead of (count, tie): ties
    between equal loads go to the smallest ``tie_key`` (the member id unless given). The book
    starts empty, or holding ``layout`` (each member's partitions in that order).
    """

    def __init__(
        self,
        group: GroupSnapshot,
        by_lag: bool = False,
        tie_key: Callable[[str], object] | None = None,
        layout: Mapping[str, Iterable[TopicPartition]] | None = None,
    ) -> None:
        self.group = group
        self.lags = group.lag
        self.by_lag = by_lag
        self.tie = {mid: (tie_key(mid) if tie_key else mid) for mid in group.member_ids}
        self.count = dict.fromkeys(group.member_ids, 0)
        self.load = dict.fromkeys(group.member_ids, 0)
        self.held: dict[str, dict[TopicPartition, None]] = {mid: {} for mid in group.member_ids}
        self.owner: dict[TopicPartition, str] = {}
        for mid, tps in (layout or {}).items():
            mine = self.held[mid]
            for tp in tps:
                mine[tp] = None
                self.owner[tp] = mid
            self.count[mid] = len(mine)
            self.load[mid] = sum(map(self.lags.__getitem__, mine))
        # a class per subscription, numbered in ``group.subscriptions``' order
        self._class = {mid: idx for idx, ids in enumerate(group.subscriptions.values()) for mid in ids}
        self._heaps: list[list[tuple]] = [[] for _ in group.subscriptions]
        self._topic_classes: dict[str, list[int]] = {}
        for idx, topics in enumerate(group.subscriptions):
            for t in topics:
                self._topic_classes.setdefault(t, []).append(idx)
        #: each member's current key: the one heap entry of it that is not stale
        self._latest: dict[str, tuple] = {}
        for mid in group.member_ids:
            self._push(mid)

    def key(self, mid: str) -> tuple:
        """The load key that ``least_loaded`` minimises: (count, lag if by_lag, tie, id)."""
        return (self.count[mid], self.load[mid] if self.by_lag else 0, self.tie[mid], mid)

    def _push(self, mid: str) -> None:
        """Enter the member's new key; its earlier entries are stale from now on. When the
        stale one is its heap's head (the member least_loaded just named, the usual case)
        it is replaced at once: one sift instead of a push now and a pop later."""
        heap = self._heaps[self._class[mid]]
        key = self.key(mid)
        if heap and heap[0] is self._latest.get(mid):
            heapq.heapreplace(heap, key)
        else:
            heapq.heappush(heap, key)
        self._latest[mid] = key

    def _head(self, idx: int) -> tuple:
        """The least key of one class's heap, its stale entries dropped on the way."""
        heap = self._heaps[idx]
        latest = self._latest
        while heap[0] is not latest[heap[0][-1]]:
            heapq.heappop(heap)
        return heap[0]

    def add(self, mid: str, tp: TopicPartition) -> None:
        self.held[mid][tp] = None
        self.owner[tp] = mid
        self.count[mid] += 1
        self.load[mid] += self.lags[tp]
        self._push(mid)

    def move(self, tp: TopicPartition, to: str) -> None:
        mid = self.owner[tp]
        del self.held[mid][tp]
        self.count[mid] -= 1
        self.load[mid] -= self.lags[tp]
        self._push(mid)
        self.add(to, tp)

    def least_loaded(self, topic: str) -> str:
        """The member subscribed to ``topic`` with the smallest load key."""
        return min(map(self._head, self._topic_classes[topic]))[-1]

    def assignment(self) -> dict[str, list[TopicPartition]]:
        return {mid: list(tps) for mid, tps in self.held.items()}


def balance_counts(
    book: LoadBook,
    candidates: Callable[[str, Iterable[TopicPartition]], list[TopicPartition]],
) -> int:
    """Move partitions until Kafka's balance condition holds; return how many moved.

    The condition (StickyAssignor's, and the Lag-Aware KIP's): counts differ by at most one,
    or no member with two or more fewer partitions than another could take one of the other's.
    The fullest member gives one partition at a time, so no member gives down to the taker's
    level only to be refilled by the next giver (that cost sticky extra moves). Each move
    lowers the sum of squared counts, so the loop ends. ``candidates(member, held)`` orders a
    member's partitions, first to be given away first; it is called once per member and pass.
    """
    moved = 0
    changed = True
    while changed:
        changed = False
        # No member gets below the fewest a pass starts with (a giver keeps at least one
        # more than its taker): a member short of that by less than two has no taker.
        fewest = min(book.count.values())
        queues: dict[str, Iterator[TopicPartition]] = {}
        fullest = [(-count, mid) for mid, count in book.count.items() if count >= fewest + 2]
        heapq.heapify(fullest)
        while fullest:
            count, giver = heapq.heappop(fullest)
            if -count != book.count[giver]:
                continue  # stale entry; a member that received is seen again next pass
            queue = queues.get(giver)
            if queue is None:
                queue = queues[giver] = iter(candidates(giver, book.held[giver]))
            most = book.count[giver] - 2
            refused: set[str] = set()  # no count changes during one scan: a topic refused stays so
            for tp in queue:
                topic = tp.topic
                if topic in refused:
                    continue
                taker = book.least_loaded(topic)
                if book.count[taker] <= most:
                    book.move(tp, taker)
                    moved += 1
                    changed = True
                    heapq.heappush(fullest, (-book.count[giver], giver))
                    break
                refused.add(topic)
    return moved
