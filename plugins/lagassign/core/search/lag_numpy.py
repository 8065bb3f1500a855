"""numpy forms of ``LagObjective``'s re-split and trade: the same answers, from ``NUMPY_POOL``
partitions of the two members on.

Both plain forms look at candidates in a fixed order and keep the first allowed one of the
best; here every candidate is scored at once, the candidates are sorted by (score, that
order), and ``search.split_allowed`` is asked in that order until one is allowed. From
``NUMPY_POOL`` partitions this is the faster form (the figures: ``bench/README.md``);
``tests/core/search/test_lag_numpy.py`` keeps the two forms equal.
"""

from __future__ import annotations

import numpy as np

from .engine import Search

#: from this many partitions of the two members the numpy forms run
NUMPY_POOL = 16
#: pools whose lags sum to less than this are summed exactly as floats (BLAS); trades need
#: twice the sums within int64
FLOAT_SAFE = 1 << 53

_SUBSET_BITS: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _subset_bits(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bit mask, its bits (one row per mask, as floats) and its size, of every subset of n
    items: the same for every pool half of n partitions, so made once per n (read-only)."""
    if n not in _SUBSET_BITS:
        masks = np.arange(1 << n, dtype=np.int64)
        bits = (masks[:, None] >> np.arange(n, dtype=np.int64)) & 1
        _SUBSET_BITS[n] = (masks, bits.astype(np.float64), np.add.reduce(bits, axis=1))
    return _SUBSET_BITS[n]


def _subset_table(lags: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Size, sum of lags and bit mask of every subset, sorted by size, then sum, then mask
    (``objectives.subset_sums``' order). Sums are made as floats, exactly below 2**53."""
    masks, bits, sizes = _subset_bits(len(lags))
    sums = (bits @ np.array(lags, dtype=np.float64)).astype(np.int64)
    order = np.lexsort((masks, sums, sizes))
    return sizes[order], sums[order], masks[order]


def split(search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
    """``LagObjective.best_split`` (same pairs of half-pool subsets, same order); None where
    the lags are too large to sum exactly as floats (the caller then runs the plain form)."""
    pool = search.held[heavy] + search.held[light]
    total = search.load[heavy] + search.load[light]
    half = len(pool) // 2
    l_size, l_sum, l_mask = _subset_table([p[0] for p in pool[:half]])
    r_size, r_sum, r_mask = _subset_table([p[0] for p in pool[half:]])
    n_right = len(pool) - half
    span = total + 3
    r_keys = r_size * span + r_sum + 1  # ascending: by size, then sum
    start = r_size.searchsorted(np.arange(n_right + 2))
    # bisect_left(sums, total / 2 - sa) over integer sums: the same as for its ceiling
    x = np.minimum(np.maximum((total + 1) // 2 - l_sum, -1), total + 1) + 1
    n_left = len(l_size)
    picks, orders = [], []
    for si, size in enumerate(sizes):
        b = size - l_size
        rows = ((b >= 0) & (b <= n_right)).nonzero()[0]
        b = b[rows]
        first, length = start[b], start[b + 1] - start[b]
        k = r_keys.searchsorted(b * span + x[rows]) - first
        lower = first + np.maximum(k - 1, 0)  # the slice [k - 1 or 0 : k + 1]
        has_upper = (k > 0) & (k < length)
        base = (si * n_left + rows) * 2
        picks += [rows, lower, rows[has_upper], (first + k)[has_upper]]
        orders += [base, base[has_upper] + 1]
    left_rows = np.concatenate(picks[0::2])
    right_rows = np.concatenate(picks[1::2])
    order = np.concatenate(orders)
    sums = l_sum[left_rows] + r_sum[right_rows]
    worst = np.maximum(sums, total - sums)
    below = (worst < search.load[heavy]).nonzero()[0]
    below = below[np.lexsort((order[below], worst[below]))]
    masks = (l_mask[left_rows[below]] | (r_mask[right_rows[below]] << half)).tolist()
    return next((mask for mask in masks if search.split_allowed(heavy, light, mask)), None)


def _pairs(places: np.ndarray, lags: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum, higher place and lower place (-1 for none) of every subset of ``size`` (1 or 2)
    items, sorted as ``engine.small_subsets`` sorts (sum, then bit mask)."""
    if size == 1:
        hi, lo = places, np.full(len(places), -1)
        sums = lags
    else:
        i, j = np.triu_indices(len(places), 1)  # i < j: j is the higher place
        hi, lo = places[j], places[i]
        sums = lags[i] + lags[j]
    order = np.lexsort((lo, hi, sums))
    return sums[order], hi[order], lo[order]


def trade(search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
    """``LagObjective.best_trade`` (same candidates, same order)."""
    n_heavy = len(search.held[heavy])
    gap = search.load[heavy] - search.load[light]
    sides = []
    for giver, taker in ((heavy, light), (light, heavy)):
        ok = set(search.receivable(taker, giver)[0])
        held = search.held[giver]
        places = np.array([i for i, p in enumerate(held) if p in ok], dtype=np.int64)
        sides.append((places, np.array([held[i][0] for i in places.tolist()], dtype=np.int64)))
    scored = []
    for kind, (given, taken) in enumerate(((2, 2), (2, 1), (1, 2))):
        if n_heavy - given + taken not in sizes:
            continue
        sa, a_hi, a_lo = _pairs(*sides[0], given)
        sb, b_hi, b_lo = _pairs(*sides[1], taken)
        if not len(sa) or not len(sb):
            continue
        at = sb.searchsorted(sa - gap // 2)
        first = np.maximum(at - 1, 0)
        second = (at >= 1) & (at < len(sb))
        # the plain loop's order: by kind, then heavy subset, then the neighbour below first
        for which, (neighbour, rows) in enumerate(
            ((first, np.arange(len(sa))), (at[second], second.nonzero()[0]))
        ):
            dist = np.abs(2 * (sa[rows] - sb[neighbour]) - gap)
            near = dist < gap
            rows, neighbour = rows[near], neighbour[near]
            rank = (kind << 40) + rows * 2 + which
            scored.append((dist[near], rank, a_hi[rows], a_lo[rows], b_hi[neighbour], b_lo[neighbour]))
    if not scored:
        return None
    dist, rank, a_hi, a_lo, b_hi, b_lo = (np.concatenate(col) for col in zip(*scored, strict=True))
    keep_all = (1 << n_heavy) - 1
    for k in np.lexsort((rank, dist)).tolist():
        given_mask = (1 << int(a_hi[k])) | ((1 << int(a_lo[k])) if a_lo[k] >= 0 else 0)
        taken_mask = (1 << int(b_hi[k])) | ((1 << int(b_lo[k])) if b_lo[k] >= 0 else 0)
        mask = (keep_all ^ given_mask) | (taken_mask << n_heavy)
        if search.split_allowed(heavy, light, mask):
            return mask
    return None


__all__ = ["NUMPY_POOL", "split", "trade"]
