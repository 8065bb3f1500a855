"""lag-optimal's exchange (``LagObjective.best_exchange``) is the one its docstring names: of
every hand-over and swap leaving both members below the heavier, the allowed one with the
smallest (|2d - gap|, change in moves), then a hand-over before a swap, then by place."""

from __future__ import annotations

import random

import pytest
from groups import random_search
from lagassign.core.search.engine import Held, Search
from lagassign.core.search.lag_objective import LagObjective


def _reference(search: Search, heavy: str, light: str) -> tuple[Held, Held | None] | None:
    """Every candidate listed and sorted: the choice as the docstring states it."""
    gap = search.load[heavy] - search.load[light]
    options = []
    if search.may_hand_over(heavy, light):
        options += [(abs(2 * p[0] - gap), 0, i, 0, p, None) for i, p in enumerate(search.held[heavy])]
    for i, p in enumerate(search.held[heavy]):
        for j, q in enumerate(search.held[light]):
            options.append((abs(2 * (p[0] - q[0]) - gap), 1, i, j, p, q))
    best = None
    for dist, kind, i, j, p, q in options:
        cost = search.allowed(heavy, light, p, q)
        if dist < gap and cost is not None and (best is None or (dist, cost, kind, i, j) < best[0]):
            best = ((dist, cost, kind, i, j), (p, q))
    return None if best is None else best[1]


@pytest.mark.parametrize("seed", range(80))
def test_the_exchange_is_the_best_of_all_candidates(seed):
    rng = random.Random(seed)
    search = random_search(
        rng, rng.randint(2, 5), rng.randint(2, 40), rng.choice([3, 8, 50, 10**6]), seed % 3 == 0
    )
    if seed % 2:
        search.max_moves = search.moves + rng.randint(0, 2)
    objective = LagObjective()
    compared = 0
    for heavy in search.held:
        for light in search.held:
            if heavy != light and search.load[heavy] - search.load[light] > 1:
                assert objective.best_exchange(search, heavy, light) == _reference(search, heavy, light)
                compared += 1
    assert compared or max(search.load.values()) - min(search.load.values()) <= 1
