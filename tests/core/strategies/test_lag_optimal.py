"""lag-optimal (issue 3): its guarantees as properties, the seed's example, and one case per
complaint that users of the seed assignor raised."""

from __future__ import annotations

import random

import pytest
from groups import brute_force_min_max_lag, cases, check_valid, kafka_balance_violation, moved
from hypothesis import given
from hypothesis import strategies as st
from lagassign import assign
from lagassign.core.case import parse_case
from lagassign.core.errors import StrategyOptionError, StrategyRefusedError
from lagassign.core.scoring import meets_count_guarantee, score
from lagassign.core.strategies import get_strategy


def _run(case, **options):
    group = parse_case(case)
    assignment = get_strategy("lag-optimal", **options).assign(group)
    return group, assignment, score(group, assignment)


@given(cases(max_members=6, max_topics=4, max_partitions=8))
def test_valid_balanced_and_never_worse_than_the_seeds(case):
    group, assignment, metrics = _run(case)
    check_valid(group, assignment.members)
    assert kafka_balance_violation(group, assignment.members) is None
    lag_aware = score(group, get_strategy("lag-aware").assign(group))
    assert metrics["max_lag"] <= lag_aware["max_lag"]
    lag = get_strategy("lag").assign(group)
    if meets_count_guarantee(group, lag.members):
        assert metrics["max_lag"] <= score(group, lag)["max_lag"]
    assert metrics["lower_bound_max_lag"] <= metrics["max_lag"]


@given(cases(max_members=3, max_topics=2, max_partitions=4, subscriptions="identical", max_total=7))
def test_optimal_on_small_groups_when_counts_do_not_bind(case):
    """With slack enough that counts cannot bind, the answer is the exhaustive optimum."""
    group = parse_case(case)
    assignment = get_strategy("lag-optimal", count_slack=len(group.assignable)).assign(group)
    best = brute_force_min_max_lag(group)
    # A local search is not exact in general; on groups this small it must be.
    assert score(group, assignment)["max_lag"] == best


@given(cases(max_members=5, max_topics=3, max_partitions=8), st.integers(0, 6))
def test_max_moves_is_never_exceeded(case, budget):
    group = parse_case(case)
    try:
        assignment = get_strategy("lag-optimal", max_moves=budget).assign(group)
    except StrategyRefusedError as exc:
        assert "max_moves" in str(exc)
        return
    assert len(moved(group.owner, assignment.members)) <= budget
    assert kafka_balance_violation(group, assignment.members) is None


@given(cases(max_members=5, max_topics=3, max_partitions=6))
def test_deterministic_and_independent_of_input_order(case):
    first = assign(case, "lag-optimal")
    shuffled = {
        **case,
        "members": list(reversed(case["members"])),
        "partitions": list(reversed(case["partitions"])),
    }
    assert assign(case, "lag-optimal") == first
    assert assign(shuffled, "lag-optimal") == first


def test_seed_readme_example_reaches_the_lower_bound():
    case = {
        "group": "g",
        "members": [{"id": "C0", "topics": ["t0"]}, {"id": "C1", "topics": ["t0"]}],
        "partitions": [
            {"topic": "t0", "partition": 0, "lag": 100_000},
            {"topic": "t0", "partition": 1, "lag": 50_000},
            {"topic": "t0", "partition": 2, "lag": 60_000},
        ],
    }
    out = assign(case, "lag-optimal")
    assert out["metrics"]["max_lag"] == 110_000 == out["metrics"]["lower_bound_max_lag"]
    assert sorted(map(sorted, out["assignment"].values())) == [[["t0", 0]], [["t0", 1], ["t0", 2]]]


def _zero_lag_topics(n_topics: int, members: list[str], group: str = "g") -> dict:
    return {
        "group": group,
        "members": [{"id": m, "topics": [f"t{i}" for i in range(n_topics)]} for m in members],
        "partitions": [{"topic": f"t{i}", "partition": 0, "lag": 0} for i in range(n_topics)],
    }


