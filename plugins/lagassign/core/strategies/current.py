"""The assignment the group runs with now: the gate's baseline.

Owned partitions stay where they are, even those of a topic the member no longer subscribes
to; partitions nobody owns are reported as unassigned in the output.

Spec: none; this is what Kafka's group runs with now.

Example: C1 owns nothing, so the whole load stays on C0::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0"], "C1": ["t0"]}, {"t0": [50, 40, 30, 5]}, {"C0": ["t0-0", "t0-1"]})
    >>> show(CurrentStrategy().assign(g), g)
    C0: t0-0 t0-1  (lag 90)
    C1: -  (lag 0)
"""

from __future__ import annotations

from ..model import Assignment, GroupSnapshot
from .base import Strategy, build, build_indexed


class CurrentStrategy(Strategy):
    name = "current"
    summary = "the owned partitions as they are (baseline)"

    def assign(self, group: GroupSnapshot) -> Assignment:
        layout = group.owned_index
        if any(None in idx for idx in layout):  # owns a partition the group does not list
            return build(self.name, group, {m.id: m.owned for m in group.members})
        return build_indexed(self.name, group, [list(idx) for idx in layout])  # type: ignore[arg-type]
