"""The assignment the group runs with now: the gate's baseline.

Owned partitions stay where they are, even those of a topic the member no longer subscribes
to; partitions nobody owns are reported as unassigned in the output.
"""

from __future__ import annotations

from ..model import Assignment, GroupSnapshot
from .base import Strategy, build


class CurrentStrategy(Strategy):
    name = "current"
    summary = "the owned partitions as they are (baseline)"

    def assign(self, group: GroupSnapshot) -> Assignment:
        return build(self.name, group, {m.id: m.owned for m in group.members})
