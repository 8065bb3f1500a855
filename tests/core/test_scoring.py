"""Metrics of the output contract, and the lower bound on the largest member lag."""

from __future__ import annotations

import lagassign
import pytest
from groups import brute_force_min_max_lag, cases
from hypothesis import given, settings
from lagassign.core.case import parse_case
from lagassign.core.scoring import lower_bound_max_lag


def _case(lags: list[int], members: int = 2, owned: dict[str, list] | None = None) -> dict:
    owned = owned or {}
    return {
        "group": "g",
        "members": [
            {"id": f"C{i}", "topics": ["t0"], "owned": owned.get(f"C{i}", [])} for i in range(members)
        ],
        "partitions": [{"topic": "t0", "partition": p, "lag": lag} for p, lag in enumerate(lags)],
    }


def test_metrics_of_the_readme_example():
    metrics = lagassign.assign(_case([100_000, 50_000, 60_000]), "lag")["metrics"]
    assert metrics == {
        "lag": {"C0": 100_000, "C1": 110_000},
        "count": {"C0": 1, "C1": 2},
        "max_lag": 110_000,
        "mean_lag": 105_000,
        "imbalance": 1.0476,
        "lag_spread": 10_000,
        "count_spread": 1,
        "moves": 0,
        # One member must hold two partitions: at least the two lightest, 110,000.
        "lower_bound_max_lag": 110_000,
        "balanced_lower_bound_max_lag": 110_000,
        "optimal": True,  # the bound is reached: no assignment does better
    }


def test_moves_count_owned_partitions_that_change_owner():
    case = _case([5, 5, 5, 5], owned={"C0": [["t0", 0], ["t0", 1], ["t0", 2]], "C1": [["t0", 3]]})
    assert lagassign.assign(case, "current")["metrics"]["moves"] == 0
    # A partition nobody owned before is not a move.
    fresh = _case([5, 5, 5, 5], owned={"C1": [["t0", 3]]})
    assert lagassign.assign(fresh, "range")["metrics"]["moves"] == 0
    assert lagassign.assign(case, "sticky")["metrics"]["moves"] == 1
    # range gives C0 t0-0, t0-1 and C1 t0-2, t0-3: only t0-2 changes owner.
    assert lagassign.assign(case, "range")["metrics"]["moves"] == 1


def test_zero_lag_everywhere_counts_as_perfect_balance():
    metrics = lagassign.assign(_case([0, 0, 0]), "range")["metrics"]
    assert metrics["imbalance"] == 1.0
    assert metrics["max_lag"] == metrics["lag_spread"] == metrics["lower_bound_max_lag"] == 0


def test_mean_lag_keeps_fractions():
    metrics = lagassign.assign(_case([1, 2], members=2), "range")["metrics"]
    assert metrics["mean_lag"] == 1.5
    assert metrics["imbalance"] == round(2 / 1.5, 4)


def test_empty_members_count_in_the_mean():
    metrics = lagassign.assign(_case([10], members=3), "range")["metrics"]
    assert metrics["count"] == {"C0": 1, "C1": 0, "C2": 0}
    assert metrics["imbalance"] == 3.0
    assert metrics["count_spread"] == 1


@pytest.mark.parametrize(
    ("lags", "members", "bound"),
    [
        ([100, 1, 1], 2, 100),  # the heaviest partition
        ([10, 10, 10, 10], 2, 20),  # the mean
        ([10, 10, 10], 2, 20),  # pigeonhole: someone takes two of the three
        ([9, 8, 7, 6, 5], 2, 18),  # mean 17.5 rounds up; pigeonhole over the top 3 gives 15
        ([5], 4, 5),
    ],
)
def test_lower_bound_on_small_pools(lags, members, bound):
    group = parse_case(_case(lags, members))
    assert lower_bound_max_lag(group) == bound == brute_force_min_max_lag(group)


def test_lower_bound_counts_subscriptions():
    """Partitions only one member may take put a floor under that member's lag."""
    case = {
        "group": "g",
        "members": [{"id": "A", "topics": ["a", "b"]}, {"id": "B", "topics": ["b"]}],
        "partitions": [
            {"topic": "a", "partition": 0, "lag": 50},
            {"topic": "a", "partition": 1, "lag": 50},
            {"topic": "b", "partition": 0, "lag": 10},
        ],
    }
    group = parse_case(case)
    assert lower_bound_max_lag(group) == 100 == brute_force_min_max_lag(group)


@settings(max_examples=150)
@given(case=cases(max_members=3, max_topics=3, max_partitions=8, max_total=8, owned=False))
def test_lower_bound_never_exceeds_the_true_optimum(case):
    """Exhaustive search over every assignment that respects subscriptions (at most 3^8)."""
    group = parse_case(case)
    assert lower_bound_max_lag(group) <= brute_force_min_max_lag(group)


def _respects_subscriptions(case: dict, assignment: dict) -> bool:
    topics = {m["id"]: set(m["topics"]) for m in case["members"]}
    return all(t in topics[mid] for mid, pairs in assignment.items() for t, _ in pairs)


@given(case=cases())
def test_lower_bound_and_best_in_evaluate(case):
    """The bound is below every complete assignment's max lag; ``best`` has the lowest max lag.

    ``current`` may keep partitions of topics a member left: the bound does not cover that.
    """
    evaluation = lagassign.evaluate(case)
    bound = evaluation["lower_bound_max_lag"]
    complete = [r for r in evaluation["results"] if "metrics" in r and "unassigned" not in r]
    assert complete, "at least the count-balancing strategies always assign everything"
    for r in complete:
        if _respects_subscriptions(case, r["assignment"]):
            assert r["metrics"]["max_lag"] >= bound, r["strategy"]
        else:
            assert r["strategy"] == "current"
        assert r["metrics"]["lower_bound_max_lag"] == bound
    # The best is a complete assignment that respects subscriptions, with the lowest max lag.
    eligible = [r for r in complete if _respects_subscriptions(case, r["assignment"])]
    best = next(r for r in eligible if r["strategy"] == evaluation["best"])
    assert best["metrics"]["max_lag"] == min(r["metrics"]["max_lag"] for r in eligible)
