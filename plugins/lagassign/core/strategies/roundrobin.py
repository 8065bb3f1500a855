"""Kafka's RoundRobinAssignor: all partitions in order, dealt in a circle over sorted members.

Partitions are sorted by topic then number; the circle skips members not subscribed to the
partition's topic and resumes after the member that took the last one, as Kafka's does.
"""

from __future__ import annotations

from ..model import Assignment, GroupSnapshot
from .base import Strategy, build


class RoundRobinStrategy(Strategy):
    name = "roundrobin"
    summary = "Kafka RoundRobinAssignor: sorted partitions dealt over sorted members in a circle"

    def assign(self, group: GroupSnapshot) -> Assignment:
        members = group.members
        n = len(members)
        pos = 0
        pairs = []
        for tp in group.assignable:
            while tp.topic not in members[pos].topics:
                pos = (pos + 1) % n
            pairs.append((members[pos].id, tp))
            pos = (pos + 1) % n
        return build(self.name, group, pairs)
