"""Kafka's CooperativeStickyAssignor: the sticky target, reached in two rebalances.

In the first rebalance a partition that changes owner is revoked from its old owner and
withheld from its new one; the follow-up rebalance hands it over. ``withheld`` lists them.

Spec: KIP-429 and Apache Kafka's ``CooperativeStickyAssignor``.
Guarantee: the sticky target; no partition is assigned while another member still owns it.

Example: sticky's example again; the two partitions that change owner wait one rebalance::

    >>> from lagassign.core.strategies.examples import example, show
    >>> owned = {"C0": ["t0-0", "t0-1", "t0-2"], "C1": ["t0-3", "t0-4", "t0-5"]}
    >>> g = example({"C0": ["t0"], "C1": ["t0"], "C2": ["t0"]}, {"t0": [1] * 6}, owned)
    >>> show(CooperativeStickyStrategy().assign(g))
    C0: t0-0 t0-1
    C1: t0-3 t0-4
    C2: t0-2 t0-5
    withheld: t0-2 t0-5
"""

from __future__ import annotations

from ..model import Assignment, GroupSnapshot
from .base import Strategy, build, build_indexed, fresh_apart
from .sticky import sticky_assignment


class CooperativeStickyStrategy(Strategy):
    name = "cooperative-sticky"
    summary = "Kafka CooperativeStickyAssignor: sticky target, moving partitions withheld until revoked"

    def assign(self, group: GroupSnapshot) -> Assignment:
        apart = fresh_apart(group)  # sticky's layout on a fresh group: nothing owned, nothing withheld
        if apart is not None:
            return build_indexed(self.name, group, apart, withheld=[])
        target = sticky_assignment(group, cooperative=True)
        before = group.owner
        withheld = sorted(tp for mid, tps in target.items() for tp in tps if before.get(tp, mid) != mid)
        return build(self.name, group, target, withheld=withheld)
