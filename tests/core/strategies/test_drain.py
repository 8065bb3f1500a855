"""Planning in time: catch-up metrics, their bound, drain-optimal and the gate in time (pure)."""

from __future__ import annotations

import itertools

import lagassign
import pytest
from benchcases import drain_case
from groups import cases, check_valid
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from lagassign.core.case import parse_case
from lagassign.core.catchup import (
    duration_text,
    lower_bound_catch_up,
    member_times,
    seconds_to_catch_up,
)
from lagassign.core.errors import CaseError, StrategyRefusedError
from lagassign.core.exact.drain_bounds import balanced_counts, proportional_counts
from lagassign.core.gate import decide
from lagassign.core.strategies import get_strategy, strategy_names


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


def _count_rules(group) -> list[dict]:
    """drain-optimal's count rules, tables of (fewest, most) per member of which a plan keeps one:
    in proportion to capacity, or lag-optimal's floor(P/N) / ceil(P/N); none with mixed
    subscriptions (every plan is allowed)."""
    if not group.identical_subscriptions:
        return []
    return [proportional_counts(group), balanced_counts(group)]


def _within(group, rules: list[dict], sizes: dict) -> bool:
    """Whether members holding ``sizes`` partitions (member -> count) keep one of ``rules``."""
    return not rules or any(
        all(counts[m][0] <= sizes.get(m, 0) <= counts[m][1] for m in group.member_ids) for counts in rules
    )


def _keeps_count_rules(group, members: dict) -> bool:
    """Whether a layout keeps drain-optimal's count rules: free with mixed subscriptions,
    else in proportion to capacity or lag-optimal's floor(P/N) / ceil(P/N)."""
    return _within(group, _count_rules(group), {m: len(tps) for m, tps in members.items()})


@settings(max_examples=80)
@given(case=timed_cases())
def test_drain_optimal_is_valid_keeps_its_count_rules_and_respects_its_bound(case):
    group = parse_case(case)
    plan = get_strategy("drain-optimal").assign(group)
    check_valid(group, plan.members)
    assert _keeps_count_rules(group, plan.members)
    worst = max(member_times(group, plan.members).values())
    assert worst >= lower_bound_catch_up(group) - 1e-6


def _catch_up(group, members: dict) -> float:
    return max(member_times(group, members).values())


@settings(max_examples=100, deadline=None)
@given(case=timed_cases(max_members=4, max_partitions=6, max_total=12))
def test_drain_optimal_never_catches_up_later_than_any_strategy_under_its_rules(case):
    """Issue 28, item 18: on small groups with unequal capacities and inflow, no strategy whose
    plan keeps drain-optimal's count rules (lag-optimal's always does) catches up sooner."""
    group = parse_case(case)
    assume(len({m.capacity for m in group.members}) > 1)
    drain = _catch_up(group, get_strategy("drain-optimal").assign(group).members)
    for name in strategy_names():
        if name in ("drain-optimal", "current"):  # current may leave partitions to nobody
            continue
        try:
            plan = get_strategy(name).assign(group)
        except StrategyRefusedError:  # e.g. constrained-sticky with mixed subscriptions
            continue
        if plan.withheld or not _keeps_count_rules(group, plan.members):
            continue
        assert drain <= _catch_up(group, plan.members) * (1 + 1e-9), name


@settings(max_examples=40, deadline=None)
@given(case=timed_cases(max_members=6, max_partitions=12, max_total=40))
def test_drain_optimal_never_catches_up_later_than_lag_optimal(case):
    """Beyond the exact search's size too: lag-optimal's plan is one drain-optimal searches from."""
    group = parse_case(case)
    drain = _catch_up(group, get_strategy("drain-optimal").assign(group).members)
    assert drain <= _catch_up(group, get_strategy("lag-optimal").assign(group).members) * (1 + 1e-9)


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


def _best_under_count_rules(group, counts: dict | None = None) -> float:
    """The smallest largest catch-up time of every plan under drain-optimal's count rules (or
    under ``counts`` alone, (fewest, most) per member)."""
    rules = _count_rules(group) if counts is None else [counts]
    tps = group.assignable
    members = group.member_ids
    readers = [[m for m in members if tp.topic in group.topics_of[m]] for tp in tps]
    allowed: dict[tuple[int, ...], bool] = {}  # partitions per member -> within the rules
    best = float("inf")
    for owners in itertools.product(*readers):
        sizes = tuple(owners.count(m) for m in members)
        if sizes not in allowed:
            allowed[sizes] = _within(group, rules, dict(zip(members, sizes, strict=True)))
        if not allowed[sizes]:
            continue
        layout = {m: [tp for tp, o in zip(tps, owners, strict=True) if o == m] for m in members}
        best = min(best, max(member_times(group, layout).values()))
    return best


