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

from collections import Counter

from ..model import GroupSnapshot, TopicPartition
from .cooperative import Layout, cooperative_rounds
from .java_hash import hashmap_order
from .racks import sticky_uses_racks


def kafka_constrained(group: GroupSnapshot, owned: Layout | None = None) -> Layout:
    """Kafka's constrained builder on ``group`` (owned partitions from ``owned`` when given)."""
    return _ConstrainedBuilder(group, owned).build()


class _ConstrainedBuilder:
    """Kafka's ``ConstrainedAssignmentBuilder`` on one group: ``build`` runs its steps in order.

    ``under`` lists the members below the minimum quota, ``exact`` those at it that may still
    take one more while fewer than ``over_expected`` members have the maximum (``over``)."""

    def __init__(self, group: GroupSnapshot, owned: Layout | None) -> None:
        use_racks = sticky_uses_racks(group)
        self.group = group
        self.rack = {m.id: m.rack for m in group.members if m.rack} if use_racks else {}
        self.prack = {tp: group.partitions[tp].racks for tp in group.assignable} if use_racks else {}
        self.owned = {m.id: list(m.owned) for m in group.members} if owned is None else owned
        self.members = hashmap_order(group.member_ids)
        self.min_q, self.over_expected = divmod(len(group.assignable), len(self.members))
        self.max_q = self.min_q + (1 if self.over_expected else 0)
        self.over = 0
        self.held: Layout = {mid: [] for mid in self.members}
        self.under: list[str] = []
        self.exact: list[str] = []

    def build(self) -> Layout:
        """Owned partitions kept up to the quotas, the rest dealt by rack, then round the rest."""
        self._keep_owned()
        self.under.sort()
        self.exact.sort()
        rest = self._deal_by_rack(self._unassigned()) if self.rack else self._unassigned()
        self._deal_round(rest)
        return {mid: sorted(self.held[mid]) for mid in self.group.member_ids}

    def _keep_owned(self) -> None:
        """In member order, each keeps its owned partitions (rack-local ones, with racks), by
        number then topic, up to the maximum quota while members may still have it, else the
        minimum."""
        assignable = self.group.assignable_set
        claimed: set[TopicPartition] = set()
        for mid in self.members:
            mine = [tp for tp in self.owned.get(mid, []) if tp in assignable and tp not in claimed]
            claimed.update(mine)
            mine = sorted(
                (tp for tp in mine if not self._mismatch(mid, tp)), key=lambda tp: (tp.partition, tp.topic)
            )
            if len(mine) < self.min_q:
                self.held[mid] = mine
                self.under.append(mid)
            elif len(mine) >= self.max_q and self.over < self.over_expected:
                self.held[mid] = mine[: self.max_q]
                self._one_more_at_max()
            else:
                self.held[mid] = mine[: self.min_q]
                if self.over < self.over_expected:
                    self.exact.append(mid)

    def _mismatch(self, mid: str, tp: TopicPartition) -> bool:
        """Whether ``mid`` has a rack and ``tp`` has no replica on it."""
        return mid in self.rack and self.rack[mid] not in self.prack.get(tp, ())

    def _one_more_at_max(self) -> None:
        self.over += 1
        if self.over == self.over_expected:
            self.exact.clear()

    def _unassigned(self) -> list[TopicPartition]:
        """The partitions nobody kept, by topic and number; with racks, those with the fewest
        members on their replicas' racks first."""
        taken = {tp for tps in self.held.values() for tp in tps}
        unassigned = sorted(tp for tp in self.group.assignable if tp not in taken)
        if self.prack:
            by_rack = Counter(self.rack.values())
            unassigned.sort(key=lambda tp: sum(by_rack[r] for r in self.prack[tp]))
        return unassigned

    def _deal_by_rack(self, unassigned: list[TopicPartition]) -> list[TopicPartition]:
        """Each partition round the members under quota to the next on a replica's rack, else
        to the first member that may take one more on one; return the partitions left."""
        rest = []
        under, exact = self.under, self.exact
        nxt = 0
        for tp in unassigned:
            consumer = None
            index = self._next_on_rack(tp, under, nxt)
            if index >= 0:
                consumer = under[index]
                count = len(self.held[consumer]) + 1
                if count >= self.min_q:
                    under.remove(consumer)
                    if count < self.max_q and self.over < self.over_expected:
                        exact.append(consumer)
                else:
                    index += 1
                nxt = index % len(under) if under else 0
            elif exact:
                first = self._next_on_rack(tp, exact, 0)
                if first >= 0:
                    consumer = exact[first]
                    if len(self.held[consumer]) + 1 == self.max_q:
                        exact.pop(first)
                        self._one_more_at_max()
            if consumer is None:
                rest.append(tp)
            else:
                self.held[consumer].append(tp)
        return rest

    def _next_on_rack(self, tp: TopicPartition, members: list[str], first: int) -> int:
        """The position of the next member from ``first`` (round) on a rack of ``tp``, or -1."""
        racks = self.prack.get(tp)
        if not racks:
            return -1
        for i in range(len(members)):
            index = (first + i) % len(members)
            if self.rack.get(members[index]) in racks:
                return index
        return -1

    def _deal_round(self, rest: list[TopicPartition]) -> None:
        """Each partition to the next member under quota (an iterator over them, as Java's with
        remove), else to the first that may take one more."""
        under, exact = self.under, self.exact
        at = 0
        for tp in rest:
            if at < len(under):
                consumer = under[at]
                at += 1
            elif not under:
                consumer = exact.pop(0)
            else:
                consumer = under[0]
                at = 1
            self.held[consumer].append(tp)
            count = len(self.held[consumer])
            if count == self.min_q:
                at -= 1
                del under[at]
                exact.append(consumer)
            elif count == self.max_q:
                self.over += 1


def kafka_constrained_cooperative(group: GroupSnapshot) -> Layout:
    """Kafka's ``CooperativeStickyAssignor`` on one shared subscription after its follow-up
    rebalances: each round keeps the constrained builder's result minus the partitions changing
    owner, until nothing changes."""
    return cooperative_rounds(group, kafka_constrained)
