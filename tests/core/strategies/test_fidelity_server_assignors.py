"""lagassign's ``uniform`` and ``range`` against Kafka's own server-side assignors of KIP-848
(kafka-group-coordinator 4.4.0: ``UniformAssignor``, ``RangeAssignor``) on seeded random groups:
identical and mixed subscriptions, owned partitions as the current target assignment, static
members, racks (passed to Kafka's API, which its 4.4.0 builders do not use). Each difference
must have a reason (``server_fidelity``); each reason is counted. Needs ``make harness``."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from groups import kafka_balance_violation, moved
from kafka_java import NEEDS_HARNESS, against_kafka, random_case, server_assign
from lagassign.core.strategies import get_strategy
from lagassign.core.strategies.examples import example
from server_fidelity import (
    FEWER_MOVES,
    FRESH,
    IDENTICAL,
    ORDER,
    RACKS,
    SAME_KEPT,
    UNEXPLAINED,
    range_reason,
    server_cases,
    uniform_reason,
    without_racks,
)

pytestmark = NEEDS_HARNESS

N = 400


@pytest.fixture(scope="module")
def runs():
    """(case, group, Kafka's server-side results) for N seeded groups, one JVM for all."""
    return against_kafka(server_cases(random.Random(848), N), server_assign)


def _uniform(group):
    return get_strategy("uniform").assign(group).members


def test_the_groups_cover_what_is_compared(runs):
    """Both subscription types (as the coordinator decides them), owned partitions, racks and
    static members in each, and bigger groups."""
    seen: Counter = Counter()
    for _, group, kafka in runs:
        assert kafka["homogeneous"] == group.identical_subscriptions
        kind = "one" if group.identical_subscriptions else "mixed"
        seen[kind] += 1
        seen[kind, "owned"] += bool(group.owner)
        seen[kind, "racks"] += group.rack_aware
        seen[kind, "static"] += any(m.instance_id for m in group.members)
        seen["big"] += len(group.members) > 7
    for kind in ("one", "mixed"):
        assert seen[kind] > N // 5
        for flag in ("owned", "racks", "static"):
            assert seen[kind, flag] > seen[kind] // 5, (kind, flag, seen)
    assert seen["big"] > N // 20


def test_uniform_with_one_subscription_is_kafkas(runs):
    """Kafka's homogeneous builder (4.1+: extras to members that own enough), member by member
    in Kafka's member order and topics by name: lagassign's result exactly, on every group."""
    one = [(g, k) for _, g, k in runs if g.identical_subscriptions]
    differ = [g for g, k in one if _uniform(g) != k["uniform-ordered"]]
    assert not differ, differ[0]
    assert sum(bool(g.owner) for g, _ in one) > len(one) // 3


def test_uniform_differs_from_the_coordinators_order_only_by_order(runs):
    """In the coordinator's own order (hash order of member and topic ids) Kafka pairs members
    and partitions otherwise, with the same moves: the one reason, and it happens."""
    reasons = Counter(
        uniform_reason(g, _uniform(g), k["uniform"], k["uniform-ordered"])
        for _, g, k in runs
        if g.identical_subscriptions
    )
    assert set(reasons) == {IDENTICAL, ORDER}, reasons
    assert reasons[ORDER] > 0 and reasons[IDENTICAL] > 0


@pytest.mark.parametrize("order", ["uniform", "uniform-ordered"])
def test_uniform_with_mixed_subscriptions_never_moves_more_than_kafka(runs, order):
    """Sticky's layout (rack-blind, as Kafka's builder) against Kafka's heterogeneous builder:
    Kafka's balance condition, never more moves, each difference with its reason; with racks
    too, where a rack-aware layout moved more than Kafka's."""
    reasons: Counter = Counter()
    racks_owned = 0
    for _, g, k in runs:
        if g.identical_subscriptions:
            continue
        ours = _uniform(g)
        assert kafka_balance_violation(g, ours) is None
        assert len(moved(g.owner, ours)) <= len(moved(g.owner, k[order]))
        reasons[uniform_reason(g, ours, k[order], k["uniform-ordered"])] += 1
        racks_owned += g.rack_aware and bool(g.owner)
    assert UNEXPLAINED not in reasons, reasons
    assert all(reasons[r] for r in (IDENTICAL, FRESH, FEWER_MOVES, SAME_KEPT)), reasons
    assert racks_owned > 10


def test_kafkas_uniform_keeps_its_balance_on_these_groups(runs):
    """Kafka's own heterogeneous result meets the balance condition lagassign holds to (so the
    comparison of moves is like for like)."""
    unbalanced = [c for c, g, k in runs if kafka_balance_violation(g, k["uniform"]) is not None]
    assert not unbalanced, unbalanced[0]


def test_range_is_the_servers_without_racks(runs):
    """lagassign's ``range`` (the client RangeAssignor's) against the server's: identical on
    every group but those where the client's rack pass moves partitions to rack-local members;
    on those, identical once the racks are left out. The server's takes no current assignment
    and the same member order, in either input order."""
    reasons: Counter = Counter()
    for case, g, k in runs:
        assert k["range"] == k["range-ordered"]
        reason = range_reason(case, get_strategy("range").assign(g).members, k["range"])
        reasons[reason] += 1
        if reason != IDENTICAL:
            assert g.rack_aware
    assert set(reasons) == {IDENTICAL, RACKS}, reasons


def test_racks_change_nothing_in_kafkas_server_assignors():
    """Kafka 4.4.0 takes racks in its API (member racks, replica racks) and its builders use
    none: the same groups with and without racks get the same assignments."""
    rnd = random.Random(5)
    cases = [random_case(rnd, racks=True, owned=rnd.random() < 0.7) for _ in range(100)]
    with_racks = server_assign(cases)
    rackless = server_assign([without_racks(c) for c in cases])
    for a, b in zip(with_racks, rackless, strict=True):
        assert a == b


def test_uniform_worked_example_is_kafkas():
    """uniform's docstring example: C0 owns three of four partitions, C1 joins; Kafka's
    UniformAssignor gives each two, C1 the never-owned t0-3 and t0-2 from C0."""
    group = example({"C0": ["t0"], "C1": ["t0"]}, {"t0": [1] * 4}, {"C0": ["t0-0", "t0-1", "t0-2"]})
    case = {
        "members": [
            {"id": "C0", "topics": ["t0"], "owned": [["t0", 0], ["t0", 1], ["t0", 2]]},
            {"id": "C1", "topics": ["t0"]},
        ],
        "partitions": [{"topic": "t0", "partition": p, "lag": 1} for p in range(4)],
    }
    kafka = server_assign([case])[0]
    want = {"C0": [("t0", 0), ("t0", 1)], "C1": [("t0", 2), ("t0", 3)]}
    assert kafka["uniform"] == kafka["uniform-ordered"] == want
    assert _uniform(group) == want
