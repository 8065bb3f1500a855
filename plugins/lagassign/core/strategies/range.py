"""Kafka's RangeAssignor: per topic, contiguous ranges to the subscribers in Kafka's order.

Each of the n subscribers of a topic with p partitions gets p // n partitions; the first
p % n of them get one more. Topics are independent, which is why range stacks the first
members when many topics are small. Members are in Kafka's order (static members by
``group.instance.id`` first, then member ids: KIP-345).

With racks (KIP-881: members' ``rack``, partitions' replica ``racks``), when some topic's
partitions are not on every rack, Kafka's rack-aware pass runs first: each member in turn takes
up to its share of the partitions with a replica on its rack (co-partitioned topics, same
subscribers and partition count, go partition by partition to one member); the usual ranges
then place what is left.

Spec: Apache Kafka's ``RangeAssignor`` (kafka-clients 4.x, ``org.apache.kafka.clients.consumer``).
Guarantee: deterministic; per topic, subscriber counts differ by at most one; identical to
kafka-clients 4.3.0 (tests/core/strategies/test_fidelity_kafka.py).

Example: two members share t0 and t1, three partitions each; C0 takes the extra of both::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0", "t1"], "C1": ["t0", "t1"]}, {"t0": [1, 1, 1], "t1": [1, 1, 1]})
    >>> show(RangeStrategy().assign(g))
    C0: t0-0 t0-1 t1-0 t1-1
    C1: t0-2 t1-2
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from operator import add

from ..kafka_replay.racks import uses_racks
from ..model import Assignment, GroupSnapshot, TopicPartition
from .base import Strategy, build, build_indexed


class _TopicState:
    """One topic's progress, as Kafka's ``TopicAssignmentState``: who may still take how many."""

    def __init__(self, group: GroupSnapshot, topic: str, racks: dict[str, str]) -> None:
        self.topic = topic
        self.partitions = group.topic_partitions[topic]
        self.consumers = group.kafka_subscribers[topic]
        self.racks = racks
        self.unassigned: dict[TopicPartition, None] = dict.fromkeys(self.partitions)
        self.assigned = dict.fromkeys(self.consumers, 0)
        self.per, self.extra = divmod(len(self.partitions), len(self.consumers))
        consumer_racks = {racks[c] for c in self.consumers if c in racks}
        if consumer_racks:
            self.replica_racks = {tp: group.partitions[tp].racks for tp in self.partitions}
        else:
            self.replica_racks = {}
        self.needs_racks = uses_racks(consumer_racks, self.replica_racks.values())
        #: members and their racks: topics alike in this and partition count are co-partitioned
        self.key = (tuple((c, racks.get(c)) for c in self.consumers), len(self.replica_racks))

    def racks_match(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.racks.get(consumer)
        return rack is None or rack in self.replica_racks.get(tp, ())

    def max_assignable(self, consumer: str) -> int:
        return max(0, self.per + (1 if self.extra > 0 else 0) - self.assigned[consumer])

    def assign(self, consumer: str, tps: list[TopicPartition], pairs: list) -> None:
        pairs.extend((consumer, tp) for tp in tps)
        self.assigned[consumer] += len(tps)
        if self.assigned[consumer] > self.per:
            self.extra -= 1
        for tp in tps:
            del self.unassigned[tp]

    def assign_ranges(self, may: Callable[[str, TopicPartition], bool], pairs: list) -> None:
        for c in self.consumers:
            if not self.unassigned:
                break
            room = self.max_assignable(c)
            tps = [tp for tp in self.unassigned if may(c, tp)][:room]
            if tps:
                self.assign(c, tps, pairs)


def _co_partitioned(states: list[_TopicState], pairs: list) -> None:
    """Partition i of every topic to the first member local to all of them with room left."""
    remaining = list(states[0].consumers)
    for i in range(len(states[0].partitions)):
        match = next(
            (
                c
                for c in remaining
                if all(s.racks_match(c, s.partitions[i]) and s.max_assignable(c) > 0 for s in states)
            ),
            None,
        )
        if match is None:
            continue
        for s in states:
            s.assign(match, [s.partitions[i]], pairs)
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break


def _plain_ranges(group: GroupSnapshot) -> list[list[int]]:
    """The ranges without racks, as partition indices per member index. Topics with the same
    subscribers and partition count are cut alike: each subscriber's share (offsets from the
    topic's first partition) is worked out once and added to every such topic's start; with
    more subscribers than partitions only the first ``p`` get one."""
    layout: list[list[int]] = [[] for _ in group.members]
    index = group.member_index
    spans = group.topic_span
    alike: dict[tuple[int, int], tuple[list[int], list[int]]] = {}  # (subscribers, count) -> starts
    for topic, consumers in group.kafka_subscribers.items():
        span = spans.get(topic)
        if span:
            key = (id(consumers), len(span))
            if key not in alike:
                alike[key] = ([index[c] for c in consumers], [])
            alike[key][1].append(span.start)
    for (_, count), (takers, starts) in alike.items():
        per, extra = divmod(count, len(takers))
        offset = 0
        for i in range(min(len(takers), count)):
            size = per + (i < extra)
            share = layout[takers[i]]
            if size == 1:
                share.extend(map(add, starts, repeat(offset)))
            else:
                share.extend(s + k for s in starts for k in range(offset, offset + size))
            offset += size
    return layout


class RangeStrategy(Strategy):
    name = "range"
    summary = "Kafka RangeAssignor: per-topic contiguous ranges, first members get the extra"

    def assign(self, group: GroupSnapshot) -> Assignment:
        racks = {m.id: m.rack for m in group.members if m.rack}
        if not racks:
            return build_indexed(self.name, group, _plain_ranges(group))
        states = [_TopicState(group, topic, racks) for topic in group.topic_partitions]
        states = [s for s in states if s.partitions]
        pairs: list[tuple[str, TopicPartition]] = []
        if any(s.needs_racks for s in states):
            alike: dict[tuple, list[_TopicState]] = {}
            for s in states:
                alike.setdefault(s.key, []).append(s)
            for same in alike.values():
                if len(same) > 1:
                    _co_partitioned(same, pairs)
                elif same[0].needs_racks:
                    same[0].assign_ranges(same[0].racks_match, pairs)
        for s in states:
            s.assign_ranges(lambda c, tp: True, pairs)
        return build(self.name, group, pairs)
