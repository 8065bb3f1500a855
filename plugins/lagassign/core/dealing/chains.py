"""Chains of hand-overs read from a cost matrix: all-pairs shortest paths and the chains along them.

Floyd-Warshall over the members (numpy, one round per member) gives each pair's cheapest
chain; ``candidates`` lists the chains cheaper than a bound, ``path`` walks one and ``cost``
adds up its real cost (a negative cycle can make the distances lie about it).
"""

from __future__ import annotations

import itertools

import numpy as np

from .handovers import Matrix


def shortest(costs: Matrix) -> tuple[Matrix, Matrix]:
    """All-pairs shortest path costs and next hops (Floyd-Warshall), as lists."""
    n = len(costs)
    dist = np.array(costs, dtype=np.int64)
    nxt = np.empty_like(dist)
    nxt[:] = np.arange(n)
    through = np.empty_like(dist)
    better = np.empty(dist.shape, dtype=bool)
    # copied where better even when nowhere is: at these sizes a call costs more than its
    # elements, and ``better.any()`` is a call
    for k in range(n):
        np.add(dist[:, k, None], dist[k], out=through)
        np.less(through, dist, out=better)
        np.copyto(dist, through, where=better)
        np.copyto(nxt, nxt[:, k, None], where=better)
    return dist.tolist(), nxt.tolist()


def path(nxt: Matrix, start: int, end: int) -> list[int] | None:
    """The members along the shortest chain from ``start`` to ``end`` (None if it loops)."""
    found = [start]
    seen: set[int] = set()  # found[1:]: the start may come back only as the end (a cycle)
    at = start
    while True:
        step = nxt[at][end]
        if step in seen:
            return None
        found.append(step)
        if step == end:
            return found
        seen.add(step)
        at = step


def candidates(dist: Matrix, below: int) -> list[tuple[int, int, int]]:
    """(cost, start, end) of every shortest chain cheaper than ``below``, cheapest first."""
    found = [(d, s, e) for s, row in enumerate(dist) for e, d in enumerate(row) if d < below]
    found.sort()
    return found


def cost(chain: list[int], costs: Matrix) -> int:
    """A chain's real cost, hand-over by hand-over."""
    return sum(costs[a][b] for a, b in itertools.pairwise(chain))
