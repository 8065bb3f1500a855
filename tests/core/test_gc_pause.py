"""``assign`` and ``evaluate`` pause the cycle collector while they work, and leave it as found."""

from __future__ import annotations

import gc

import lagassign
import pytest
from lagassign.core.evaluate import gc_paused

CASE = {
    "group": "g",
    "members": [{"id": "a", "topics": ["t"]}, {"id": "b", "topics": ["t"]}],
    "partitions": [{"topic": "t", "partition": p, "lag": 10 * p} for p in range(4)],
}


def test_the_collector_is_paused_inside_and_running_again_after():
    seen = []
    gc_paused(lambda: seen.append(gc.isenabled()))()
    assert seen == [False]
    assert gc.isenabled()
    assert lagassign.assign(CASE, "range")["metrics"]["max_lag"] == 50
    assert gc.isenabled()


def test_the_collector_runs_again_after_an_error():
    with pytest.raises(lagassign.LagassignError):
        lagassign.assign({**CASE, "members": []}, "range")
    assert gc.isenabled()


def test_a_collector_paused_by_the_caller_stays_paused():
    gc.disable()
    try:
        lagassign.evaluate(CASE, ["range", "lag"])
        assert not gc.isenabled()
    finally:
        gc.enable()
