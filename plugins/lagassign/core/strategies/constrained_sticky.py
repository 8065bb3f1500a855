"""KIP-615's constrained sticky assignor: linear passes for groups with one shared subscription.

With N members and P partitions every member ends with floor(P/N) or ceil(P/N), and exactly
P mod N members with the ceiling. Members keep owned partitions up to their quota (the first
members by id with enough owned get the ceiling slots), the rest are dealt in partition order
(t0-0, t1-0, t0-1, ...) to fill members to the floor, then one more each until the ceiling
slots are used. Since the quotas add up to P, the KIP's "steal" pass is never needed.
Groups with differing subscriptions are refused: the KIP's guarantees do not hold there.

Spec: KIP-615 (the constrained cooperative sticky assignor).

Example: seven partitions over three members (quotas 3, 2, 2); C0 keeps three of its four,
C1 two of its three, and C2 receives the two left over::

    >>> from lagassign.core.strategies.examples import example, show
    >>> owned = {"C0": ["t0-0", "t0-1", "t0-2", "t0-3"], "C1": ["t0-4", "t0-5", "t0-6"]}
    >>> g = example({"C0": ["t0"], "C1": ["t0"], "C2": ["t0"]}, {"t0": [1] * 7}, owned)
    >>> show(ConstrainedStickyStrategy().assign(g))
    C0: t0-0 t0-1 t0-2
    C1: t0-4 t0-5
    C2: t0-3 t0-6
"""

from __future__ import annotations

from itertools import islice

from ..errors import StrategyRefusedError
from ..model import Assignment, GroupSnapshot
from .base import Strategy, build_indexed, kept_owned_index


class ConstrainedStickyStrategy(Strategy):
    name = "constrained-sticky"
    summary = "KIP-615: linear-pass sticky for groups whose members share one subscription"

    def assign(self, group: GroupSnapshot) -> Assignment:
        if not group.identical_subscriptions:
            raise StrategyRefusedError(
                f"constrained-sticky needs every member of group {group.group} to subscribe to "
                "the same topics; use sticky or lag-aware for mixed subscriptions"
            )
        return build_indexed(self.name, group, constrained_sticky(group))


def constrained_sticky(group: GroupSnapshot) -> list[list[int]]:
    """Partition indices per member index: owned kept up to the quotas, the rest dealt in
    partition-number order (t0-0, t1-0, t0-1, ...) to the floor, then to the ceiling."""
    n = len(group.members)
    floor, ceil_slots = divmod(len(group.assignable_index), n)
    layout: list[list[int]] = []
    for owned in kept_owned_index(group):
        quota = floor
        if len(owned) > floor and ceil_slots > 0:
            quota, ceil_slots = floor + 1, ceil_slots - 1
        layout.append(owned[:quota])
    taken = set().union(*layout)
    free = [p for p in group.assignable_index if p not in taken] if taken else group.assignable_index
    # by partition number, then topic: a stable sort by number keeps the topic order
    queue = iter(sorted(free, key=group.columns.numbers.__getitem__))
    for held in layout:  # to the floor
        held.extend(islice(queue, max(0, floor - len(held))))
    for held in layout:  # one more each while ceiling slots are left
        if ceil_slots and len(held) == floor:
            held.append(next(queue))
            ceil_slots -= 1
    return layout
