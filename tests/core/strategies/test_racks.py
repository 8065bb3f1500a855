"""Racks (KIP-881) in cases, metrics and the lag strategies' ``rack`` option."""

from __future__ import annotations

import json

import lagassign
import pytest
from groups import cases, check_valid, kafka_balance_violation
from hypothesis import given
from lagassign.core.case import parse_case
from lagassign.core.errors import CaseError, StrategyOptionError
from lagassign.core.strategies import get_strategy

# Two racks; each partition's replicas on one of them; C0 on rack a, C1 on rack b.
CASE = {
    "group": "g",
    "members": [
        {"id": "C0", "topics": ["t"], "rack": "a"},
        {"id": "C1", "topics": ["t"], "rack": "b"},
    ],
    "partitions": [
        {"topic": "t", "partition": p, "lag": lag, "racks": [rack]}
        for p, (lag, rack) in enumerate([(100, "b"), (90, "a"), (10, "b"), (5, "a")])
    ],
}


def test_case_reads_replica_racks_and_refuses_bad_ones():
    group = parse_case(CASE)
    assert group.rack_aware and group.partitions[("t", 0)].racks == {"b"}
    bad = {**CASE, "partitions": [{"topic": "t", "partition": 0, "lag": 1, "racks": "a"}]}
    with pytest.raises(CaseError, match="'racks' must be a list"):
        parse_case(bad)


def test_metrics_report_cross_rack_partitions_and_lag_only_with_racks():
    metrics = lagassign.assign(CASE, "lag-aware")["metrics"]
    # off: heaviest first to the lightest member: C0 takes t-0 (b) and t-3 (a), C1 t-1 (a) and t-2 (b).
    assert metrics["cross_rack_partitions"] == 2
    assert metrics["cross_rack_lag"] == 100 + 90
    plain = {**CASE, "members": [{**m, "rack": None} for m in CASE["members"]]}
    assert "cross_rack_partitions" not in lagassign.assign(plain, "lag-aware")["metrics"]


@pytest.mark.parametrize("rack", ["prefer", "require"])
def test_lag_aware_with_racks_reads_locally_here(rack):
    metrics = lagassign.assign(CASE, "lag-aware", rack=rack)["metrics"]
    assert metrics["cross_rack_partitions"] == 0
    assert metrics["count_spread"] == 0


def test_lag_aware_refuses_an_unknown_rack_mode():
    with pytest.raises(StrategyOptionError, match="rack must be one of"):
        get_strategy("lag-aware", rack="sometimes")


def test_rack_off_is_the_default_and_unchanged():
    group = parse_case(CASE)
    assert (
        get_strategy("lag-aware").assign(group).members
        == get_strategy("lag-aware", rack="off").assign(group).members
    )


def _on_racks(case, replicas):
    """The case parsed with members on racks a, b, c in turn and the ``i``-th partition's
    replicas on the racks numbered ``replicas(i)`` (modulo 3)."""
    racks = ["a", "b", "c"]
    for i, m in enumerate(case["members"]):
        m["rack"] = racks[i % 3]
    for i, p in enumerate(case["partitions"]):
        p["racks"] = [racks[r % 3] for r in replicas(i)]
    return parse_case(case)


@given(case=cases(max_members=6, max_topics=3, max_partitions=6))
def test_lag_aware_prefer_keeps_the_count_guarantee(case):
    """prefer chooses among the members with the fewest partitions only."""
    group = _on_racks(case, lambda i: (i, i * 7))
    got = get_strategy("lag-aware", rack="prefer").assign(group).members
    check_valid(group, got)
    if group.identical_subscriptions:
        counts = [len(t) for t in got.values()]
        assert max(counts) - min(counts) <= 1
    else:
        assert kafka_balance_violation(group, got) is None


def test_lag_optimal_prefer_swaps_to_racks_without_raising_the_largest_lag():
    off = lagassign.assign(CASE, "lag-optimal")["metrics"]
    prefer = lagassign.assign(CASE, "lag-optimal", rack="prefer")["metrics"]
    assert prefer["max_lag"] <= off["max_lag"]
    assert prefer["cross_rack_partitions"] <= off["cross_rack_partitions"]
    assert prefer["count"] == off["count"]


def test_lag_optimal_rack_modes_are_planned_apart_on_one_group():
    """The plan is kept per group and options: rack=prefer after rack=off on the same group
    (as evaluate runs them) is prefer's own plan, not off's."""
    case = {
        "group": "g",
        "members": [{"id": "C0", "topics": ["t"], "rack": "a"}, {"id": "C1", "topics": ["t"], "rack": "b"}],
        "partitions": [{"topic": "t", "partition": p, "lag": 10, "racks": [r]} for p, r in enumerate("bbaa")],
    }
    group = parse_case(case)
    off = get_strategy("lag-optimal").assign(group).members
    prefer = get_strategy("lag-optimal", rack="prefer").assign(group).members
    assert prefer == get_strategy("lag-optimal", rack="prefer").assign(parse_case(case)).members
    assert prefer != off
    assert prefer["C0"] == [("t", 2), ("t", 3)]


@given(case=cases(max_members=6, max_topics=3, max_partitions=6))
def test_lag_optimal_prefer_keeps_max_lag_counts_and_guarantee(case):
    group = _on_racks(case, lambda i: (i * 5,))
    off = get_strategy("lag-optimal").assign(group)
    prefer = get_strategy("lag-optimal", rack="prefer").assign(group)
    check_valid(group, prefer.members)
    lag = group.lag
    assert max(sum(lag[tp] for tp in tps) for tps in prefer.members.values()) <= max(
        sum(lag[tp] for tp in tps) for tps in off.members.values()
    )
    assert {m: len(t) for m, t in prefer.members.items()} == {m: len(t) for m, t in off.members.items()}
    assert kafka_balance_violation(group, prefer.members) is None


def test_lag_optimal_refuses_require():
    with pytest.raises(StrategyOptionError, match="off or prefer"):
        get_strategy("lag-optimal", rack="require")


def test_cli_assign_takes_rack(cli, tmp_path):
    path = tmp_path / "case.json"
    path.write_text(json.dumps(CASE))
    run = cli("assign", "--strategy", "lag-aware", "--rack", "prefer", str(path))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["metrics"]["cross_rack_partitions"] == 0
