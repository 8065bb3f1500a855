"""Kafka's RoundRobinAssignor: all partitions in order, dealt in a circle over sorted members.

Members are in Kafka's order: static members (KIP-345) by ``group.instance.id`` first, then
member ids.

Partitions are sorted by topic then number; the circle skips members not subscribed to the
partition's topic and resumes after the member that took the last one, as Kafka's does.

Spec: Apache Kafka's ``RoundRobinAssignor`` (kafka-clients, ``org.apache.kafka.clients.consumer``).
Guarantee: deterministic; with identical subscriptions counts differ by at most one; identical
to kafka-clients 4.3.0 (tests/test_fidelity_kafka.py).

Example: the same group as range's, dealt t0-0, t0-1, t0-2, t1-0, ... in turn::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0", "t1"], "C1": ["t0", "t1"]}, {"t0": [1, 1, 1], "t1": [1, 1, 1]})
    >>> show(RoundRobinStrategy().assign(g))
    C0: t0-0 t0-2 t1-1
    C1: t0-1 t1-0 t1-2
"""

from __future__ import annotations

from ..model import Assignment, GroupSnapshot
from .base import Strategy, build


class RoundRobinStrategy(Strategy):
    name = "roundrobin"
    summary = "Kafka RoundRobinAssignor: sorted partitions dealt over sorted members in a circle"

    def assign(self, group: GroupSnapshot) -> Assignment:
        members = group.kafka_order
        n = len(members)
        pos = 0
        pairs = []
        for tp in group.assignable:
            while tp.topic not in members[pos].topics:
                pos = (pos + 1) % n
            pairs.append((members[pos].id, tp))
            pos = (pos + 1) % n
        return build(self.name, group, pairs)
