"""lag-optimal's local search: exchanges between a heavy and a lighter member, under count rules.

A ``Search`` holds one layout (who holds which partitions, their loads, counts and moves) and
lowers the heaviest member while an exchange allows it: a hand-over of one partition where the
count rules allow it, or a swap of two. A step is taken only if both members end strictly below
the heavier one's old load, so the sorted load vector falls lexicographically (largest lag
first, then the spread) and the search always ends. Its work is bounded (``MIN_WORK`` plus
``WORK_PER_ITEM`` per member and partition), so huge groups end with what it reached by then.

Count rules: while all counts are within one of each other (always so with identical
subscriptions) a partition may pass from a member at the high count to one at the low count,
within ``count_range`` (floor(P/N) and ceil(P/N), widened by ``count_slack``); otherwise counts
are frozen and a swap is allowed only where no member with two or more fewer partitions could
take the partition a member receives (Kafka's balance condition stays true).

Partitions are the group's partition indices (``GroupSnapshot.columns``), not TopicPartition
objects: at Kafka's benchmark point a search then builds nothing per partition.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter

import numpy as np

from ..model import GroupSnapshot, TopicPartition

Layout = dict[str, list[TopicPartition]]
#: partition indices per member id: what a search starts from
IndexLayout = dict[str, list[int]]
# (lag, partition index): a member's partitions sort by lag, then index (the TopicPartition's
# order: indices follow topic, then partition number)
Held = tuple[int, int]
# (distance of the two members' new loads from their mean, kind: 0 hand-over / 1 swap, p, q)
Candidate = tuple[float, int, Held, Held | None]

# Exchanges a search may look at: a floor (small groups are cheap, search them well) plus so
# many per member and per partition of the group.
MIN_WORK = 2_000
WORK_PER_ITEM = 4

# A re-split pools two members' partitions and deals them out again in the best way the counts
# allow (meet in the middle: 2^(k/2) subsets per half), for pools of at most this many.
RESPLIT_MAX_ITEMS = 20
RESPLIT_PARTNERS = 4
#: from this many partitions in the pool, the subset sums are scored with numpy (below it the
#: plain loop is faster: 47 against 105 us at 10, even at 13-14; 2.5 times slower at 17-20)
_RESPLIT_NUMPY_FROM = 14

# Below this many candidate pairs an exchange is searched in plain Python (numpy's per-call
# overhead dominates there); above it numpy scores each heavy partition against the light
# partitions nearest to the ideal difference.
_SMALL = 160
#: up to this many members, the lightest and heaviest are read off one sorted list (the same
#: order as the lazy heaps; 5-20% faster searches at 100-250 members, where keeping the list
#: sorted still costs less than the heaps' stale entries; below the numpy full scans' 256)
_RANKED = 255
#: up to this many partitions of two members, an exchange numpy would score is decided in plain
#: Python first (``_decide_python``); numpy only where the choice rests on its order of ties.
#: numpy's scoring costs 60-90 us a pair at these sizes; the loop, which lists at most 7 of the
#: heavy lags paired with the smallest light one, about 0.4 us per heavy lag it looks at
#: (at 160: searches of the mix 10% slower; from 300 to 1,000 alike)
_PYTHON_DECIDES = 400
#: loads below this compare exactly as float64, as numpy compares them
_FLOAT_SAFE = 1 << 53
#: from this many members a scan's order is sorted with numpy (loads must fit in int64)
_LEXSORT_FROM = 256
_INT64_SAFE = 1 << 62
_LAG = itemgetter(0)  # a held partition's lag
_DIST_KIND = itemgetter(0, 1)  # a candidate's (distance, kind)


def _smallest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k smallest finite values, in order."""
    if len(values) > k:
        idx = values.argpartition(k)[:k]
        idx = idx[values[idx].argsort(kind="stable")]
    else:
        idx = values.argsort(kind="stable")
    return idx[np.isfinite(values[idx])]


def _nearest(
    entries: list[tuple[float, int, int, int]], keep: int, cuts: list[float]
) -> list[tuple[float, int, int, int]]:
    """The entries (distance first) within the ``keep`` nearest, as numpy's partial sort keeps
    them, and every entry tied with the last kept; the cut's distance goes to ``cuts`` when ties
    straddle it (where numpy's choice among them is not known)."""
    if len(entries) <= keep:
        return entries
    entries.sort()
    cut = entries[keep - 1][0]
    if entries[keep][0] == cut:
        cuts.append(cut)
    return [e for e in entries if e[0] <= cut]


def _any_exchange(
    h_list: list[Held], h_lags: np.ndarray, l_lags: np.ndarray, gap: int, hand_over: bool
) -> bool:
    """Whether some hand-over (if allowed) or swap leaves both members strictly below the
    heavier one: a partition with lag in (0, gap), or a pair with 0 < p - q < gap (for each p
    the largest q below it is the one to look at). When not, ``_candidates_numpy`` finds
    nothing either: for each p it scores the q just above and just below p - gap/2, and one of
    those is in the gap whenever any is."""
    if hand_over:
        first = bisect_left(h_list, (1,))
        if first < len(h_list) and h_list[first][0] < gap:
            return True
    if not len(l_lags):
        return False
    below = l_lags.searchsorted(h_lags) - 1
    has = below >= 0
    return bool(np.logical_or.reduce(h_lags[has] - l_lags[below[has]] < gap))


