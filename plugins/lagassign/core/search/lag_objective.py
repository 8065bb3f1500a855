"""lag-optimal's objective in a ``Search``: a member costs its total lag.

Between a heavy member and a lighter one, ``gap`` apart, an exchange moving ``d`` of lag
(a partition p handed over, d = p; or swapped for q, d = p - q) leaves both strictly below
the heavy one exactly when 0 < d < gap, and the larger of the two lowest when d is nearest
gap / 2: the exchange wanted is the one with the smallest |2d - gap| (an integer: exact at
any size). Re-splits and trades of several partitions: ``lag_splits``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from . import lag_splits
from .engine import Exchange, Held, Search
from .state import State


class LagObjective:
    """A member costs its total lag (see the module doc)."""

    #: the first exchange the cheapest members allow: with lag, the cheapest partner is the
    #: one the heavy member can come closest to the mean with
    best_partner = False
    #: pools of up to 20 partitions are re-split (meet in the middle: 2^10 subsets per half)
    resplit_max = 20

    def cost_with(self, search: State, mid: str, load: int, flow: float) -> int:
        return load

    def swap_window(
        self, search: Search, mid: str, home: str, p: Held, lo: int, hi: int
    ) -> tuple[int, int] | None:
        """q's lag keeps both loads within [lo, hi]: mid's load - p + q and home's + p - q."""
        keeps, gives = search.load[mid] - p[0], search.load[home] + p[0]
        return max(gives - hi, lo - keeps), min(gives - lo, hi - keeps)

    def best_exchange(self, search: Search, heavy: str, light: str) -> Exchange | None:
        """The allowed exchange with the smallest (|2d - gap|, change in moves), among equals a
        hand-over before a swap, then by the heavy and the light partition's place in their
        lists (lag, then index).

        Candidates are asked for in order of nearness: hand-overs outward from lag gap / 2;
        swaps by heavy partition, those whose nearest light partition (just below or above
        p - gap / 2) is nearest first, each outward from there; a candidate farther than the
        best allowed one so far is not asked for."""
        gap = search.load[heavy] - search.load[light]
        if gap <= 1:
            return None
        h_list, h_lags = search.receivable(light, heavy)
        l_list, l_lags = search.receivable(heavy, light)
        found = _Best(search, heavy, light, gap)
        if search.may_hand_over(heavy, light):
            at = bisect_left(h_lags, (gap + 1) // 2)  # the first lag at or above gap / 2
            found.walk(at - 1, -1, h_lags, h_list, None, 0)
            found.walk(at, 1, h_lags, h_list, None, 0)
        if not l_lags:
            return found.exchange(h_list, l_list)
        # Per heavy partition p (only those with some light partition in (p - gap, p) can
        # swap): the first light one at or above p - gap / 2, searched from where the previous
        # p's was (it only moves up as p does), and how near the nearest light one comes (the
        # one below it leaves 2d - gap > 0, the one at it 2d - gap <= 0).
        nearest: list[tuple[int, int, int]] = []
        n_light, shift = len(l_lags), gap // 2
        first, stop = bisect_right(h_lags, l_lags[0]), bisect_left(h_lags, l_lags[-1] + gap)
        at = 0
        for i, lag in enumerate(h_lags[first:stop], first):
            at = bisect_left(l_lags, lag - shift, at)
            below = 2 * (lag - l_lags[at - 1]) - gap if at else gap
            above = gap - 2 * (lag - l_lags[at]) if at < n_light else gap
            near = below if below < above else above
            if near < gap:
                nearest.append((near, i, at))
        nearest.sort()
        for near, i, at in nearest:
            if near > found.limit:
                break
            found.walk(at - 1, -1, l_lags, l_list, h_list[i], i, h_lags[i])
            found.walk(at, 1, l_lags, l_list, h_list[i], i, h_lags[i])
        return found.exchange(h_list, l_list)

    def best_exchange_any(self, search: Search, heavy: str) -> tuple[str, Exchange] | None:
        """Of every other member's best exchange with ``heavy``, the one that leaves the larger
        of the two lowest (then the cheaper member): what ``best_partner`` would take."""
        best: tuple[int, int, str, Exchange] | None = None
        for rank, (_, _, light) in enumerate(search.ranked):
            exchange = None if light == heavy else self.best_exchange(search, heavy, light)
            if exchange is not None:
                p, q = exchange
                worst = max(search.cost_after(heavy, p, q), search.cost_after(light, q, p))
                if best is None or (worst, rank) < best[:2]:
                    best = (worst, rank, light, exchange)
        return None if best is None else (best[2], best[3])

    def best_split(self, search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
        """``lag_splits.split``."""
        return lag_splits.split(search, heavy, light, sizes)

    def best_trade(self, search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
        """``lag_splits.trade``: two partitions for one or two, or one for two."""
        return lag_splits.trade(search, heavy, light, sizes)


class _Best:
    """The best exchange found so far: (|2d - gap|, change in moves, kind, heavy place, light
    place), kind 0 a hand-over, 1 a swap; ``limit``, the farthest a candidate may be to count."""

    def __init__(self, search: Search, heavy: str, light: str, gap: int) -> None:
        self.search, self.heavy, self.light, self.gap = search, heavy, light, gap
        self.key: tuple[int, int, int, int, int] | None = None
        self.limit = gap - 1  # only exchanges nearer than gap leave both below the heavy one

    def walk(
        self, j: int, step: int, lags: list[int], held: list[Held], p: Held | None, i: int, lag: int = 0
    ) -> None:
        """Candidates from place ``j`` of ``lags`` onward in direction ``step`` while they are
        near enough: with ``p`` None the heavy member's partitions handed over, else ``p``
        (place ``i``, lag ``lag``) swapped for the light member's."""
        allowed, gap = self.search.allowed, self.gap
        while 0 <= j < len(lags):
            d = lags[j] if p is None else lag - lags[j]
            dist = abs(2 * d - gap)
            if dist > self.limit:
                return
            if p is None:
                cost = allowed(self.heavy, self.light, held[j], None)
                key = (dist, cost, 0, j, 0) if cost is not None else None
            else:
                cost = allowed(self.heavy, self.light, p, held[j])
                key = (dist, cost, 1, i, j) if cost is not None else None
            if key is not None and (self.key is None or key < self.key):
                self.key, self.limit = key, dist
            j += step

    def exchange(self, h_list: list[Held], l_list: list[Held]) -> Exchange | None:
        if self.key is None:
            return None
        _, _, kind, i, j = self.key
        return h_list[i], (l_list[j] if kind else None)


__all__ = ["LagObjective"]
