"""KIP-49's fair assignor: each partition to the least-loaded eligible member.

Topics go most constrained first: fewest subscribers, ties by more partitions, then name;
partitions of a topic in order. Keeping the flexible choices for last is what lets members
with narrower subscriptions still reach an even count.

Spec: KIP-49 (the fair assignor).

Example: C1 can only take t0, so t0 (fewer subscribers) is dealt first and C0 gets t1::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0", "t1"], "C1": ["t0"]}, {"t0": [1, 1], "t1": [1, 1]})
    >>> show(FairStrategy().assign(g))
    C0: t1-0 t1-1
    C1: t0-0 t0-1
"""

from __future__ import annotations

from ..model import Assignment, GroupSnapshot
from .base import Strategy, build
from .loadbook import LoadBook


class FairStrategy(Strategy):
    name = "fair"
    summary = "KIP-49: least-loaded eligible member, most constrained topics first"

    def assign(self, group: GroupSnapshot) -> Assignment:
        book = LoadBook(group)
        topics = sorted(
            group.topic_partitions,
            key=lambda t: (len(group.subscribers[t]), -len(group.topic_partitions[t]), t),
        )
        for topic in topics:
            for tp in group.topic_partitions[topic]:
                book.add(book.least_loaded(topic), tp)
        return build(self.name, group, book.assignment())
