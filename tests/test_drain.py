"""Planning in time: catch-up metrics, their bound, drain-optimal and the gate in time (pure)."""

from __future__ import annotations

import itertools

import lagassign
import pytest
from groups import cases, check_valid
from hypothesis import given, settings
from hypothesis import strategies as st
from lagassign.core.case import parse_case
from lagassign.core.catchup import (
    duration_text,
    lower_bound_catch_up,
    member_times,
    seconds_to_catch_up,
)
from lagassign.core.errors import CaseError
from lagassign.core.gate import decide
from lagassign.core.strategies import get_strategy
from lagassign.core.strategies.drain_optimal import proportional_counts


@st.composite
def timed_cases(draw, equal: bool = False, still: bool = False, **kw):
    """A case whose members state capacities (equal ones with ``equal``) and whose partitions
    have inflows (none with ``still``)."""
    case = draw(cases(**kw))
    caps = st.just(100.0) if equal else st.sampled_from([50.0, 100.0, 200.0, 400.0])
    for m in case["members"]:
        m["capacity"] = draw(caps)
    if not still:
        for p in case["partitions"]:
            p["rate"] = draw(st.sampled_from([0.0, 0.0, 5.0, 20.0, 60.0]))
    return case


def drop_time(case: dict) -> dict:
    return {
        **case,
        "members": [{k: v for k, v in m.items() if k != "capacity"} for m in case["members"]],
        "partitions": [{k: v for k, v in p.items() if k != "rate"} for p in case["partitions"]],
    }


@settings(max_examples=60)
@given(case=timed_cases(equal=True, still=True))
def test_equal_capacities_and_no_inflow_give_exactly_lag_optimal(case):
    for c in (case, drop_time(case)):
        drain = lagassign.assign(c, "drain-optimal")
        optimal = lagassign.assign(c, "lag-optimal")
        assert drain["assignment"] == optimal["assignment"]
        assert drain["metrics"]["max_lag"] == optimal["metrics"]["max_lag"]


@settings(max_examples=80)
@given(case=timed_cases())
def test_drain_optimal_is_valid_keeps_proportional_counts_and_respects_its_bound(case):
    group = parse_case(case)
    plan = get_strategy("drain-optimal").assign(group)
    check_valid(group, plan.members)
    if group.identical_subscriptions:
        counts = proportional_counts(group)
        for mid, tps in plan.members.items():
            low, high = counts[mid]
            assert low <= len(tps) <= high, (mid, len(tps), counts[mid])
    worst = max(member_times(group, plan.members).values())
    assert worst >= lower_bound_catch_up(group) - 1e-6


@settings(max_examples=60)
@given(case=timed_cases(equal=True))
def test_never_slower_than_lag_optimal_when_counts_agree(case):
    """With equal capacities both keep the same counts; drain-optimal starts from lag-optimal's plan."""
    group = parse_case(case)
    drain = max(member_times(group, get_strategy("drain-optimal").assign(group).members).values())
    lagopt = max(member_times(group, get_strategy("lag-optimal").assign(group).members).values())
    assert drain <= lagopt + 1e-9


@settings(max_examples=60)
@given(case=timed_cases(owned=True), budget=st.integers(0, 3))
def test_max_moves_is_kept_or_refused(case, budget):
    from lagassign.core.errors import StrategyRefusedError
    from lagassign.core.scoring import count_moves

    group = parse_case(case)
    try:
        plan = get_strategy("drain-optimal", max_moves=budget).assign(group)
    except StrategyRefusedError:
        return
    assert count_moves(group, plan) <= budget


def _brute_force_best(group) -> float:
    """The smallest largest catch-up time over every assignment (tiny groups only)."""
    tps = group.assignable
    choices = [group.subscribers[tp.topic] for tp in tps]
    best = float("inf")
    for pick in itertools.product(*choices):
        layout: dict[str, list] = {mid: [] for mid in group.member_ids}
        for tp, mid in zip(tps, pick, strict=True):
            layout[mid].append(tp)
        best = min(best, max(member_times(group, layout).values()))
    return best


