"""lagassign's Kafka strategies against Kafka's own assignors (kafka-clients 4.4.0) on seeded
random groups: identical and mixed subscriptions, with and without owned partitions, static
members and racks. Run ``make harness`` first (``make test`` and CI do); skipped without it."""

from __future__ import annotations

import random

import pytest
from groups import ISSUE_13_SMALLEST, kafka_balance_violation, moved
from kafka_java import NEEDS_HARNESS, against_kafka, kafka_assign, random_case
from lagassign.core.case import parse_case
from lagassign.core.kafka_replay.constrained import kafka_constrained, kafka_constrained_cooperative
from lagassign.core.kafka_replay.general import kafka_general, kafka_general_cooperative
from lagassign.core.strategies import get_strategy

pytestmark = NEEDS_HARNESS

N = 300


@pytest.fixture(scope="module")
def runs():
    """(case, group, Kafka's assignments) for N seeded random cases, one JVM for all."""
    rnd = random.Random(13)
    return against_kafka([random_case(rnd) for _ in range(N)], kafka_assign)


def _static(case) -> bool:
    return any("instance_id" in m for m in case["members"])


def _racks(case) -> bool:
    return any("rack" in m for m in case["members"])


@pytest.mark.parametrize("name", ["range", "roundrobin"])
def test_identical_to_kafka_on_every_case(runs, name):
    """Static members (ordered by group.instance.id) and racks (range's rack-aware pass) too."""
    assert sum(_static(c) for c, _, _ in runs) > N // 4
    assert sum(_racks(c) for c, _, _ in runs) > N // 5
    differ = [c for c, g, k in runs if get_strategy(name).assign(g).members != k[name]]
    assert not differ, differ[0]


@pytest.mark.parametrize("name", ["range", "roundrobin"])
def test_identical_to_kafka_on_co_partitioned_rack_cases(name):
    """Few partitions per topic and racks on most: range's co-partitioned rack pass is exercised."""
    rnd = random.Random(881)
    cases = [random_case(rnd, max_partitions=3, racks=rnd.random() < 0.8) for _ in range(200)]
    for case, k in zip(cases, kafka_assign(cases), strict=True):
        assert get_strategy(name).assign(parse_case(case)).members == k[name], case


def test_static_members_go_by_instance_id():
    """The issue's smallest case: C0 (worker-80) and C1 (worker-73) share one partition."""
    case = {
        "members": [
            {"id": "C0", "topics": ["t0"], "instance_id": "worker-80"},
            {"id": "C1", "topics": ["t0"], "instance_id": "worker-73"},
        ],
        "partitions": [{"topic": "t0", "partition": 0, "lag": 0}],
    }
    kafka = kafka_assign([case])[0]
    for name in ("range", "roundrobin"):
        got = get_strategy(name).assign(parse_case(case)).members
        assert got == kafka[name] and got["C1"] == [("t0", 0)]


def test_the_harness_runs_kafkas_documented_range_example():
    """RangeAssignor's javadoc: C0 and C1 on t0 and t1, three partitions each."""
    case = {
        "members": [{"id": "C0", "topics": ["t0", "t1"]}, {"id": "C1", "topics": ["t0", "t1"]}],
        "partitions": [{"topic": t, "partition": p, "lag": 0} for t in ("t0", "t1") for p in range(3)],
    }
    got = kafka_assign([case])[0]["range"]
    assert {m: [f"{tp}" for tp in tps] for m, tps in got.items()} == {
        "C0": ["t0-0", "t0-1", "t1-0", "t1-1"],
        "C1": ["t0-2", "t1-2"],
    }


def _moves(group, members) -> int:
    return len(moved(group.owner, members))


@pytest.mark.parametrize(
    ("ours", "theirs"), [("sticky", "sticky"), ("cooperative-sticky", "cooperative-sticky-final")]
)
def test_sticky_never_moves_more_than_kafka(runs, ours, theirs):
    """On every case without racks (mixed subscriptions, static members alike), with Kafka's
    balance. With racks both trade moves for rack locality (next test)."""
    worse = []
    for case, group, kafka in runs:
        got = get_strategy(ours).assign(group).members
        assert kafka_balance_violation(group, got) is None, case
        if not _racks(case) and _moves(group, got) > _moves(group, kafka[theirs]):
            worse.append(case)
    assert not worse, worse[0]


def rack_local(group, members) -> int:
    """Partitions consumed by a member on a rack holding one of their replicas."""
    rack = {m.id: m.rack for m in group.members}
    return sum(1 for mid, tps in members.items() for tp in tps if rack[mid] in group.partitions[tp].racks)


