"""The ``uniform`` strategy: Kafka's server-side UniformAssignor (KIP-848)."""

from __future__ import annotations

from groups import cases, check_valid, kafka_balance_violation, owned_case
from hypothesis import given
from hypothesis import strategies as st
from lagassign.core.case import parse_case
from lagassign.core.strategies import get_strategy


def _run(case):
    group = parse_case(case)
    got = get_strategy("uniform").assign(group).members
    check_valid(group, got)
    return group, got


@given(case=cases(max_members=7, max_topics=4, max_partitions=8, subscriptions="identical"))
def test_identical_subscriptions_keep_owned_partitions_up_to_the_quota(case):
    """Counts within one, ``extra`` members with one more; each member keeps as many of its
    owned partitions as its count allows (the extras go first to members that own enough)."""
    group, got = _run(case)
    quota_min, extra = divmod(len(group.assignable), len(group.members))
    counts = sorted(len(tps) for tps in got.values())
    assert counts == [quota_min] * (len(counts) - extra) + [quota_min + 1] * extra
    for m in group.kafka_order:
        keepable = [tp for tp in m.owned if tp.topic in m.topics]
        assert len(set(got[m.id]) & set(keepable)) == min(len(keepable), len(got[m.id]))


@given(case=cases(max_members=7, max_topics=4, max_partitions=8, subscriptions="identical"))
def test_identical_subscriptions_a_balanced_assignment_stays(case):
    """Kafka's stability (KAFKA-18688, CommonAssignorTests): run again on its own result and
    nothing moves."""
    _, first = _run(case)
    again = owned_case(case, {mid: [[tp.topic, tp.partition] for tp in tps] for mid, tps in first.items()})
    assert _run(again)[1] == first


@given(
    case=cases(max_members=7, max_topics=4, max_partitions=8, subscriptions="identical"),
    rnd=st.randoms(use_true_random=False),
)
def test_identical_subscriptions_any_balanced_assignment_stays(case, rnd):
    """The same with the members in any order (as CommonAssignorTests runs it): deal the
    partitions round robin, shuffled, from a shuffled member list; uniform keeps it all."""
    group = parse_case(case)
    tps = list(group.assignable)
    ids = list(group.member_ids)
    rnd.shuffle(tps)
    rnd.shuffle(ids)
    balanced = {mid: [[tp.topic, tp.partition] for tp in tps[i :: len(ids)]] for i, mid in enumerate(ids)}
    _, got = _run(owned_case(case, balanced))
    assert {mid: sorted(map(tuple, tps)) for mid, tps in balanced.items()} == {
        mid: [tuple(tp) for tp in tps] for mid, tps in got.items()
    }


@given(case=cases(max_members=7, max_topics=4, max_partitions=8, subscriptions="mixed"))
def test_mixed_subscriptions_meet_kafkas_balance_condition(case):
    group, got = _run(case)
    assert kafka_balance_violation(group, got) is None


def _case(members, sizes):
    return {
        "group": "g",
        "members": [{"id": mid, "topics": topics, "owned": owned} for mid, topics, owned in members],
        "partitions": [{"topic": t, "partition": p, "lag": 0} for t, n in sizes.items() for p in range(n)],
    }


def test_kafkas_example_a_member_joins_two_members_on_two_topics():
    """Kafka's OptimizedUniformAssignmentBuilderTest
    .testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics."""
    owned_a = [["t1", 0], ["t1", 2], ["t2", 0]]
    owned_b = [["t1", 1], ["t2", 1], ["t2", 2]]
    case = _case(
        [("A", ["t1", "t2"], owned_a), ("B", ["t1", "t2"], owned_b), ("C", ["t1", "t2"], [])],
        {"t1": 3, "t2": 3},
    )
    got = get_strategy("uniform").assign(parse_case(case)).members
    assert {m: [f"{tp}" for tp in tps] for m, tps in got.items()} == {
        "A": ["t1-0", "t1-2"],
        "B": ["t1-1", "t2-1"],
        "C": ["t2-0", "t2-2"],
    }
