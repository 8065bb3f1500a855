"""Kafka's rack rules for its sticky assignors (KIP-881, Kafka 3.5+), as sticky's start.

``sticky_uses_racks``: Kafka's ``AbstractStickyAssignor`` (its ``RackInfo``) uses racks only
when some member's rack holds a replica of some assignable partition and the partitions are
not all on the same racks (then no member could gain locality by any choice).

``kafka_rack_seed``: one shared subscription, the constrained builder's rules: owned
rack-local partitions kept up to the quotas, the rest to a rack-local member with room
(fewest rack-local members first), then back to their owner if it has room, else to the
emptiest member.

Mixed subscriptions follow the general builder's rules, in sticky's passes 1-3 with racks
(``strategies.sticky``). Both are starts: sticky's chain search (``fewer_moves``) improves
them. Kafka's rack-foreign owned partitions are released as in Kafka; one that finds no
rack-local home goes back to its owner when it has room, which Kafka does not promise.

Spec: KIP-881 and Apache Kafka's ``AbstractStickyAssignor`` (``RackInfo``,
``ConstrainedAssignmentBuilder``, ``GeneralAssignmentBuilder``).
"""

from __future__ import annotations

from collections.abc import Collection

from ..model import GroupSnapshot, TopicPartition


def uses_racks(member_racks: set[str], replica_racks: Collection[frozenset[str]]) -> bool:
    """Kafka's rule for using racks at all (``useRackAwareAssignment``, range and sticky alike):
    some member's rack holds a replica, and not every partition is on every replica rack there
    is (else no choice gains locality)."""
    every = frozenset().union(*replica_racks)
    return bool(member_racks & every) and any(r != every for r in replica_racks)


def sticky_uses_racks(group: GroupSnapshot) -> bool:
    """Whether Kafka's sticky assignors would assign by rack (``uses_racks`` over the group's
    assignable partitions)."""
    if not group.rack_aware:
        return False
    racks = group.columns.racks
    assert racks is not None  # rack_aware says some partition has racks
    member_racks = {m.rack for m in group.members if m.rack}
    return uses_racks(member_racks, {racks[i] for i in group.assignable_index})


def kafka_rack_seed(group: GroupSnapshot) -> dict[str, list[TopicPartition]]:
    """Partitions per member by Kafka's constrained rules with racks (one shared subscription):
    ``n`` members, ``P`` partitions, quotas ``P // n`` and ``P // n + 1`` for ``P % n`` of them."""
    ids = group.member_ids
    rack = {m.id: m.rack for m in group.members}
    racks = {tp: group.partitions[tp].racks for tp in group.assignable}
    floor, extra = divmod(len(group.assignable), len(ids))
    held: dict[str, list[TopicPartition]] = {mid: [] for mid in ids}
    taken: set[TopicPartition] = set()
    for m in group.members:  # owned rack-local partitions, up to the quota
        local = sorted(tp for tp in m.owned if tp in racks and rack[m.id] in racks[tp])
        quota = floor + 1 if len(local) > floor and extra > 0 else floor
        extra -= quota - floor
        held[m.id] = local[:quota]
        taken.update(held[m.id])

    def room(mid: str) -> bool:
        return len(held[mid]) < floor or (len(held[mid]) == floor and extra > 0)

    def give(mid: str, tp: TopicPartition) -> None:
        nonlocal extra
        if len(held[mid]) == floor:
            extra -= 1
        held[mid].append(tp)

    by_rack: dict[str | None, list[str]] = {}
    for mid in ids:
        by_rack.setdefault(rack[mid], []).append(mid)
    free = [tp for tp in group.assignable if tp not in taken]
    local_members = {tp: sum(len(by_rack.get(r, ())) for r in racks[tp]) for tp in free}
    rest = []
    for tp in sorted(free, key=lambda tp: (local_members[tp], tp)):
        fits = [mid for r in racks[tp] for mid in by_rack.get(r, ()) if room(mid)]
        if fits:
            give(min(fits, key=lambda mid: (len(held[mid]), mid)), tp)
        else:
            rest.append(tp)
    owner = group.owner
    for tp in rest:
        prev = owner.get(tp)
        if prev not in held or not room(prev):
            prev = min((mid for mid in ids if room(mid)), key=lambda mid: (len(held[mid]), mid))
        give(prev, tp)
    return held
