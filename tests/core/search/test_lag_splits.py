"""lag-optimal's re-split and trade (``search.lag_splits``) choose what their docstrings say:
here each is written out plainly, one candidate at a time in the stated order, and both give
the same split or trade, or none, on every pair of members of random searches."""

from __future__ import annotations

import random
from bisect import bisect_left

from groups import random_search
from lagassign.core.search.engine import Held, Search
from lagassign.core.search.lag_objective import LagObjective

OBJECTIVE = LagObjective()


def _subsets_by_size(items: list[Held]) -> dict[int, list[tuple[int, int]]]:
    """Every subset of ``items`` as (sum of lags, bit mask), by size, each list sorted."""
    out: dict[int, list[tuple[int, int]]] = {0: [(0, 0)]}
    for i, (lag, _) in enumerate(items):
        for size in range(i, -1, -1):
            grown = [(total + lag, mask | 1 << i) for total, mask in out.get(size, ())]
            out.setdefault(size + 1, []).extend(grown)
    return {size: sorted(sums) for size, sums in out.items() if sums}


def _split(search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
    """Meet in the middle, one left subset at a time: the first allowed of the lowest."""
    pool = search.held[heavy] + search.held[light]
    total = search.load[heavy] + search.load[light]
    half = len(pool) // 2
    left, right = _subsets_by_size(pool[:half]), _subsets_by_size(pool[half:])
    best_worst, best_mask = search.load[heavy], None
    for size in sizes:
        for a, sums_a in left.items():
            sums_b = right.get(size - a, [])
            keys = [sb for sb, _ in sums_b]
            for sa, mask_a in sums_a:
                k = bisect_left(keys, total / 2 - sa)
                for sb, mask_b in sums_b[k - 1 if k else 0 : k + 1]:
                    worst = max(sa + sb, total - sa - sb)
                    mask = mask_a | (mask_b << half)
                    if worst < best_worst and search.split_allowed(heavy, light, mask):
                        best_worst, best_mask = worst, mask
    return best_mask


def _small_subsets(search: Search, giver: str, taker: str) -> dict[int, list[tuple[int, int]]]:
    """Subsets of one or two of ``giver``'s partitions ``taker`` may receive: (sum, mask)."""
    ok = set(search.receivable(taker, giver)[0])
    ones = [(p[0], 1 << i) for i, p in enumerate(search.held[giver]) if p in ok]
    twos = [(a[0] + b[0], a[1] | b[1]) for k, a in enumerate(ones) for b in ones[:k]]
    return {1: sorted(ones), 2: sorted(twos)}


def _trade(search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
    """Per kind, each heavy subset against the light subsets nearest sa - gap / 2: the first
    allowed with the smallest |2d - gap|."""
    n_heavy = len(search.held[heavy])
    gap = search.load[heavy] - search.load[light]
    give, take = _small_subsets(search, heavy, light), _small_subsets(search, light, heavy)
    best_dist, best_mask = gap, None
    for given, taken in ((2, 2), (2, 1), (1, 2)):
        if n_heavy - given + taken not in sizes:
            continue
        sums_b = take[taken]
        keys = [sb for sb, _ in sums_b]
        for sa, mask_a in give[given]:
            at = bisect_left(keys, sa - gap // 2)
            for sb, mask_b in sums_b[max(at - 1, 0) : at + 1]:
                dist = abs(2 * (sa - sb) - gap)
                mask = (((1 << n_heavy) - 1) ^ mask_a) | (mask_b << n_heavy)
                if dist < best_dist and search.split_allowed(heavy, light, mask):
                    best_dist, best_mask = dist, mask
    return best_mask


def _compare(seed: int) -> int:
    """Both ways on every pair of members of a random search; how many trades were found."""
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
            trade = OBJECTIVE.best_trade(search, heavy, light, sizes)
            assert trade == _trade(search, heavy, light, sizes)
            found += trade is not None
            if n + len(search.held[light]) <= OBJECTIVE.resplit_max:
                assert OBJECTIVE.best_split(search, heavy, light, sizes) == _split(
                    search, heavy, light, sizes
                )
    return found


def test_splits_and_trades_are_the_plain_choices():
    found = [_compare(seed) for seed in range(60)]
    assert sum(f > 0 for f in found) > 40  # most searches offer trades: the comparison is not empty
