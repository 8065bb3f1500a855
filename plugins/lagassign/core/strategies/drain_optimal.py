"""drain-optimal: the smallest possible largest catch-up time, counts in proportion to capacity.

Spec: lagassign's own (planning in time; ``core/catchup.py`` defines catch-up time and its
bound). Lag-based assignors balance messages; a member that reads partitions with inflow, or
that is slower, needs less lag to finish at the same time. With every capacity equal and every
inflow zero, catch-up time is lag over one constant, and this strategy *is* ``lag-optimal``
(the same plan, delegated); so it is, too, for groups without capacities.

Otherwise, with capacities c_m (messages per second) and inflows r_p:
1. Count rules: with one shared subscription, member m holds floor(q_m) or ceil(q_m)
   partitions, q_m = P * c_m / sum(c): a twice as fast member reads twice as many. With mixed
   subscriptions counts are free (only subscriptions bind). Step 6 may keep lag-optimal's
   counts instead, where they catch up sooner.
2. Seeds: a greedy pass (heaviest partition first, to the eligible member whose catch-up time
   stays smallest) and, when members own partitions, a sticky one (owned partitions stay, up to
   each member's count); both then fill members below their count.
3. Local search: the slowest member moves a partition to, or swaps one with, another member
   wherever both then finish strictly sooner than it did; where none is left, it pools its
   partitions with another member's and deals them out again the best possible way (pools of
   up to 12 partitions, without ``max_moves``); then partitions go back to their owner
   wherever that costs nothing in the largest time. ``max_moves`` caps the partitions that
   leave their owner.
4. The best seed wins: smallest largest time, then fewest moves. Members that can never catch
   up (inflow at or above capacity) are ranked by how far their inflow exceeds capacity.
5. Groups of up to 16 partitions (without ``max_moves``): an exact branch and bound
   (``drain_exact``) either finds a plan that finishes strictly sooner or proves that none
   exists under the count rules; a proved plan reports ``catch_up_optimal``.
6. Never slower than ``lag-optimal``: with a shared subscription its plan is also searched
   for catch-up time under its own count rule (floor(P/N) or ceil(P/N) each), and the exact
   search of step 5 runs under that rule too; a plan under it replaces the proportional one
   where it catches up strictly sooner (a hot partition or inflow can make proportional
   counts cost time). A proof then covers both count rules.
7. ``exact_budget`` (seconds, default off; needs the ``certify`` extra, highspy, as
   lag-optimal's does): larger groups whose plan is above the bound (and without
   ``max_moves``) go to ``drain_milp``: bisection on the largest catch-up time, each step a
   bin-packing MILP, which either finds a plan that finishes sooner or proves a higher bound
   (``catch_up_bound`` on the plan). Within the budget it is deterministic; a run the budget
   cuts short keeps what it found by then. Without the option nothing changes.

Example: four partitions of 600 messages, no inflow; C1 is three times as fast as C0.
lag-optimal splits them two and two: C0 needs 1,200 / 10 = 120 s. drain-optimal gives C0 one
partition and C1 three: both finish after 60 s, the bound (2,400 messages / 40 per second)::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t"], "C1": ["t"]}, {"t": [600] * 4}, capacities={"C0": 10, "C1": 30})
    >>> show(DrainOptimalStrategy().assign(g))
    C0: t-2
    C1: t-0 t-1 t-3
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from itertools import accumulate
from typing import Any

import numpy as np

from ..catchup import capacity, inflow, lower_bound_catch_up, seconds_to_catch_up, timed
from ..errors import StrategyOptionError, StrategyRefusedError
from ..model import Assignment, GroupSnapshot, TopicPartition
from .base import CertifiedAssignment, Strategy, build
from .drain_exact import MAX_PARTITIONS, exact_drain, heavy_bound, member_cost, sooner
from .drain_milp import TOLERANCE as MILP_TOLERANCE
from .drain_milp import bisect_drain
from .exact import check_exact_budget
from .lag_optimal import LagOptimalStrategy

Cost = tuple[float, float, float]
MAX_STEPS = 20_000  # improving steps per seed; each lowers the largest cost, so this is a guard
HEAVY_EXTRA = 4  # the heavy-partition bound places up to members + this many partitions


def proportional_counts(group: GroupSnapshot) -> dict[str, tuple[int, int]]:
    """Member -> (fewest, most) partitions: floor and ceil of its capacity share of P."""
    caps = capacity(group)
    total = sum(caps.values())
    n = len(group.assignable)
    out = {}
    for mid in group.member_ids:
        share = n * caps[mid] / total
        low = math.floor(share + 1e-9)
        out[mid] = (low, low if abs(share - low) < 1e-9 else low + 1)
    return out


def balanced_counts(group: GroupSnapshot) -> dict[str, tuple[int, int]]:
    """Member -> (fewest, most) partitions under lag-optimal's count rule: floor(P/N), ceil(P/N)."""
    floor, extra = divmod(len(group.assignable), len(group.members))
    return dict.fromkeys(group.member_ids, (floor, floor + (extra > 0)))


