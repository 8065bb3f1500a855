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
from .base import Strategy, build_indexed, cyclic


class FairStrategy(Strategy):
    name = "fair"
    summary = "KIP-49: least-loaded eligible member, most constrained topics first"

    def assign(self, group: GroupSnapshot) -> Assignment:
        return build_indexed(self.name, group, fair(group))


class _Circle:
    """The members of one subscription, dealt to in turn: each partition goes to the member
    with the fewest, ties by id, and members only ever receive, so the members before ``at``
    hold ``count + 1`` and the rest ``count``: the next taker is the one at ``at``."""

    def __init__(self, members: list[int]) -> None:
        self.members = members
        self.count = 0
        self.at = 0

    def take(self, how_many: int) -> list[int]:
        """The next ``how_many`` takers, in turn."""
        takers = cyclic(self.members, self.at, how_many)
        rounds, self.at = divmod(self.at + how_many, len(self.members))
        self.count += rounds
        return takers


def fair(group: GroupSnapshot) -> list[list[int]]:
    """Partition indices per member index: topics most constrained first, each partition to
    the least-loaded subscriber (fewest partitions, then id), as with the least-loaded lookup
    of ``dealing.loadbook.LoadBook``, one circle per subscription."""
    circles = [_Circle(members) for members in group.class_members]
    topic_circles: dict[str, list[_Circle]] = {}
    for topics, circle in zip(group.subscriptions, circles, strict=True):
        for t in topics:
            topic_circles.setdefault(t, []).append(circle)
    ids = group.member_ids
    spans = group.topic_span
    layout: list[list[int]] = [[] for _ in group.members]
    order = sorted(
        group.subscribers,
        key=lambda t: (len(group.subscribers[t]), -len(spans.get(t, ())), t),
    )
    for topic in order:
        span = spans.get(topic)
        if not span:
            continue
        eligible = topic_circles[topic]
        if len(eligible) == 1:
            for p, k in zip(span, eligible[0].take(len(span)), strict=True):
                layout[k].append(p)
            continue
        for p in span:  # several subscriptions: the least loaded of their next takers
            circle = min(eligible, key=lambda c: (c.count, ids[c.members[c.at]]))
            layout[circle.take(1)[0]].append(p)
    return layout