def test_complaint_zero_lag_partitions_pile_onto_one_consumer():
    """Seed (per-topic counters): every single-partition topic goes to the same consumer."""
    case = _zero_lag_topics(6, ["a", "b", "c"])
    lag_counts = assign(case, "lag")["metrics"]["count"]
    assert lag_counts == {"a": 6, "b": 0, "c": 0}  # the complaint, reproduced
    assert sorted(assign(case, "lag-optimal")["metrics"]["count"].values()) == [2, 2, 2]


def test_complaint_no_bias_toward_the_alphabetically_first_consumer():
    """Ties go by a hash of (group, member), so the extra partition lands on different members."""
    winners = set()
    for i in range(40):
        case = _zero_lag_topics(4, ["alpha", "bravo", "charlie"], group=f"group-{i}")
        counts = assign(case, "lag-optimal")["metrics"]["count"]
        winners.add(max(counts, key=lambda m: (counts[m], m)))
    assert winners == {"alpha", "bravo", "charlie"}


def test_complaint_a_knob_trading_count_balance_for_lag_balance():
    case = {
        "group": "g",
        "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}],
        "partitions": [{"topic": "t", "partition": p, "lag": lag} for p, lag in enumerate([100, 1, 1, 1])],
    }
    strict = assign(case, "lag-optimal")
    assert sorted(strict["metrics"]["count"].values()) == [2, 2]
    assert strict["metrics"]["max_lag"] == 101
    loose = assign(case, "lag-optimal", count_slack=1)
    assert sorted(loose["metrics"]["count"].values()) == [1, 3]
    assert loose["metrics"]["max_lag"] == 100


def test_complaint_stickiness_a_balanced_group_is_left_alone():
    rng = random.Random(5)
    lags = [rng.randint(0, 1000) for _ in range(12)]
    layout = get_strategy("lag-optimal").assign(
        parse_case(
            {
                "group": "g",
                "members": [{"id": m, "topics": ["t"]} for m in "abc"],
                "partitions": [{"topic": "t", "partition": p, "lag": x} for p, x in enumerate(lags)],
            }
        )
    )
    case = {
        "group": "g",
        "members": [
            {"id": m, "topics": ["t"], "owned": [[tp.topic, tp.partition] for tp in layout.members[m]]}
            for m in "abc"
        ],
        "partitions": [{"topic": "t", "partition": p, "lag": x} for p, x in enumerate(lags)],
    }
    assert assign(case, "lag-optimal")["metrics"]["moves"] == 0


def test_fewer_moves_win_among_equally_balanced_answers():
    """Owned: a holds the hot partition with small ones; the optimum is reachable in place."""
    case = {
        "group": "g",
        "members": [
            {"id": "a", "topics": ["t"], "owned": [["t", 0], ["t", 1]]},
            {"id": "b", "topics": ["t"], "owned": [["t", 2], ["t", 3]]},
        ],
        "partitions": [{"topic": "t", "partition": p, "lag": lag} for p, lag in enumerate([90, 5, 50, 45])],
    }
    out = assign(case, "lag-optimal")
    assert out["metrics"]["max_lag"] == 95
    assert out["metrics"]["moves"] == 0


def test_bad_options_are_one_clear_error():
    with pytest.raises(StrategyOptionError, match="max_moves"):
        get_strategy("lag-optimal", max_moves=-1)
    with pytest.raises(StrategyOptionError, match="takes no option"):
        get_strategy("lag", max_moves=3)


def test_refuses_when_balancing_counts_alone_needs_more_moves_than_allowed():
    case = {
        "group": "g",
        "members": [
            {"id": "a", "topics": ["t"], "owned": [["t", p] for p in range(6)]},
            {"id": "b", "topics": ["t"]},
        ],
        "partitions": [{"topic": "t", "partition": p, "lag": 10} for p in range(6)],
    }
    with pytest.raises(StrategyRefusedError, match="needs 3 moves"):
        assign(case, "lag-optimal", max_moves=2)
    assert assign(case, "lag-optimal", max_moves=3)["metrics"]["moves"] == 3