@settings(max_examples=60, deadline=None)
@given(timed_cases(max_members=3, max_partitions=9, max_total=9))
def test_small_groups_are_planned_at_the_proven_optimum(case):
    """Up to 16 partitions drain-optimal's exact search settles the plan: its largest catch-up
    time is the best of every plan under its count rules (all enumerated here), and where the
    search proved it the metrics say ``catch_up_optimal``."""
    group = parse_case(case)
    plan = get_strategy("drain-optimal").assign(group)
    best = _best_under_count_rules(group)
    got = max(member_times(group, plan.members).values())
    if best == float("inf"):
        assert got == float("inf")
        return
    assert got <= best * (1 + 1e-9)
    if getattr(plan, "proven_catch_up", False):
        assert lagassign.assign(case, "drain-optimal")["metrics"]["catch_up_optimal"] is True


def _skewed_case(rnd, members: int, partitions: int) -> dict:
    """A bench-like group: lognormal lags, some inflow, capacities of 1x, 2x and 4x a base."""
    rates = [round(rnd.lognormvariate(2, 1), 3) if rnd.random() < 0.4 else 0.0 for _ in range(partitions)]
    base = max(1.0, sum(rates) * 2 / members)
    return {
        "group": "g",
        "members": [
            {"id": f"c{i}", "topics": ["t"], "capacity": base * rnd.choice([1, 2, 4])} for i in range(members)
        ],
        "partitions": [
            {"topic": "t", "partition": p, "lag": int(rnd.lognormvariate(8, 1.5)), "rate": min(r, base / 2)}
            for p, r in enumerate(rates)
        ],
    }


def test_the_exact_search_beats_the_local_search_where_it_stops_short(monkeypatch):
    """On seeded 3 x 10 groups the plan is the enumerated optimum, proved; without the exact
    search (its size limit set to 0) the local search alone misses it in some of them."""
    import random

    from lagassign.core.exact import drain_branch as drain_exact
    from lagassign.core.strategies import drain_optimal

    rnd = random.Random(6)
    cases_ = [_skewed_case(rnd, 3, 10) for _ in range(12)]
    groups = [parse_case(c) for c in cases_]
    best = [_best_under_count_rules(g) for g in groups]
    for group, optimum in zip(groups, best, strict=True):
        plan = get_strategy("drain-optimal").assign(group)
        assert plan.proven_catch_up
        assert max(member_times(group, plan.members).values()) <= optimum * (1 + 1e-9)
    monkeypatch.setattr(drain_optimal, "MAX_PARTITIONS", 0)
    assert drain_exact.MAX_PARTITIONS == 16
    short = sum(
        max(member_times(g, get_strategy("drain-optimal").assign(parse_case(c)).members).values())
        > optimum * (1 + 1e-9)
        for c, g, optimum in zip(cases_, groups, best, strict=True)
    )
    assert short > 0


def test_the_milp_bisection_finds_the_enumerated_optimum_and_proves_it():
    """drain_milp's bisection (HiGHS), from the bound up to a poor plan's time, ends at the
    enumerated optimum under the count rules and certifies it."""
    pytest.importorskip("highspy")
    import random

    from lagassign.core.exact.drain_bounds import drain_lower_bound
    from lagassign.core.exact.drain_milp import bisect_drain

    rnd = random.Random(4)
    for _ in range(6):
        group = parse_case(_skewed_case(rnd, 3, 9))
        optimum = _best_under_count_rules(group)
        bound = drain_lower_bound(group)
        result = bisect_drain(group, proportional_counts(group), optimum * 1.5, bound, budget=60.0)
        assert result.proven and result.layout is not None
        assert result.upper == pytest.approx(optimum, rel=1e-6)
        assert bound <= result.lower <= optimum * (1 + 1e-9)
        assert max(member_times(group, result.layout).values()) == pytest.approx(optimum, rel=1e-6)
        counts = proportional_counts(group)
        assert all(counts[m][0] <= len(tps) <= counts[m][1] for m, tps in result.layout.items())


def test_exact_budget_polishes_larger_groups_and_certifies_a_bound():
    """With ``exact_budget`` drain-optimal's plan is never slower, keeps its count rules, carries a
    certified bound at or above its own, and is proved optimal where the bound alone is short
    (seed 15, 8 x 40: groups 10 to 12 of those bench/drain.py measures, whose bound is short)."""
    pytest.importorskip("highspy")
    import random

    from lagassign.core.exact.drain_bounds import drain_lower_bound

    rnd = random.Random(15)
    for _ in range(40):  # the bench's 4 x 12 groups come first
        drain_case(rnd, 4, 12)
        rnd.random()
    proved = 0
    for i in range(13):
        case = drain_case(rnd, 8, 40)
        rnd.random()  # the bench draws the seed of its equal-capacity twin here
        if i < 10:
            continue
        group = parse_case(case)
        plain = get_strategy("drain-optimal").assign(group)
        polished = get_strategy("drain-optimal", exact_budget=2.0).assign(parse_case(case))
        before = max(member_times(group, plain.members).values())
        after = max(member_times(group, polished.members).values())
        assert after <= before * (1 + 1e-9)
        assert _keeps_count_rules(group, polished.members)
        check_valid(group, polished.members)
        bound = drain_lower_bound(group)
        if polished.catch_up_bound is not None:
            assert bound <= polished.catch_up_bound <= after * (1 + 1e-9)
        if polished.proven_catch_up:
            proved += 1
            assert after <= polished.catch_up_bound * (1 + 1e-6)
        assert plain.catch_up_bound is None and not plain.proven_catch_up
    assert proved >= 1


