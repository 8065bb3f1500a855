"""The imbalance gate: thresholds, candidate selection, unconsumed partitions, reasons, validation."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from groups import skewed_orders
from hypothesis import given, settings
from hypothesis import strategies as st
from lagassign.core.errors import LagassignError
from lagassign.core.evaluate import evaluate
from lagassign.core.gate import EvaluationShapeError, GateConfigError, GateDecision, decide, decide_all


def res(strategy: str, max_lag: int, moves: int = 0, imbalance: float = 1.0, **extra: Any) -> dict[str, Any]:
    """A strategy result in evaluate_group's shape (only the metrics the gate reads matter)."""
    metrics = {
        "lag": {},
        "count": {},
        "max_lag": max_lag,
        "mean_lag": max_lag / imbalance,
        "imbalance": imbalance,
        "lag_spread": 0,
        "count_spread": 0,
        "moves": moves,
        "lower_bound_max_lag": 0,
    }
    return {"strategy": strategy, "assignment": {}, "metrics": metrics, **extra}


def ev(*results: dict[str, Any], group: str = "g1") -> dict[str, Any]:
    return {
        "group": group,
        "members": 2,
        "partitions": 4,
        "best": None,
        "lower_bound_max_lag": 0,
        "results": list(results),
    }


CURRENT = res("current", 1_000_000, moves=0, imbalance=1.5)


def test_goes_when_unbalanced_and_best_improves_enough() -> None:
    d = decide(ev(CURRENT, res("lag", 900_000, moves=3), res("lag-optimal", 400_000, moves=19)))
    assert d.go and d.chosen == "lag-optimal" == d.candidate
    assert d.current_max_lag == 1_000_000 and d.current_imbalance == 1.5
    assert d.chosen_max_lag == 400_000 and d.moves == 19
    assert d.improvement == pytest.approx(0.6)
    assert d.reason == "lag-optimal lowers max lag 1,000,000 → 400,000 (−60.0%) with 19 moves"


def test_stops_when_imbalance_at_or_below_threshold_and_still_measures_the_candidate() -> None:
    at = decide(ev(res("current", 1000, imbalance=1.1), res("lag", 500, moves=2)))
    assert not at.go and at.chosen is None
    assert at.reason == "current imbalance 1.10 ≤ threshold 1.10"
    assert at.candidate == "lag" and at.chosen_max_lag == 500 and at.improvement == pytest.approx(0.5)
    just_above = decide(ev(res("current", 1000, imbalance=1.1001), res("lag", 500, moves=2)))
    assert just_above.go


def test_threshold_is_configurable() -> None:
    e = ev(res("current", 1000, imbalance=1.3), res("lag", 500, moves=2))
    assert decide(e, threshold=1.2).go
    d = decide(e, threshold=1.5)
    assert not d.go and d.reason == "current imbalance 1.30 ≤ threshold 1.50"


def test_improvement_below_minimum_stops_and_exact_minimum_goes() -> None:
    below = decide(ev(CURRENT, res("lag", 960_000, moves=4)))
    assert not below.go and below.candidate == "lag" and below.chosen is None
    assert below.reason == (
        "lag lowers max lag 1,000,000 → 960,000 (−4.0%) with 4 moves, below the minimum improvement 5.0%"
    )
    exact = decide(ev(res("current", 100, imbalance=2.0), res("lag", 95, moves=1)))
    assert exact.go and exact.reason == "lag lowers max lag 100 → 95 (−5.0%) with 1 move"
    six = decide(ev(res("current", 100, imbalance=2.0), res("lag", 95, moves=1)), min_improvement=0.06)
    assert not six.go and six.reason.endswith("below the minimum improvement 6.0%")


def test_percentages_that_round_alike_are_told_apart() -> None:
    d = decide(ev(res("current", 100_000, imbalance=2.0), res("lag", 95_001, moves=1)))
    assert not d.go
    assert "(−4.999%)" in d.reason and "minimum improvement 5.000%" in d.reason