def count_rules(group: GroupSnapshot) -> list[dict[str, tuple[int, int]] | None]:
    """The counts drain-optimal plans under, each (fewest, most) per member; None: free.

    With one shared subscription, counts in proportion to capacity, and lag-optimal's
    balanced ones: proportional counts are the rule of thumb for unequal members, but where a
    hot partition or inflow makes them cost time, the strategy built to catch up soonest must
    not lose to the one that balances messages. With mixed subscriptions counts are free."""
    if group.identical_subscriptions:
        return [proportional_counts(group), balanced_counts(group)]
    return [None]


def drain_lower_bound(group: GroupSnapshot, upper: float = math.inf) -> float:
    """A largest catch-up time no plan under drain-optimal's count rules beats: the smallest
    of ``counts_lower_bound`` over ``count_rules``."""
    return min(counts_lower_bound(group, counts, upper) for counts in count_rules(group))


def counts_lower_bound(
    group: GroupSnapshot, counts: dict[str, tuple[int, int]] | None, upper: float = math.inf
) -> float:
    """A largest catch-up time no plan under ``counts`` beats (None: free counts, as with
    mixed subscriptions).

    Besides ``catchup.lower_bound_catch_up``: the slowest k members (for every k) must hold at
    least the partitions the others have no room for, and at best the lightest ones, so
    T >= (k smallest lags) / (their capacity - (k smallest inflows)) with k that many; and
    the heaviest partitions' best placement with every member topped up to its fewest
    (``drain_exact.heavy_bound``); with mixed subscriptions, ``readers_drain_bound`` too. ``upper``,
    the time of a plan in hand, lets that search stop early (the bound is then at most it).
    """
    bound = lower_bound_catch_up(group)
    if not timed(group):
        return bound
    if counts is None:
        counts = dict.fromkeys(group.member_ids, (0, len(group.assignable)))
        if not group.identical_subscriptions:
            bound = max(bound, readers_drain_bound(group))
    lags = sorted(group.lag[tp] for tp in group.assignable)
    rates = sorted(inflow(group)[tp] for tp in group.assignable)
    lag_prefix, rate_prefix = [0, *accumulate(lags)], [0.0, *accumulate(rates)]
    caps = capacity(group)
    slow_first = sorted(group.member_ids, key=lambda m: (caps[m], m))
    room_after = sum(counts[m][1] for m in slow_first)
    cap_sum, low_sum = 0.0, 0
    for mid in slow_first:
        room_after -= counts[mid][1]
        cap_sum += caps[mid]
        low_sum += counts[mid][0]
        k = min(len(lags), max(low_sum, len(lags) - room_after))
        bound = max(bound, seconds_to_catch_up(lag_prefix[k], rate_prefix[k], cap_sum))
    # the heaviest partitions placed every possible way (``drain_exact.heavy_bound``), as many
    # of them as the search settles: members first, then a few more
    for heavy in range(1, min(len(lags), len(caps) + HEAVY_EXTRA) + 1):
        placed = heavy_bound(group, counts, heavy, upper)
        if placed is None:
            break
        bound = max(bound, placed)
    return min(bound, upper)


