"""Who holds what during sticky's chain search (``fewer_moves``), cheap to change and to check.

The search's choices read two orders, and later choices depend on earlier ones through them,
so an innocent change to either changes sticky's layouts. Both follow one named, deterministic
rule, the recency rule (``Holdings.touch``):

* a member's partitions are in the order they were last touched: the order they came in,
  then a partition it received goes last, and so does a partition of a chain that was tried
  and refused (the chain's last step first). Among partitions of a topic whose hand-over
  costs the same, the search gives (``handovers``) without racks the most recently touched
  one, or the least recently touched one if it returns to its previous owner; with racks the
  least recently touched one;
* a member's topics are in the order they were first offered to it: a topic enters a
  member's counts when a chain tried gives it one of the topic's partitions, and stays (with
  count zero) when the chain is refused or the partition leaves. Breaches of the balance
  condition are read in that order (``fewer_moves._violations``).

A refused chain leaves exactly what carrying it out and taking it back would leave; the
search only checks the counts, so it moves no partition there and back.
"""

from __future__ import annotations

from collections import Counter

from ..model import GroupSnapshot, TopicPartition

#: partitions per member id
Layout = dict[str, list[TopicPartition]]
#: a chain's hand-overs, each a partition and the member taking it
Steps = list[tuple[TopicPartition, str]]
#: a chain's hand-overs with their givers: (partition, from, to)
Moves = list[tuple[TopicPartition, str, str]]


class Holdings:
    """Who holds what, with counts per member and per (member, topic), in recency order."""

    def __init__(self, group: GroupSnapshot, held: dict[str, list[TopicPartition]], racks: bool) -> None:
        self.group = group
        self.racks = racks
        # dicts, not sets: insertion order is the recency order, whatever the hash seed
        self.held = {mid: dict.fromkeys(tps) for mid, tps in held.items()}
        self.owner = {tp: mid for mid, tps in held.items() for tp in tps}
        self.count = {mid: len(tps) for mid, tps in held.items()}
        self.topics = {mid: Counter(tp.topic for tp in tps) for mid, tps in held.items()}
        self.rack = {m.id: m.rack for m in group.members}
        before = group.owner
        #: per partition, its topic and previous owner (read per partition by ``handovers``)
        self.info = {tp: (tp.topic, before.get(tp)) for tp in self.owner}

    def apply(self, steps: Steps) -> Steps:
        """Carry out a chain; return the steps that take it back."""
        undo = [(tp, self.owner[tp]) for tp, _ in reversed(steps)]
        moves = self._moves(steps)
        self._count(moves, 1)
        self._hand_over(moves)
        return undo

    def attempt(self, steps: Steps, touched: set[str]) -> bool:
        """Carry out a chain if the condition holds after it (``balanced_around(touched)``),
        else leave only its trace (``touch``)."""
        moves = self._moves(steps)
        self._count(moves, 1)  # the takers' topic entries stay (recency rule)
        if self.balanced_around(touched):
            self._hand_over(moves)
            return True
        self._count(moves, -1)
        self.touch(steps)
        return False

    def touch(self, steps: Steps) -> None:
        """The recency rule for a chain refused: each taker is offered the topic it would take
        (an entry at zero), and the chain's partitions go last in their holders' order, last
        step first."""
        held, owner, topics = self.held, self.owner, self.topics
        for tp, to in steps:
            topics[to].setdefault(tp.topic, 0)
        for tp, _ in reversed(steps):
            mid = owner[tp]
            mine = held[mid]
            del mine[tp]
            mine[tp] = None

    def _moves(self, steps: Steps) -> Moves:
        owner = self.owner
        return [(tp, owner[tp], to) for tp, to in steps]

    def _count(self, moves: Moves, sign: int) -> None:
        """Counts and topic counts with each move made (``sign`` 1) or taken back (-1)."""
        count, topics = self.count, self.topics
        for tp, frm, to in moves:
            count[frm] -= sign
            count[to] += sign
            topics[frm][tp.topic] -= sign
            topics[to][tp.topic] += sign

    def _hand_over(self, moves: Moves) -> None:
        """Each partition to its taker, last in the taker's order (counts already changed)."""
        held, owner = self.held, self.owner
        for tp, frm, to in moves:
            del held[frm][tp]
            held[to][tp] = None
            owner[tp] = to

    def balanced_around(self, touched: set[str]) -> bool:
        """The condition, given that it held before only ``touched`` members changed."""
        subs = self.group.subscribers
        count = self.count
        topics = self.topics
        low, high = min(count.values()), max(count.values())
        if high <= low + 1:
            return True  # counts within one: no member can break it
        for mid in touched:
            c = count[mid]
            if low < c - 1:  # some member has 2+ fewer: may it take one of mid's topics?
                for topic, n in topics[mid].items():
                    if n and min(map(count.__getitem__, subs[topic])) < c - 1:
                        return False
            if high > c + 1:  # some member has 2+ more: does it hold a topic mid could take?
                for topic in self.group.topics_of[mid]:
                    for s in subs[topic]:
                        if count[s] > c + 1 and topics[s].get(topic):
                            return False
        return True


class Scope:
    """The members a search looks at (all of them, or one block of a big group): their ids,
    index (position in ``ids``) and, per topic, which of them subscribe. Chains stay inside
    the scope; the balance condition is checked on the whole group."""

    def __init__(self, group: GroupSnapshot, ids: list[str]) -> None:
        self.ids = ids
        self.index = {mid: i for i, mid in enumerate(ids)}
        #: per giver, what it held (in order) when its hand-overs were last worked, and them
        #: (``handovers.edges``)
        self.givers: dict[str, tuple] = {}
        #: per topic, its subscribers in the scope (in the group's order) with their index
        self.takers = {
            t: [(mid, self.index[mid]) for mid in subs if mid in self.index]
            for t, subs in group.subscribers.items()
        }
