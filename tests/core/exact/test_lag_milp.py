"""Certified plans (issue 17): the count-rules bound, the ``optimal`` metric, lag-optimal's
re-splits and its optional exact polish (HiGHS, the ``certify`` extra)."""

from __future__ import annotations

import itertools

import lagassign
import pytest
from groups import cases, check_valid, kafka_balance_violation
from hypothesis import given, settings
from lagassign.core.case import parse_case
from lagassign.core.errors import StrategyOptionError
from lagassign.core.exact import lag_milp as exact_module
from lagassign.core.exact.lag_milp import solver_available
from lagassign.core.model import GroupSnapshot
from lagassign.core.report import evaluation_table
from lagassign.core.scoring import balanced_lower_bound_max_lag, count_range, lower_bound_max_lag, score
from lagassign.core.strategies import get_strategy


def _case(lags: list[int], members: int = 4, name: str = "g") -> dict:
    return {
        "group": name,
        "members": [{"id": f"{name}-c{i}", "topics": ["t"]} for i in range(members)],
        "partitions": [{"topic": "t", "partition": p, "lag": lag} for p, lag in enumerate(lags)],
    }


# Seeded groups of bench/certify.py where the old search stopped short (4 members each).
LOGNORMAL_4x19 = [24638, 51263, 17076, 3957, 57, 12761, 31158, 9466, 159, 7116, 5034, 760, 26534, 7297,
                  1255, 8970, 433, 465, 1282]  # fmt: skip  # optimum 52,462 (old plan 52,774)
ZIPF_4x16 = [7539911, 2314198, 952411, 1878495, 1048139, 3141961, 4643852, 9305324, 1679631, 1855081,
             2646752, 2025271, 1027439, 474465, 477603, 661755]  # fmt: skip  # optimum 10,919,147


def brute_force_balanced(group: GroupSnapshot, count_slack: int = 0) -> int | None:
    """Smallest max member lag over the assignments lag-optimal may return: counts within
    count_range (identical subscriptions) or Kafka's balance condition (mixed)."""
    lag, tps = group.lag, group.assignable
    choices = [group.subscribers[tp.topic] for tp in tps]
    low, high = count_range(group, count_slack)
    best = None
    for pick in itertools.product(*choices):
        members = {mid: [] for mid in group.member_ids}
        for tp, mid in zip(tps, pick, strict=True):
            members[mid].append(tp)
        if group.identical_subscriptions:
            if not all(low <= len(v) <= high for v in members.values()):
                continue
        elif count_slack == 0 and kafka_balance_violation(group, members) is not None:
            continue
        worst = max(sum(lag[tp] for tp in v) for v in members.values())
        best = worst if best is None else min(best, worst)
    return best


@settings(max_examples=150)
@given(cases(max_members=3, max_topics=3, max_partitions=4, max_total=7))
def test_balanced_bound_never_exceeds_the_optimum_under_the_count_rules(case):
    group = parse_case(case)
    best = brute_force_balanced(group)
    bound = balanced_lower_bound_max_lag(group)
    assert lower_bound_max_lag(group) <= bound
    assert best is None or bound <= best


@settings(max_examples=80)
@given(cases(max_members=3, max_topics=2, max_partitions=4, subscriptions="identical", max_total=7))
def test_balanced_bound_with_count_slack(case):
    group = parse_case(case)
    for slack in (1, 2):
        assert balanced_lower_bound_max_lag(group, slack) <= brute_force_balanced(group, slack)


def test_bound_sees_what_counts_force_on_a_hot_partition():
    # Three members, six partitions: the hot one's member must still take a second partition.
    group = parse_case(_case([1_000, 10, 10, 10, 10, 10], members=3))
    assert lower_bound_max_lag(group) == 1_000
    assert balanced_lower_bound_max_lag(group) == 1_010


def test_optimal_metric():
    out = lagassign.evaluate(_case([1_000, 10, 10, 10, 10, 10], members=3))
    metrics = {r["strategy"]: r.get("metrics") for r in out["results"]}
    assert metrics["lag-optimal"]["optimal"] is True
    assert metrics["lag-optimal"]["balanced_lower_bound_max_lag"] == 1_010
    assert metrics["lag-optimal"]["lower_bound_max_lag"] == out["lower_bound_max_lag"] == 1_000
    table = evaluation_table(out)
    assert "1,010 for count-balanced plans" in table.splitlines()[0]
    row = next(line for line in table.splitlines() if line.startswith("lag-optimal"))
    assert row.split()[2:4] == ["1.000", "yes"]


