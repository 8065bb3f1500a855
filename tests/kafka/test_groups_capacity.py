"""Configured capacities in the groups file: parsed, checked, and carried through the
snapshot tables into the case a strategy plans in time (no broker)."""

from __future__ import annotations

from pathlib import Path

import lagassign
import pytest
from lagassign.kafka.errors import GroupsFileError
from lagassign.kafka.groupsfile import (
    Capacities,
    fill_capacities,
    load_capacities,
    load_groups_file,
    parse_capacities,
    parse_groups,
)
from lagassign.tables.snapshot import read_snapshot
from snapshotkit import one_group_snapshot

FILE = """
groups:
  - group: orders
    topics: [t]
    instances: [w0, w1]
    capacity: 500
  - group: billing
    instances:
      b0: [t]
      b1: [t]
    capacity: {b1: 1500}
  - group: payments
    subscribe: true
    capacity: {pay-0: 1000, pay-1: 4000}
"""


def test_capacities_per_group_and_instance(tmp_path: Path) -> None:
    path = tmp_path / "groups.yaml"
    path.write_text(FILE)
    # subscribe() entries give capacities only: they are not assign()-mode groups
    assert [g.group for g in load_groups_file(path)] == ["orders", "billing"]
    caps = load_capacities(path)
    assert caps["orders"] == Capacities(500.0) and caps["orders"].of("w1") == 500.0
    assert caps["billing"].of("b0") is None and caps["billing"].of("b1") == 1500.0
    assert caps["payments"].of(None, "pay-1", "m-123") == 4000.0  # client.id when no instance id
    assert caps["payments"].of("pay-0", "pay-1") == 1000.0  # group.instance.id first
    # without capacities the file means what it did
    assert parse_capacities({"groups": [{"group": "a", "topics": ["t"], "instances": ["x"]}]}) == {}


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"group": "a", "topics": ["t"], "instances": ["x"], "capacity": 0}, "messages per second"),
        ({"group": "a", "topics": ["t"], "instances": ["x"], "capacity": "fast"}, "messages per second"),
        ({"group": "a", "topics": ["t"], "instances": ["x"], "capacity": {"y": 5}}, "undeclared instance"),
        ({"group": "a", "subscribe": True}, "needs 'capacity'"),
        ({"group": "a", "subscribe": True, "capacity": 5, "topics": ["t"]}, "takes only 'capacity'"),
        ({"group": "a", "subscribe": "yes", "capacity": 5}, "true or false"),
        ({"group": "a", "subscribe": True, "capacity": {"x": True}}, "messages per second"),
    ],
)
def test_bad_capacities_name_the_problem(entry: dict, needle: str) -> None:
    with pytest.raises(GroupsFileError, match=needle):
        parse_groups({"groups": [entry]})


def test_configured_capacities_reach_the_plan_in_time(tmp_path: Path) -> None:
    """A subscribe() group's members get the file's figures where they state none (one states
    its own, which wins); the snapshot's case then carries them, and drain-optimal plans in
    time: the four-times-faster member reads four of the five partitions."""
    members = [
        {
            "group": "payments",
            "member_id": "m-1",
            "instance_id": None,
            "client_id": "pay-0",
            "capacity": None,
        },
        {"group": "payments", "member_id": "m-2", "instance_id": "pay-1", "client_id": "x", "capacity": None},
        {"group": "other", "member_id": "m-3", "instance_id": "pay-0", "client_id": "y", "capacity": None},
    ]
    for m in members:
        m.update({"host": "h", "topics": ["t"], "assignment": []})
    stated = {**members[0], "member_id": "m-4", "client_id": "pay-9", "capacity": 250.0}
    configured = parse_capacities(
        {
            "groups": [
                {
                    "group": "payments",
                    "subscribe": True,
                    "capacity": {"pay-0": 1000, "pay-1": 4000, "pay-9": 1},
                }
            ]
        }
    )
    rows = [*members, stated]
    assert fill_capacities(rows, configured) == 2
    assert [m["capacity"] for m in rows] == [1000.0, 4000.0, None, 250.0]
    rows = rows[:2]  # group payments with two members, capacities 1000 and 4000
    snap = one_group_snapshot("payments", "subscribe", [(1000, 0)] * 5, rows, "2026-05-01T06:00:00Z")
    snap.write(tmp_path / "snap")
    ((_, case),) = read_snapshot(tmp_path / "snap")
    assert case is not None
    assert sorted(m["capacity"] for m in case["members"]) == [1000.0, 4000.0]
    plan = lagassign.assign(case, "drain-optimal")
    counts = {mid: len(tps) for mid, tps in plan["assignment"].items()}
    assert sorted(counts.values()) == [1, 4]
    assert plan["metrics"]["max_catch_up_s"] == 1.0  # 4,000 messages at 4,000 per second
