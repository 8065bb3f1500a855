"""The bounds are worked in plain Python integers: exact where lags sum beyond int64."""

from __future__ import annotations

from lagassign.core import bounds


def test_lags_whose_sums_pass_int64_are_bounded_exactly():
    lags = [2**62 + i for i in range(2048, 0, -1)]  # heaviest first; their sum does not fit in int64
    assert bounds.pool_bound(lags, 2) == -(-sum(lags) // 2) > 2**63
    assert bounds.count_bound(lags, 3, 682, 683) >= -(-sum(lags) // 3) > 2**63
