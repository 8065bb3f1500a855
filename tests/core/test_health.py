"""A status per group by written rules (core.health), on offset histories as the health job
records them: one observation a minute of each partition's end offset, committed offset and lag.

The histories below are written as columns (end offsets, committed offsets) one observation a
minute; ``tests/data/health/`` holds one recorded from a real broker.
"""

from __future__ import annotations

import json
import math

import pytest
from lagassign.core.catchup import NEVER
from lagassign.core.health import (
    DEAD,
    OK,
    OVERLOAD,
    STALL,
    STOP,
    SWITCHING,
    UNCONSUMED,
    UNKNOWN,
    WARN,
    GroupInput,
    InstanceInput,
    PartitionInput,
    Point,
    Rules,
    changes,
    group_health,
    partition_status,
    should_notify,
    unchanged_for,
)
from testpaths import DATA

HEALTH_DATA = DATA / "health"
RULES = Rules(window_s=600)  # ten minutes, ten observations


def history(
    ends: list[int], committed: list[int | None], every: float = 60.0, t0: float = 0.0
) -> tuple[Point, ...]:
    """Observations a minute apart; lag = end - committed (no commit: lag 0, reset latest)."""
    assert len(ends) == len(committed)
    return tuple(
        Point(t0 + i * every, e, c, e - c if c is not None else 0)
        for i, (e, c) in enumerate(zip(ends, committed, strict=True))
    )


def part(
    ends: list[int], committed: list[int | None], owner: str | None = "m1", topic: str = "t", p: int = 0
) -> PartitionInput:
    return PartitionInput(topic, p, history(ends, committed), owner)


def status_of(
    ends: list[int], committed: list[int | None], owner: str | None = "m1", consumers: bool = True
) -> str:
    return partition_status(part(ends, committed, owner), RULES, consumers)[0]


# -- Burrow's distinctions, as lagassign observes them ------------------------------------------


def test_a_consumer_that_keeps_up_is_ok_although_its_lag_is_never_zero_when_observed() -> None:
    ends = [1000 + 600 * i for i in range(11)]  # 10 msg/s
    committed = [e - lag for e, lag in zip(ends, [40, 55, 30, 48, 52, 35, 60, 41, 38, 50, 44], strict=True)]
    assert status_of(ends, committed) == OK


def test_lag_growing_while_commits_advance_is_warn() -> None:
    ends = [1000 + 600 * i for i in range(11)]  # 10 msg/s in, 8 msg/s out
    committed = [900 + 480 * i for i in range(11)]
    status, why = partition_status(part(ends, committed), RULES, True)
    assert status == WARN and "lag grew from 100 to 1,300 while commits advance" in why


def test_a_lag_that_grows_and_shrinks_is_not_a_warning() -> None:
    ends = [1000 + 600 * i for i in range(11)]
    committed = [900 + 480 * i for i in range(10)] + [ends[10] - 200]
    assert status_of(ends, committed) == OK


def test_a_trend_needs_enough_observations() -> None:
    assert status_of([100, 200], [50, 60]) == OK  # two observations: too early to call a trend
    assert status_of([100, 200, 300], [50, 60, 70]) == WARN


def test_commits_stopped_with_lag_while_a_member_holds_the_partition_is_stall() -> None:
    ends = [5000 + 100 * i for i in range(12)]
    committed = [4900 + 100 * i for i in range(2)] + [5000] * 10  # at 5,000 from minute 1 on
    status, why = partition_status(part(ends, committed, owner="m1"), RULES, True)
    assert status == STALL
    assert "no progress for 10 min with lag 1,100" in why and "member m1 holds it" in why


def test_a_stall_is_called_only_after_a_whole_window_without_progress() -> None:
    ends = [5000 + 100 * i for i in range(8)]
    committed = [5000] * 8  # seven minutes without progress: not yet ten
    assert status_of(ends, committed) == OK
    assert unchanged_for(history(ends, committed)) == 420


