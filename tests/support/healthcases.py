"""Groups the overview's tests judge: one consumer-protocol group that keeps up, and one
assign()-mode group whose only instance is dead (its plan version 4, its lag growing)."""

from __future__ import annotations

from lagassign.core.health import GroupInput, InstanceInput, PartitionInput, Point


def ok_and_dead(dead: str = "billing", ok_state: str | None = None) -> tuple[GroupInput, GroupInput]:
    """``orders`` (member m1 consumes t-0 as fast as it fills) and ``dead`` (instance w0 of plan
    v4, silent for 40 s, owned u-0 whose lag grows by 600 in a minute); ``ok_state`` is the
    group state Kafka reports for ``orders``, if any."""
    ok = GroupInput(
        "orders",
        partitions=(PartitionInput("t", 0, (Point(0, 1000, 990, 10), Point(60, 1600, 1590, 10)), "m1"),),
        members=("m1",),
        group_type="consumer",
        state=ok_state,
    )
    stopped = GroupInput(
        dead,
        kind="assign",
        partitions=(PartitionInput("u", 0, (Point(0, 100, 100, 0), Point(60, 700, 100, 600)), None),),
        plan_version=4,
        plan={"w0": [("u", 0)]},
        instances=(InstanceInput("w0", False, 4, True, why="silent for 40 s"),),
    )
    return ok, stopped
