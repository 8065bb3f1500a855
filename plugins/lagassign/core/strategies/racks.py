"""Rack locality (KIP-881): when Kafka's sticky assignors use racks, and a polish for the
lag strategies, swaps that read more partitions on their own rack.

``sticky_uses_racks``: Kafka's ``AbstractStickyAssignor`` (its ``RackInfo``) uses racks only
when some member's rack holds a replica of some assignable partition and the partitions are
not all on the same racks (then no member could gain locality by any choice).

``kafka_rack_seed``: for one shared subscription, Kafka's constrained builder's rules with racks,
as a start for sticky's chain search: owned rack-local partitions kept up to the quotas, the rest
to a rack-local member with room (fewest rack-local members first), then back to their owner if
it has room, else to the emptiest member.

``rack_local_swaps``:

Two members swap two partitions of the same topic when that makes more partitions rack-local
(a replica on the consumer's rack) and raises neither member's lag above ``limit``. Counts and
which topics each member holds stay as they were, so every count guarantee (Kafka's balance
condition included) still holds; with ``max_moves`` a swap that would pass it is skipped.
"""

from __future__ import annotations

from ..model import GroupSnapshot, TopicPartition


def sticky_uses_racks(group: GroupSnapshot) -> bool:
    """Whether Kafka's sticky assignors would assign by rack: member racks meet the replicas'
    racks and some assignable partition is not on every replica rack there is."""
    if not group.rack_aware:
        return False
    racks = group.columns.racks
    assert racks is not None  # rack_aware says some partition has racks
    seen = {racks[i] for i in group.assignable_index}
    every = frozenset().union(*seen)
    member_racks = {m.rack for m in group.members if m.rack}
    return bool(member_racks & every) and any(r != every for r in seen)


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
        fits = [mid for r in sorted(racks[tp]) for mid in by_rack.get(r, ()) if room(mid)]
        if fits:
            give(min(fits, key=lambda mid: (len(held[mid]), mid)), tp)
        else:
            rest.append(tp)
    owner = group.owner
    for tp in rest:
        prev = owner.get(tp)
        if prev is None or prev not in held or not room(prev):
            prev = min((mid for mid in ids if room(mid)), key=lambda mid: (len(held[mid]), mid))
        give(prev, tp)
    return held


def rack_local_swaps(
    group: GroupSnapshot,
    layout: dict[str, list[TopicPartition]],
    limit: int,
    max_moves: int | None = None,
) -> dict[str, list[TopicPartition]]:
    """``layout`` with same-topic swaps that make more partitions rack-local, loads <= ``limit``."""
    lag = group.lag
    rack = {m.id: m.rack for m in group.members}
    racks = {tp: st.racks for tp, st in group.partitions.items()}
    before = group.owner
    held = {mid: set(tps) for mid, tps in layout.items()}
    load = {mid: sum(lag[tp] for tp in tps) for mid, tps in layout.items()}
    owner = {tp: mid for mid, tps in layout.items() for tp in tps}
    moves = sum(1 for tp, mid in before.items() if owner.get(tp) != mid)

    def local(mid: str, tp: TopicPartition) -> int:
        return 1 if rack[mid] is not None and rack[mid] in racks[tp] else 0

    def moved(tp: TopicPartition, mid: str) -> int:
        return 1 if tp in before and before[tp] != mid else 0

    changed = True
    while changed:
        changed = False
        for p in sorted(owner):
            a = owner[p]
            if local(a, p) or not racks[p]:
                continue
            for b in group.subscribers[p.topic]:
                if b == a or not local(b, p):
                    continue
                for q in sorted(t for t in held[b] if t.topic == p.topic):
                    gain = 1 + local(a, q) - local(b, q)
                    if gain <= 0:
                        continue
                    if load[a] - lag[p] + lag[q] > limit or load[b] - lag[q] + lag[p] > limit:
                        continue
                    delta = moved(p, b) + moved(q, a) - moved(p, a) - moved(q, b)
                    if max_moves is not None and moves + delta > max_moves:
                        continue
                    held[a].remove(p)
                    held[b].remove(q)
                    held[a].add(q)
                    held[b].add(p)
                    owner[p], owner[q] = b, a
                    load[a] += lag[q] - lag[p]
                    load[b] += lag[p] - lag[q]
                    moves += delta
                    changed = True
                    break
                if owner[p] != a:
                    break
    return {mid: sorted(tps) for mid, tps in held.items()}
