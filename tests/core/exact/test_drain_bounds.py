"""drain-optimal's bounds are the same in every process: no float summed in hash order."""

from __future__ import annotations

import os
import subprocess
import sys

# A group whose readers' bound sums four capacities (the t0 pool binds): summed in a
# frozenset's order, its last bits changed with the hash seed (seed 3 differed from 1).
_SCRIPT = """
from lagassign.core.case import parse_case
from lagassign.core.exact.drain_bounds import readers_drain_bound
caps = [58.652, 29.326, 58.652, 117.304]
members = [{"id": f"c{i}", "topics": ["t0"], "capacity": c} for i, c in enumerate(caps)]
members.append({"id": "d", "topics": ["t1"], "capacity": 1000.0})
partitions = [
    {"topic": t, "partition": p, "lag": (48137 if t == "t0" else 10) + 7 * p, "rate": 0.5}
    for t in ("t0", "t1")
    for p in range(6)
]
print(repr(readers_drain_bound(parse_case({"group": "g", "members": members, "partitions": partitions}))))
"""


def test_the_readers_bound_does_not_depend_on_the_hash_seed():
    bounds = {
        subprocess.run(
            [sys.executable, "-c", _SCRIPT],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(bounds) == 1, bounds
    assert float(bounds.pop()) > 1000  # the t0 pool is what binds (48,000+ messages through ~264/s)