def test_no_commit_for_longer_than_the_window_and_no_consumer_is_stop() -> None:
    ends = [5000 + 100 * i for i in range(12)]
    committed = [5000] * 12
    status, why = partition_status(part(ends, committed, owner=None), RULES, consumers=False)
    assert status == STOP
    assert why == "no commit for 11 min with lag 1,100, and nobody consumes the group"


def test_a_rewound_committed_offset_is_a_warning() -> None:
    ends = [5000] * 5
    committed = [4000, 4100, 4200, 3000, 3100]
    status, why = partition_status(part(ends, committed), RULES, True)
    assert (status, why) == (WARN, "committed offset went back (to 3,100)")


# -- what Burrow's users report as wrong ----------------------------------------------------------


def test_a_low_traffic_topic_whose_lag_is_zero_most_of_the_time_is_ok_not_stall() -> None:
    # a message every few minutes; the consumer reads it within seconds, so an observation now
    # and then catches one in flight; no commit moves for long stretches
    ends = [10, 10, 10, 11, 11, 11, 11, 11, 12, 12, 12, 12, 12, 12, 13]
    committed = [10, 10, 10, 10, 11, 11, 11, 11, 11, 12, 12, 12, 12, 12, 12]
    points = history(ends, committed)
    assert points[-1].lag == 1
    assert partition_status(PartitionInput("t", 0, points, "m1"), RULES, True)[0] == OK
    # idle for an hour, lag zero: no commit moved, and still OK (not STOP)
    idle = history([13] * 61, [13] * 61)
    assert partition_status(PartitionInput("t", 0, idle, None), RULES, False)[0] == OK


def test_a_deleted_group_is_forgotten_not_reported_as_stopped() -> None:
    stopped = group_health(
        GroupInput("gone", partitions=(part([5000 + 100 * i for i in range(12)], [5000] * 12, None),))
    )
    assert stopped.status == STOP
    due, kept = changes({}, [stopped])
    assert [c.group for c in due] == ["gone"] and kept == {"gone": (STOP,)}
    # the group is deleted: it is not in the cluster any more, so it is not evaluated; nothing
    # is sent, and its state is dropped (a group of that name created later starts afresh)
    due, kept = changes(kept, [])
    assert due == [] and kept == {}


def test_a_topic_the_group_no_longer_reads_is_not_lag() -> None:
    reads = part([100 + 60 * i for i in range(11)], [90 + 60 * i for i in range(11)], "m1", "orders")
    old = part([9000] * 11, [1000] * 11, None, "legacy")  # committed once, abandoned
    h = group_health(GroupInput("g", partitions=(reads, old), members=("m1",), state="Stable"))
    assert h.status == OK, h.findings
    assert h.not_read == ("legacy",)
    assert h.total_lag == 10 and [p.topic for p in h.partitions] == ["orders"]


# -- lagassign's own ------------------------------------------------------------------------------


def _assign_group(
    alive: dict[str, bool], versions: dict[str, int | None], plan_version: int = 4
) -> GroupInput:
    plan = {"w0": [("t", 0), ("t", 1)], "w1": [("t", 2), ("t", 3)]}
    parts = []
    for iid, tps in plan.items():
        for _, p in tps:
            owner = iid if alive.get(iid) else None
            parts.append(PartitionInput("t", p, history([100, 200, 300], [90, 195, 290]), owner))
    instances = tuple(
        InstanceInput(
            iid,
            alive.get(iid, False),
            versions.get(iid),
            in_plan=iid in plan,
            partitions=tuple(plan.get(iid, ())) if alive.get(iid) else (),
            why=None if alive.get(iid) else "silent for 45 s",
        )
        for iid in sorted(set(alive) | set(plan))
    )
    return GroupInput(
        "orders",
        kind="assign",
        partitions=tuple(parts),
        members=tuple(i for i, a in alive.items() if a),
        plan_version=plan_version,
        plan=plan,
        instances=instances,
    )


