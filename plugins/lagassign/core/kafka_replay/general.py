"""Kafka's sticky assignment for mixed subscriptions, step for step: its general builder.

What Kafka's ``StickyAssignor`` gives a group whose members subscribe to different topics
(``AbstractStickyAssignor.GeneralAssignmentBuilder``), so that sticky can take, per group, a
result at least as good as Kafka's on moves and rack-local partitions at once:

1. Members keep the owned partitions they still subscribe to that are rack-local (with racks).
2. The rest, topics with fewest subscribers first, go to the emptiest subscribed member,
   rack-local ones first (members ordered by partition count, then id).
3. While some member could take a partition of one with two more, partitions are walked in
   that order and handed to the emptiest subscriber, preferring to keep a rack-local one
   unless a rack-local member is emptier; a partition that undoes an earlier move goes back
   (``_Moves``). Kafka keeps the result only if it lowers the pairwise count spread.

``kafka_general(group)`` is the eager result; ``kafka_general_cooperative(group)`` reruns it,
as Kafka's ``CooperativeStickyAssignor`` does, until no partition is withheld.

Spec: Apache Kafka 4 ``AbstractStickyAssignor`` (``GeneralAssignmentBuilder``,
``PartitionMovements``), all members in one generation; checked against kafka-clients 4.3.0
(tests/core/strategies/test_fidelity_kafka.py).

Example: C0 [t0], C1 [t0, t1] owning all of t0 (two) and t1 (two); C0 could take either t0
partition from C1 (0 + 1 < 4), then the other (1 + 1 < 3), so both go to C0::

    >>> from lagassign.core.strategies.examples import example
    >>> g = example({"C0": ["t0"], "C1": ["t0", "t1"]}, {"t0": [1, 1], "t1": [1, 1]},
    ...             {"C1": ["t0-0", "t0-1", "t1-0", "t1-1"]})
    >>> {m: [str(tp) for tp in tps] for m, tps in sorted(kafka_general(g).items())}
    {'C0': ['t0-0', 't0-1'], 'C1': ['t1-0', 't1-1']}
"""

from __future__ import annotations

from ..model import GroupSnapshot, TopicPartition
from .cooperative import cooperative_rounds
from .racks import sticky_uses_racks


def _java_hash(tp: TopicPartition) -> int:
    """Java's ``TopicPartition.hashCode`` spread as ``HashMap`` spreads it (bucket order)."""
    h = 0
    for ch in tp.topic:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h = (31 * (31 + tp.partition) + h) & 0xFFFFFFFF
    return h ^ (h >> 16)