@pytest.mark.parametrize(
    ("ours", "theirs"), [("sticky", "sticky"), ("cooperative-sticky", "cooperative-sticky-final")]
)
def test_sticky_with_racks_dominates_kafka_per_group(ours, theirs):
    """With racks, per group: Kafka's balance always, never more moves than Kafka's and at
    least its rack-local partitions, both at once; on mixed subscriptions by replaying Kafka's
    general builder (``kafka_general``) and keeping ours only where it dominates, and
    cooperative-sticky on one subscription against Kafka's constrained builder rerun
    (``kafka_constrained``). In all, more rack-local partitions and fewer moves than Kafka."""
    rnd = random.Random(4)
    cases = [random_case(rnd, racks=True) for _ in range(400)]
    mixed = identical = 0
    totals = [0, 0, 0, 0]
    for case, kafka in zip(cases, kafka_assign(cases), strict=True):
        group = parse_case(case)
        got = get_strategy(ours).assign(group).members
        assert kafka_balance_violation(group, got) is None, case
        moves, kafka_moves = _moves(group, got), _moves(group, kafka[theirs])
        local, kafka_local = rack_local(group, got), rack_local(group, kafka[theirs])
        for i, v in enumerate((moves, kafka_moves, local, kafka_local)):
            totals[i] += v
        dominates = moves <= kafka_moves and local >= kafka_local
        assert dominates, case
        identical += group.identical_subscriptions
        mixed += not group.identical_subscriptions
    assert identical > 200
    assert mixed > 100
    assert totals[0] < totals[1] and totals[2] > totals[3]


@pytest.mark.parametrize("seed", [5, 6])
def test_sticky_never_moves_more_than_kafka_on_mixed_subscriptions(seed):
    """Mixed subscriptions with owned partitions: where three passes alone moved more."""
    rnd = random.Random(seed)
    cases = [random_case(rnd, subscriptions="mixed", owned=True, racks=False) for _ in range(400)]
    for case, kafka in zip(cases, kafka_assign(cases), strict=True):
        group = parse_case(case)
        got = get_strategy("sticky").assign(group).members
        assert kafka_balance_violation(group, got) is None, case
        assert _moves(group, got) <= _moves(group, kafka["sticky"]), case


def test_kafka_general_builder_replay_is_identical_to_kafka():
    """``kafka_general`` (sticky's reference on mixed subscriptions) is Kafka's StickyAssignor,
    and its cooperative rerun Kafka's CooperativeStickyAssignor after its follow-up rebalances,
    on every mixed group: racks or not, owned partitions or not, up to 30 members."""
    rnd = random.Random(848)
    cases = []
    while len(cases) < 300:
        big = len(cases) % 10 == 0
        case = random_case(
            rnd,
            "mixed",
            max_members=30 if big else 7,
            max_partitions=20 if big else 10,
            racks=rnd.random() < 0.7,
        )
        if not parse_case(case).identical_subscriptions:
            cases.append(case)
    for case, kafka in zip(cases, kafka_assign(cases), strict=True):
        group = parse_case(case)
        assert kafka_general(group) == kafka["sticky"], case
        assert kafka_general_cooperative(group) == kafka["cooperative-sticky-final"], case


def test_kafka_constrained_builder_replay_is_identical_to_kafka():
    """``kafka_constrained`` (cooperative-sticky's reference on one subscription with racks) is
    Kafka's StickyAssignor, and its rerun Kafka's CooperativeStickyAssignor after its follow-up
    rebalances, on every group with one shared subscription: racks or not, owned or not."""
    rnd = random.Random(4)
    cases = [random_case(rnd, "identical", racks=rnd.random() < 0.7) for _ in range(300)]
    cases += [random_case(rnd, "identical", max_members=30, max_partitions=20) for _ in range(30)]
    for case, kafka in zip(cases, kafka_assign(cases), strict=True):
        group = parse_case(case)
        assert kafka_constrained(group) == kafka["sticky"], case
        assert kafka_constrained_cooperative(group) == kafka["cooperative-sticky-final"], case


def test_the_issues_smallest_sticky_case_moves_nothing():
    """C0 [t1], C1 [t0, t1] owning t0-1 and t1-1, C2 [t0, t1], C3 [t0]; Kafka moves nothing."""
    case = ISSUE_13_SMALLEST
    group = parse_case(case)
    kafka = kafka_assign([case])[0]
    for ours, theirs in (("sticky", "sticky"), ("cooperative-sticky", "cooperative-sticky-final")):
        assert _moves(group, kafka[theirs]) == 0
        assert _moves(group, get_strategy(ours).assign(group).members) == 0


def test_big_groups_with_racks_against_kafka():
    """101-400 members (sticky's chain search runs in blocks there): per group, on one
    subscription and on mixed ones, Kafka's balance, at most Kafka's moves and at least its
    rack-local partitions."""
    rnd = random.Random(400)
    options = {"owned": True, "static": False, "racks": True, "max_members": 400, "max_topics": 12}
    for subs in ("identical", "mixed"):
        cases = []
        while len(cases) < 6:
            case = random_case(rnd, subs, max_partitions=200, **options)
            if len(case["members"]) > 100:
                cases.append(case)
        totals = [0, 0, 0, 0]
        for case, kafka in zip(cases, kafka_assign(cases), strict=True):
            group = parse_case(case)
            got = get_strategy("sticky").assign(group).members
            assert kafka_balance_violation(group, got) is None
            figures = (
                _moves(group, got),
                _moves(group, kafka["sticky"]),
                rack_local(group, got),
                rack_local(group, kafka["sticky"]),
            )
            for i, v in enumerate(figures):
                totals[i] += v
            assert figures[0] <= figures[1] and figures[2] >= figures[3], (subs, case["members"][0])
        assert totals[0] <= totals[1] and totals[2] >= totals[3], (subs, totals)