def test_no_improvement_stops_even_with_zero_minimum() -> None:
    d = decide(ev(CURRENT, res("lag", 1_000_000, moves=5)), min_improvement=0.0)
    assert not d.go
    assert d.reason == "no candidate lowers max lag below 1,000,000 (best: lag, 1,000,000)"


def test_best_is_lowest_max_lag_then_fewest_moves_then_evaluation_order() -> None:
    d = decide(
        ev(
            CURRENT,
            res("a", 500, moves=9),
            res("b", 400, moves=9),
            res("c", 400, moves=3),
            res("d", 400, moves=3),
        )
    )
    assert d.chosen == "c" and d.moves == 3


def test_max_moves_filters_candidates() -> None:
    e = ev(CURRENT, res("lag-optimal", 400_000, moves=19), res("lag", 700_000, moves=5))
    d = decide(e, max_moves=10)
    assert d.go and d.chosen == "lag" and d.moves == 5
    assert decide(e, max_moves=19).chosen == "lag-optimal"
    none = decide(e, max_moves=4)
    assert not none.go and none.candidate is None
    assert none.reason == "no candidate within max_moves 4 (fewest: lag with 5 moves)"


def test_max_moves_zero_allows_only_plans_that_move_nothing() -> None:
    d = decide(ev(CURRENT, res("sticky", 800_000, moves=0), res("lag", 400_000, moves=2)), max_moves=0)
    assert d.go and d.chosen == "sticky" and d.moves == 0


def test_refused_incomplete_and_current_are_never_candidates() -> None:
    e = ev(
        CURRENT,
        {"strategy": "constrained-sticky", "refused": "mixed subscriptions"},
        res("range", 100, moves=1, unassigned=[["t", 3]]),
        res("lag", 600_000, moves=2),
    )
    d = decide(e)
    assert d.chosen == "lag"
    only_bad = decide(ev(CURRENT, {"strategy": "x", "refused": "no"}, res("y", 1, unassigned=[["t", 0]])))
    assert not only_bad.go and only_bad.reason == "no strategy produced a complete assignment"


def test_withheld_partitions_do_not_disqualify_a_candidate() -> None:
    d = decide(ev(CURRENT, res("cooperative-sticky", 500_000, moves=2, withheld=[["t", 1]])))
    assert d.go and d.chosen == "cooperative-sticky"


def test_strategies_restricts_candidates() -> None:
    e = ev(CURRENT, res("lag-optimal", 400_000, moves=19), res("lag", 700_000, moves=5))
    assert decide(e, strategies=["lag"]).chosen == "lag"
    assert decide(e, strategies=("lag", "current")).chosen == "lag"
    d = decide(e, strategies=["fair"])
    assert not d.go and d.reason == "none of the allowed strategies (fair) was evaluated"


def test_missing_or_refused_baseline_stops() -> None:
    missing = decide(ev(res("lag", 1)))
    assert not missing.go
    assert missing.reason == "no current assignment was evaluated: nothing to compare against"
    refused = decide(ev({"strategy": "current", "refused": "owner unknown"}, res("lag", 1)))
    assert not refused.go and refused.reason == "current assignment could not be measured: owner unknown"


def test_unconsumed_partitions_go_with_a_complete_plan_whatever_the_imbalance() -> None:
    current = res("current", 100, imbalance=1.0, unassigned=[["t", 2], ["t", 3]])
    d = decide(ev(current, res("lag", 300, moves=0)), threshold=5.0, min_improvement=0.9)
    assert d.go and d.chosen == "lag" and d.unconsumed == 2
    assert d.reason == (
        "current assignment leaves 2 partitions unconsumed; lag consumes all with max lag 300 and 0 moves"
    )
    assert d.improvement == pytest.approx(-2.0)


def test_unconsumed_partitions_without_a_complete_plan_stop() -> None:
    current = res("current", 0, imbalance=1.0, unassigned=[["t", 0]])
    d = decide(ev(current, res("lag", 10, moves=3)), max_moves=1)
    assert not d.go
    assert d.reason == (
        "current assignment leaves 1 partition unconsumed, but no candidate within "
        "max_moves 1 (fewest: lag with 3 moves)"
    )