def test_a_plan_leaving_partitions_unconsumed_is_never_optimal():
    case = _case([5, 5, 5], members=2)
    case["members"][0]["owned"] = [["t", 0]]
    out = lagassign.assign(case, "current")
    assert "unassigned" in out and out["metrics"]["optimal"] is False


@pytest.mark.parametrize(("lags", "optimum"), [(LOGNORMAL_4x19, 52_462), (ZIPF_4x16, 10_919_147)])
def test_resplits_reach_the_optimum_where_pairwise_exchanges_stop(lags, optimum):
    out = lagassign.assign(_case(lags, name="g1-zipf"), "lag-optimal")
    assert out["metrics"]["max_lag"] <= optimum * 1.001
    if lags is ZIPF_4x16:
        assert out["metrics"]["max_lag"] == optimum == out["metrics"]["balanced_lower_bound_max_lag"]
        assert out["metrics"]["optimal"] is True


@settings(max_examples=60)
@given(cases(max_members=6, max_topics=4, max_partitions=8, subscriptions="mixed"))
def test_count_slack_keeps_kafka_balance_with_mixed_subscriptions(case):
    group = parse_case(case)
    if group.identical_subscriptions:
        return  # there count_slack relaxes counts on purpose
    members = get_strategy("lag-optimal", count_slack=2).assign(group).members
    assert kafka_balance_violation(group, members) is None


def test_exact_budget_is_checked_and_needs_the_solver(monkeypatch):
    for bad in (-1, True, "5", float("nan"), float("inf")):
        with pytest.raises(StrategyOptionError, match="exact_budget"):
            get_strategy("lag-optimal", exact_budget=bad)
    monkeypatch.setattr(exact_module, "solver_available", lambda: False)  # highspy is installed here
    for name in ("lag-optimal", "drain-optimal"):
        with pytest.raises(StrategyOptionError, match="certify"):
            get_strategy(name, exact_budget=1)
    get_strategy("lag-optimal", exact_budget=0)  # 0: off, no solver needed


needs_solver = pytest.mark.skipif(not solver_available(), reason="needs the certify extra (highspy)")


@needs_solver
def test_exact_polish_proves_or_improves():
    case = _case(LOGNORMAL_4x19)
    out = lagassign.assign(case, "lag-optimal", exact_budget=10)
    assert out["metrics"]["max_lag"] == 52_462
    assert out["metrics"]["optimal"] is True
    assert out["metrics"]["balanced_lower_bound_max_lag"] < 52_462  # proven by the solver, not the bound


@needs_solver
@settings(max_examples=40, deadline=None)
@given(cases(max_members=4, max_topics=3, max_partitions=5))
def test_exact_polish_keeps_every_guarantee(case):
    group = parse_case(case)
    plain = get_strategy("lag-optimal").assign(group)
    polished = get_strategy("lag-optimal", exact_budget=5).assign(group)
    check_valid(group, polished.members)
    assert kafka_balance_violation(group, polished.members) is None
    metrics = score(group, polished)
    assert metrics["max_lag"] <= score(group, plain)["max_lag"]
    assert metrics["optimal"] is True  # groups this small are solved within the budget
    budget = 1
    capped = get_strategy("lag-optimal", exact_budget=5, max_moves=budget)
    try:
        members = capped.assign(group).members
    except lagassign.core.errors.StrategyRefusedError:
        return
    moved = sum(1 for tp, mid in group.owner.items() if tp not in members.get(mid, []))
    assert moved <= budget


@needs_solver
def test_cli_exact_budget(cli, case_file):
    done = cli("evaluate", "--exact-budget", "2", case_file(_case(LOGNORMAL_4x19)))
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("lag-optimal"))
    assert "yes" in row.split()
    bad = cli("assign", "--strategy", "lag-optimal", "--exact-budget", "-1", case_file(_case([1, 2])))
    assert bad.returncode == 2 and "seconds" in bad.stderr


def test_docstring_worked_example():
    two = _case([8, 7, 6, 5, 4, 2], members=2)
    out = lagassign.assign(two, "lag-optimal")
    assert sorted(out["metrics"]["lag"].values()) == [16, 16] and out["metrics"]["optimal"] is True
    three = lagassign.assign(_case([100, 40, 35, 30, 20, 5], members=3), "lag-optimal")["metrics"]
    assert (three["lower_bound_max_lag"], three["balanced_lower_bound_max_lag"], three["max_lag"]) == (
        100,
        105,
        105,
    )
    assert three["optimal"] is True
