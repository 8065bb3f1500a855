"""Kafka's sticky assignment for mixed subscriptions, step for step: its general builder.

What Kafka's ``StickyAssignor`` gives a group whose members subscribe to different topics
(``AbstractStickyAssignor.GeneralAssignmentBuilder``), so that sticky can take, per group, a
result at least as good as Kafka's on moves and rack-local partitions at once:

1. Members keep the owned partitions they still subscribe to that are rack-local (with racks).
2. The rest, topics with fewest subscribers first, go to the emptiest subscribed member,
   rack-local ones first (members ordered by partition count, then id).
3. While some member could take a partition of one with two more, partitions are walked in
   that order and each handed to the emptiest subscriber when another subscriber has two
   fewer than its owner (Kafka asks a rack-local one first, then any, so either way this);
   a partition that undoes an earlier move goes back (``_Moves``). Kafka keeps the result
   only if it lowers the pairwise count spread.

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
from .cooperative import Layout, cooperative_rounds
from .java_hash import partition_hash, spread
from .racks import sticky_uses_racks


class _Moves:
    """Kafka's ``PartitionMovements``: per topic and (from, to) pair, the partitions moved,
    iterated as Java's ``HashSet`` does (bucket, then insertion: a dict keeps that order)."""

    def __init__(self) -> None:
        self.pair: dict[TopicPartition, tuple[str, str]] = {}
        self.sets: dict[tuple[str, str, str], dict[TopicPartition, None]] = {}
        self.caps: dict[tuple[str, str, str], int] = {}

    def _add(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.pair[tp] = pair
        key = (tp.topic, *pair)
        held = self.sets.setdefault(key, {})
        held[tp] = None
        cap = self.caps.setdefault(key, 16)
        if len(held) > cap * 3 // 4:
            self.caps[key] = cap * 2

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
        return min(self.sets[key], key=lambda moved: spread(partition_hash(moved)) & (cap - 1))


def kafka_general(group: GroupSnapshot, owned: Layout | None = None) -> Layout:
    """Kafka's general builder on ``group`` (owned partitions from ``owned`` when given)."""
    return _GeneralBuilder(group, owned).build()


class _GeneralBuilder:
    """Kafka's ``GeneralAssignmentBuilder`` on one group: ``build`` runs its steps in order."""

    def __init__(self, group: GroupSnapshot, owned: Layout | None) -> None:
        use_racks = sticky_uses_racks(group)
        self.group = group
        self.rack = {m.id: m.rack for m in group.members} if use_racks else {}
        self.prack = {tp: group.partitions[tp].racks for tp in group.assignable} if use_racks else {}
        self.topics = group.topics_of
        self.subs = group.subscribers
        self.partitions = group.topic_partitions
        #: per member, how many partitions it could hold at most
        self.most = {mid: sum(len(self.partitions[t]) for t in self.topics[mid]) for mid in group.member_ids}
        self.owned = {m.id: list(m.owned) for m in group.members} if owned is None else owned
        self.cur: Layout = {mid: [] for mid in group.member_ids}
        self.owner: dict[TopicPartition, str] = {}
        self.moves = _Moves()

    def build(self) -> Layout:
        """Owned partitions kept, the rest placed, then counts balanced if that lowers the spread."""
        revocation = self._keep_owned()
        order = sorted(self.subs, key=lambda t: (len(self.subs[t]), t))
        every = [tp for t in order for tp in self.partitions[t]]
        unassigned = [tp for tp in every if tp not in self.owner]
        initializing = not self.owner
        self._place_unassigned(unassigned)
        movable = {t for t in self.subs if len(self.subs[t]) >= 2}
        fixed = self._set_aside_fixed(movable)
        before, owner_before = {mid: list(tps) for mid, tps in self.cur.items()}, dict(self.owner)
        if not revocation:
            self._perform([tp for tp in unassigned if tp.topic in movable])
        balanced = self._perform([tp for tp in every if tp.topic in movable])
        if balanced and not initializing and _balance_score(self.cur) >= _balance_score(before):
            self.cur, self.owner = before, owner_before  # Kafka keeps only a lower spread
        self.cur.update(fixed)
        return {mid: sorted(self.cur[mid]) for mid in self.group.member_ids}

    def _mismatch(self, mid: str, tp: TopicPartition) -> bool:
        """Whether ``mid`` has a rack and ``tp`` has no replica on it."""
        return self.rack.get(mid) is not None and self.rack[mid] not in self.prack.get(tp, ())

    def _keep_owned(self) -> bool:
        """Each member keeps the owned partitions it subscribes to (rack-local ones, with racks);
        return whether some owned partition is revoked."""
        assignable = self.group.assignable_set
        revocation = False
        for mid in self.group.member_ids:
            for tp in self.owned.get(mid, []):
                if tp not in assignable or tp in self.owner:
                    continue
                if tp.topic not in self.topics[mid] or self._mismatch(mid, tp):
                    revocation = True
                else:
                    self.cur[mid].append(tp)
                    self.owner[tp] = mid
        return revocation

    def _place_unassigned(self, unassigned: list[TopicPartition]) -> None:
        """Each free partition to the emptiest subscribed member, a rack-local one first."""
        left = [tp for tp in unassigned if not self._place(tp, True)] if self.rack else unassigned
        for tp in left:
            self._place(tp, False)

    def _place(self, tp: TopicPartition, racks: bool) -> bool:
        for mid in self._ranked():
            if tp.topic in self.topics[mid] and not (racks and self._mismatch(mid, tp)):
                self.cur[mid].append(tp)
                self.owner[tp] = mid
                return True
        return False

    def _set_aside_fixed(self, movable: set[str]) -> Layout:
        """Members that hold every partition they could and none that could move take no part
        in balancing: taken out of ``cur`` and returned."""
        fixed = {}
        for mid in self.group.member_ids:
            if len(self.cur[mid]) >= self.most[mid] and not any(tp.topic in movable for tp in self.cur[mid]):
                fixed[mid] = self.cur.pop(mid)
        return fixed

    def _ranked(self) -> list[str]:
        """Members by partition count, then id."""
        return sorted(self.cur, key=lambda mid: (len(self.cur[mid]), mid))

    def _balanced(self) -> bool:
        """Kafka's balance check: counts within one, or no member could take a partition of one
        with two more (members holding all they could are skipped)."""
        cur = self.cur
        counts = sorted(len(v) for v in cur.values())
        if not counts or counts[0] >= counts[-1] - 1:
            return True
        for mid in self._ranked():
            n = len(cur[mid])
            if n == self.most[mid]:
                continue
            mine = set(cur[mid])
            for t in self.topics[mid]:
                for tp in self.partitions[t]:
                    if tp not in mine and n + 1 < len(cur[self.owner[tp]]):
                        return False
        return True

    def _perform(self, partitions: list[TopicPartition]) -> bool:
        """Kafka's ``performReassignments``: walk the partitions until balanced, handing each
        to the emptiest subscriber where some subscriber has two fewer; return whether any
        moved."""
        done = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self._balanced():
                    break
                if self._should_move(tp):
                    self._reassign(tp, self._emptiest(tp))
                    done = modified = True
        return done

    def _should_move(self, tp: TopicPartition) -> bool:
        """Whether another subscriber has two fewer partitions than ``tp``'s owner (Kafka asks
        a rack-local one first, then any: a rack-local one is one of them, so either asks this)."""
        n = len(self.cur[self.owner[tp]])
        return any(n > len(self.cur[o]) + 1 for o in self.subs[tp.topic] if o in self.cur)

    def _emptiest(self, tp: TopicPartition) -> str:
        return next(mid for mid in self._ranked() if tp.topic in self.topics[mid])

    def _reassign(self, tp: TopicPartition, new: str) -> None:
        """Move ``tp`` to ``new``, or the partition that undoes an earlier move (``_Moves``)."""
        tp = self.moves.actual(tp, self.owner[tp], new)
        old = self.owner[tp]
        self.moves.move(tp, old, new)
        self.cur[old].remove(tp)
        self.cur[new].append(tp)
        self.owner[tp] = new


def _balance_score(cur: Layout) -> int:
    """Kafka's balance score: the sum over member pairs of their count difference."""
    counts = [len(v) for v in cur.values()]
    return sum(abs(a - b) for i, a in enumerate(counts) for b in counts[i + 1 :])


def kafka_general_cooperative(group: GroupSnapshot) -> Layout:
    """Kafka's ``CooperativeStickyAssignor`` after its follow-up rebalances: each round keeps
    the general builder's result minus the partitions changing owner, until nothing changes."""
    return cooperative_rounds(group, kafka_general)
