"""Rack locality (KIP-881) as a polish for the lag strategies: swaps that read more
partitions on their own rack.

Two members swap two partitions of the same topic when that makes more partitions rack-local
(a replica on the consumer's rack) and raises neither member's lag above ``limit``. Counts and
which topics each member holds stay as they were, so every count guarantee (Kafka's balance
condition included) still holds; with ``max_moves`` a swap that would pass it is skipped.
"""

from __future__ import annotations

from ..model import GroupSnapshot, TopicPartition


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
