"""describe_changes: what makes a plan computed on an older snapshot wrong to publish."""

from __future__ import annotations

from lagassign.tables.snapshot import describe_changes


def _case(members, partitions):
    return {
        "members": [{"id": m, "topics": t} for m, t in members.items()],
        "partitions": [{"topic": t, "partition": p, "lag": 5} for t, p in partitions],
    }


BEFORE = _case({"a": ["t0", "t1"], "b": ["t0", "t1"]}, [("t0", 0), ("t0", 1), ("t1", 0)])


def test_lag_moving_is_not_a_change():
    after = _case({"a": ["t0", "t1"], "b": ["t1", "t0"]}, [("t1", 0), ("t0", 1), ("t0", 0)])
    after["partitions"][0]["lag"] = 999
    assert describe_changes(BEFORE, after) is None


def test_members_subscriptions_and_partitions_are():
    after = _case({"a": ["t0"], "c": ["t0", "t1"]}, [("t0", 0), ("t0", 1), ("t0", 2)])
    assert describe_changes(BEFORE, after) == (
        "joined: c; left: b; subscriptions changed: a; topics deleted: t1; 1 partitions added"
    )


def test_a_vanished_group_is_a_change():
    assert describe_changes(BEFORE, None) == "the group is gone"
