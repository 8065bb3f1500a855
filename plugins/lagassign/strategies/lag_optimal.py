"""lag-optimal: balanced counts, then the smallest possible largest member lag, with few moves.

Method, in short:
1. Seeds, each already meeting the count guarantee of ``lag-aware``: a group-wide
   longest-lag-first pass (ties broken by a hash of the member id, so no member is favoured
   for sorting first), the sticky assignment (keeps owned partitions), and the answers of
   ``lag-aware`` and of ``lag`` (the latter only when it meets the guarantee).
2. Local search on each seed: the heaviest member exchanges load with a lighter one, by
   handing over a partition where counts allow it or by swapping two partitions, choosing the
   exchange that brings the two closest to their mean. A step is taken only if both end
   strictly below the heavier one's old load, so the sorted load vector falls
   lexicographically: the largest lag first, then the spread, and the search always ends.
3. Partitions that left their owner are sent back (moved or swapped home) wherever that keeps
   every load within the current min and max: fewer moves at no cost in balance.
4. The best seed wins: smallest max lag, then fewest moves, then smallest spread. Later seeds
   search only until they match the leader's max lag, within fewer moves than it needs.

Count rules during the search: while all counts are within one of each other (always so with
identical subscriptions) a partition may pass from a member at the high count to one at the
low count; otherwise counts are frozen and a swap is allowed only where no member with two or
more fewer partitions could take the partition a member receives. Options:

* ``max_moves`` caps the partitions that leave their current owner; a step that would
  exceed it is not taken, and a group whose counts cannot be balanced within it is refused.
* ``count_slack`` (default 0) is the knob between count balance and lag balance: members may
  hold up to that many partitions fewer than floor(P/N) or more than ceil(P/N) when it
  lowers the largest lag (shared-subscription groups; mixed ones keep the guarantee).
"""

from __future__ import annotations

import hashlib
import heapq
from bisect import bisect_left, insort
from collections.abc import Iterable

import numpy as np

from ..errors import StrategyOptionError, StrategyRefusedError
from ..model import Assignment, GroupSnapshot, TopicPartition
from ..scoring import lower_bound_max_lag
from .base import Strategy, build
from .lag import LagStrategy
from .lag_aware import lag_aware_layout
from .loadbook import LoadBook, balance_counts
from .sticky import sticky_assignment

Layout = dict[str, list[TopicPartition]]


def _tie_key(group: str):
    def key(mid: str) -> bytes:
        return hashlib.blake2b(f"{group}\x00{mid}".encode(), digest_size=8).digest()

    return key


def meets_count_guarantee(group: GroupSnapshot, layout: Layout) -> bool:
    """Kafka's balance condition: no member 2+ partitions short could take another's partition."""
    counts = {mid: len(tps) for mid, tps in layout.items()}
    if max(counts.values()) - min(counts.values()) <= 1:
        return True
    min_by_topic = {
        t: min(counts[mid] for mid in subs) for t, subs in group.subscribers.items()
    }
    return all(
        min_by_topic[tp.topic] > counts[mid] - 2 for mid, tps in layout.items() for tp in tps
    )


# Exchanges a search may look at: a floor (small groups are cheap, search them well) plus so
# many per member and per partition of the group.
MIN_WORK = 2_000
WORK_PER_ITEM = 4

# Below this many candidate pairs an exchange is searched in plain Python.
_SMALL = 160