@settings(max_examples=60)
@given(case=timed_cases(max_members=3, max_topics=2, max_partitions=3))
def test_the_bound_never_exceeds_the_best_of_all_assignments(case):
    group = parse_case(case)
    assert lower_bound_catch_up(group) <= _brute_force_best(group) + 1e-6


def test_catch_up_time_and_never():
    assert seconds_to_catch_up(600, 0, 10) == 60
    assert seconds_to_catch_up(600, 5, 10) == 120
    assert seconds_to_catch_up(0, 10, 10) == 0  # keeps up
    assert seconds_to_catch_up(1, 10, 10) == float("inf")
    assert seconds_to_catch_up(0, 11, 10) == float("inf")
    assert [duration_text(s) for s in (45, 18 * 60, 7800, None, 3 * 86400)] == [
        "45 s",
        "18 min",
        "2 h 10 min",
        "never",
        "3.0 days",
    ]


UNEQUAL = {
    "group": "g",
    "members": [
        {"id": "slow", "topics": ["t"], "owned": [["t", 0], ["t", 1]], "capacity": 10},
        {"id": "fast", "topics": ["t"], "owned": [["t", 2], ["t", 3]], "capacity": 30},
    ],
    "partitions": [{"topic": "t", "partition": i, "lag": 36_000} for i in range(4)],
}


def test_metrics_in_time_and_the_gate_reason():
    ev = lagassign.evaluate(UNEQUAL)
    by = {r["strategy"]: r for r in ev["results"]}
    cur, drain = by["current"]["metrics"], by["drain-optimal"]["metrics"]
    assert cur["catch_up_s"] == {"fast": 2400.0, "slow": 7200.0} and cur["max_catch_up_s"] == 7200.0
    assert drain["max_catch_up_s"] == drain["lower_bound_catch_up_s"] == 3600.0 and drain["catch_up_optimal"]
    assert not cur["catch_up_optimal"]
    assert by["lag-optimal"]["metrics"]["max_catch_up_s"] == 7200.0  # two and two: slow needs 2 h
    d = decide(ev, threshold=5.0)  # imbalance alone would not go: the target does
    assert not d.go and "max catch-up 2 h" in d.reason
    d = decide(ev, threshold=5.0, max_catch_up_s=3 * 3600)
    assert not d.go  # already within the target
    d = decide(ev, threshold=5.0, max_catch_up_s=1800)
    assert d.go and d.chosen == "drain-optimal"
    assert "drain-optimal lowers max catch-up 2 h → 1 h (−50.0%) with 1 move" in d.reason
    assert "alone" not in d.reason and d.improvement == 0.5
    d = decide(ev, threshold=5.0, max_catch_up_s=1000)  # one partition alone needs 36,000 / 30 s
    assert d.go and "partition t-0 alone needs 20 min whoever reads it" in d.reason


def test_cases_without_capacities_have_no_time_metrics():
    plain = {
        **UNEQUAL,
        "members": [{k: v for k, v in m.items() if k != "capacity"} for m in UNEQUAL["members"]],
    }
    metrics = lagassign.assign(plain, "drain-optimal")["metrics"]
    assert "max_catch_up_s" not in metrics and "catch_up_s" not in metrics


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"rate": -1}, "'rate' must be a non-negative number"),
        ({"rate": "fast"}, "'rate' must be a non-negative number"),
        ({"rate": True}, "'rate' must be a non-negative number"),
    ],
)
def test_bad_rates_are_refused_in_one_line(patch, message):
    case = {**UNEQUAL, "partitions": [{**UNEQUAL["partitions"][0], **patch}]}
    with pytest.raises(CaseError, match=message):
        parse_case(case)


@pytest.mark.parametrize("capacity", [0, -5, "x", float("nan")])
def test_bad_capacities_are_refused_in_one_line(capacity):
    case = {**UNEQUAL, "members": [{**UNEQUAL["members"][0], "capacity": capacity}]}
    with pytest.raises(CaseError, match="'capacity' must be a positive number"):
        parse_case(case)
