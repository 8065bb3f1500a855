"""Kafka's server-side ``uniform`` assignor (KIP-848, the new consumer protocol).

Identical subscriptions follow ``UniformHomogeneousAssignmentBuilder``: with P partitions and
N members every member's quota is P // N, the first P % N members (in member order) get one
more; each member keeps its owned partitions up to its quota (topic by topic, partition by
partition) and gives the rest back; then the members short of their quota, in order, take
the free partitions in order (never-owned partitions by topic and number first, then the
given-back ones). Kafka walks members in its group's map order; lagassign in Kafka's member
order (``GroupSnapshot.kafka_order``), so the result is deterministic.

Mixed subscriptions follow ``UniformHeterogeneousAssignmentBuilder``'s principles, balance
first, then stickiness: Kafka's builder balances per topic for at most 16 rounds, best effort;
lagassign gives sticky's layout, which meets Kafka's balance condition exactly and keeps as
many owned partitions as that allows.

Server-side ``range`` (the coordinator's ``RangeAssignor``) orders members as the client's
(static ones by instance id first) and deals the same per-topic contiguous ranges, with no
rack pass: lagassign's ``range`` on the group without racks.

Spec: KIP-848 and Apache Kafka's ``UniformAssignor`` (group-coordinator,
``org.apache.kafka.coordinator.group.assignor``).
Guarantee: identical subscriptions: counts within one, and every member keeps
min(owned, quota) of its owned partitions; mixed: sticky's (Kafka's balance condition).

Example: C0 owns three of four partitions, C1 joins; C0's quota is two, so it gives t0-2
back, and C1 takes the never-owned t0-3 first, then t0-2::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0"], "C1": ["t0"]}, {"t0": [1] * 4}, {"C0": ["t0-0", "t0-1", "t0-2"]})
    >>> show(UniformStrategy().assign(g))
    C0: t0-0 t0-1
    C1: t0-2 t0-3
"""

from __future__ import annotations

from ..model import Assignment, GroupSnapshot, TopicPartition
from .base import Strategy, build, kept_owned
from .sticky import sticky_assignment


def homogeneous(group: GroupSnapshot) -> dict[str, list[TopicPartition]]:
    """``UniformHomogeneousAssignmentBuilder``: quotas, owned partitions kept up to them, then
    the free partitions dealt to the members short of their quota, in order."""
    total = len(group.assignable)
    quota_min, extra = divmod(total, len(group.members))
    kept = kept_owned(group)
    owned = {tp for tps in kept.values() for tp in tps}
    free = [tp for tp in group.assignable if tp not in owned]
    layout: dict[str, list[TopicPartition]] = {}
    short: list[tuple[str, int]] = []
    for m in group.kafka_order:
        quota = quota_min
        if extra > 0:
            quota += 1
            extra -= 1
        mine = sorted(kept[m.id])
        layout[m.id] = mine[:quota]
        free.extend(mine[quota:])
        if quota > len(mine):
            short.append((m.id, quota - len(mine)))
    at = 0
    for mid, room in short:
        layout[mid].extend(free[at : at + room])
        at += room
    return layout


class UniformStrategy(Strategy):
    name = "uniform"
    summary = "Kafka's server-side uniform assignor (KIP-848): quotas, owned kept up to them, the rest dealt"

    def assign(self, group: GroupSnapshot) -> Assignment:
        if group.identical_subscriptions:
            return build(self.name, group, homogeneous(group))
        return build(self.name, group, sticky_assignment(group))