def _smallest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k smallest finite values, in order."""
    if len(values) > k:
        idx = np.argpartition(values, k)[:k]
        idx = idx[np.argsort(values[idx], kind="stable")]
    else:
        idx = np.argsort(values, kind="stable")
    return idx[np.isfinite(values[idx])]


def _capped_longest_first(group: GroupSnapshot, tie) -> Layout:
    """Longest-lag-first to the least-loaded member that still has room under its count quota.

    For a shared subscription: every member ends with floor(P/N) or ceil(P/N) partitions,
    and only P mod N of them with the ceiling, so the zero-lag tail fills the counts last.
    """
    lag = group.lag
    n = len(group.members)
    floor, ceil_slots = divmod(len(group.assignable), n)
    ties = {mid: tie(mid) for mid in group.member_ids}
    heap = [(0, ties[mid], mid) for mid in group.member_ids]
    heapq.heapify(heap)
    layout: Layout = {mid: [] for mid in group.member_ids}
    for tp in sorted(group.assignable, key=lambda tp: (-lag[tp], tp)):
        while True:
            load, t, mid = heapq.heappop(heap)
            room = len(layout[mid]) < floor or (len(layout[mid]) == floor and ceil_slots > 0)
            if room:
                break
            # Full: drop it from the heap for good.
        if len(layout[mid]) == floor:
            ceil_slots -= 1
        layout[mid].append(tp)
        heapq.heappush(heap, (load + lag[tp], t, mid))
    return layout


class _Search:
    """Mutable state of one local search: who holds what, loads, counts and moves."""

    def __init__(
        self, group: GroupSnapshot, layout: Layout, max_moves: int | None, tie, count_slack: int = 0
    ) -> None:
        self.lag = group.lag
        self.topics = {m.id: m.topics for m in group.members}
        self.before = group.owner
        self.max_moves = max_moves
        self.tie = {m.id: tie(m.id) for m in group.members}
        self.held: dict[str, list[tuple[int, TopicPartition]]] = {
            mid: sorted((self.lag[tp], tp) for tp in tps) for mid, tps in layout.items()
        }
        self._arrays: dict[str, np.ndarray] = {}
        self.attempts = 0  # exchanges looked at: the search's work, bounded by run()
        self.budget = 0
        self.load = {mid: sum(lg for lg, _ in h) for mid, h in self.held.items()}
        self.count = {mid: len(h) for mid, h in self.held.items()}
        held_now = {tp for h in self.held.values() for _, tp in h}
        # Owned partitions nobody may hold any more (their topic lost its subscribers) have
        # moved whatever we do; they count, as scoring counts them.
        self.moves = sum(1 for tp in self.before if tp not in held_now) + sum(
            1 for mid, h in self.held.items() for _, tp in h if self.before.get(tp, mid) != mid
        )
        # Lazy heaps of (load, tie, member), lightest first and heaviest first; an entry is
        # current while its load equals the member's load (entries are pushed on every change).
        self._light = [(load, self.tie[m], m) for m, load in self.load.items()]
        self._heavy = [(-load, self.tie[m], m) for m, load in self.load.items()]
        heapq.heapify(self._light)
        heapq.heapify(self._heavy)
        self.flexible = max(self.count.values()) - min(self.count.values()) <= 1
        floor, extra = divmod(sum(self.count.values()), len(self.count))
        self.count_range = (floor - count_slack, floor + (extra > 0) + count_slack)
        self._subscribers = group.subscribers
        self._min_count: dict[str, int] | None = None

    @property
    def min_count(self) -> dict[str, int]:
        """Smallest count among each topic's subscribers; with frozen counts it never changes,
        and only frozen counts need it, so it is computed on first use."""
        if self._min_count is None:
            self._min_count = {
                t: min(self.count[mid] for mid in subs) for t, subs in self._subscribers.items()
            }
        return self._min_count

    def _lags(self, mid: str) -> np.ndarray:
        arr = self._arrays.get(mid)
        if arr is None:
            arr = self._arrays[mid] = np.fromiter((lg for lg, _ in self.held[mid]), np.int64)
        return arr

    def _move_cost(self, tp: TopicPartition, src: str, dst: str) -> int:
        ob = self.before.get(tp)
        if ob is None:
            return 0
        return (dst != ob) - (src != ob)

    def _may_receive(self, mid: str, tp: TopicPartition) -> bool:
        if tp.topic not in self.topics[mid]:
            return False
        return self.flexible or self.min_count[tp.topic] > self.count[mid] - 2

    def _may_hand_over(self, giver: str, taker: str) -> bool:
        """Whether one partition may pass from giver to taker under the count rules."""
        if not self.flexible:
            return False
        low, high = self.count_range
        return self.count[giver] - 1 >= low and self.count[taker] + 1 <= high and (
            self.count[giver] > self.count[taker] or low < high - 1
        )

    def _allowed(self, heavy: str, light: str, p, q) -> int | None:
        """Move cost of an exchange, or None if subscriptions, counts or max_moves forbid it."""
        if not self._may_receive(light, p[1]) or (q is not None and not self._may_receive(heavy, q[1])):
            return None
        cost = self._move_cost(p[1], heavy, light)
        if q is not None:
            cost += self._move_cost(q[1], light, heavy)
        if self.max_moves is not None and self.moves + cost > self.max_moves:
            return None
        return cost

    def _best_exchange(self, heavy: str, light: str):
        """The exchange between two members that brings them closest to their mean, or None.

        Candidates are scored with numpy (each heavy partition against the light partitions
        nearest to the ideal difference); the few best are checked against the rules in order.
        """
        gap = self.load[heavy] - self.load[light]
        self.attempts += 1
        if gap <= 1:
            return None
        half = gap / 2
        h_list, l_list = self.held[heavy], self.held[light]
        if len(h_list) * (len(l_list) + 1) <= _SMALL:
            return self._best_exchange_small(heavy, light, gap, half)
        h_lags, l_lags = self._lags(heavy), self._lags(light)
        options: list[tuple[float, int, object]] = []  # (distance from ideal, kind, indices)
        if self._may_hand_over(heavy, light):
            dist = np.abs(h_lags - half)
            dist[(h_lags <= 0) | (h_lags >= gap)] = np.inf
            for i in _smallest(dist, 4):
                options.append((float(dist[i]), 0, (int(i), -1)))
        n_light = len(l_lags)
        if n_light:
            above = np.searchsorted(l_lags, h_lags - half)
            below = above - 1
            np.minimum(above, n_light - 1, out=above)
            np.maximum(below, 0, out=below)
            j = np.concatenate((below, above))
            d = np.concatenate((h_lags, h_lags)) - l_lags[j]
            dist = np.abs(d - half)
            dist[(d <= 0) | (d >= gap)] = np.inf
            n_heavy = len(h_lags)
            for k in _smallest(dist, 12):
                options.append((float(dist[k]), 1, (int(k % n_heavy), int(j[k]))))
        options.sort(key=lambda o: (o[0], o[1]))
        best, best_key = None, None
        for dist, _, (i, j) in options:
            if best_key is not None and dist > best_key[0]:
                break
            p, q = h_list[i], (l_list[j] if j >= 0 else None)
            cost = self._allowed(heavy, light, p, q)
            if cost is None:
                continue
            key = (dist, cost)
            if best_key is None or key < best_key:
                best_key, best = key, (p, q)
        return best

    def _best_exchange_small(self, heavy: str, light: str, gap: int, half: float):
        """``_best_exchange`` for members with few partitions: every pair, in plain Python
        (numpy's per-call overhead dominates there)."""
        options = []
        h_list, l_list = self.held[heavy], self.held[light]
        if self._may_hand_over(heavy, light):
            options += [(abs(p[0] - half), 0, p, None) for p in h_list if 0 < p[0] < gap]
        for p in h_list:
            for q in l_list:
                d = p[0] - q[0]
                if 0 < d < gap:
                    options.append((abs(d - half), 1, p, q))
        options.sort(key=lambda o: (o[0], o[1]))
        best, best_key = None, None
        for dist, _, p, q in options:
            if best_key is not None and dist > best_key[0]:
                break
            cost = self._allowed(heavy, light, p, q)
            if cost is not None and (best_key is None or (dist, cost) < best_key):
                best_key, best = (dist, cost), (p, q)
        return best

    def _apply(self, giver: str, taker: str, p, q) -> None:
        """Hand p from giver to taker and, for a swap, q back."""
        self.moves += self._move_cost(p[1], giver, taker)
        self.held[giver].remove(p)
        insort(self.held[taker], p)
        self.load[giver] -= p[0]
        self.load[taker] += p[0]
        self._arrays.pop(giver, None)
        self._arrays.pop(taker, None)
        if q is None:
            self.count[giver] -= 1
            self.count[taker] += 1
        else:
            self.moves += self._move_cost(q[1], taker, giver)
            self.held[taker].remove(q)
            insort(self.held[giver], q)
            self.load[taker] -= q[0]
            self.load[giver] += q[0]
        self._loaded(giver, taker)

    def _loaded(self, *members: str) -> None:
        for m in members:
            heapq.heappush(self._light, (self.load[m], self.tie[m], m))
            heapq.heappush(self._heavy, (-self.load[m], self.tie[m], m))

    def _lightest(self, k: int) -> list[str]:
        """The k lightest members (fewer if there are fewer), lightest first."""
        out: list[tuple] = []
        heap = self._light
        while heap and len(out) < k:
            entry = heapq.heappop(heap)
            if entry[0] == self.load[entry[2]] and (not out or out[-1][2] != entry[2]):
                out.append(entry)
        for entry in out:
            heapq.heappush(heap, entry)
        return [e[2] for e in out]

    def _scan_order(self) -> list[str]:
        """Members holding the smallest partitions first: the order of a full scan.

        Sorting every member is the costly part of a full scan, so the order is reused for a
        few scans (an order a little out of date only changes which partner is tried first);
        the sort is counted as work, like the exchanges it saves.
        """
        self._scans = getattr(self, "_scans", 0) + 1
        if self._scans % 16 == 1:
            held, load, tie = self.held, self.load, self.tie
            self._order = sorted(load, key=lambda m: (held[m][0][0] if held[m] else 0, load[m], tie[m]))
            self.attempts += len(self._order) // 16
        return self._order

    def _heaviest(self) -> str:
        heap = self._heavy
        while -heap[0][0] != self.load[heap[0][2]]:
            heapq.heappop(heap)
        return heap[0][2]

    def _improve_member(self, heavy: str, partners: int | None) -> bool:
        """One exchange lowering ``heavy`` with the lightest member that allows one.

        With ``partners`` None every lighter member is tried, those holding the smallest
        partitions first: a member stuck with one huge partition can only trade its small
        ones for smaller ones, wherever they are.
        """
        order = self._scan_order() if partners is None else self._lightest(partners)
        for light in order:
            if self.attempts >= self.budget:
                return False
            if self.load[light] >= self.load[heavy]:
                if partners is None:
                    continue
                return False
            exchange = self._best_exchange(heavy, light)
            if exchange is not None:
                self._apply(heavy, light, *exchange)
                return True
        return False

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
            heavy = self._heaviest()
            if self.load[heavy] <= floor:
                break
            # The lightest few first; all of them only to prove the heaviest is stuck.
            if not (self._improve_member(heavy, 4) or self._improve_member(heavy, None)):
                break
        for heavy in sorted(self.load, key=lambda m: (-self.load[m], self.tie[m])) if sweep else ():
            while self._improve_member(heavy, 4):
                pass
        self._undo_needless_moves()

    def _undo_needless_moves(self) -> None:
        """Send displaced partitions back home where max lag and spread do not grow."""
        lo, hi = min(self.load.values()), max(self.load.values())
        for mid in sorted(self.held):
            for p in list(self.held[mid]):
                home = self.before.get(p[1])
                if home is None or home == mid or p not in self.held[mid]:
                    continue
                fits = lo <= self.load[mid] - p[0] and self.load[home] + p[0] <= hi
                if fits and self._may_hand_over(mid, home) and self._allowed(mid, home, p, None) is not None:
                    self._apply(mid, home, p, None)
                    continue
                # A swap: q from home to mid keeping both loads within [lo, hi].
                low_q = max(p[0] + self.load[home] - hi, lo - self.load[mid] + p[0])
                high_q = min(p[0] + self.load[home] - lo, hi - self.load[mid] + p[0])
                if low_q > high_q:
                    continue
                home_list = self.held[home]
                k = bisect_left(home_list, (low_q,))
                while k < len(home_list) and home_list[k][0] <= high_q:
                    q = home_list[k]
                    cost = None if self.before.get(q[1]) == home else self._allowed(mid, home, p, q)
                    if cost is not None and cost < 0:
                        self._apply(mid, home, p, q)
                        break
                    k += 1

    def layout(self) -> Layout:
        return {mid: [tp for _, tp in h] for mid, h in self.held.items()}

    @property
    def max_lag(self) -> int:
        return max(self.load.values())

    @property
    def spread(self) -> int:
        return self.max_lag - min(self.load.values())


def _pick(results: list[_Search]) -> _Search | None:
    """Smallest max lag; among answers that equal it, fewest moves, then smallest spread.

    Each search already lowers the spread as far as its exchanges can; between answers with
    the same max lag, keeping partitions where they are is worth more than a smaller spread.
    """
    return min(results, key=lambda r: (r.max_lag, r.moves, r.spread), default=None)


class LagOptimalStrategy(Strategy):
    name = "lag-optimal"
    summary = "lagassign: counts balanced, then the smallest largest member lag, with few moves"
    options = ("max_moves", "count_slack")

    def __init__(
        self, max_moves: int | None = None, count_slack: int = 0
    ) -> None:
        for name, value in (("max_moves", max_moves), ("count_slack", count_slack)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise StrategyOptionError(f"{name} must be a non-negative integer, got {value!r}")
        self.max_moves = max_moves
        self.count_slack = count_slack

    def _seeds(self, group: GroupSnapshot, tie) -> Iterable[tuple[str, Layout, bool]]:
        """(name, layout, worth searching): the first seeds are searched, the others compared."""
        lag = group.lag
        if group.identical_subscriptions:
            yield "longest-first", _capped_longest_first(group, tie), True
        else:
            book = LoadBook(group, by_lag=True, tie_key=tie)
            for tp in sorted(group.assignable, key=lambda tp: (-lag[tp], tp)):
                book.add(book.least_loaded(tp.topic), tp)
            balance_counts(book, lambda mid, held: sorted(held, key=lambda tp: (lag[tp], tp)))
            yield "longest-first", book.assignment(), True
        if group.owner:
            yield "sticky", sticky_assignment(group), True
        yield "lag-aware", lag_aware_layout(group), False
        lag_layout = LagStrategy().assign(group).members
        if meets_count_guarantee(group, lag_layout):
            yield "lag", lag_layout, False

    def assign(self, group: GroupSnapshot) -> Assignment:
        tie = _tie_key(group.group)
        floor = lower_bound_max_lag(group)
        results: list[_Search] = []
        fewest_moves = None
        for _, layout, worth_searching in self._seeds(group, tie):
            search = _Search(group, layout, self.max_moves, tie, self.count_slack)
            fewest_moves = search.moves if fewest_moves is None else min(fewest_moves, search.moves)
            if self.max_moves is not None and search.moves > self.max_moves:
                continue
            if worth_searching and results:
                # A later seed is there to reach the same max lag with fewer moves: it need not
                # go lower, and it may spend fewer moves than the best answer so far.
                leader = _pick(results)
                cap = leader.moves if self.max_moves is None else self.max_moves
                search.max_moves = min(leader.moves - 1, cap)
                if search.moves <= search.max_moves:
                    search.run(max(floor, leader.max_lag), sweep=False)
            elif worth_searching:
                # Within 0.01% of the lower bound is as good as it needs to be.
                search.run(floor + floor // 10_000)
            results.append(search)
        best = _pick(results)
        if best is None:
            raise StrategyRefusedError(
                f"group {group.group}: balancing partition counts alone needs {fewest_moves} moves, "
                f"more than max_moves={self.max_moves}"
            )
        return build(self.name, group, best.layout())