def readers_drain_bound(group: GroupSnapshot) -> float:
    """With mixed subscriptions: the partitions of the topics only members M read must drain
    through M alone, T >= their lag / (capacity of M - their inflow), for M the readers of
    one topic or of two topics together (every topic whose readers are all in M counts)."""
    subs = {t: frozenset(m) for t, m in group.subscribers.items()}
    caps, rates = capacity(group), inflow(group)
    lag_of = dict.fromkeys(subs, 0)
    rate_of = dict.fromkeys(subs, 0.0)
    for tp in group.assignable:
        lag_of[tp.topic] += group.lag[tp]
        rate_of[tp.topic] += rates[tp]
    readers = set(subs.values())
    pools = readers | {a | b for a, b in itertools.combinations(sorted(readers, key=sorted), 2)}
    bound = 0.0
    for pool in pools:
        inside = [t for t, m in subs.items() if m <= pool]
        bound = max(
            bound,
            seconds_to_catch_up(
                sum(lag_of[t] for t in inside), sum(rate_of[t] for t in inside), sum(caps[m] for m in pool)
            ),
        )
    return bound


class _Layout:
    """A layout with running lag, inflow and count per member, and its moves from the owners."""

    def __init__(self, group: GroupSnapshot, counts: dict[str, tuple[int, int]] | None) -> None:
        self.group = group
        self.lag, self.rate, self.cap = group.lag, inflow(group), capacity(group)
        self.owner = group.owner
        self.counts = counts
        self.held: dict[str, list[TopicPartition]] = {mid: [] for mid in group.member_ids}
        self.load = dict.fromkeys(group.member_ids, 0)
        self.flow = dict.fromkeys(group.member_ids, 0.0)

    def cost(self, mid: str, load: float | None = None, flow: float | None = None) -> Cost:
        """(seconds, inflow excess, lag) of ``mid``, optionally with another load and inflow."""
        load = self.load[mid] if load is None else load
        flow = self.flow[mid] if flow is None else flow
        return member_cost(load, flow, self.cap[mid])

    def worst(self) -> str:
        return max(self.held, key=lambda m: (self.cost(m), m))

    def room(self, mid: str) -> bool:
        return self.counts is None or len(self.held[mid]) < self.counts[mid][1]

    def spare(self, mid: str) -> bool:
        return self.counts is None or len(self.held[mid]) > self.counts[mid][0]

    def put(self, tp: TopicPartition, mid: str) -> None:
        self.held[mid].append(tp)
        self.load[mid] += self.lag[tp]
        self.flow[mid] += self.rate[tp]

    def take(self, tp: TopicPartition, mid: str) -> None:
        self.held[mid].remove(tp)
        self.load[mid] -= self.lag[tp]
        self.flow[mid] -= self.rate[tp]

    def count_moves(self) -> int:
        where = {tp: mid for mid, tps in self.held.items() for tp in tps}
        return sum(1 for tp, mid in self.owner.items() if where.get(tp) != mid)

    def move_delta(self, tp: TopicPartition, src: str, dst: str) -> int:
        owner = self.owner.get(tp)
        return (owner == src) - (owner == dst)


