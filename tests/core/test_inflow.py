"""Inflow and lag in seconds from successive end-offset observations (``core.inflow``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lagassign.core.inflow import clean_history, inflow_rate, inflow_rates, lag_seconds


def test_rate_is_the_end_offset_delta_over_time() -> None:
    assert inflow_rate([(0.0, 1_000)], (60.0, 1_600)) == 10.0


def test_rate_uses_the_newest_earlier_observation_old_enough() -> None:
    earlier = [(0.0, 0), (100.0, 5_000), (195.0, 9_000)]  # the last one is only 5 s old
    assert inflow_rate(earlier, (200.0, 10_000)) == 50.0  # (10,000 - 5,000) / 100 s
    assert inflow_rate(earlier, (200.0, 10_000), min_span=1) == 200.0


def test_no_history_or_a_reset_gives_no_rate() -> None:
    assert inflow_rate([], (60.0, 100)) is None
    assert inflow_rate([(55.0, 0)], (60.0, 100)) is None  # too close
    assert inflow_rate([(0.0, 5_000)], (60.0, 100)) is None  # topic recreated: end went down
    assert inflow_rate([(0.0, 100)], (60.0, 100)) == 0.0  # idle is known: no inflow


def test_rates_leave_out_unknown_partitions() -> None:
    history = {"a": [(0.0, 0)], "b": [(0.0, 900)]}
    now = {"a": (30.0, 300), "b": (30.0, 0), "c": (30.0, 7)}
    assert inflow_rates(history, now) == {"a": 10.0}


def test_history_is_cut_at_a_reset_and_one_point_per_time() -> None:
    pts = [(3.0, 10), (1.0, 500), (0.0, 400), (2.0, 5), (3.0, 12)]
    assert clean_history(pts) == [(2.0, 5), (3.0, 12)]


def test_lag_seconds_interpolates_between_observations() -> None:
    hist = [(0.0, 1_000), (60.0, 1_600)]
    assert lag_seconds(hist, 1_300) == 30.0
    assert lag_seconds(hist, 1_600) == 0.0
    assert lag_seconds(hist, 1_700) == 0.0  # ahead of what we saw: caught up


def test_lag_seconds_extrapolates_before_the_oldest_observation() -> None:
    assert lag_seconds([(0.0, 1_000), (60.0, 1_600)], 700) == 90.0


def test_lag_seconds_takes_the_last_time_the_end_was_there() -> None:
    # the end stood at 500 from t=0 to t=100, then moved on: a consumer at 500 is 100 s behind
    hist = [(0.0, 0), (10.0, 500), (100.0, 500), (110.0, 1_500)]
    assert lag_seconds(hist, 500) == 10.0
    assert lag_seconds(hist, 250) == pytest.approx(105.0)


def test_lag_seconds_unknown_without_a_trend() -> None:
    assert lag_seconds([], 0) is None
    assert lag_seconds([(0.0, 100)], 50) is None
    assert lag_seconds([(0.0, 100), (60.0, 100)], 50) is None  # the end never moved
    assert lag_seconds([(0.0, 100)], 100) == 0.0


@given(
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 1_000_000)), min_size=1, max_size=12),
    st.integers(0, 1_000_000),
)
def test_lag_seconds_is_never_negative_and_zero_at_the_end(raw: list[tuple[int, int]], pos: int) -> None:
    hist = [(float(t), e) for t, e in raw]
    got = lag_seconds(hist, pos)
    assert got is None or got >= 0
    end = clean_history(hist)[-1][1]
    assert lag_seconds(hist, end) == 0.0


@given(st.lists(st.integers(0, 1_000), min_size=2, max_size=10), st.data())
def test_lag_seconds_grows_as_the_position_falls_behind(steps: list[int], data: st.DataObject) -> None:
    ends, total = [], 0
    for s in steps:
        total += s
        ends.append(total)
    hist = [(10.0 * i, e) for i, e in enumerate(ends)]
    a = data.draw(st.integers(0, ends[-1]))
    b = data.draw(st.integers(a, ends[-1]))
    la, lb = lag_seconds(hist, a), lag_seconds(hist, b)
    if la is not None and lb is not None:
        assert la >= lb - 1e-9


def test_a_saturated_member_s_capacity_is_its_commit_rate() -> None:
    from lagassign.core.inflow import saturated_capacity

    before = {"p0": (0.0, 1_000, 500), "p1": (0.0, 50, 10)}
    after = {"p0": (60.0, 4_000, 800), "p1": (60.0, 650, 20)}
    assert saturated_capacity(before, after) == 60.0  # (3,000 + 600) / 60 s
    # caught up on one partition, or a partition more or less, or too close: unknown
    assert saturated_capacity(before, {**after, "p1": (60.0, 650, 0)}) is None
    assert saturated_capacity(before, {"p0": after["p0"]}) is None
    assert saturated_capacity(before, after, min_span=61) is None
    assert saturated_capacity(before, {**after, "p1": (60.0, 40, 9)}) is None  # went back: reset
    assert saturated_capacity(before, {"p0": (60.0, 1_000, 900), "p1": (60.0, 50, 20)}) is None  # stuck
    assert saturated_capacity({}, {}) is None


def test_lag_time_text_names_the_partition_furthest_behind() -> None:
    from lagassign.core.inflow import lag_time_text

    assert lag_time_text({("t", 0): 30.0, ("t", 1): 4_000.0}) == "lag in time up to 1 h 7 min (t-1)"
    assert lag_time_text({("t", 0): 0.0}) is None and lag_time_text({}) is None