def test_an_instance_of_the_plan_in_force_that_died_is_dead() -> None:
    h = group_health(_assign_group({"w0": True, "w1": False}, {"w0": 4, "w1": 4}))
    assert h.status == DEAD and h.key == (DEAD, "w1")
    assert h.reason == "instance w1 silent for 45 s (plan v4 gives it 2 partitions)"
    # its partitions are not counted again as "nobody consumes" while DEAD says why
    assert UNCONSUMED not in {f.status for f in h.findings}
    assert h.catch_up_s == NEVER


def test_a_plan_version_not_yet_followed_by_every_instance_is_switching() -> None:
    h = group_health(_assign_group({"w0": True, "w1": True}, {"w0": 4, "w1": 3}))
    assert h.status == SWITCHING
    assert h.reason == "instance w1 runs v3, plan in force is v4"
    assert group_health(_assign_group({"w0": True, "w1": True}, {"w0": 4, "w1": 4})).status == OK


def test_a_partition_nobody_consumes_is_unconsumed_at_once() -> None:
    held = [part([100, 200, 300], [90, 190, 295], "m1", p=p) for p in (0, 1)]
    loose = part([100, 200, 300], [50, 50, 50], None, p=2)
    h = group_health(GroupInput("g", partitions=(*held, loose), members=("m1",), state="Stable"))
    assert h.status == UNCONSUMED
    assert h.reason == "nobody consumes t-2 (lag 250)"
    # while the group rebalances, owners are in flux: nothing to say about them
    moving = GroupInput("g", partitions=(*held, loose), members=("m1",), state="PreparingRebalance")
    assert group_health(moving).status == OK


def test_inflow_above_a_known_capacity_never_catches_up() -> None:
    # 150 msg/s in, the member processes at most 100 msg/s (stated)
    ends = [1000 + 9000 * i for i in range(4)]
    committed = [900 + 6000 * i for i in range(4)]
    g = GroupInput("g", partitions=(part(ends, committed),), members=("m1",), capacities={"m1": 100.0})
    h = group_health(g)
    assert h.status == OVERLOAD
    assert (
        h.reason == "m1 receives 150 msg/s and processes at most 100 msg/s: it never catches up (lag 9,100)"
    )
    assert WARN in {f.status for f in h.findings}  # and Burrow's trend says so too
    assert h.catch_up_s == NEVER and h.to_dict()["never_catches_up"] is True


def test_a_group_that_cannot_be_read_is_unknown() -> None:
    h = group_health(GroupInput("g", error="describe failed: timed out"))
    assert (h.status, h.reason) == (UNKNOWN, "not read: describe failed: timed out")


# -- figures ------------------------------------------------------------------------------------


def test_catch_up_time_from_the_rates_of_the_window() -> None:
    # 12,000 behind; consumes 300 msg/s against 100 msg/s in: 60 s per 12,000 → 60 s
    ends = [100_000 + 6_000 * i for i in range(3)]
    committed = [64_000 + 18_000 * i for i in range(3)]
    h = group_health(GroupInput("g", partitions=(part(ends, committed),), members=("m1",)))
    assert h.total_lag == 12_000
    assert h.catch_up_s == pytest.approx(60.0)
    # a consumer that keeps up with a little lag between commits: its outstanding work, not a
    # ratio of two nearly equal rates
    ends = [1000 + 600 * i for i in range(3)]
    steady = group_health(GroupInput("g", partitions=(part(ends, [e - 50 for e in ends]),), members=("m1",)))
    assert steady.catch_up_s == pytest.approx(5.0)
    assert steady.catch_up_text == "5 s"


def test_lag_in_seconds_reads_the_end_offsets_history() -> None:
    # the end offset was 1,300 thirty seconds before now: the consumer at 1,300 is 30 s behind
    points = (Point(0.0, 1000, 700, 300), Point(60.0, 1600, 1300, 300))
    h = group_health(GroupInput("g", partitions=(PartitionInput("t", 0, points, "m1"),), members=("m1",)))
    assert h.max_lag_s == pytest.approx(30.0)


