"""drain-optimal's objective in a ``Search``: a member costs its catch-up time.

A member's cost is ``member_cost``: seconds to catch up, then how far its inflow exceeds its
capacity, then its lag, so that of two members that never catch up the less hopeless one
counts as cheaper. With inflow the best exchange is no longer a matter of lag alone: every
hand-over and swap between two members (every trade of a few partitions, every split of a
small pool) is weighed, at once with numpy; of those after which both finish sooner than the
costlier one does now (by more than float noise) the one whose costlier side ends soonest
wins, then fewer moves, then the first in the candidates' order.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..catchup import capacity, seconds_to_catch_up
from ..model import GroupSnapshot
from .engine import Exchange, Held, Search
from .state import State

#: (seconds, inflow above capacity, lag): smaller is better
Cost = tuple[float, float, float]
#: the same three as arrays, one entry per candidate
Costs = tuple[np.ndarray, np.ndarray, np.ndarray]


def member_cost(load: float, flow: float, cap: float) -> Cost:
    """A member's cost (see the module doc); never catching up is infinite seconds."""
    seconds = seconds_to_catch_up(load, flow, cap)
    return (seconds, flow - cap, load) if seconds == math.inf else (seconds, 0.0, 0.0)


def sooner(a: Cost, b: Cost) -> bool:
    """``a`` strictly better than ``b`` by more than float noise."""
    if b[0] == math.inf:  # b never catches up: any a that does is better
        if a[0] < math.inf:
            return True
        return a[1] < b[1] - 1e-9 * max(1.0, abs(b[1])) or (a[1] <= b[1] and a[2] < b[2])
    return a[0] < b[0] - 1e-9 * max(1.0, abs(b[0]))


def member_costs(load: np.ndarray, flow: np.ndarray, cap: float | np.ndarray) -> Costs:
    """``member_cost`` of every entry (``load`` and ``flow`` arrays of one shape)."""
    free = cap - flow  # <= 0 exactly where flow >= cap
    with np.errstate(divide="ignore", invalid="ignore"):
        seconds = load / free
    done = (load <= 0) & (free >= 0)
    never = (free <= 0) & ~done
    seconds[never] = math.inf
    seconds[done] = 0.0
    return seconds, np.where(never, -free, 0.0), np.where(never, load, 0.0)


def _larger(a: Costs, b: Costs) -> Costs:
    """The larger of two costs, entry by entry (compared as tuples)."""
    a_larger = (a[0] > b[0]) | ((a[0] == b[0]) & ((a[1] > b[1]) | ((a[1] == b[1]) & (a[2] > b[2]))))
    return tuple(np.where(a_larger, x, y) for x, y in zip(a, b, strict=True))  # type: ignore[return-value]


def _sooner(a: Costs, b: Cost) -> np.ndarray:
    """``sooner`` of every entry of ``a`` against one cost ``b``."""
    if b[0] == math.inf:
        within = (a[1] < b[1] - 1e-9 * max(1.0, abs(b[1]))) | ((a[1] <= b[1]) & (a[2] < b[2]))
        return (a[0] < math.inf) | ((a[0] == math.inf) & within)
    return a[0] < b[0] - 1e-9 * max(1.0, abs(b[0]))


