"""The bounds of large pools, worked with numpy, equal the plain-Python arguments exactly."""

from __future__ import annotations

import random

import numpy as np
import pytest
from lagassign.core import bounds


def _pools(seed: int):
    rnd = random.Random(seed)
    for _ in range(40):
        n = rnd.choice([bounds.NUMPY_FROM, bounds.NUMPY_FROM + 1, 3000, 5000])
        scale = 10 ** rnd.randint(0, 9)
        lags = [rnd.choice((0, rnd.randint(0, scale))) for _ in range(n)]
        if rnd.random() < 0.2:
            lags = [scale] * n  # all alike: every tie at once
        yield lags, rnd.choice([1, 2, 3, 7, 100, 999, n - 1, n, n + 5])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_numpy_bounds_equal_the_python_ones(seed):
    for lags, members in _pools(seed):
        desc = sorted(lags, reverse=True)
        array = np.array(lags, dtype=np.int64)
        assert bounds.pool_bound(array, members) == bounds._pool_bound_python(desc, members)
        floor, extra = divmod(len(lags), members)
        for slack in (0, 1, 4):
            low, high = max(0, floor - slack), floor + (extra > 0) + slack
            expected = bounds._count_bound_python(desc, members, low, high)
            assert bounds.count_bound(array, members, low, high) == expected


def test_lags_beyond_int64_sums_are_bounded_in_python():
    lags = [2**62] * bounds.NUMPY_FROM  # their sum does not fit in int64
    assert bounds._descending(lags) is None
    assert bounds.pool_bound(lags, 2) == 2**62 * bounds.NUMPY_FROM // 2


def test_int64_lags_whose_sums_overflow_are_bounded_exactly():
    lags = np.array([2**55 + i for i in range(bounds.NUMPY_FROM)], dtype=np.int64)  # sum beyond int64
    as_ints = [int(v) for v in lags]
    desc = sorted(as_ints, reverse=True)
    assert bounds.pool_bound(lags, 3) == bounds._pool_bound_python(desc, 3) > 2**63
    assert bounds.count_bound(lags, 3, 682, 683) == bounds._count_bound_python(desc, 3, 682, 683)