def timed(
    strategy: str, catch_up_s: float | None, moves: int = 0, imbalance: float = 1.0, **more: Any
) -> dict[str, Any]:
    """A result of a group planned in time (every member has a capacity): its max catch-up seconds."""
    result = res(strategy, 1000, moves=moves, imbalance=imbalance)
    result["metrics"].update(max_catch_up_s=catch_up_s, **more)
    return result


def test_a_group_planned_in_time_is_judged_by_catch_up_time() -> None:
    late = timed("current", 7200.0, imbalance=1.5)
    d = decide(ev(late, timed("lag", 3600.0, moves=2)))
    assert d.go and d.improvement == 0.5
    assert d.reason == "lag lowers max catch-up 2 h → 1 h (−50.0%) with 2 moves"
    same = decide(ev(late, timed("lag", 7200.0)))
    assert not same.go
    assert same.reason == "no candidate catches up sooner than 2 h (best: lag, max catch-up 2 h → 2 h)"
    small = decide(ev(late, timed("lag", 7000.0, moves=1)))
    assert not small.go and small.improvement == pytest.approx(200 / 7200)
    assert small.reason == (
        "lag lowers max catch-up 2 h → 1 h 57 min (−2.8%) with 1 move, below the minimum improvement 5.0%"
    )
    never = decide(ev(timed("current", None, imbalance=1.5), timed("lag", 60.0, moves=1)))
    assert never.go and never.improvement == 1.0
    assert never.reason == "lag lowers max catch-up never → 1 min (−100.0%) with 1 move"


def test_a_group_in_time_within_its_target_stops_and_a_slow_partition_is_named() -> None:
    quiet = decide(ev(timed("current", 100.0), timed("lag", 50.0)), max_catch_up_s=600)
    assert not quiet.go
    assert quiet.reason == "current max catch-up 2 min ≤ target 10 min and imbalance 1.00 ≤ threshold 1.10"
    slow = timed("current", 7200.0, slowest_partition="t-0", slowest_partition_s=5000.0)
    d = decide(ev(slow, timed("lag", 5000.0, moves=1)), max_catch_up_s=3600)
    assert d.go and d.reason == (
        "lag lowers max catch-up 2 h → 1 h 23 min (−30.6%) with 1 move; partition t-0 alone needs "
        "1 h 23 min whoever reads it, so no plan meets the target 1 h"
    )