class DrainOptimalStrategy(Strategy):
    name = "drain-optimal"
    summary = "smallest largest catch-up time (lag, inflow, capacity); counts in proportion to capacity"
    options = ("max_moves", "exact_budget")

    def __init__(self, max_moves: int | None = None, exact_budget: float | None = None) -> None:
        if max_moves is not None and (
            isinstance(max_moves, bool) or not isinstance(max_moves, int) or max_moves < 0
        ):
            raise StrategyOptionError(f"max_moves must be a whole number >= 0, got {max_moves!r}")
        check_exact_budget(exact_budget)
        self.max_moves = max_moves
        self.exact_budget = exact_budget or 0

    def assign(self, group: GroupSnapshot) -> Assignment:
        if _plain(group):
            planned = LagOptimalStrategy(max_moves=self.max_moves, exact_budget=self.exact_budget).assign(
                group
            )
            planned.strategy = self.name  # lag-optimal's plan, a fresh copy for each caller, as it is
            return planned
        rules = count_rules(group)
        results = []
        for counts in rules:
            for seed in self._seeds(group, counts):
                _search(seed, self.max_moves)
                if self.max_moves is None:  # a re-split may move many partitions at once
                    while _resplit(seed):
                        _search(seed, None)
                _send_home(seed)
                moves = seed.count_moves()
                if self.max_moves is None or moves <= self.max_moves:
                    results.append(((seed.cost(seed.worst()), moves), seed))
        if not results:
            raise StrategyRefusedError(
                f"group {group.group}: no plan within max_moves={self.max_moves} keeps the counts "
                "in proportion to capacity, or balanced"
            )
        best = min(results, key=lambda r: r[0])[1]
        proven = self.max_moves is None and len(group.assignable) <= MAX_PARTITIONS
        if proven:
            for counts in rules:
                best, settled = _settle(group, counts, best)
                proven = proven and settled
        bound = None
        if not proven and self.exact_budget > 0 and self.max_moves is None:
            best, proven, bound = self._polish(group, rules, best)
        # Whether it reached the bound is a metric of every plan (``catch_up_optimal``); a
        # finished exact search proves it under the count rules.
        plan = build(self.name, group, best.held)
        out = CertifiedAssignment(plan.strategy, plan.members, proven_catch_up=proven)
        out.catch_up_bound = bound
        return out

    def _polish(
        self, group: GroupSnapshot, rules: list[dict[str, tuple[int, int]] | None], best: _Layout
    ) -> tuple[_Layout, bool, float | None]:
        """``drain_milp``'s bisection from the plan under each count rule, the budget shared
        between them: a plan that finishes sooner replaces it (partitions then sent home where
        free); the bound certified (the smallest of the rules') is returned with whether the
        plan meets it."""
        top = max(seconds_to_catch_up(best.load[m], best.flow[m], best.cap[m]) for m in best.held)
        if not math.isfinite(top):
            return best, False, None
        lowers = []
        for counts in rules:
            lower = counts_lower_bound(group, counts, top)
            if top > lower * (1 + 1e-9):
                result = bisect_drain(group, counts, top, lower, self.exact_budget / len(rules))
                if result.layout is not None:
                    best = _placed(group, counts, result.layout)
                    _send_home(best)
                    top = result.upper
                lower = result.lower
            lowers.append(lower)
        bound = min(lowers)
        return best, top <= bound * (1 + MILP_TOLERANCE), bound

    def _seeds(self, group: GroupSnapshot, counts: dict[str, tuple[int, int]] | None) -> Iterable[_Layout]:
        yield _greedy(_Layout(group, counts), group.assignable)
        # lag-optimal's plan, where it keeps these counts: the search starts no worse than it.
        try:
            planned = LagOptimalStrategy(max_moves=self.max_moves).assign(group).members
        except StrategyRefusedError:
            planned = None
        if planned is not None and (
            counts is None or all(counts[m][0] <= len(tps) <= counts[m][1] for m, tps in planned.items())
        ):
            yield _placed(group, counts, planned)
        if group.owner:
            sticky = _Layout(group, counts)
            left = []
            owner = group.owner
            for tp in sorted(group.assignable, key=lambda tp: (-group.lag[tp], tp)):
                held_by = owner.get(tp)
                if held_by is not None and tp.topic in _topics(group, held_by) and sticky.room(held_by):
                    sticky.put(tp, held_by)
                else:
                    left.append(tp)
            yield _greedy(sticky, left)


