"""Kafka's RangeAssignor: per topic, contiguous ranges to the subscribers sorted by id.

Each of the n subscribers of a topic with p partitions gets p // n partitions; the first
p % n of them get one more. Topics are independent, which is why range stacks the first
members when many topics are small.
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
