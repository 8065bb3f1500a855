"""Properties of every registered strategy on generated groups: validity, balance, determinism, stickiness."""

from __future__ import annotations

import math
import random

import lagassign
import pytest
from groups import cases, check_valid, kafka_balance_violation, moved, owned_case, per_topic_spread
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from lagassign.core.case import parse_case
from lagassign.core.errors import StrategyRefusedError
from lagassign.core.strategies import get_strategy, strategy_names

# The balance each strategy promises (docs/ARCHITECTURE.md's table):
#   kafka: Kafka's condition (counts within one, or no member 2+ short could take one)
#   kafka-if-identical: Kafka's condition when all members share one subscription
#   per-topic: per topic, subscribers' counts within one
#   within-one-if-identical: counts within one when subscriptions are identical
#   identical-only: counts within one; refuses mixed subscriptions
#   as-owned: the owned partitions, unchanged
GUARANTEE = {
    "range": "per-topic",
    "roundrobin": "within-one-if-identical",
    "sticky": "kafka",
    "cooperative-sticky": "kafka",
    "uniform": "kafka",
    "constrained-sticky": "identical-only",
    "fair": "kafka-if-identical",
    "lag": "per-topic",
    "lag-aware": "kafka",
    "lag-optimal": "kafka",
    "drain-optimal": "kafka",  # these groups state no capacities: drain-optimal is lag-optimal there
    "current": "as-owned",
}
ALL = strategy_names()
STICKY_FAMILY = ["sticky", "cooperative-sticky", "constrained-sticky"]


def run(case: dict, name: str):
    group = parse_case(case)
    return group, get_strategy(name).assign(group)


def as_pairs(members: dict) -> dict[str, list[list]]:
    return {mid: [list(tp) for tp in tps] for mid, tps in members.items()}


def test_every_registered_strategy_states_its_guarantee():
    """A new strategy must say here which balance it promises, so it gets tested."""
    assert set(ALL) <= set(GUARANTEE), f"no guarantee listed for {set(ALL) - set(GUARANTEE)}"


@pytest.mark.parametrize("name", ALL)
@given(case=cases())
def test_assignment_is_valid_and_balanced(name, case):
    """Each subscribed partition exactly once, to a subscriber; the strategy's balance holds."""
    group = parse_case(case)
    kind = GUARANTEE[name]
    if kind == "identical-only" and not group.identical_subscriptions:
        with pytest.raises(StrategyRefusedError):
            get_strategy(name).assign(group)
        return
    members = get_strategy(name).assign(group).members
    if kind == "as-owned":
        assert members == {m.id: sorted(m.owned) for m in group.members}
        return
    check_valid(group, members)
    counts = [len(tps) for tps in members.values()]
    if kind == "kafka" or (kind == "kafka-if-identical" and group.identical_subscriptions):
        assert kafka_balance_violation(group, members) is None
    if kind in ("identical-only", "within-one-if-identical") and group.identical_subscriptions:
        assert max(counts) - min(counts) <= 1
    if kind == "per-topic":
        assert all(spread <= 1 for spread in per_topic_spread(group, members).values())


COUNT_BALANCING = [n for n in ALL if GUARANTEE.get(n) not in ("per-topic", "as-owned")]


@pytest.mark.parametrize("name", COUNT_BALANCING)
@given(case=cases(subscriptions="identical"))
def test_identical_subscriptions_give_counts_within_one(name, case):
    """With one shared subscription every count-balancing strategy is within one overall."""
    _, assignment = run(case, name)
    counts = [len(tps) for tps in assignment.members.values()]
    assert max(counts) - min(counts) <= 1


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=50)
@given(case=cases(max_members=4, max_topics=3, max_partitions=4), seed=st.integers(0, 2**32))
def test_output_depends_on_the_group_not_on_input_order(name, case, seed):
    """Same group, members/partitions/topics/owned listed in another order: the same output."""
    rnd = random.Random(seed)
    try:
        first = lagassign.assign(case, name)
    except StrategyRefusedError:
        return
    shuffled = {**case, "members": [], "partitions": list(case["partitions"])}
    for m in case["members"]:
        topics, owned = list(m["topics"]), list(m["owned"])
        rnd.shuffle(topics)
        rnd.shuffle(owned)
        shuffled["members"].append({**m, "topics": topics, "owned": owned})
    rnd.shuffle(shuffled["members"])
    rnd.shuffle(shuffled["partitions"])
    assert lagassign.assign(shuffled, name) == first
    assert lagassign.assign(case, name) == first