def _resplit_floor(lags: list[int], sizes: list[int], total: int) -> int | None:
    """A lower bound on the heavier side of any split of the pool (sorted ``lags``, summing to
    ``total``) into a side of one of ``sizes`` partitions and the rest; None if no size fits.

    Either side is at least half the total, and the side with the largest partition holds at
    least it plus the smallest others that fill its count."""
    n = len(lags)
    if not n:
        return None
    largest = lags[-1]
    smallest = [0]  # sums of the k smallest partitions other than the largest
    for lg in lags[:-1]:
        smallest.append(smallest[-1] + lg)
    best = None
    for k in sizes:
        if not 0 <= k <= n:
            continue
        with_largest = min(
            largest + smallest[k - 1] if k else total, largest + smallest[n - k - 1] if k < n else total
        )
        bound = max(with_largest, (total + 1) // 2)
        if best is None or bound < best:
            best = bound
    return best


def _subsets(items: list[Held]) -> dict[int, list[tuple[int, int]]]:
    """Every subset of ``items`` as (sum of lags, bit mask), by size, each list sorted."""
    out: dict[int, list[tuple[int, int]]] = {0: [(0, 0)]}
    for i, (lg, _) in enumerate(items):
        bit = 1 << i
        for size in range(i, -1, -1):
            grown = [(total + lg, mask | bit) for total, mask in out.get(size, ())]
            if grown:
                out.setdefault(size + 1, []).extend(grown)
    for lst in out.values():
        lst.sort()
    return out


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
    """``_subsets`` as arrays: size, sum of lags and bit mask of every subset, sorted by size,
    then sum, then mask. The lags must sum to less than 2**53: the sums are then made as
    floats, exactly (every partial sum is an integer below 2**53), by BLAS (3-4 times faster
    than numpy's integer product at 7-10 items)."""
    masks, bits, sizes = _subset_bits(len(lags))
    sums = (bits @ np.array(lags, dtype=np.float64)).astype(np.int64)
    order = np.lexsort((masks, sums, sizes))
    return sizes[order], sums[order], masks[order]


class _Picked(Sequence[str]):
    """Members in a given order of their indices, looked up only as far as a scan reads."""

    def __init__(self, members: list[str], order: np.ndarray) -> None:
        self._members, self._order = members, order.tolist()
        self.array = order  # the member positions, as numpy's sort gave them

    def __len__(self) -> int:
        return len(self._order)

    def __getitem__(self, i):  # Sequence's two overloads: an index or a slice
        if isinstance(i, slice):
            return [self._members[j] for j in self._order[i]]
        return self._members[self._order[i]]

    def __iter__(self) -> Iterator[str]:
        return map(self._members.__getitem__, self._order)


class Search:
    """Mutable state of one local search: who holds what, loads, counts and moves."""

    def __init__(
        self,
        group: GroupSnapshot,
        layout: IndexLayout,
        max_moves: int | None,
        tie: Callable[[str], bytes] | dict[str, bytes],
        count_slack: int = 0,
    ) -> None:
        """``layout``: partition indices per member id; ``tie``: the tie key of a member id, or
        those keys already made, by id."""
        self.group = group
        self.lag = group.lags
        self.topic = group.columns.topics  # topic of each partition index
        self.topics = group.topics_of
        self.before = _owners(group)
        self.max_moves = max_moves
        self.tie = tie if isinstance(tie, dict) else {m.id: tie(m.id) for m in group.members}
        # ties as unsigned 64-bit integers order like the bytes only when all are 8 bytes long
        pair = _pairs(group).__getitem__
        self.held: dict[str, list[Held]] = {mid: sorted(map(pair, idx)) for mid, idx in layout.items()}
        # each member's lags, in the order of its held list: kept alongside it on every change
        self.lags_of: dict[str, list[int]] = {mid: list(map(_LAG, h)) for mid, h in self.held.items()}
        self._arrays: dict[str, np.ndarray] = {}
        self.attempts = 0  # exchanges looked at: the search's work, bounded by run()
        self.budget = 0
        self.load = {mid: sum(lg) for mid, lg in self.lags_of.items()}
        self._members = list(self.load)  # a fixed order of the members
        # every member holds only topics it subscribes to (then disjoint subscriptions mean
        # no exchange); pairs of subscriptions known to be apart, by the frozensets' ids
        topic = self.topic
        # one subscription, of every topic the group lists: nothing to look at
        self._held_subscribed = (
            group.identical_subscriptions and len(group.assignable_index) == len(topic)
        ) or all(self.topics[m].issuperset(map(topic.__getitem__, idx)) for m, idx in layout.items())
        self._apart_cache: dict[tuple[int, int], bool] = {}
        # one subscription for all (not empty): no two members are ever apart
        subscriptions = {self.topics[m] for m in self.held}
        self._may_be_apart = not (len(subscriptions) == 1 and all(subscriptions))
        self._position = {m: i for i, m in enumerate(self._members)}
        # numpy sort keys of a full scan (tie, load, smallest lag), made on first use; loads
        # never exceed their constant total, and 8-byte ties order like unsigned integers
        self._scan_keys: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._dirty: set[str] = set()
        self._fits_int64 = sum(self.load.values()) < _INT64_SAFE and all(
            len(t) == 8 for t in self.tie.values()
        )
        self._float_exact = sum(self.load.values()) < _FLOAT_SAFE
        self.count = {mid: len(h) for mid, h in self.held.items()}
        # Owned partitions nobody may hold any more (their topic lost its subscribers) have
        # moved whatever we do; they count, as scoring counts them.
        self.moves = _moves(group, self.before, layout)
        # Lazy heaps of (load, tie, member), lightest first and heaviest first; an entry is
        # current while its load equals the member's load (entries are pushed on every change).
        tie = self.tie
        self._light = [(load, tie[m], m) for m, load in self.load.items()]
        # Up to _RANKED members, one sorted list of (load, tie, member) instead of both heaps:
        # the same order, kept by replacing a member's one entry on every change.
        self._ranked: list[tuple[int, bytes, str]] | None = None
        if len(self._light) <= _RANKED:
            self._ranked = sorted(self._light)
            self._entry = {e[2]: e for e in self._ranked}
            self._light, self._heavy = [], []
        else:
            self._heavy = [(-load, tie[m], m) for m, load in self.load.items()]
            heapq.heapify(self._light)
            heapq.heapify(self._heavy)
        self.flexible = max(self.count.values()) - min(self.count.values()) <= 1
        floor, extra = divmod(sum(self.count.values()), len(self.count))
        self.count_range = (floor - count_slack, floor + (extra > 0) + count_slack)
        self._subscribers = group.subscribers
        # every member may receive every partition (``_may_receive`` always true): one
        # subscription for all, partitions only of its topics, counts that may move
        self._receives_all = self.flexible and self._held_subscribed and len(subscriptions) == 1
        self._min_count: dict[str, int] | None = None
        self._scans = 0
        self._order: Sequence[str] = []
        # for full scans with numpy (``_scan_picked``): loads by position, subscription classes
        self._loads_now: np.ndarray | None = None
        self._class_of: np.ndarray | None = None
        self._class_first: dict[int, str] = {}
        self._apart_masks: dict[frozenset[str], np.ndarray | None] = {}
        self._resplits: dict[tuple, int | None] = {}  # _best_resplit's answers, by what they rest on

    # -- the rules ---------------------------------------------------------------------------

    @property
    def min_count(self) -> dict[str, int]:
        """Smallest count among each topic's subscribers; with frozen counts it never changes,
        and only frozen counts need it, so it is computed on first use."""
        if self._min_count is None:
            self._min_count = {
                t: min(self.count[mid] for mid in subs) for t, subs in self._subscribers.items()
            }
        return self._min_count

    def _move_cost(self, tp: int, src: str, dst: str) -> int:
        ob = self.before.get(tp)
        if ob is None:
            return 0
        return (dst != ob) - (src != ob)

    def _may_receive(self, mid: str, tp: int) -> bool:
        topic = self.topic[tp]
        if topic not in self.topics[mid]:
            return False
        return self.flexible or self.min_count[topic] > self.count[mid] - 2

    def _may_hand_over(self, giver: str, taker: str) -> bool:
        """Whether one partition may pass from giver to taker under the count rules."""
        if not self.flexible:
            return False
        low, high = self.count_range
        return (
            self.count[giver] - 1 >= low
            and self.count[taker] + 1 <= high
            and (self.count[giver] > self.count[taker] or low < high - 1)
        )

    def _allowed(self, heavy: str, light: str, p: Held, q: Held | None) -> int | None:
        """Move cost of an exchange, or None if subscriptions, counts or max_moves forbid it."""
        if not self._receives_all and (
            not self._may_receive(light, p[1]) or (q is not None and not self._may_receive(heavy, q[1]))
        ):
            return None
        cost = 0
        before = self.before
        if before:  # _move_cost, inline: this runs for every candidate looked at
            ob = before.get(p[1])
            if ob is not None:
                cost = (light != ob) - (heavy != ob)
            if q is not None:
                ob = before.get(q[1])
                if ob is not None:
                    cost += (heavy != ob) - (light != ob)
        if self.max_moves is not None and self.moves + cost > self.max_moves:
            return None
        return cost

    # -- one exchange ------------------------------------------------------------------------

    def _lags(self, mid: str) -> np.ndarray:
        arr = self._arrays.get(mid)
        if arr is None:
            lags = self.lags_of[mid]  # fromiter: faster than np.array on a list of ints
            arr = self._arrays[mid] = np.fromiter(lags, np.int64, len(lags))
        return arr

    def _best_small(self, heavy: str, light: str, gap: int, half: float) -> tuple[Held, Held | None] | None:
        """``_best_exchange`` between two members with few partitions, in plain Python and one
        pass: every hand-over with lag in (0, gap), then every swap with 0 < p - q < gap (by
        heavy, then light partition); the first allowed one with the smallest (distance, moves
        as ``_allowed`` counts them).

        That is the choice of listing them all, sorting by (distance, kind) (stable) and taking
        the first of the smallest (distance, moves): the listing order already puts hand-overs
        (kind 0) first. Only a candidate at most as far as the best so far can win, so only
        those are counted.
        """
        h_list, l_list = self.held[heavy], self.held[light]
        h_lags = self.lags_of[heavy]
        allowed = self._allowed
        best: tuple[Held, Held | None] | None = None
        best_dist, best_cost = float("inf"), 0

        def consider(dist: float, p: Held, q: Held | None) -> None:
            nonlocal best, best_dist, best_cost
            cost = allowed(heavy, light, p, q)
            if cost is not None and (best is None or dist < best_dist or cost < best_cost):
                best, best_dist, best_cost = (p, q), dist, cost

        if self._may_hand_over(heavy, light):
            for i in range(bisect_right(h_lags, 0), bisect_left(h_lags, gap)):
                dist = abs(h_lags[i] - half)
                if dist <= best_dist:
                    consider(dist, h_list[i], None)
        if not l_list:
            return best
        l_lags = self.lags_of[light]
        # only heavy lags in (smallest, largest + gap) have a light one below them in the gap
        first, stop = bisect_right(h_lags, l_lags[0]), bisect_left(h_lags, l_lags[-1] + gap)
        if first >= stop:
            return best
        n_light = len(l_lags)
        below = bisect_left(l_lags, h_lags[first])  # first light lag not below the heavy one
        for i in range(first, stop):
            lg = h_lags[i]
            while below < n_light and l_lags[below] < lg:
                below += 1
            if lg - l_lags[below - 1] >= gap:
                continue  # even the nearest light lag below is a gap or more away
            # the light partitions q with 0 < p - q < gap: lags in [p - gap + 1, p - 1], a
            # slice of the sorted list, in its order
            for j in range(bisect_left(l_lags, lg - gap + 1, 0, below), below):
                dist = abs(lg - l_lags[j] - half)
                if dist <= best_dist:
                    consider(dist, h_list[i], l_list[j])
        return best

    def _candidates_numpy(self, heavy: str, light: str, gap: int, half: float) -> list[Candidate]:
        """The few most promising exchanges between two large members, scored with numpy: the
        4 best hand-overs, and each heavy partition against the two light partitions nearest
        to the ideal difference (12 best of those)."""
        h_list, l_list = self.held[heavy], self.held[light]
        h_lags, l_lags = self._lags(heavy), self._lags(light)
        out: list[Candidate] = []
        hand_over = self._may_hand_over(heavy, light)
        if not _any_exchange(h_list, h_lags, l_lags, gap, hand_over):
            return out  # what the scoring below would find too: nothing in the gap
        if hand_over:
            dist = np.abs(h_lags - half)
            dist[(h_lags <= 0) | (h_lags >= gap)] = np.inf
            out += [(float(dist[i]), 0, h_list[int(i)], None) for i in _smallest(dist, 4)]
        n_light = len(l_lags)
        if n_light:
            above = l_lags.searchsorted(h_lags - half)
            below = above - 1
            np.minimum(above, n_light - 1, out=above)
            np.maximum(below, 0, out=below)
            j = np.concatenate((below, above))
            d = np.concatenate((h_lags, h_lags)) - l_lags[j]
            dist = np.abs(d - half)
            dist[(d <= 0) | (d >= gap)] = np.inf
            n_heavy = len(h_lags)
            out += [
                (float(dist[k]), 1, h_list[int(k % n_heavy)], l_list[int(j[k])]) for k in _smallest(dist, 12)
            ]
        return out

    def _best_exchange(self, heavy: str, light: str) -> tuple[Held, Held | None] | None:
        """The allowed exchange that brings two members closest to their mean, or None.

        Only exchanges leaving both strictly below the heavier one's load are candidates;
        among equally close ones the one with fewer moves wins, then a hand-over over a swap.
        """
        gap = self.load[heavy] - self.load[light]
        self.attempts += 1
        if gap <= 1 or (self._may_be_apart and self._apart(heavy, light)):
            return None
        half = gap / 2
        n_heavy, n_light = len(self.held[heavy]), len(self.held[light])
        if n_heavy * (n_light + 1) <= _SMALL:
            return self._best_small(heavy, light, gap, half)
        if n_heavy + n_light <= _PYTHON_DECIDES and self._float_exact:
            decided, choice = self._decide_python(heavy, light, gap, half)
            if decided:
                return choice
        options = self._candidates_numpy(heavy, light, gap, half)
        if not options:
            return None
        if len(options) > 1:
            options.sort(key=_DIST_KIND)
        best, best_key = None, None
        for dist, _, p, q in options:
            if best_key is not None and dist > best_key[0]:
                break
            cost = self._allowed(heavy, light, p, q)
            if cost is not None and (best_key is None or (dist, cost) < best_key):
                best_key, best = (dist, cost), (p, q)
        return best

    def _decide_python(
        self, heavy: str, light: str, gap: int, half: float
    ) -> tuple[bool, tuple[Held, Held | None] | None]:
        """``_candidates_numpy`` and ``_best_exchange``'s choice among them, in plain Python:
        (True, the choice) or, where the choice would rest on the order numpy's argpartition
        gives equal distances, (False, None) and numpy decides.

        The same candidates: the hand-overs with lag in (0, gap), of which numpy keeps the 4
        nearest ``half``, and for each heavy partition the light ones just below and just
        above ``lag - half`` (a pair twice where both are the same), of which it keeps the 12
        nearest. Which of several equally near ones it keeps at the cut, and in what order it
        lists equally near ones, is numpy's: both only matter where the choice is made at the
        cut's distance, or between two exchanges of one kind equal in distance and moves.
        """
        h_list, l_list = self.held[heavy], self.held[light]
        h_lags, l_lags = self.lags_of[heavy], self.lags_of[light]
        # (distance, kind, heavy position, light position); the cut's distance where numpy's
        # choice of which equal ones to keep is unknown
        entries: list[tuple[float, int, int, int]] = []
        cuts: list[float] = []
        if self._may_hand_over(heavy, light):
            inside = range(bisect_right(h_lags, 0), bisect_left(h_lags, gap))  # lags in (0, gap)
            hands = [(abs(h_lags[i] - half), 0, i, 0) for i in inside]
            entries += hands if len(hands) <= 4 else _nearest(hands, 4, cuts)
        # only lags in (smallest, largest + gap) have a light partition below them in the gap
        first = stop = 0
        if l_lags:
            last = len(l_lags) - 1
            smallest = l_lags[0]
            first, stop = bisect_right(h_lags, smallest), bisect_left(h_lags, l_lags[last] + gap)
        if first < stop:
            swaps: list[tuple[float, int, int, int]] = []
            # Heavy lags with every light lag at or above lg - half pair only with the smallest
            # light partition (a pair twice), at a distance half - (lg - smallest) that falls
            # as the lag grows: of those only the last 7 (14 entries) and any as near as the
            # 7th can be among the 13 nearest swaps, all that ``_nearest`` reads (at 8 or more
            # of them there are more than 12 swaps with or without the others).
            # first lag with smallest < lag - half: in integers, lag > smallest + gap // 2; the
            # float test the loop below makes can only differ from 2**52 on, so it settles the
            # boundary (it only grows with the lag)
            low = bisect_right(h_lags, smallest + gap // 2, first, stop)
            while low > first and smallest < h_lags[low - 1] - half:
                low -= 1
            while low < stop and not smallest < h_lags[low] - half:
                low += 1
            start = first
            if low - first > 7:
                start = low - 7
                seventh = half - (h_lags[start] - smallest)
                while start > first and half - (h_lags[start - 1] - smallest) <= seventh:
                    start -= 1
            for i in range(start, low):
                d = h_lags[i] - smallest
                if d > 0:
                    swaps += ((half - d, 1, i, 0), (half - d, 1, i, 0))
            # bisect_left(l_lags, lag - half) for each heavy lag: it only grows with the lag (and
            # is at least 1 from ``low`` on)
            at = bisect_left(l_lags, h_lags[low] - half) if low < stop else 0
            # The light lag just below lg - half leaves d > half > 0, the one at or above it
            # d <= half < gap: one test each. Distances |d - half| as exact differences (all
            # values below 2**53). At the top end both are the same partition, a pair twice.
            for i in range(low, stop):
                lg = h_lags[i]
                t = lg - half
                while at <= last and l_lags[at] < t:
                    at += 1
                if at > last:  # every light lag is below lg - half
                    d = lg - l_lags[last]
                    if d < gap:
                        swaps += ((d - half, 1, i, last), (d - half, 1, i, last))
                else:
                    d = lg - l_lags[at - 1]
                    if d < gap:
                        swaps.append((d - half, 1, i, at - 1))
                    d = lg - l_lags[at]
                    if d > 0:
                        swaps.append((half - d, 1, i, at))
            entries += swaps if len(swaps) <= 12 else _nearest(swaps, 12, cuts)
        if not entries:
            return True, None
        entries.sort()
        best: tuple[Held, Held | None] | None = None
        best_key: tuple[float, int] | None = None
        best_kind, tied = 0, False
        allowed = self._allowed
        for dist, kind, i, j in entries:
            if best_key is not None and dist > best_key[0]:
                break
            p = h_list[i]
            q = None if kind == 0 else l_list[j]
            cost = allowed(heavy, light, p, q)
            if cost is None:
                continue
            key = (dist, cost)
            if best_key is None or key < best_key:
                best_key, best, best_kind, tied = key, (p, q), kind, False
            elif key == best_key and kind == best_kind and (p, q) != best:
                tied = True
        if best_key is None:
            return True, None  # none of numpy's candidates is allowed either
        if tied or best_key[0] in cuts:
            return False, None
        return True, best

    def _apart(self, heavy: str, light: str) -> bool:
        """Whether no exchange can be allowed because ``light`` subscribes to none of the
        topics ``heavy`` holds (members of different subscriptions, e.g. Kafka's benchmark
        buckets): known per pair of subscriptions, without building the candidates."""
        a, b = self.topics[heavy], self.topics[light]
        key = (id(a), id(b))
        apart = self._apart_cache.get(key)
        if apart is None:
            apart = self._apart_cache[key] = self._held_subscribed and a.isdisjoint(b)
        return apart

    def _apply(self, giver: str, taker: str, p: Held, q: Held | None) -> None:
        """Hand p from giver to taker and, for a swap, q back."""
        before, load = self.before, self.load
        held_giver, held_taker = self.held[giver], self.held[taker]
        lags_giver, lags_taker = self.lags_of[giver], self.lags_of[taker]
        moves = self.moves
        lag, tp = p
        owner = before.get(tp) if before else None
        if owner is not None:  # _move_cost, inline
            moves += (taker != owner) - (giver != owner)
        i = bisect_left(held_giver, p)  # held lists are sorted and hold each pair once
        del held_giver[i], lags_giver[i]
        i = bisect_left(held_taker, p)
        held_taker.insert(i, p)
        lags_taker.insert(i, lag)
        load[giver] -= lag
        load[taker] += lag
        if q is None:
            self.count[giver] -= 1
            self.count[taker] += 1
        else:
            lag, tp = q
            owner = before.get(tp) if before else None
            if owner is not None:
                moves += (giver != owner) - (taker != owner)
            i = bisect_left(held_taker, q)
            del held_taker[i], lags_taker[i]
            i = bisect_left(held_giver, q)
            held_giver.insert(i, q)
            lags_giver.insert(i, lag)
            load[taker] -= lag
            load[giver] += lag
        self.moves = moves
        # _touched and _pushed, inline for the common case (a few members, no numpy state yet)
        ranked = self._ranked
        if ranked is None or self._scan_keys is not None or self._loads_now is not None:
            self._touched(giver, taker)
            self._pushed(giver, taker)
            return
        if self._arrays:
            self._arrays.pop(giver, None)
            self._arrays.pop(taker, None)
        entry = self._entry
        for m in (giver, taker):
            old = entry[m]
            del ranked[bisect_left(ranked, old)]
            new = entry[m] = (load[m], old[1], m)
            insort(ranked, new)

    def _pushed(self, *members: str) -> None:
        """Members whose loads changed: new heap entries, and the load array if made."""
        ranked = self._ranked
        if ranked is not None and self._loads_now is None:  # the common case, in short
            entry, load = self._entry, self.load
            for m in members:
                old = entry[m]
                del ranked[bisect_left(ranked, old)]
                new = entry[m] = (load[m], old[1], m)
                insort(ranked, new)
            return
        for m in members:
            if ranked is not None:
                old = self._entry[m]
                del ranked[bisect_left(ranked, old)]
                new = self._entry[m] = (self.load[m], old[1], m)
                insort(ranked, new)
            else:
                heapq.heappush(self._light, (self.load[m], self.tie[m], m))
                heapq.heappush(self._heavy, (-self.load[m], self.tie[m], m))
            if self._loads_now is not None:
                self._loads_now[self._position[m]] = self.load[m]

    # -- which members to pair ---------------------------------------------------------------

    def _lightest(self, k: int) -> list[str]:
        """The k lightest members (fewer if there are fewer), lightest first."""
        if self._ranked is not None:
            return [e[2] for e in self._ranked[:k]]
        out: list[tuple] = []
        heap = self._light
        while heap and len(out) < k:
            entry = heapq.heappop(heap)
            if entry[0] == self.load[entry[2]] and (not out or out[-1][2] != entry[2]):
                out.append(entry)
        for entry in out:
            heapq.heappush(heap, entry)
        return [e[2] for e in out]

    def _scan_order(self) -> Sequence[str]:
        """Members holding the smallest partitions first: the order of a full scan.

        Sorting every member is the costly part of a full scan, so the order is reused for a
        few scans (an order a little out of date only changes which partner is tried first);
        the sort is counted as work, like the exchanges it saves.
        """
        self._scans += 1
        if self._scans % 16 == 1:
            self._order = self._smallest_held_first()
            self.attempts += len(self._order) // 16
        return self._order

    def _smallest_held_first(self) -> Sequence[str]:
        """Members by (smallest partition held, load, tie). On thousands of members, numpy's
        stable lexsort over arrays kept up to date member by member gives the order ``sorted``
        gives, in a fraction of the time."""
        held, load, tie = self.held, self.load, self.tie
        members = self._members
        if len(members) < _LEXSORT_FROM or not self._fits_int64:
            return sorted(members, key=lambda m: (held[m][0][0] if held[m] else 0, load[m], tie[m]))
        return _Picked(members, self._lexsorted())

    def _lexsorted(self) -> np.ndarray:
        held, load, tie = self.held, self.load, self.tie
        members = self._members
        if self._scan_keys is None:
            ties = np.fromiter((int.from_bytes(tie[m], "big") for m in members), np.uint64, len(members))
            firsts = np.array([h[0][0] if h else 0 for h in map(held.__getitem__, members)], np.int64)
            loads = np.array(list(map(load.__getitem__, members)), np.int64)
            self._scan_keys = (ties, loads, firsts)
        else:
            _, loads, firsts = self._scan_keys
            position = self._position
            for m in self._dirty:
                i = position[m]
                firsts[i] = held[m][0][0] if held[m] else 0
                loads[i] = load[m]
        self._dirty.clear()
        return np.lexsort(self._scan_keys)

    def _touched(self, *members: str) -> None:
        """Members whose partitions changed: their cached arrays and sort keys are stale."""
        for m in members:
            self._arrays.pop(m, None)
        if self._scan_keys is not None:  # before they are made, nothing is stale
            self._dirty.update(members)

    def _heaviest(self) -> str:
        ranked = self._ranked
        if ranked is not None:  # the first of the largest load: the smallest tie among them
            return ranked[bisect_left(ranked, (ranked[-1][0],))][2]
        heap = self._heavy
        while -heap[0][0] != self.load[heap[0][2]]:
            heapq.heappop(heap)
        return heap[0][2]

    def _improve_member(self, heavy: str, partners: int | None, stuck: set[str] | None = None) -> bool:
        """One exchange lowering ``heavy`` with the lightest member that allows one.

        With ``partners`` None every lighter member is tried, those holding the smallest
        partitions first: a member stuck with one huge partition can only trade its small
        ones for smaller ones, wherever they are.

        ``stuck``: the partners found without an exchange are added to it; a full scan that
        follows with nothing changed in between counts those as looked at, without a look.
        """
        order: Iterable[str] = self._scan_order() if partners is None else self._lightest(partners)
        if type(order) is _Picked:  # not isinstance: an ABC check on every call, and none subclass it
            return self._scan_picked(heavy, order)
        for light in order:
            if self.attempts >= self.budget:
                return False
            if self.load[light] >= self.load[heavy]:
                if partners is None:
                    continue
                return False
            if stuck is not None and partners is None and light in stuck:
                self.attempts += 1  # as _best_exchange counts it
                continue
            exchange = self._best_exchange(heavy, light)
            if exchange is not None:
                self._apply(heavy, light, *exchange)
                return True
            if stuck is not None:
                stuck.add(light)
        return False

    def _scan_picked(self, heavy: str, order: _Picked) -> bool:
        """``_improve_member``'s full scan over thousands of members, with numpy: the members
        lighter than ``heavy`` are found at once, and those whose subscription shares no topic
        with it (``_apart``, no exchange possible) are counted as looked at without a call.
        The same exchanges, in the same order, and the same count of work as member by member."""
        positions = order.array
        load_h = self.load[heavy]
        lighter = positions[self._load_array()[positions] < load_h]
        apart = self._apart_mask(heavy)
        ranks = range(len(lighter)) if apart is None else np.flatnonzero(~apart[lighter]).tolist()
        start, budget = self.attempts, self.budget
        members = self._members
        for k in ranks:
            if start + k >= budget:  # member by member, the scan stops where the work runs out
                self.attempts = max(start, budget)
                return False
            self.attempts = start + k  # the apart members before this one, each looked at once
            light = members[lighter[k]]
            exchange = self._best_exchange(heavy, light)
            if exchange is not None:
                self._apply(heavy, light, *exchange)
                return True
        self.attempts = max(start, budget) if start + len(lighter) >= budget else start + len(lighter)
        return False

    def _load_array(self) -> np.ndarray:
        """Loads by member position, kept up to date on every change (made on first use)."""
        if self._loads_now is None:
            self._loads_now = np.array([self.load[m] for m in self._members], np.int64)
        return self._loads_now

    def _apart_mask(self, heavy: str) -> np.ndarray | None:
        """Per member position, whether ``_apart(heavy, member)``; None when no member is."""
        if not self._held_subscribed:
            return None
        key = self.topics[heavy]
        if key not in self._apart_masks:
            if self._class_of is None:  # members by subscription (equal topic sets)
                number: dict[frozenset[str], int] = {}
                self._class_of = np.array(
                    [number.setdefault(self.topics[m], len(number)) for m in self._members], np.int64
                )
                self._class_first = {}
                for m, c in zip(self._members, self._class_of.tolist(), strict=True):
                    self._class_first.setdefault(c, m)
            by_class = np.array(
                [self._apart(heavy, self._class_first[c]) for c in range(len(self._class_first))], bool
            )
            self._apart_masks[key] = by_class[self._class_of] if by_class.any() else None
        return self._apart_masks[key]

    # -- the search --------------------------------------------------------------------------

    def run(self, floor: int, sweep: bool = True) -> None:
        """Lower the heaviest member while possible, then (``sweep``) once more for the spread.

        Bounded work: it stops once the heaviest is at ``floor`` and after ``WORK_PER_ITEM``
        exchanges looked at per member and partition, so huge groups end in seconds with what
        the search reached by then.
        """
        # Every step looks at one exchange at least, so the budget bounds the steps too.
        items = len(self.load) + sum(self.count.values())
        self.budget = self.attempts + MIN_WORK + WORK_PER_ITEM * items
        while True:
            before = self.max_lag
            self._descend(floor)
            for heavy in sorted(self.load, key=lambda m: (-self.load[m], self.tie[m])) if sweep else ():
                while self._improve_member(heavy, 4):
                    pass
            self._undo_needless_moves()
            # Sweeping and sending partitions home reshape the lighter members; that can open
            # an exchange for the heaviest again: one more descent while it pays.
            if self.max_lag <= floor or self.max_lag >= before or self.attempts >= self.budget:
                break

    def _descend(self, floor: int) -> None:
        """Lower the heaviest member while some exchange or re-split allows it."""
        while True:
            heavy = self._heaviest()
            if self.load[heavy] <= floor:
                return
            # The lightest few first; all of them only to prove the heaviest is stuck; then
            # deal two members' partitions out afresh (a swap of several for several).
            stuck: set[str] = set()
            improved = self._improve_member(heavy, 4, stuck) or self._improve_member(heavy, None, stuck)
            if not (improved or self._resplit_member(heavy)):
                return

    # -- re-splits: many-for-many exchanges between two members -----------------------------

    def _resplit_member(self, heavy: str) -> bool:
        """Lower ``heavy`` by re-splitting its partitions with one of the few lightest members'."""
        for light in self._lightest(RESPLIT_PARTNERS):
            if self.attempts >= self.budget:
                return False
            if self.load[light] >= self.load[heavy] or light == heavy:
                continue
            if len(self.held[heavy]) + len(self.held[light]) > RESPLIT_MAX_ITEMS:
                continue
            split = self._best_resplit(heavy, light)
            if split is not None:
                self._replace(heavy, light, split)
                return True
        return False

    def _best_resplit(self, heavy: str, light: str) -> list[Held] | None:
        """The partitions ``heavy`` should keep, out of both members', so that the heavier of
        the two ends lowest (strictly below ``heavy``'s load now), or None.

        The counts stay as they are, or shift by one where the count rules allow a hand-over;
        partitions change sides only to members that may receive them, within ``max_moves``.
        """
        pool = self.held[heavy] + self.held[light]
        if self.topics[heavy] != self.topics[light]:
            return None  # different subscriptions: the pairwise exchanges cover those
        total = self.load[heavy] + self.load[light]
        sizes = [len(self.held[heavy])]
        if self._may_hand_over(heavy, light):
            sizes.append(sizes[0] - 1)
        if self._may_hand_over(light, heavy):
            sizes.append(sizes[0] + 1)
        half = len(pool) // 2
        # Counted as work like the exchanges: one per 16 subset sums looked at.
        self.attempts += 1 + (len(sizes) * (1 << half) + (1 << (len(pool) - half))) // 16
        # No split of these sizes can bring the heavier side below ``heavy``'s load: nothing to
        # look for (the same None the subset sums would end with; 484 of 887 on the mix).
        floor = _resplit_floor(sorted(self.lags_of[heavy] + self.lags_of[light]), sizes, total)
        if floor is None or floor >= self.load[heavy]:
            return None
        # The answer rests on the two members, their partitions, the counts they may end with
        # and the moves left: a stuck member meets the same pool again after a sweep elsewhere.
        key = (
            heavy,
            light,
            tuple(pool),
            tuple(sizes),
            self.max_moves,
            self.moves if self.max_moves is not None else 0,
        )
        if key in self._resplits:
            best_mask = self._resplits[key]
        elif len(pool) >= _RESPLIT_NUMPY_FROM and total < _FLOAT_SAFE:
            best_mask = self._resplits[key] = self._resplit_numpy(heavy, light, pool, sizes, total)
        else:
            best_mask = self._resplits[key] = self._resplit_python(heavy, light, pool, sizes, total)
        if best_mask is None:
            return None
        return [p for i, p in enumerate(pool) if best_mask >> i & 1]

    def _resplit_python(
        self, heavy: str, light: str, pool: list[Held], sizes: list[int], total: int
    ) -> int | None:
        """``_best_resplit``'s meet in the middle: for each count ``heavy`` may end with, each
        subset of the first half against the two of the second half whose sums bring the
        total nearest to half the pool's; the first of the lowest allowed (mask of the pool)."""
        half = len(pool) // 2
        left, right = _subsets(pool[:half]), _subsets(pool[half:])
        best_worst, best_mask = self.load[heavy], None
        target = total / 2
        for size in sizes:
            for a, sums_a in left.items():
                sums_b = right.get(size - a)
                if not sums_b:
                    continue
                keys = [sb for sb, _ in sums_b]
                for sa, mask_a in sums_a:
                    k = bisect_left(keys, target - sa)
                    for sb, mask_b in sums_b[k - 1 if k else 0 : k + 1]:
                        heavier = sa + sb
                        worst = heavier if heavier >= total - heavier else total - heavier
                        if worst < best_worst:
                            mask = mask_a | (mask_b << half)
                            if self._resplit_allowed(heavy, light, pool, mask):
                                best_worst, best_mask = worst, mask
        return best_mask

    def _resplit_numpy(
        self, heavy: str, light: str, pool: list[Held], sizes: list[int], total: int
    ) -> int | None:
        """``_resplit_python``'s answer with every subset sum at once: the pairs it looks at,
        in its order; of those below ``heavy``'s load, the lowest, first in that order, that
        is allowed. Sums must stay below 2**53 (the halves' targets are then exact)."""
        half = len(pool) // 2
        l_size, l_sum, l_mask = _subset_table([p[0] for p in pool[:half]])
        r_size, r_sum, r_mask = _subset_table([p[0] for p in pool[half:]])
        n_right = len(pool) - half
        span = total + 3
        r_keys = r_size * span + r_sum + 1  # ascending: by size, then sum
        start = r_size.searchsorted(np.arange(n_right + 2))
        # bisect_left(sums, total / 2 - sa) over integer sums: the same as for its ceiling
        x = np.minimum(np.maximum((total + 1) // 2 - l_sum, -1), total + 1) + 1  # clip
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
        below = (worst < self.load[heavy]).nonzero()[0]
        if not len(below):
            return None
        below = below[np.lexsort((order[below], worst[below]))]
        masks = (l_mask[left_rows[below]] | (r_mask[right_rows[below]] << half)).tolist()
        for mask in masks:
            if self._resplit_allowed(heavy, light, pool, mask):
                return mask
        return None

    def _resplit_allowed(self, heavy: str, light: str, pool: list[Held], mask: int) -> bool:
        n_heavy = len(self.held[heavy])
        cost = 0
        for i, p in enumerate(pool):
            stays_heavy = bool(mask >> i & 1)
            was_heavy = i < n_heavy
            if stays_heavy == was_heavy:
                continue
            src, dst = (heavy, light) if was_heavy else (light, heavy)
            if not self._may_receive(dst, p[1]):
                return False
            cost += self._move_cost(p[1], src, dst)
        return self.max_moves is None or self.moves + cost <= self.max_moves

    def _replace(self, heavy: str, light: str, keep: list[Held]) -> None:
        """``heavy`` keeps ``keep``; ``light`` gets the rest of both members' partitions."""
        kept = set(keep)
        for p in list(self.held[heavy]):
            if p not in kept:
                self._move_one(heavy, light, p)
        for p in list(self.held[light]):
            if p in kept:
                self._move_one(light, heavy, p)
        self._pushed(heavy, light)

    def _move_one(self, giver: str, taker: str, p: Held) -> None:
        self.moves += self._move_cost(p[1], giver, taker)
        held, lags = self.held[giver], self.lags_of[giver]
        i = bisect_left(held, p)
        del held[i], lags[i]
        held, lags = self.held[taker], self.lags_of[taker]
        i = bisect_left(held, p)
        held.insert(i, p)
        lags.insert(i, p[0])
        self.load[giver] -= p[0]
        self.load[taker] += p[0]
        self.count[giver] -= 1
        self.count[taker] += 1
        self._touched(giver, taker)

    def _undo_needless_moves(self) -> None:
        """Send displaced partitions back home where max lag and spread do not grow."""
        if not self.before:
            return  # nothing was owned: nothing to send home
        load, held = self.load, self.held
        lo, hi = min(load.values()), max(load.values())
        before = self.before
        # Per member, its partitions that are not at home there (displaced, or owned by nobody),
        # by lag: the only ones a member can give back in a swap; kept up to date below.
        get = before.get
        away = {m: [q for q in h if get(q[1]) != m] for m, h in held.items()}
        may_hand_over, allowed, apply = self._may_hand_over, self._allowed, self._apply
        # Sending p home saves its move, and a q that comes back costs none (it is away from
        # home where it is): every exchange here lowers the moves. So where every member may
        # receive every partition (``_receives_all``) and the moves are within ``max_moves``
        # (they only fall here), ``_allowed`` would allow each one: it is not asked.
        free = self._receives_all and (self.max_moves is None or self.moves <= self.max_moves)
        for mid in sorted(held):
            # the member's displaced partitions, as its list reads when the loop gets here; of
            # these only the one at hand leaves ``mid`` (what it gets back is not in the list)
            for p in [p for p in away[mid] if p[1] in before]:
                lag = p[0]
                home = before[p[1]]
                gives, keeps = lag + load[home], load[mid] - lag
                if (
                    lo <= keeps
                    and gives <= hi
                    and may_hand_over(mid, home)
                    and (free or allowed(mid, home, p, None) is not None)
                ):
                    apply(mid, home, p, None)
                    away[mid].remove(p)
                    continue
                # A swap: q from home to mid keeping both loads within [lo, hi]; a q at home
                # there would move, not come back: only those away from home are looked at.
                # (The window of q's lag is never empty: both members are within [lo, hi].)
                home_away = away[home]
                if not home_away:
                    continue
                low_q, high_q = gives - hi, gives - lo
                if lo - keeps > low_q:
                    low_q = lo - keeps
                if hi - keeps < high_q:
                    high_q = hi - keeps
                if home_away[-1][0] < low_q or home_away[0][0] > high_q:
                    continue  # every lag away from home there is outside the window
                k = bisect_left(home_away, (low_q,))
                while k < len(home_away) and home_away[k][0] <= high_q:
                    q = home_away[k]
                    cost = -1 if free else allowed(mid, home, p, q)
                    if cost is not None and cost < 0:
                        apply(mid, home, p, q)
                        away[mid].remove(p)
                        del home_away[k]
                        if before.get(q[1]) != mid:
                            insort(away[mid], q)
                        break
                    k += 1

    # -- results -----------------------------------------------------------------------------

    def layout(self) -> Layout:
        """TopicPartitions per member id, each member's by lag."""
        tps = self.group.tps
        return {mid: [tps[i] for _, i in h] for mid, h in self.held.items()}

    def layout_index(self) -> IndexLayout:
        """Partition indices per member id, each member's by lag."""
        return {mid: [i for _, i in h] for mid, h in self.held.items()}

    @property
    def max_lag(self) -> int:
        return max(self.load.values())

    @property
    def spread(self) -> int:
        return self.max_lag - min(self.load.values())


class Seed:
    """A layout only compared, never searched: what ``pick`` reads of a search, made without
    a search's state (heaps, sorted lists, numpy keys)."""

    def __init__(self, group: GroupSnapshot, layout: IndexLayout) -> None:
        self.group = group
        self._layout = layout
        lags = group.lags
        self.loads = {mid: sum(map(lags.__getitem__, idx)) for mid, idx in layout.items()}
        self.moves = _moves(group, _owners(group), layout)

    @property
    def max_lag(self) -> int:
        return max(self.loads.values())

    @property
    def spread(self) -> int:
        return self.max_lag - min(self.loads.values())

    def layout_index(self) -> IndexLayout:
        """Partition indices per member id, each member's by lag (as a search gives them)."""
        lags = self.group.lags
        return {mid: sorted(idx, key=lambda i: (lags[i], i)) for mid, idx in self._layout.items()}

    def layout(self) -> Layout:
        tps = self.group.tps
        return {mid: [tps[i] for i in idx] for mid, idx in self.layout_index().items()}


def _owners(group: GroupSnapshot) -> dict[int, str]:
    """Current owner id of each owned partition index (owned partitions the group lists);
    made once per group (read-only)."""
    if not group.owned_count:
        return {}
    if "lagsearch:owners" not in group.memo:
        ids = group.member_ids
        group.memo["lagsearch:owners"] = {i: ids[m] for i, m in enumerate(group.owner_index) if m >= 0}
    return group.memo["lagsearch:owners"]


def _pairs(group: GroupSnapshot) -> list[Held]:
    """(lag, index) of every partition index, made once per group (read-only): a search's
    held lists are sorted lists of these, shared rather than built anew for each seed."""
    if "lagsearch:pairs" not in group.memo:
        group.memo["lagsearch:pairs"] = list(zip(group.lags, range(len(group.lags)), strict=True))
    return group.memo["lagsearch:pairs"]


def _moves(group: GroupSnapshot, before: dict[int, str], layout: IndexLayout) -> int:
    """Owned partitions that end with another owner, or with none (also those the group does
    not list, or whose topic nobody subscribes to any more)."""
    if not group.owned_count:
        return 0
    get = before.get
    kept = sum(list(map(get, idx)).count(mid) for mid, idx in layout.items())
    return group.owned_count - kept


def to_index(group: GroupSnapshot, layout: Layout) -> IndexLayout:
    """A layout of TopicPartitions as partition indices."""
    index = group.index_of
    return {mid: list(map(index.__getitem__, tps)) for mid, tps in layout.items()}


def pick(results: Sequence[Search | Seed]) -> Search | Seed | None:
    """Smallest max lag; among answers that equal it, fewest moves, then smallest spread.

    Each search already lowers the spread as far as its exchanges can; between answers with
    the same max lag, keeping partitions where they are is worth more than a smaller spread.
    """
    return min(results, key=lambda r: (r.max_lag, r.moves, r.spread), default=None)
