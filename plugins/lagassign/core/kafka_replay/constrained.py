"""Kafka's sticky assignment for one shared subscription, step for step: its constrained builder.

What Kafka's ``StickyAssignor`` gives a group whose members all subscribe to the same topics
(``AbstractStickyAssignor.ConstrainedAssignmentBuilder``), so that cooperative-sticky can take,
per group, a result at least as good as Kafka's cooperative one on moves and rack-local
partitions at once:

1. Quotas: ``P // n`` partitions per member, one more for ``P % n`` of them. Members, in the
   order of Kafka's ``HashMap`` of member ids, keep their owned partitions (rack-local ones,
   with racks), by partition number then topic, up to their quota.
2. The rest, by topic and number, then (with racks) fewest rack-local members first, go round
   the members still under quota (ids ascending) to the next one on a replica's rack.
3. What is left goes round the members under quota, then those that may take one more.

``kafka_constrained(group)`` is the eager result; ``kafka_constrained_cooperative(group)``
reruns it, as Kafka's ``CooperativeStickyAssignor`` does, until no partition is withheld.

Spec: Apache Kafka 4 ``AbstractStickyAssignor`` (``ConstrainedAssignmentBuilder``,
``RackInfo``), all members in one generation; checked against kafka-clients 4.3.0
(tests/core/strategies/test_fidelity_kafka.py).

Example: C0 and C1 on t0 (three partitions), C0 owning all three; quotas are 2 and 1, so C0
keeps t0-0 and t0-1 and C1 gets t0-2::

    >>> from lagassign.core.strategies.examples import example
    >>> g = example({"C0": ["t0"], "C1": ["t0"]}, {"t0": [1, 1, 1]}, {"C0": ["t0-0", "t0-1", "t0-2"]})
    >>> {m: [str(tp) for tp in tps] for m, tps in sorted(kafka_constrained(g).items())}
    {'C0': ['t0-0', 't0-1'], 'C1': ['t0-2']}
"""

from __future__ import annotations

from ..model import GroupSnapshot, TopicPartition
from .cooperative import cooperative_rounds
from .racks import sticky_uses_racks

Layout = dict[str, list[TopicPartition]]


def _hashmap_order(ids: list[str]) -> list[str]:
    """Member ids in the order a Java ``HashMap`` of them iterates (bucket, then insertion)."""
    cap = 16
    while len(ids) > cap * 3 // 4:
        cap *= 2

    def bucket(s: str) -> int:
        h = 0
        for ch in s:
            h = (31 * h + ord(ch)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    return sorted(ids, key=bucket)


def kafka_constrained(group: GroupSnapshot, owned: Layout | None = None) -> Layout:
    """Kafka's constrained builder on ``group`` (owned partitions from ``owned`` when given)."""
    use_racks = sticky_uses_racks(group)
    rack = {m.id: m.rack for m in group.members if m.rack} if use_racks else {}
    prack = {tp: group.partitions[tp].racks for tp in group.assignable} if use_racks else {}
    if owned is None:
        owned = {m.id: list(m.owned) for m in group.members}
    assignable = group.assignable_set
    members = _hashmap_order(group.member_ids)
    min_q, over_expected = divmod(len(group.assignable), len(members))
    max_q = min_q + (1 if over_expected else 0)
    over = 0
    held: Layout = {mid: [] for mid in members}
    claimed: set[TopicPartition] = set()
    under: list[str] = []
    exact: list[str] = []

    def mismatch(mid: str, tp: TopicPartition) -> bool:
        return mid in rack and rack[mid] not in prack.get(tp, ())

    for mid in members:
        mine = [tp for tp in owned.get(mid, []) if tp in assignable and tp not in claimed]
        claimed.update(mine)
        mine = sorted((tp for tp in mine if not mismatch(mid, tp)), key=lambda tp: (tp.partition, tp.topic))
        if len(mine) < min_q:
            held[mid] = mine
            under.append(mid)
        elif len(mine) >= max_q and over < over_expected:
            over += 1
            if over == over_expected:
                exact.clear()
            held[mid] = mine[:max_q]
        else:
            held[mid] = mine[:min_q]
            if over < over_expected:
                exact.append(mid)
    taken = {tp for tps in held.values() for tp in tps}
    unassigned = sorted(tp for tp in group.assignable if tp not in taken)
    under.sort()
    exact.sort()
    if prack:
        by_rack: dict[str, int] = {}
        for r in rack.values():
            by_rack[r] = by_rack.get(r, 0) + 1
        unassigned.sort(key=lambda tp: sum(by_rack.get(r, 0) for r in prack[tp]))

    def next_on_rack(tp: TopicPartition, members: list[str], first: int) -> int:
        racks = prack.get(tp)
        if not racks:
            return -1
        for i in range(len(members)):
            index = (first + i) % len(members)
            if rack.get(members[index]) in racks:
                return index
        return -1

    rest = []
    if rack:  # round-robin within racks
        nxt = 0
        for tp in unassigned:
            consumer = None
            index = next_on_rack(tp, under, nxt)
            if index >= 0:
                consumer = under[index]
                count = len(held[consumer]) + 1
                if count >= min_q:
                    under.remove(consumer)
                    if count < max_q and over < over_expected:
                        exact.append(consumer)
                else:
                    index += 1
                nxt = index % len(under) if under else 0
            elif exact:
                first = next_on_rack(tp, exact, 0)
                if first >= 0:
                    consumer = exact[first]
                    if len(held[consumer]) + 1 == max_q:
                        exact.pop(first)
                        over += 1
                        if over == over_expected:
                            exact.clear()
            if consumer is None:
                rest.append(tp)
            else:
                held[consumer].append(tp)
    else:
        rest = unassigned
    at = 0  # an iterator over ``under`` (Java's, with remove)
    for tp in rest:
        if at < len(under):
            consumer = under[at]
            at += 1
        elif not under:
            consumer = exact.pop(0)
        else:
            consumer = under[0]
            at = 1
        held[consumer].append(tp)
        count = len(held[consumer])
        if count == min_q:
            at -= 1
            del under[at]
            exact.append(consumer)
        elif count == max_q:
            over += 1
    return {mid: sorted(held[mid]) for mid in group.member_ids}


def kafka_constrained_cooperative(group: GroupSnapshot) -> Layout:
    """Kafka's ``CooperativeStickyAssignor`` on one shared subscription after its follow-up
    rebalances: each round keeps the constrained builder's result minus the partitions changing
    owner, until nothing changes."""
    return cooperative_rounds(group, kafka_constrained)