@pytest.mark.parametrize("name", STICKY_FAMILY)
@given(data=st.data())
def test_sticky_output_is_a_fixed_point(name, data):
    """Rerun with its own output as the owned partitions, a sticky strategy moves nothing."""
    case = data.draw(cases(subscriptions="identical" if name == "constrained-sticky" else "any"))
    first = get_strategy(name).assign(parse_case(case))
    again_group, again = run(owned_case(case, as_pairs(first.members)), name)
    assert again.members == first.members
    assert not moved(again_group.owner, again.members)
    if name == "cooperative-sticky":
        assert again.withheld == []


def _settled(case: dict, name: str) -> dict:
    """The case with every member owning what ``name`` assigns it."""
    return owned_case(case, as_pairs(run(case, name)[1].members))


@pytest.mark.parametrize("name", STICKY_FAMILY)
@given(case=cases(subscriptions="identical", max_members=7, max_partitions=8))
def test_a_joining_member_takes_its_share_and_nothing_else_moves(name, case):
    """Identical subscriptions: every moved partition goes to the new member, at most ceil(P/N) of them."""
    settled = _settled(case, name)
    joiner = {"id": "joiner", "topics": list(case["members"][0]["topics"])}
    assume(all(m["id"] != "joiner" for m in case["members"]))
    group, after = run({**settled, "members": [*settled["members"], joiner]}, name)
    lost = moved(group.owner, after.members)
    assert lost == set(after.members["joiner"])
    assert len(lost) <= math.ceil(len(group.assignable) / len(group.members))


@pytest.mark.parametrize("name", STICKY_FAMILY)
@given(case=cases(subscriptions="identical", max_members=7, max_partitions=8), data=st.data())
def test_a_leaving_member_moves_only_its_own_partitions(name, case, data):
    """Identical subscriptions: when a member leaves, everyone else keeps all they had."""
    assume(len(case["members"]) >= 2)
    settled = _settled(case, name)
    leaver = data.draw(st.sampled_from([m["id"] for m in settled["members"]]))
    group, after = run({**settled, "members": [m for m in settled["members"] if m["id"] != leaver]}, name)
    assert not moved(group.owner, after.members)
    for m in group.members:
        assert set(m.owned) <= set(after.members[m.id])


def test_a_join_with_mixed_subscriptions_can_force_a_chain_of_moves():
    """Why no ceil(P/N) + c bound holds for mixed subscriptions, Kafka's sticky included.

    M1 {a, b}, M2 {b, c}, M3 {c} own all 12 partitions of a, b and c; J {a} joins. J can only
    take a's from M1, which then may take b's from M2, which may take c's from M3. With x, y, z
    moved along the chain, Kafka's condition needs 2x >= 11 + y, 2y >= x + z - 1 and
    2z >= y - 1; the least x + y + z is 15 (8, 5, 2), while ceil(P/N) = 9.
    """
    case = {
        "group": "g",
        "members": [
            {"id": "M1", "topics": ["a", "b"], "owned": [["a", p] for p in range(12)]},
            {"id": "M2", "topics": ["b", "c"], "owned": [["b", p] for p in range(12)]},
            {"id": "M3", "topics": ["c"], "owned": [["c", p] for p in range(12)]},
            {"id": "J", "topics": ["a"]},
        ],
        "partitions": [{"topic": t, "partition": p, "lag": 1} for t in "abc" for p in range(12)],
    }
    out = lagassign.assign(case, "sticky")["metrics"]
    assert out["count"] == {"J": 8, "M1": 9, "M2": 9, "M3": 10}
    assert out["moves"] == 15


@given(case=cases())
def test_cooperative_sticky_withholds_exactly_the_partitions_changing_owner(case):
    """Same target as sticky; ``withheld`` = partitions another member owned before."""
    group = parse_case(case)
    coop = get_strategy("cooperative-sticky").assign(group)
    assert coop.members == get_strategy("sticky").assign(group).members
    owner_before = group.owner
    expected = sorted(
        tp for mid, tps in coop.members.items() for tp in tps if owner_before.get(tp, mid) != mid
    )
    assert coop.withheld == expected


@given(case=cases(subscriptions="mixed"))
def test_constrained_sticky_refuses_mixed_subscriptions(case):
    group = parse_case(case)
    assume(not group.identical_subscriptions)
    with pytest.raises(StrategyRefusedError, match="same topics"):
        get_strategy("constrained-sticky").assign(group)