def _placed(
    group: GroupSnapshot, counts: dict[str, tuple[int, int]] | None, layout: dict[str, list[TopicPartition]]
) -> _Layout:
    """``layout`` as a search's state under ``counts``."""
    placed = _Layout(group, counts)
    for mid, tps in layout.items():
        for tp in tps:
            placed.put(tp, mid)
    return placed


def _settle(
    group: GroupSnapshot, counts: dict[str, tuple[int, int]] | None, best: _Layout
) -> tuple[_Layout, bool]:
    """The exact search under ``counts`` (small groups): a plan strictly sooner than ``best``
    replaces it; True when it proved that no plan under these counts is sooner."""
    exact = exact_drain(group, counts, best.cost(best.worst()))
    if exact.layout is None:
        return best, exact.proven
    found = _placed(group, counts, exact.layout)
    _send_home(found)
    return found, exact.proven


def _plain(group: GroupSnapshot) -> bool:
    """No time to plan with: no capacities, or equal capacities and no inflow anywhere."""
    if not timed(group):
        return True
    return len(set(capacity(group).values())) == 1 and not any(inflow(group).values())


def _topics(group: GroupSnapshot, mid: str) -> frozenset[str]:
    return next(m.topics for m in group.members if m.id == mid)


def _greedy(layout: _Layout, tps: Iterable[TopicPartition]) -> _Layout:
    """Heaviest first, each to the eligible member with room whose cost stays smallest; then
    members below their fewest take partitions from members above theirs."""
    group = layout.group
    subs = group.subscribers
    for tp in sorted(tps, key=lambda tp: (-layout.lag[tp], -layout.rate[tp], tp)):
        eligible = [m for m in subs[tp.topic] if layout.room(m)] or list(subs[tp.topic])
        best = min(
            eligible,
            key=lambda m: (
                layout.cost(m, layout.load[m] + layout.lag[tp], layout.flow[m] + layout.rate[tp]),
                m,
            ),
        )
        layout.put(tp, best)
    if layout.counts is not None:
        for mid in group.member_ids:
            while len(layout.held[mid]) < layout.counts[mid][0]:
                donors = [m for m in group.member_ids if m != mid and layout.spare(m)]
                choices = [(tp, d) for d in donors for tp in layout.held[d]]
                tp, donor = min(
                    choices,
                    key=lambda c: (
                        max(
                            layout.cost(
                                mid, layout.load[mid] + layout.lag[c[0]], layout.flow[mid] + layout.rate[c[0]]
                            ),
                            layout.cost(
                                c[1],
                                layout.load[c[1]] - layout.lag[c[0]],
                                layout.flow[c[1]] - layout.rate[c[0]],
                            ),
                        ),
                        c,
                    ),
                )
                layout.take(tp, donor)
                layout.put(tp, mid)
    return layout


def _after(layout: _Layout, mid: str, out: TopicPartition | None, into: TopicPartition | None) -> Cost:
    """``mid``'s cost after giving ``out`` away and taking ``into``."""
    load, flow = layout.load[mid], layout.flow[mid]
    if out is not None:
        load, flow = load - layout.lag[out], flow - layout.rate[out]
    if into is not None:
        load, flow = load + layout.lag[into], flow + layout.rate[into]
    return layout.cost(mid, load, flow)


_NEVER = 1e18  # the scalar stand-in for "never" in the vectorised search (see _seconds)


def _seconds(load: Any, flow: Any, cap: Any) -> Any:
    """Vectorised catch-up seconds; never is _NEVER and more so the further inflow exceeds
    capacity, so the search still prefers the less hopeless of two hopeless members."""
    with np.errstate(divide="ignore", invalid="ignore"):
        finite = np.where(flow < cap, load / np.maximum(cap - flow, 1e-300), 0.0)
    hopeless = (flow >= cap) & ~((load <= 0) & (flow <= cap))
    return np.where(hopeless, _NEVER * (1.0 + (flow - cap) / cap), np.where(load <= 0, 0.0, finite))


