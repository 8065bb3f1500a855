"""Kafka's RoundRobinAssignor: all partitions in order, dealt in a circle over sorted members.

Members are in Kafka's order: static members (KIP-345) by ``group.instance.id`` first, then
member ids.

Partitions are sorted by topic then number; the circle skips members not subscribed to the
partition's topic and resumes after the member that took the last one, as Kafka's does.

Spec: Apache Kafka's ``RoundRobinAssignor`` (kafka-clients, ``org.apache.kafka.clients.consumer``).
Guarantee: deterministic; with identical subscriptions counts differ by at most one; identical
to kafka-clients 4.3.0 (tests/core/strategies/test_fidelity_kafka.py).

Example: the same group as range's, dealt t0-0, t0-1, t0-2, t1-0, ... in turn::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0", "t1"], "C1": ["t0", "t1"]}, {"t0": [1, 1, 1], "t1": [1, 1, 1]})
    >>> show(RoundRobinStrategy().assign(g))
    C0: t0-0 t0-2 t1-1
    C1: t0-1 t1-0 t1-2
"""

from __future__ import annotations

from bisect import bisect_left

from ..model import Assignment, GroupSnapshot
from .base import Strategy, build_indexed, cyclic


class RoundRobinStrategy(Strategy):
    name = "roundrobin"
    summary = "Kafka RoundRobinAssignor: sorted partitions dealt over sorted members in a circle"

    def assign(self, group: GroupSnapshot) -> Assignment:
        return build_indexed(self.name, group, round_robin(group))


def round_robin(group: GroupSnapshot) -> list[list[int]]:
    """Partition indices per member index. The circle walks Kafka's member order; a topic's
    partitions go, in turn, to its subscribers from the first one at or after the circle's
    position, which then moves past the last taker."""
    index = group.member_index
    circle = [index[m.id] for m in group.kafka_order]  # member index at each circle position
    n = len(circle)
    layout: list[list[int]] = [[] for _ in circle]
    assignable = group.assignable_index
    if group.identical_subscriptions:  # no one is skipped: every n-th partition
        for at, k in enumerate(circle):
            layout[k] = assignable[at::n]
        return layout
    rank = {m.id: at for at, m in enumerate(group.kafka_order)}
    seats: dict[int, list[int]] = {}  # per subscriber list: its circle positions, ascending
    spans = group.topic_span
    at = 0
    for topic, subscribers in group.kafka_subscribers.items():
        span = spans.get(topic)
        if not span:
            continue
        taken = seats.get(id(subscribers))
        if taken is None:
            taken = seats[id(subscribers)] = [rank[mid] for mid in subscribers]
        first = bisect_left(taken, at)
        takers = cyclic(taken, first if first < len(taken) else 0, len(span))
        for p, seat in zip(span, takers, strict=True):
            layout[circle[seat]].append(p)
        at = (takers[-1] + 1) % n
    return layout
