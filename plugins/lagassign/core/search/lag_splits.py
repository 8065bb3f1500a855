"""lag-optimal's re-splits and trades: several partitions of two members for several.

Both look at many candidates at once, as numpy arrays, and keep the first allowed one of the
best in a fixed order (``search.split_allowed`` is asked in that order until one is allowed):

* ``split``: the pool of both members' partitions dealt out again, met in the middle: each
  subset of the pool's first half against the two subsets of its second half, of the size
  that gives ``heavy`` one of the counts it may end with, whose sums bring its share nearest
  half the pool's lag; the lowest larger side wins (order: size, first-half subset by
  size, sum and mask, then the neighbour below before the one above).
* ``trade``: two of ``heavy``'s partitions for one or two of ``light``'s, or one for two,
  with the smallest |2d - gap| (d the lag that passes from heavy to light; order: kind, the
  heavy subset by sum and places, the neighbour below first).

Sums are exact int64: pools whose lags sum to ``LAG_LIMIT`` or more are not re-split or
traded (exchanges of one partition still run).
"""

from __future__ import annotations

import functools

import numpy as np

from .engine import Search

#: pools of two members whose lags sum to this or more are left alone (sums stay in int64)
LAG_LIMIT = 1 << 58


@functools.lru_cache(maxsize=32)
def _subset_bits(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bit mask, its bits (one row per mask) and its size, of every subset of n items (the
    same for every pool half of n partitions; read-only)."""
    masks = np.arange(1 << n, dtype=np.int64)
    bits = (masks[:, None] >> np.arange(n, dtype=np.int64)) & 1
    sizes = np.add.reduce(bits, axis=1)
    for array in (masks, bits, sizes):
        array.flags.writeable = False
    return masks, bits, sizes


def _subset_table(lags: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Size, sum of lags and bit mask of every subset, sorted by size, then sum, then mask."""
    masks, bits, sizes = _subset_bits(len(lags))
    sums = bits @ np.array(lags, dtype=np.int64)
    order = np.lexsort((masks, sums, sizes))
    return sizes[order], sums[order], masks[order]


def split(search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
    """The partitions ``heavy`` keeps (a bit mask over ``held[heavy] + held[light]``) in the
    best allowed re-split that ends below its load (see the module doc); None when none does."""
    pool = search.held[heavy] + search.held[light]
    total = search.load[heavy] + search.load[light]
    if total >= LAG_LIMIT:
        return None
    half = len(pool) // 2
    l_size, l_sum, l_mask = _subset_table([p[0] for p in pool[:half]])
    r_size, r_sum, r_mask = _subset_table([p[0] for p in pool[half:]])
    n_right = len(pool) - half
    span = total + 3
    r_keys = r_size * span + r_sum + 1  # ascending: by size, then sum
    start = r_size.searchsorted(np.arange(n_right + 2))
    # the first right sum at or above half the pool's lag less the left sum, per left subset
    x = np.minimum(np.maximum((total + 1) // 2 - l_sum, -1), total + 1) + 1
    n_left = len(l_size)
    picks, orders = [], []
    for si, size in enumerate(sizes):
        b = size - l_size
        rows = ((b >= 0) & (b <= n_right)).nonzero()[0]
        b = b[rows]
        first, length = start[b], start[b + 1] - start[b]
        k = r_keys.searchsorted(b * span + x[rows]) - first
        lower = first + np.maximum(k - 1, 0)  # the neighbour below (or the first)
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


@functools.lru_cache(maxsize=64)
def _pair_places(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Places i < j of every pair of n items (the same for every side of n; read-only)."""
    i, j = np.triu_indices(n, 1)
    for array in (i, j):
        array.flags.writeable = False
    return i, j


def _pairs(places: np.ndarray, lags: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum, higher place and lower place (-1 for none) of every subset of ``size`` (1 or 2)
    items, sorted by sum, then places."""
    if size == 1:
        hi, lo = places, np.full(len(places), -1)
        sums = lags
    else:
        i, j = _pair_places(len(places))  # i < j: j is the higher place
        hi, lo = places[j], places[i]
        sums = lags[i] + lags[j]
    order = np.lexsort((lo, hi, sums))
    return sums[order], hi[order], lo[order]


def _side(search: Search, giver: str, taker: str) -> tuple[np.ndarray, np.ndarray]:
    """Places (in ``giver``'s list) and lags of the partitions ``taker`` may receive."""
    ok = set(search.receivable(taker, giver)[0])
    held = search.held[giver]
    places = [i for i, p in enumerate(held) if p in ok]
    return np.array(places, dtype=np.int64), np.array([held[i][0] for i in places], dtype=np.int64)


def trade(search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
    """The best allowed trade (see the module doc) as a keep mask over the pool like
    ``split``'s, ``heavy`` ending with one of ``sizes`` partitions; None when none helps."""
    n_heavy = len(search.held[heavy])
    gap = search.load[heavy] - search.load[light]
    if search.load[heavy] + search.load[light] >= LAG_LIMIT:
        return None
    sides = (_side(search, heavy, light), _side(search, light, heavy))
    # each side's subsets of one and of two partitions, built once: two kinds share each
    subsets = {(side, size): _pairs(*sides[side], size) for side in (0, 1) for size in (1, 2)}
    scored = []
    for kind, (given, taken) in enumerate(((2, 2), (2, 1), (1, 2))):
        if n_heavy - given + taken not in sizes:
            continue
        sa, a_hi, a_lo = subsets[0, given]
        sb, b_hi, b_lo = subsets[1, taken]
        if not len(sa) or not len(sb):
            continue
        at = sb.searchsorted(sa - gap // 2)
        first = np.maximum(at - 1, 0)
        second = (at >= 1) & (at < len(sb))
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


__all__ = ["LAG_LIMIT", "split", "trade"]