def _best_cell(
    after: Any, ok: Any, delta: Any, moves: int, max_moves: int | None
) -> tuple[float, int, int, int] | None:
    """The smallest ``after`` among allowed cells (within ``max_moves``): (value, row, column,
    its change in moves), or None when no cell is allowed."""
    if max_moves is not None:
        ok = ok & (moves + delta <= max_moves)
    if not ok.any():
        return None
    masked = np.where(ok, after, np.inf)
    i, j = np.unravel_index(np.argmin(masked), masked.shape)
    return float(masked[i, j]), int(i), int(j), int(delta[i, j])


def _search(layout: _Layout, max_moves: int | None) -> None:
    """Lower the slowest member's cost by a move or a swap while one makes both sides finish
    strictly sooner than it did (see the module doc). Each step weighs every move and swap of
    the slowest member at once, with numpy."""
    group = layout.group
    members = group.member_ids
    index = {mid: i for i, mid in enumerate(members)}
    topic_ids = {t: i for i, t in enumerate(group.subscribers)}
    reads = np.zeros((len(members), len(topic_ids)), dtype=bool)
    for m in group.members:
        for t in m.topics:
            if t in topic_ids:
                reads[index[m.id], topic_ids[t]] = True
    cap = np.array([layout.cap[mid] for mid in members])
    moves = layout.count_moves()
    for _ in range(MAX_STEPS):
        worst = layout.worst()
        w = index[worst]
        top = layout.cost(worst)
        mine = layout.held[worst]
        if not mine:
            return
        theirs = [(tq, index[o]) for o in members if o != worst for tq in layout.held[o]]
        load = np.array([layout.load[mid] for mid in members], dtype=float)
        flow = np.array([layout.flow[mid] for mid in members])
        lp = np.array([layout.lag[tp] for tp in mine], dtype=float)
        rp = np.array([layout.rate[tp] for tp in mine])
        tp_topic = np.array([topic_ids[tp.topic] for tp in mine])
        own_p = np.array([index.get(layout.owner.get(tp, ""), -1) for tp in mine])
        # only steps that lower the slowest member by more than float noise are candidates
        top_s = float(_seconds(load[w], flow[w], cap[w]))
        best_after, best_delta = top_s - 1e-9 * max(1.0, top_s), 0
        choice: tuple[TopicPartition, str, TopicPartition | None] | None = None
        # moves: worst gives one of its partitions to another member with room
        if layout.spare(worst):
            room = np.array([m != w and layout.room(members[m]) for m in range(len(members))])
            after_w = _seconds(load[w] - lp, flow[w] - rp, cap[w])[:, None]
            after_o = _seconds(load[None, :] + lp[:, None], flow[None, :] + rp[:, None], cap[None, :])
            after = np.maximum(after_w, after_o)
            delta = (own_p == w)[:, None].astype(int) - (own_p[:, None] == np.arange(len(members))[None, :])
            found = _best_cell(after, room[None, :] & reads[:, tp_topic].T, delta, moves, max_moves)
            if found is not None and found[0] < best_after:
                best_after, i, o, best_delta = found
                choice = (mine[i], members[o], None)
        # swaps: worst gives one partition and takes one back
        if theirs:
            lq = np.array([layout.lag[tq] for tq, _ in theirs], dtype=float)
            rq = np.array([layout.rate[tq] for tq, _ in theirs])
            oq = np.array([o for _, o in theirs])
            tq_topic = np.array([topic_ids[tq.topic] for tq, _ in theirs])
            own_q = np.array([index.get(layout.owner.get(tq, ""), -1) for tq, _ in theirs])
            after_w = _seconds(
                load[w] - lp[:, None] + lq[None, :], flow[w] - rp[:, None] + rq[None, :], cap[w]
            )
            after_o = _seconds(
                load[oq][None, :] - lq[None, :] + lp[:, None],
                flow[oq][None, :] - rq[None, :] + rp[:, None],
                cap[oq][None, :],
            )
            after = np.maximum(after_w, after_o)
            ok = reads[oq][:, tp_topic].T & reads[w, tq_topic][None, :]
            delta = (
                (own_p == w)[:, None].astype(int)
                - (own_p[:, None] == oq[None, :])
                + (own_q == oq)[None, :]
                - (own_q == w)[None, :]
            )
            found = _best_cell(after, ok, delta, moves, max_moves)
            if found is not None and found[0] < best_after:
                best_after, i, j, best_delta = found
                choice = (mine[i], members[oq[j]], theirs[j][0])
        if choice is None:
            return
        given, taker, back = choice
        # the exact (tuple) costs decide: the step must make both sides finish sooner
        if not max(_after(layout, worst, given, back), _after(layout, taker, back, given)) < top:
            return
        layout.take(given, worst)
        layout.put(given, taker)
        if back is not None:
            layout.take(back, taker)
            layout.put(back, worst)
        moves += best_delta