def test_real_evaluation_of_a_case() -> None:
    """Through the real strategies: a skewed group goes, and the chosen plan is the best complete one."""
    case = skewed_orders([900_000, 85_738, 100, 392_358])
    e = evaluate(case)
    d = decide(e)
    current = next(r for r in e["results"] if r["strategy"] == "current")["metrics"]
    complete = [
        r["metrics"]["max_lag"]
        for r in e["results"]
        if r["strategy"] != "current" and "metrics" in r and "unassigned" not in r
    ]
    assert d.go and d.group == "orders"
    assert d.current_max_lag == current["max_lag"] == 985_838
    assert d.chosen_max_lag == min(complete) == 900_100
    assert d.reason.startswith(f"{d.chosen} lowers max lag 985,838 → 900,100 (−8.7%)")
    json.dumps(d.to_dict())  # XCom and the audit store need it plain


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"threshold": 0.99}, "threshold must be a number ≥ 1.0"),
        ({"threshold": math.nan}, "threshold must be a number ≥ 1.0"),
        ({"threshold": True}, "threshold must be a number ≥ 1.0"),
        ({"threshold": "1.2"}, "threshold must be a number ≥ 1.0"),
        ({"min_improvement": 1.0}, "min_improvement must be a fraction in [0, 1)"),
        ({"min_improvement": -0.01}, "min_improvement must be a fraction in [0, 1)"),
        ({"min_improvement": math.inf}, "min_improvement must be a fraction in [0, 1)"),
        ({"max_moves": -1}, "max_moves must be a whole number ≥ 0"),
        ({"max_moves": 2.5}, "max_moves must be a whole number ≥ 0"),
        ({"max_moves": True}, "max_moves must be a whole number ≥ 0"),
        ({"strategies": "lag"}, "strategies must be a list of strategy names"),
        ({"strategies": []}, "strategies must name at least one strategy"),
    ],
)
def test_bad_parameters_raise_one_clear_line(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(GateConfigError) as info:
        decide(ev(CURRENT, res("lag", 1)), **kwargs)
    assert isinstance(info.value, LagassignError)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_boundary_parameters_are_accepted() -> None:
    d = decide(ev(CURRENT, res("lag", 1, moves=0)), threshold=1.0, min_improvement=0.0, max_moves=0)
    assert d.go and (d.threshold, d.min_improvement, d.max_moves) == (1.0, 0.0, 0)


@pytest.mark.parametrize("bad", [None, {"results": []}, {"group": "g"}, {"group": "g", "results": [{}]}])
def test_malformed_evaluation_is_a_clear_error(bad: Any) -> None:
    with pytest.raises(EvaluationShapeError):
        decide(bad)


def test_decide_all_keeps_order_and_validates_once() -> None:
    a = ev(CURRENT, res("lag", 400_000, moves=1), group="a")
    b = ev(res("current", 10, imbalance=1.0), res("lag", 5), group="b")
    decisions = decide_all([a, b])
    assert [(d.group, d.go) for d in decisions] == [("a", True), ("b", False)]
    with pytest.raises(GateConfigError):
        decide_all([], threshold=0.5)


# Property: whatever the evaluation, a "go" respects every rule and picks the best candidate.
_names = st.sampled_from(["range", "sticky", "fair", "lag", "lag-aware", "lag-optimal"])
_result = st.builds(
    lambda name, lag, moves, incomplete, refused: (
        {"strategy": name, "refused": "no"}
        if refused
        else res(name, lag, moves=moves, **({"unassigned": [["t", 0]]} if incomplete else {}))
    ),
    _names,
    st.integers(0, 10**9),
    st.integers(0, 50),
    st.booleans(),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(
    cur_lag=st.integers(0, 10**9),
    cur_imb=st.floats(1.0, 4.0),
    cur_unconsumed=st.booleans(),
    others=st.lists(_result, max_size=8),
    threshold=st.floats(1.0, 2.0),
    min_improvement=st.floats(0.0, 0.99),
    max_moves=st.none() | st.integers(0, 50),
)
def test_go_respects_every_rule(
    cur_lag: int,
    cur_imb: float,
    cur_unconsumed: bool,
    others: list[dict[str, Any]],
    threshold: float,
    min_improvement: float,
    max_moves: int | None,
) -> None:
    extra = {"unassigned": [["t", 9]]} if cur_unconsumed else {}
    current = res("current", cur_lag, imbalance=cur_imb, **extra)
    d = decide(ev(current, *others), threshold, min_improvement, max_moves)
    assert isinstance(d, GateDecision) and d.reason and "\n" not in d.reason
    eligible = [
        r
        for r in others
        if "metrics" in r
        and "unassigned" not in r
        and (max_moves is None or r["metrics"]["moves"] <= max_moves)
    ]
    if eligible:
        best = min(r["metrics"]["max_lag"] for r in eligible)
        assert d.chosen_max_lag == best
        assert d.moves == min(r["metrics"]["moves"] for r in eligible if r["metrics"]["max_lag"] == best)
    else:
        assert not d.go and d.candidate is None
    if d.go:
        assert d.chosen == d.candidate and d.chosen is not None
        if max_moves is not None:
            assert d.moves <= max_moves
        if not cur_unconsumed:
            assert cur_imb > threshold
            assert d.chosen_max_lag < cur_lag
            assert d.improvement >= min_improvement - 1e-9
    else:
        assert d.chosen is None