@functools.lru_cache(maxsize=64)
def _splits(n: int, n_heavy: int, sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The splits of a pool of ``n`` partitions, the first ``n_heavy`` the heavy member's, in
    which it keeps one of ``sizes``: their bit masks (1: heavy keeps it), and per split +1
    where a partition passes from heavy to light, -1 from light to heavy (read-only)."""
    masks = np.arange(1 << n, dtype=np.int64)
    kept = (masks[:, None] >> np.arange(n)) & 1
    fits = np.isin(kept.sum(axis=1), sizes)
    passes = np.where(np.arange(n) < n_heavy, 1 - kept[fits], -kept[fits]).astype(np.float64)
    masks = masks[fits]
    masks.flags.writeable = passes.flags.writeable = False
    return masks, passes


class TimeObjective:
    """A member costs its catch-up time (see the module doc)."""

    #: the best exchange with any other member: with unequal capacities the cheapest member
    #: is not always the one to trade with
    best_partner = True
    #: pools of up to 12 partitions of one subscription are re-split, every split weighed
    resplit_max = 12

    def __init__(self, group: GroupSnapshot) -> None:
        self.capacity = capacity(group)
        # The group as arrays, by partition index and member index, with one more partition
        # at the end: ``NOTHING``, of no lag, inflow, owner or topic that any member may take
        # (what comes back in a hand-over).
        self.cap = np.array([self.capacity[m] for m in group.member_ids], dtype=np.float64)
        self.lags = np.array([*group.lags, 0], dtype=np.float64)
        rates = group.columns.rates or [0.0] * len(group.lags)
        self.rates = np.array([*(r or 0.0 for r in rates), 0.0], dtype=np.float64)
        self.owner = np.array([*group.owner_index, -1], dtype=np.int64)
        topic_number = {t: k for k, t in enumerate(group.columns.topic_names)}
        sizes = [len(span) for span in group.topic_span.values()]  # topics in topic_names order
        self.topic = np.append(np.repeat(np.arange(len(sizes)), sizes), len(topic_number))
        self.reads = np.zeros((len(group.members), len(topic_number) + 1), dtype=bool)
        self.reads[:, -1] = True
        for k, m in enumerate(group.members):
            self.reads[k, [topic_number[t] for t in m.topics if t in topic_number]] = True
        self.nothing = len(group.lags)

    def cost_with(self, search: State, mid: str, load: int, flow: float) -> Cost:
        return member_cost(load, flow, self.capacity[mid])

    def swap_window(
        self, search: Search, mid: str, home: str, p: Held, lo: Cost, hi: Cost
    ) -> tuple[int, int] | None:
        return None  # inflow counts too: each q is checked

    def _pick(
        self,
        search: Search,
        heavy: str,
        taker: tuple[Any, Any, Any],
        change: tuple[np.ndarray, np.ndarray, np.ndarray],
        ok: np.ndarray | bool = True,
        ties: tuple[np.ndarray, ...] = (),
    ) -> np.ndarray:
        """Candidates passing ``change`` (lag, inflow, moves) from ``heavy`` to a ``taker`` (its
        lag, inflow and capacity, or theirs per candidate), best first: those (of ``ok``) after
        which both finish sooner than ``heavy`` now, within ``max_moves``, by the larger cost
        after, then moves, ``ties``, their order."""
        lag, flow, moves = change
        load, flows, cap = taker
        after = _larger(
            member_costs(search.load[heavy] - lag, search.flow[heavy] - flow, self.capacity[heavy]),
            member_costs(load + lag, flows + flow, cap),
        )
        ok = ok & _sooner(after, search.cost[heavy])
        if search.max_moves is not None:
            ok &= search.moves + moves <= search.max_moves
        rows = ok.nonzero()[0]  # ascending: the sort is stable, so equals keep their order
        if not len(rows):
            return rows
        keys = [key[rows] for key in (*ties[::-1], moves, after[2], after[1], after[0])]
        return rows[np.lexsort(keys)]

    def _taker(self, search: Search, mid: str) -> tuple[int, float, float]:
        return search.load[mid], search.flow[mid], self.capacity[mid]

    def best_exchange(self, search: Search, heavy: str, light: str) -> Exchange | None:
        """``best_exchange_any`` with ``light`` alone."""
        found = self.best_exchange_any(search, heavy, only=light)
        return None if found is None else found[1]

    def best_exchange_any(
        self, search: Search, heavy: str, only: str | None = None
    ) -> tuple[str, Exchange] | None:
        """Every hand-over (to members with room, where ``heavy`` may spare one) and swap of
        ``heavy`` with every other member (or ``only`` that one), weighed at once; equal ones
        in order: the cheaper partner, a hand-over before a swap, then the partitions' places."""
        index = search.group.member_index
        ids = search.group.member_ids
        h = index[heavy]
        partners = [m for _, _, m in search.ranked if m != heavy and only in (None, m)]
        rank = np.zeros(len(ids), dtype=np.int64)
        rank[[index[m] for m in partners]] = np.arange(len(partners))
        mine = np.array([p[1] for p in search.held[heavy]], dtype=np.int64)
        takers = [index[m] for m in partners if search.may_hand_over(heavy, m)]
        # what may come back (nothing from each member with room, then every partner's
        # partitions) and from whom; each candidate is a p of ``mine`` and one of these
        back = np.array(
            [self.nothing] * len(takers) + [p[1] for m in partners for p in search.held[m]], dtype=np.int64
        )
        holder = np.array(takers + [index[m] for m in partners for _ in search.held[m]], dtype=np.int64)
        i = np.repeat(np.arange(len(mine)), len(back))
        col = np.tile(np.arange(len(back)), len(mine))
        p, q, o = mine[i], back[col], holder[col]
        change = (
            self.lags[p] - self.lags[q],
            self.rates[p] - self.rates[q],
            self._moved(p, h, o) + self._moved(q, o, h),
        )
        ok = self.reads[o, self.topic[p]] & self.reads[h, self.topic[q]]
        load = np.array([search.load[m] for m in ids], dtype=np.float64)
        flow = np.array([search.flow[m] for m in ids], dtype=np.float64)
        taker = (load[o], flow[o], self.cap[o])
        best = self._pick(search, heavy, taker, change, ok, ties=(rank[o], col >= len(takers)))
        if not len(best):
            return None
        k = int(best[0])
        returned = None if q[k] == self.nothing else (int(self.lags[q[k]]), int(q[k]))
        return ids[int(o[k])], (search.held[heavy][int(i[k])], returned)

    def _moved(self, index: np.ndarray, src: int | np.ndarray, dst: int | np.ndarray) -> np.ndarray:
        """How the moves change as each partition ``index`` passes from ``src`` to ``dst``."""
        owner = self.owner[index]
        return np.where(owner < 0, 0, (dst != owner).astype(np.int64) - (src != owner))

    def best_split(self, search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
        """Every split of the two members' pool with ``heavy`` keeping one of ``sizes``
        partitions (a bit mask over ``held[heavy] + held[light]``), weighed at once, in
        the order of the masks."""
        pool = search.held[heavy] + search.held[light]
        masks, passes = _splits(len(pool), len(search.held[heavy]), tuple(sizes))
        parts = np.array([p[1] for p in pool], dtype=np.int64)
        lags, rates = self.lags[parts], self.rates[parts]
        index = search.group.member_index
        to_light = self._moved(parts, index[heavy], index[light]).astype(np.float64)
        best = self._pick(
            search, heavy, self._taker(search, light), (passes @ lags, passes @ rates, passes @ to_light)
        )
        allowed = (int(masks[k]) for k in best.tolist())
        return next((mask for mask in allowed if search.split_allowed(heavy, light, mask)), None)

    def best_trade(self, search: Search, heavy: str, light: str, sizes: list[int]) -> int | None:
        """Every trade of two partitions for one or two, or of one for two, weighed at once
        (in order by kind, then heavy's subset, then light's)."""
        n_heavy = len(search.held[heavy])
        give, take = self._subsets(search, heavy, light), self._subsets(search, light, heavy)
        kinds, lag, flow, moves = [], [], [], []
        for given, taken in ((2, 2), (2, 1), (1, 2)):
            if n_heavy - given + taken in sizes:
                a, b = give[given], take[taken]  # every (a, b) pair: a row of a, b across
                kinds.append((a[0], b[0]))
                lag.append((a[1][:, None] - b[1]).ravel())
                flow.append((a[2][:, None] - b[2]).ravel())
                moves.append((a[3][:, None] + b[3]).ravel())
        if not lag:
            return None
        change = (np.concatenate(lag), np.concatenate(flow), np.concatenate(moves))
        best = self._pick(search, heavy, self._taker(search, light), change)
        starts = np.cumsum([0] + [len(x) for x in lag])
        keep_all = (1 << n_heavy) - 1
        for k in best.tolist():
            kind = int(np.searchsorted(starts, k, side="right")) - 1
            a_bits, b_bits = kinds[kind]
            ia, ib = divmod(k - int(starts[kind]), len(b_bits))
            mask = (keep_all ^ a_bits[ia]) | (b_bits[ib] << n_heavy)
            if search.split_allowed(heavy, light, mask):
                return mask
        return None

    def _subsets(self, search: Search, giver: str, taker: str) -> dict[int, tuple[np.ndarray, ...]]:
        """Subsets of one and of two of ``giver``'s partitions that ``taker`` may receive: bit
        masks (by place in ``giver``'s list, as Python integers), lags, inflows, moves added.
        All but the moves are kept until ``giver``'s partitions change (for any taker where
        every member may receive every partition)."""
        key = ("time subsets", search.receiver_key(taker))
        ones, twos, parts, x, y = search.derived(giver, key, lambda: self._subsets_now(search, giver, taker))
        index = search.group.member_index
        moves = self._moved(parts, index[giver], index[taker])
        return {1: (*ones, moves), 2: (*twos, moves[x] + moves[y])}

    def _subsets_now(
        self, search: Search, giver: str, taker: str
    ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], np.ndarray, np.ndarray, np.ndarray]:
        held, lags = search.receivable(taker, giver)
        places = {p: k for k, p in enumerate(search.held[giver])}
        bits = np.array([1 << places[p] for p in held] or [0], dtype=object)[: len(held)]
        parts = np.array([p[1] for p in held], dtype=np.int64)
        lag, flow = np.array(lags, dtype=np.float64), self.rates[parts]
        x, y = np.triu_indices(len(held), 1)
        return (bits, lag, flow), (bits[x] | bits[y], lag[x] + lag[y], flow[x] + flow[y]), parts, x, y


__all__ = ["Cost", "TimeObjective", "member_cost", "member_costs", "sooner"]