def test_exact_budget_is_checked_and_keeps_lag_optimal_where_time_plays_no_part():
    for bad in (-1, True, "2", float("inf")):
        with pytest.raises(Exception, match="exact_budget"):
            get_strategy("drain-optimal", exact_budget=bad)
    pytest.importorskip("highspy")
    import random

    rnd = random.Random(2)
    case = _skewed_case(rnd, 5, 30)
    for m in case["members"]:
        m["capacity"] = 100.0
    for p in case["partitions"]:
        p["rate"] = 0.0
    a = get_strategy("drain-optimal", exact_budget=5.0).assign(parse_case(case)).members
    b = get_strategy("lag-optimal", exact_budget=5.0).assign(parse_case(case)).members
    assert a == b


def test_the_heavy_partition_bound_never_passes_the_optimum_and_closes_the_hot_partition_gap():
    """``drain_exact.heavy_bound`` for every size of the heavy set stays at or below the
    enumerated optimum under the count rules (it is a bound); and where a hot partition's
    member must take more partitions by its count, it reaches the plan (the pooled bound
    does not)."""
    import random

    from lagassign.core.exact.drain_bounds import counts_lower_bound, drain_lower_bound
    from lagassign.core.exact.drain_branch import heavy_bound

    rnd = random.Random(9)
    for _ in range(8):
        group = parse_case(_skewed_case(rnd, 3, 8))
        for counts in (proportional_counts(group), balanced_counts(group)):
            optimum = _best_under_count_rules(group, counts)
            for heavy in range(1, 9):
                found = heavy_bound(group, counts, heavy)
                assert found is not None and found <= optimum * (1 + 1e-9)
        assert drain_lower_bound(group) <= _best_under_count_rules(group) * (1 + 1e-9)
    # one hot partition of 60,000 and 11 of 100, two members of 10/s and 30/s: with counts in
    # proportion (3 and 9) the fast member takes the hot one and 8 more, (60,000 + 800) / 30 s
    # at best; lag-optimal's counts (6 and 6) let it take only 5 more: (60,000 + 500) / 30 s
    hot = {
        "group": "g",
        "members": [
            {"id": "slow", "topics": ["t"], "capacity": 10},
            {"id": "fast", "topics": ["t"], "capacity": 30},
        ],
        "partitions": [{"topic": "t", "partition": p, "lag": 60_000 if p == 0 else 100} for p in range(12)],
    }
    group = parse_case(hot)
    plan = get_strategy("drain-optimal").assign(group)
    assert max(member_times(group, plan.members).values()) == pytest.approx(60_500 / 30)
    assert sorted(len(tps) for tps in plan.members.values()) == [6, 6]
    assert lower_bound_catch_up(group) == pytest.approx(60_000 / 30)
    assert counts_lower_bound(group, proportional_counts(group)) == pytest.approx(60_800 / 30)
    assert drain_lower_bound(group) == pytest.approx(60_500 / 30)


def test_the_pool_bound_of_mixed_subscriptions_is_a_bound_and_sees_a_crowded_topic():
    """``readers_drain_bound``: lag of topics that only some members read drains through them alone. It
    never passes the enumerated optimum, and on a topic read by one slow member it is that
    member's time where the metrics' bound sees one partition at a time."""
    import random

    from lagassign.core.exact.drain_bounds import drain_lower_bound, readers_drain_bound

    rnd = random.Random(5)
    for _ in range(8):
        case = _skewed_case(rnd, 3, 7)
        for p in case["partitions"]:
            p["topic"] = rnd.choice(["a", "b"])
        for i, p in enumerate(case["partitions"]):
            p["partition"] = i
        case["members"][0]["topics"] = ["a"]
        case["members"][1]["topics"] = ["a", "b"]
        case["members"][2]["topics"] = ["b"]
        group = parse_case(case)
        optimum = _best_under_count_rules(group)
        assert readers_drain_bound(group) <= optimum * (1 + 1e-9)
        assert drain_lower_bound(group) <= optimum * (1 + 1e-9)
    crowded = {
        "group": "g",
        "members": [
            {"id": "slow", "topics": ["a", "b"], "capacity": 10},
            {"id": "fast", "topics": ["b"], "capacity": 90},
        ],
        "partitions": [
            {"topic": "a", "partition": 0, "lag": 500},
            {"topic": "a", "partition": 1, "lag": 500},
            {"topic": "b", "partition": 0, "lag": 100},
        ],
    }
    group = parse_case(crowded)
    assert lower_bound_catch_up(group) == pytest.approx(500 / 10)  # one partition on its reader
    assert readers_drain_bound(group) == pytest.approx(1_000 / 10)
    plan = get_strategy("drain-optimal").assign(group)
    assert max(member_times(group, plan.members).values()) == pytest.approx(100.0)
