"""KAFKA-5337 / kafka-lag-based-assignor, exactly as its reference code behaves.

Per topic: partitions by lag descending (ties by partition number), each to the subscriber
with the fewest partitions of that topic, ties by the least lag assigned from that topic,
then by member id. Counters restart for every topic, so balance is per topic only.

Spec: KAFKA-5337 and the reference kafka-lag-based-assignor (its README and code).

Example: two topics with one hot partition each; counters restart per topic, so C0 takes
both hot partitions (18 against 2), the weakness lag-aware fixes::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0", "t1"], "C1": ["t0", "t1"]}, {"t0": [9, 1], "t1": [9, 1]})
    >>> show(LagStrategy().assign(g), g)
    C0: t0-0 t1-0  (lag 18)
    C1: t0-1 t1-1  (lag 2)
"""

from __future__ import annotations

import heapq

from ..model import Assignment, GroupSnapshot, TopicPartition
from .base import Strategy, build, memo


class LagStrategy(Strategy):
    name = "lag"
    summary = "KAFKA-5337: per topic, heaviest partition to the member with fewest, then least lag"

    def assign(self, group: GroupSnapshot) -> Assignment:
        return build(self.name, group, lag_layout(group))


def lag_layout(group: GroupSnapshot) -> dict[str, list[TopicPartition]]:
    """The KAFKA-5337 layout, computed once per group (lag-optimal compares with it)."""
    return memo(group, "lag", lambda: build(LagStrategy.name, group, _pairs(group)).members)


def _pairs(group: GroupSnapshot) -> list[tuple[str, TopicPartition]]:
    lag = group.lag
    pairs = []
    for topic, tps in group.topic_partitions.items():
        # everyone starts at (0, 0): only the first len(tps) members by id can be reached
        # before a member holding one comes back, so the rest need not be in the heap
        heap = [(0, 0, mid) for mid in group.subscribers[topic][: len(tps)]]
        for tp in sorted(tps, key=lambda tp: (-lag[tp], tp.partition)):
            count, load, mid = heapq.heappop(heap)
            pairs.append((mid, tp))
            heapq.heappush(heap, (count + 1, load + lag[tp], mid))
    return pairs