class _Moves:
    """Kafka's ``PartitionMovements``: per topic and (from, to) pair, the partitions moved,
    iterated as Java's ``HashSet`` does (bucket, then insertion)."""

    def __init__(self) -> None:
        self.pair: dict[TopicPartition, tuple[str, str]] = {}
        self.sets: dict[tuple[str, str, str], dict[TopicPartition, int]] = {}
        self.caps: dict[tuple[str, str, str], int] = {}
        self.seq = 0

    def _add(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.pair[tp] = pair
        key = (tp.topic, *pair)
        held = self.sets.setdefault(key, {})
        self.caps.setdefault(key, 16)
        self.seq += 1
        held[tp] = self.seq
        if len(held) > self.caps[key] * 3 // 4:
            self.caps[key] *= 2

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.pair:
            src, _ = self.pair.pop(tp)
            key = (tp.topic, src, old)
            del self.sets[key][tp]
            if not self.sets[key]:
                del self.sets[key], self.caps[key]
            if src != new:
                self._add(tp, (src, new))
        else:
            self._add(tp, (old, new))

    def actual(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        """The partition to move instead, so that an earlier move is undone rather than doubled."""
        if tp in self.pair:
            old = self.pair[tp][0]
        key = (tp.topic, new, old)
        if key not in self.sets:
            return tp
        cap = self.caps[key]
        return min(self.sets[key].items(), key=lambda kv: (_java_hash(kv[0]) & (cap - 1), kv[1]))[0]


def kafka_general(
    group: GroupSnapshot, owned: dict[str, list[TopicPartition]] | None = None
) -> dict[str, list[TopicPartition]]:
    """Kafka's general builder on ``group`` (owned partitions from ``owned`` when given)."""
    use_racks = sticky_uses_racks(group)
    rack = {m.id: m.rack for m in group.members} if use_racks else {}
    prack = {tp: group.partitions[tp].racks for tp in group.assignable} if use_racks else {}
    topics = {m.id: set(m.topics) & set(group.subscribers) for m in group.members}
    subs = {t: [mid for mid in group.member_ids if t in topics[mid]] for t in group.subscribers}
    sizes: dict[str, int] = {}
    for tp in group.assignable:
        sizes[tp.topic] = sizes.get(tp.topic, 0) + 1
    total = sum(sizes.values())

    def mismatch(mid: str, tp: TopicPartition) -> bool:
        return rack.get(mid) is not None and rack[mid] not in prack.get(tp, ())

    assignable = group.assignable_set
    if owned is None:
        owned = {m.id: list(m.owned) for m in group.members}
    cur: dict[str, list[TopicPartition]] = {mid: [] for mid in group.member_ids}
    owner: dict[TopicPartition, str] = {}
    revocation = False
    for mid in group.member_ids:
        for tp in owned.get(mid, []):
            if tp not in assignable or tp in owner:
                continue
            if tp.topic not in topics[mid] or mismatch(mid, tp):
                revocation = True
            else:
                cur[mid].append(tp)
                owner[tp] = mid
    order = sorted(subs, key=lambda t: (len(subs[t]), t))
    every = [TopicPartition(t, p) for t in order for p in range(sizes[t])]
    unassigned = [tp for tp in every if tp not in owner]
    initializing = not owner

    def ranked() -> list[str]:
        return sorted(cur, key=lambda mid: (len(cur[mid]), mid))

    def place(tp: TopicPartition, racks: bool) -> bool:
        for mid in ranked():
            if tp.topic in topics[mid] and not (racks and mismatch(mid, tp)):
                cur[mid].append(tp)
                owner[tp] = mid
                return True
        return False

    left = [tp for tp in unassigned if not (rack and place(tp, True))] if rack else unassigned
    for tp in left:
        if subs[tp.topic] and tp not in owner:
            place(tp, False)

    movable = {t for t in subs if len(subs[t]) >= 2}
    every = [tp for tp in every if tp.topic in movable]
    unassigned = [tp for tp in unassigned if tp.topic in movable]
    fixed = {}
    for mid in group.member_ids:
        most = sum(sizes[t] for t in topics[mid])
        if len(cur[mid]) >= most and not any(tp.topic in movable for tp in cur[mid]):
            fixed[mid] = cur.pop(mid)
    before = {mid: list(tps) for mid, tps in cur.items()}
    owner_before = dict(owner)
    moves = _Moves()

    def balanced() -> bool:
        counts = sorted(len(v) for v in cur.values())
        if not counts or counts[0] >= counts[-1] - 1:
            return True
        for mid in ranked():
            n = len(cur[mid])
            if n == (total if len(topics[mid]) == len(sizes) else sum(sizes[t] for t in topics[mid])):
                continue
            mine = set(cur[mid])
            for t in topics[mid]:
                for p in range(sizes[t]):
                    tp = TopicPartition(t, p)
                    if tp not in mine and n + 1 < len(cur[owner[tp]]):
                        return False
        return True

    def reassign(tp: TopicPartition, new: str) -> None:
        tp = moves.actual(tp, owner[tp], new)
        old = owner[tp]
        moves.move(tp, old, new)
        cur[old].remove(tp)
        cur[new].append(tp)
        owner[tp] = new

    def emptiest(tp: TopicPartition) -> str:
        return next(mid for mid in ranked() if tp.topic in topics[mid])

    def perform(partitions: list[TopicPartition]) -> bool:
        done = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if balanced():
                    break
                mid = owner[tp]
                n = len(cur[mid])
                others = [o for o in subs[tp.topic] if o in cur]
                if rack.get(mid) is not None and rack[mid] in prack[tp]:
                    local = [o for o in others if rack.get(o) is not None and rack[o] in prack[tp]]
                    if any(n > len(cur[o]) + 1 for o in local):
                        reassign(tp, emptiest(tp))
                        done = modified = True
                        continue
                if any(n > len(cur[o]) + 1 for o in others):
                    reassign(tp, emptiest(tp))
                    done = modified = True
        return done

    if not revocation:
        perform(unassigned)
    if perform(every) and not initializing and _spread(cur) >= _spread(before):
        cur, owner = before, owner_before
    cur.update(fixed)
    return {mid: sorted(cur[mid]) for mid in group.member_ids}


def _spread(cur: dict[str, list[TopicPartition]]) -> int:
    """Kafka's balance score: the sum over member pairs of their count difference."""
    counts = [len(v) for v in cur.values()]
    return sum(abs(a - b) for i, a in enumerate(counts) for b in counts[i + 1 :])


def kafka_general_cooperative(group: GroupSnapshot) -> dict[str, list[TopicPartition]]:
    """Kafka's ``CooperativeStickyAssignor`` after its follow-up rebalances: each round keeps
    the general builder's result minus the partitions changing owner, until nothing changes."""
    return cooperative_rounds(group, kafka_general)
