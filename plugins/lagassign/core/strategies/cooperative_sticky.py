"""Kafka's CooperativeStickyAssignor: the sticky target, reached in two rebalances.

In the first rebalance a partition that changes owner is revoked from its old owner and
withheld from its new one; the follow-up rebalance hands it over. ``withheld`` lists them.
"""

from __future__ import annotations

from ..model import Assignment, GroupSnapshot
from .base import Strategy, build
from .sticky import sticky_assignment


class CooperativeStickyStrategy(Strategy):
    name = "cooperative-sticky"
    summary = "Kafka CooperativeStickyAssignor: sticky target, moving partitions withheld until revoked"

    def assign(self, group: GroupSnapshot) -> Assignment:
        target = sticky_assignment(group)
        before = group.owner
        withheld = sorted(tp for mid, tps in target.items() for tp in tps if before.get(tp, mid) != mid)
        return build(self.name, group, target, withheld=withheld)