def test_the_json_form_has_no_infinity() -> None:
    h = group_health(_assign_group({"w0": True, "w1": False}, {"w0": 4}))
    text = json.dumps(h.to_dict(), allow_nan=False)
    data = json.loads(text)
    assert data["status"] == DEAD and data["catch_up_s"] is None and data["never_catches_up"] is True
    assert {p["owner"] for p in data["partitions"]} == {"w0", None}


def test_the_rules_refuse_nonsense_settings() -> None:
    for bad in (0, -1, math.inf, math.nan):
        with pytest.raises(ValueError, match="positive number of seconds"):
            Rules(window_s=bad)


# -- notifications: once per change -------------------------------------------------------------


def test_notifications_are_sent_once_per_change() -> None:
    assert not should_notify(None, (OK,))
    assert should_notify(None, (STOP,))
    assert not should_notify((STOP,), (STOP,))
    assert should_notify((STOP,), (OK,))  # recovered
    assert not should_notify((OK,), (WARN,)) and not should_notify((WARN,), (OK,))
    assert should_notify((WARN,), (STALL,))
    assert should_notify((DEAD, "w1"), (DEAD, "w1", "w2"))  # another instance died


def test_a_stopped_group_is_reported_once_however_often_it_is_looked_at() -> None:
    state: dict[str, tuple[str, ...]] = {}
    sent = []
    ends = [5000 + 100 * i for i in range(30)]
    committed = [4950 + 100 * i for i in range(5)] + [5350] * 25
    for minute in range(3, 30):
        p = PartitionInput("t", 0, history(ends[: minute + 1], committed[: minute + 1]), None)
        due, state = changes(state, [group_health(GroupInput("g", partitions=(p,)), RULES)])
        sent += [(minute, c.describe()) for c in due]
    # the last commit was seen at minute 4: a whole window later the group is STOP, once
    assert [m for m, _ in sent] == [14]
    assert sent[0][1].startswith("g: OK → STOP: t-0: no commit for 10 min")


# -- a history recorded from a real broker (tests/data/health/record.py) --------------------------


def _replayed(name: str) -> tuple[dict, list[GroupInput]]:
    """The recorded observations, and at each one the group as the rules saw it then."""
    data = json.loads((HEALTH_DATA / name).read_text())
    steps = []
    for i in range(1, len(data["observations"]) + 1):
        seen = data["observations"][:i]
        parts: dict[tuple[str, int], list[Point]] = {}
        for obs in seen:
            for row in obs["partitions"]:
                point = Point(obs["t"], row["end"], row["committed"], row["lag"])
                parts.setdefault((row["topic"], row["partition"]), []).append(point)
        owners = seen[-1]["owners"]
        steps.append(
            GroupInput(
                data["group"],
                partitions=tuple(
                    PartitionInput(t, p, tuple(pts), owners.get(f"{t}-{p}"))
                    for (t, p), pts in sorted(parts.items())
                ),
                members=tuple(seen[-1]["members"]),
                state=seen[-1]["state"],
            )
        )
    return data, steps


def test_a_recorded_history_gets_the_statuses_it_was_given_live() -> None:
    data, steps = _replayed("consumer-pauses-then-stops.json")
    rules = Rules(window_s=data["window_s"])
    got = [group_health(g, rules).status for g in steps]
    assert got == data["expected"]
    # and those are the right ones: OK while it keeps up, STALL once paused for a window, OK
    # again when it resumes, STOP a window after it left; never a warning on its noise
    by_phase: dict[str, list[str]] = {}
    for obs, status in zip(data["observations"], got, strict=True):
        by_phase.setdefault(obs["phase"], []).append(status)
    assert set(by_phase["keeps up"]) == {OK}
    assert by_phase["paused"][0] == OK and by_phase["paused"][-1] == STALL
    assert set(by_phase["resumed"][1:]) == {OK}
    assert by_phase["closed"][0] == OK and by_phase["closed"][-1] == STOP
    assert WARN not in got
