"""The ``uniform`` strategy: Kafka's server-side UniformAssignor (KIP-848)."""

from __future__ import annotations

from groups import cases, check_valid, kafka_balance_violation
from hypothesis import given
from lagassign.core.case import parse_case
from lagassign.core.strategies import get_strategy


@given(case=cases(max_members=7, max_topics=4, max_partitions=8, subscriptions="identical"))
def test_identical_subscriptions_keep_owned_partitions_up_to_the_quota(case):
    group = parse_case(case)
    got = get_strategy("uniform").assign(group).members
    check_valid(group, got)
    counts = [len(tps) for tps in got.values()]
    assert max(counts) - min(counts) <= 1
    quota_min, extra = divmod(len(group.assignable), len(group.members))
    for i, m in enumerate(group.kafka_order):
        quota = quota_min + (1 if i < extra else 0)
        assert len(got[m.id]) == quota
        keepable = [tp for tp in m.owned if tp.topic in m.topics]
        assert len(set(got[m.id]) & set(keepable)) == min(len(keepable), quota)


@given(case=cases(max_members=7, max_topics=4, max_partitions=8, subscriptions="mixed"))
def test_mixed_subscriptions_meet_kafkas_balance_condition(case):
    group = parse_case(case)
    got = get_strategy("uniform").assign(group).members
    check_valid(group, got)
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
