"""The lag rules of lag.py's docstring, one by one, and as properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lagassign.core.case import parse_case
from lagassign.core.errors import CaseError
from lagassign.core.lag import partition_lag


@pytest.mark.parametrize(
    ("end", "committed", "begin", "reset", "expected"),
    [
        # lag = end - committed
        (1_000, 400, 0, "latest", 600),
        (1_000, 400, None, "earliest", 600),
        (1_000, 1_000, 200, "earliest", 0),
        (1_000, 200, 200, "latest", 800),
        # no commit: latest -> 0, earliest or any other value -> end - begin
        (1_000, None, 200, "latest", 0),
        (1_000, None, 200, "LATEST", 0),
        (1_000, None, 200, "earliest", 800),
        (1_000, None, 200, "none", 800),
        (1_000, None, None, "earliest", 1_000),  # begin unknown: 0
        # committed below begin (data expired): treated as no commit
        (1_000, 100, 200, "latest", 0),
        (1_000, 100, 200, "earliest", 800),
        # committed beyond end (log truncated): treated as no commit, never negative
        (1_000, 1_500, 200, "latest", 0),
        (1_000, 1_500, 200, "earliest", 800),
        (0, None, 0, "earliest", 0),
    ],
)
def test_lag_rules(end, committed, begin, reset, expected):
    assert partition_lag(end, committed, begin, reset) == expected


@pytest.mark.parametrize(
    ("end", "committed", "begin", "message"),
    [
        (-1, None, None, "end offset is negative"),
        (10, -1, 0, "committed offset is negative"),
        (10, 5, -3, "begin offset is negative"),
        (10, 5, 11, "begin offset 11 is beyond end offset 10"),
        (None, 5, 0, "end offset missing"),
    ],
)
def test_impossible_offsets_are_refused(end, committed, begin, message):
    with pytest.raises(CaseError, match=message):
        partition_lag(end, committed, begin, "earliest")


offsets = st.integers(0, 10**12)


@given(
    begin=offsets,
    length=offsets,
    committed=st.none() | offsets,
    reset=st.sampled_from(["latest", "earliest"]),
)
def test_lag_is_never_negative_nor_more_than_the_log(begin, length, committed, reset):
    end = begin + length
    lag = partition_lag(end, committed, begin, reset)
    assert 0 <= lag <= end - begin
    if committed is not None and begin <= committed <= end:
        assert lag == end - committed


def _one_partition_case(reset: str | None, **offsets) -> dict:
    case = {
        "group": "g",
        "members": [{"id": "C0", "topics": ["t"]}],
        "partitions": [{"topic": "t", "partition": 0, **offsets}],
    }
    if reset is not None:
        case["auto_offset_reset"] = reset
    return case


@pytest.mark.parametrize(
    ("reset", "offsets", "expected"),
    [
        (None, {"begin": 10, "end": 50, "committed": None}, 0),  # the case default is latest
        ("earliest", {"begin": 10, "end": 50}, 40),
        ("Earliest", {"begin": 10, "end": 50, "committed": 5}, 40),
        ("earliest", {"begin": 10, "end": 50, "committed": 30}, 20),
        ("earliest", {"lag": 7}, 7),
        ("earliest", {"begin": 10, "end": 50, "committed": 30, "lag": 20}, 20),
    ],
)
def test_cases_compute_lag_from_offsets_by_the_same_rules(reset, offsets, expected):
    group = parse_case(_one_partition_case(reset, **offsets))
    assert list(group.lag.values()) == [expected]


def test_a_given_lag_that_disagrees_with_the_offsets_is_refused():
    with pytest.raises(CaseError, match="disagrees"):
        parse_case(_one_partition_case("earliest", begin=0, end=50, committed=30, lag=10))
