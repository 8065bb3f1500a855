"""Kafka's server-side ``uniform`` assignor (KIP-848, the new consumer protocol).

Identical subscriptions follow ``UniformHomogeneousAssignmentBuilder`` as of Kafka 4.1
(KAFKA-18688): with P partitions and N members every member gets P // N, and P % N of them
one more. In member order each member keeps its owned partitions (topic by topic, partition
by partition) up to P // N + 1 while extras are left, up to P // N after, and gives the rest
back; a member that kept P // N + 1 of its own has taken an extra; the extras nobody took go
to the last members still short, so a balanced assignment never moves. Then the members
short of their count, in order, take the free partitions in order (never-owned partitions by
topic and number first, then the given-back ones). Kafka walks members in its group's map
order and topics in the hash order of their ids; lagassign in Kafka's member order
(``GroupSnapshot.kafka_order``) and topics by name, so the result is deterministic. Before
4.1 Kafka gave the extras to the first members in order, which moved partitions of balanced
groups. No rack pass: Kafka's rack-aware variant (KAFKA-19909, proposed after 4.1) is not
followed.

Mixed subscriptions follow ``UniformHeterogeneousAssignmentBuilder``'s principles, balance
first, then stickiness: Kafka's builder balances per topic for at most 16 rounds, best effort;
lagassign gives sticky's layout of the group without racks (``rack_blind``: neither of Kafka's
builders has a rack pass), which meets Kafka's balance condition exactly and keeps as many
owned partitions as that allows. On the examples of Kafka's own tests it keeps at least
as many as Kafka and is Kafka's result in 5 of 8; in the others only which member takes which
free partition differs (``tests/core/strategies/test_uniform.py``). A fresh group whose subscriptions share
no topic (Kafka's JMH buckets) gets sticky's layout worked directly (``fresh_apart``).

Server-side ``range`` (the coordinator's ``RangeAssignor``) orders members as the client's
(static ones by instance id first) and deals the same per-topic contiguous ranges, with no
rack pass: lagassign's ``range`` on the group without racks.

Spec: KIP-848 and Apache Kafka's ``UniformAssignor`` (group-coordinator,
``org.apache.kafka.coordinator.group.assignor``).
Guarantee: identical subscriptions: counts within one, every member keeps min(owned, its
count) of its owned partitions, and run on its own result nothing moves; mixed: sticky's
(Kafka's balance condition).

Example: C0 owns three of four partitions, C1 joins; each gets two, so C0 gives t0-2 back,
and C1 takes the never-owned t0-3 first, then t0-2::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0"], "C1": ["t0"]}, {"t0": [1] * 4}, {"C0": ["t0-0", "t0-1", "t0-2"]})
    >>> show(UniformStrategy().assign(g))
    C0: t0-0 t0-1
    C1: t0-2 t0-3

Five partitions: C1 keeps three of its own, so the extra is C1's and nothing moves (before
Kafka 4.1 the first member, C0, had the extra and took t0-4 from C1)::

    >>> owned = {"C0": ["t0-0", "t0-1"], "C1": ["t0-2", "t0-3", "t0-4"]}
    >>> g = example({"C0": ["t0"], "C1": ["t0"]}, {"t0": [1] * 5}, owned)
    >>> show(UniformStrategy().assign(g))
    C0: t0-0 t0-1
    C1: t0-2 t0-3 t0-4
"""

from __future__ import annotations

from itertools import islice

from ..model import Assignment, GroupSnapshot
from .base import Strategy, build, build_indexed, fresh_apart, kept_owned_index
from .sticky import sticky_assignment


def homogeneous(group: GroupSnapshot) -> list[list[int]]:
    """``UniformHomogeneousAssignmentBuilder`` (Kafka 4.1+, KAFKA-18688): quotas, owned
    partitions kept up to them, extras to the members that own enough and then to the last
    members still short, the free partitions dealt in order. Partition indices per member index."""
    total = len(group.assignable_index)
    quota_min, extra = divmod(total, len(group.members))
    kept = kept_owned_index(group)
    owned = set().union(*kept)
    free = [p for p in group.assignable_index if p not in owned] if owned else list(group.assignable_index)
    layout: list[list[int]] = [[] for _ in group.members]
    short: list[int] = []  # members that may take free partitions, in member order
    room: dict[int, int] = {}
    index = group.member_index
    for m in group.kafka_order:
        k = index[m.id]
        quota = quota_min + 1 if extra > 0 else quota_min
        layout[k] = kept[k][:quota]
        free.extend(kept[k][quota:])
        took = len(layout[k]) > quota_min  # an extra, with its own partitions
        extra -= took
        left = max(0, quota_min - len(layout[k]))  # an extra it did not fill is left to others
        if left > 0 or (extra > 0 and not took):
            short.append(k)
            room[k] = left
    for k in reversed(short):  # extras nobody claimed go to the last members short
        if extra == 0:
            break
        room[k] += 1
        extra -= 1
    queue = iter(free)
    for k in short:
        layout[k].extend(islice(queue, room[k]))
    return layout


def rack_blind(group: GroupSnapshot) -> GroupSnapshot:
    """The group as Kafka's ``UniformAssignor`` sees it: its builders have no rack pass, so
    the members' racks are left out (sticky's layout would trade owned partitions for rack
    locality). The group itself when no member has a rack."""
    if all(m.rack is None for m in group.members):
        return group
    members = tuple(m._replace(rack=None) for m in group.members)
    reset = group.auto_offset_reset
    return GroupSnapshot(group.group, members, auto_offset_reset=reset, columns=group.columns)


class UniformStrategy(Strategy):
    name = "uniform"
    summary = "Kafka's server-side uniform assignor (KIP-848): quotas, owned kept up to them, the rest dealt"

    def assign(self, group: GroupSnapshot) -> Assignment:
        if group.identical_subscriptions:
            return build_indexed(self.name, group, homogeneous(group))
        blind = rack_blind(group)
        apart = fresh_apart(blind)
        if apart is not None:
            return build_indexed(self.name, group, apart)
        return build(self.name, group, sticky_assignment(blind))