RESPLIT_POOL = 12  # pools of at most this many partitions are split every possible way


def _resplit(layout: _Layout) -> bool:
    """Pool the slowest member's partitions with another member's and deal them out again the
    best possible way (every split of a small pool is tried): where single moves and swaps are
    stuck, several partitions for several can still help. True if the largest cost fell."""
    group = layout.group
    worst = layout.worst()
    top = layout.cost(worst)
    topics = {m.id: m.topics for m in group.members}
    best: tuple[Cost, str, tuple[TopicPartition, ...]] | None = None
    for other in group.member_ids:
        pool = layout.held[worst] + layout.held[other]
        if other == worst or len(pool) > RESPLIT_POOL:
            continue
        if any(tp.topic not in topics[worst] or tp.topic not in topics[other] for tp in pool):
            continue
        sizes = range(len(pool) + 1)
        if layout.counts is not None:
            lo_w, hi_w = layout.counts[worst]
            lo_o, hi_o = layout.counts[other]
            sizes = range(max(lo_w, len(pool) - hi_o), min(hi_w, len(pool) - lo_o) + 1)
        total_lag = sum(layout.lag[tp] for tp in pool)
        total_flow = sum(layout.rate[tp] for tp in pool)
        for size in sizes:
            for part in itertools.combinations(pool, size):
                lag_w = sum(layout.lag[tp] for tp in part)
                flow_w = sum(layout.rate[tp] for tp in part)
                after = max(
                    layout.cost(worst, lag_w, flow_w),
                    layout.cost(other, total_lag - lag_w, total_flow - flow_w),
                )
                if sooner(after, top) and (best is None or after < best[0]):
                    best = (after, other, part)
    if best is None:
        return False
    _, other, part = best
    pool = layout.held[worst] + layout.held[other]
    for tp in list(layout.held[worst]):
        layout.take(tp, worst)
    for tp in list(layout.held[other]):
        layout.take(tp, other)
    mine = set(part)
    for tp in pool:
        layout.put(tp, worst if tp in mine else other)
    return True


def _send_home(layout: _Layout) -> None:
    """Partitions away from their owner go back wherever the largest cost does not grow."""
    group = layout.group
    top = layout.cost(layout.worst())
    eligible = {m.id: m.topics for m in group.members}
    for tp, owner in sorted(layout.owner.items()):
        if owner not in eligible or tp not in group.lag or tp.topic not in eligible[owner]:
            continue
        holder = next((m for m, tps in layout.held.items() if tp in tps), None)
        if holder is None or holder == owner:
            continue
        if not (layout.room(owner) and layout.spare(holder)):
            continue
        if max(_after(layout, owner, None, tp), _after(layout, holder, tp, None)) <= top:
            layout.take(tp, holder)
            layout.put(tp, owner)


__all__ = [
    "DrainOptimalStrategy",
    "balanced_counts",
    "proportional_counts",
    "readers_drain_bound",
]
