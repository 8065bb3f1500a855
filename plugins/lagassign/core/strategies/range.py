"""Kafka's RangeAssignor: per topic, contiguous ranges to the subscribers sorted by id.

Each of the n subscribers of a topic with p partitions gets p // n partitions; the first
p % n of them get one more. Topics are independent, which is why range stacks the first
members when many topics are small.

Spec: Apache Kafka's ``RangeAssignor`` (kafka-clients, ``org.apache.kafka.clients.consumer``).
Guarantee: deterministic; per topic, subscriber counts differ by at most one.

Example: two members share t0 and t1, three partitions each; C0 takes the extra of both::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0", "t1"], "C1": ["t0", "t1"]}, {"t0": [1, 1, 1], "t1": [1, 1, 1]})
    >>> show(RangeStrategy().assign(g))
    C0: t0-0 t0-1 t1-0 t1-1
    C1: t0-2 t1-2
"""

from __future__ import annotations

from ..model import Assignment, GroupSnapshot, TopicPartition
from .base import Strategy, build


class RangeStrategy(Strategy):
    name = "range"
    summary = "Kafka RangeAssignor: per-topic contiguous ranges, first members get the extra"

    def assign(self, group: GroupSnapshot) -> Assignment:
        pairs: list[tuple[str, TopicPartition]] = []
        for topic, tps in group.topic_partitions.items():
            members = group.subscribers[topic]
            per, extra = divmod(len(tps), len(members))
            start = 0
            for i, mid in enumerate(members):
                length = per + (1 if i < extra else 0)
                pairs.extend((mid, tp) for tp in tps[start : start + length])
                start += length
        return build(self.name, group, pairs)
