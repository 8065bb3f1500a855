"""The numpy forms of lag-optimal's re-split and trade (``lag_numpy``) give the plain forms'
answers: the same split or trade, or none, on random pairs of members."""

from __future__ import annotations

import random

from groups import random_search
from lagassign.core.search import lag_numpy
from lagassign.core.search.lag_objective import LagObjective, split_floor

OBJECTIVE = LagObjective()


def _plain(monkeypatch, method, *args):
    with monkeypatch.context() as m:
        m.setattr(lag_numpy, "NUMPY_POOL", 10**9)
        return method(*args)


def _compare(seed: int, monkeypatch) -> int:
    """Both forms on every pair of members of a random search; how many trades were found."""
    rng = random.Random(seed)
    search = random_search(
        rng, rng.randint(2, 4), rng.randint(6, 24), rng.choice([5, 50, 1000, 10**6]), seed % 3 == 0
    )
    if seed % 2:
        search.max_moves = search.moves + rng.randint(0, 3)
    found = 0
    for heavy in search.held:
        for light in search.held:
            if heavy == light:
                continue
            n = len(search.held[heavy])
            sizes = [n, *rng.sample([n - 1, n + 1], rng.randint(0, 2))]
            trade = _plain(monkeypatch, OBJECTIVE.best_trade, search, heavy, light, sizes)
            assert lag_numpy.trade(search, heavy, light, sizes) == trade
            found += trade is not None
            pool = n + len(search.held[light])
            lags = sorted(search.lags_of[heavy] + search.lags_of[light])
            floor = split_floor(lags, sizes, search.load[heavy] + search.load[light])
            if pool <= OBJECTIVE.resplit_max and floor is not None and floor < search.load[heavy]:
                split = _plain(monkeypatch, OBJECTIVE.best_split, search, heavy, light, sizes)
                assert lag_numpy.split(search, heavy, light, sizes) == split
    return found


def test_numpy_forms_answer_as_the_plain_ones(monkeypatch):
    found = [_compare(seed, monkeypatch) for seed in range(60)]
    assert sum(f > 0 for f in found) > 40  # most searches offer trades: the comparison is not empty
