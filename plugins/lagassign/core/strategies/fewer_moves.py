"""Give owned partitions back along chains of hand-overs while Kafka's balance condition holds.

A chain of hand-overs that ends where it started (a cycle) changes no member's count, and a
chain from one member to another changes only two; either may still break Kafka's balance
condition (a fuller member may now hold a topic a much emptier one could take), so every chain
is checked against it before it stays. This pass looks for chains that return more partitions
to their previous owners than they take from them, with all-pairs shortest paths over the
members (Floyd-Warshall in numpy, edge cost: +1 if the partition leaves its previous owner, -1
if it returns to it, else 0), applies the best one that keeps the condition, and repeats until
none is left. When no single chain helps, a chain that breaks the condition followed by one
that mends it is tried. Each step lowers the number of moved partitions by at least one.

Used by sticky for mixed subscriptions (identical ones already move the minimum), where its
three passes alone can move more partitions than Kafka's StickyAssignor, and whenever racks
are known (KIP-881): then a hand-over's cost also counts ``RACK_WEIGHT`` per partition that
stops (or starts) being rack-local, so rack locality comes first and moves second, as in
Kafka's sticky assignors (balance first, then racks, then stickiness).
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from ..model import GroupSnapshot, TopicPartition
from .loadbook import LoadBook

#: above this many members, or (partition, eligible member) pairs, the search runs in blocks
#: of members (each round costs members cubed plus the pairs, and saves at least one move)
MAX_MEMBERS = 100
MAX_PAIRS = 200_000
#: sweeps over the blocks of a big group at most
MAX_SWEEPS = 6
#: members per block (a smaller block is a faster round, a larger one finds more chains)
BLOCK = 40
#: partition choices tried per chain (topics per hand-over, multiplied along the chain)
_CHOICES_PER_CHAIN = 8
#: chains tried as the first of two when no single chain helps (bounds the search's cost)
_SECOND_STEP_TRIES = 20
#: two-chain search only up to this many members
_TWO_STEP_MEMBERS = 60
_INF = 1 << 30

Steps = list[tuple[TopicPartition, str]]
Choices = dict[tuple[int, int], dict[str, tuple[int, TopicPartition]]]


class _State:
    """Who holds what, with counts per member and per (member, topic), cheap to change back."""

    def __init__(self, group: GroupSnapshot, held: dict[str, list[TopicPartition]], racks: bool) -> None:
        self.group = group
        self.racks = racks
        # dicts, not sets: iteration in insertion order keeps the pass deterministic whatever
        # the process's hash seed
        self.held = {mid: dict.fromkeys(tps) for mid, tps in held.items()}
        self.owner = {tp: mid for mid, tps in held.items() for tp in tps}
        self.count = {mid: len(tps) for mid, tps in held.items()}
        self.topics = {mid: Counter(tp.topic for tp in tps) for mid, tps in held.items()}

    def move(self, tp: TopicPartition, to: str) -> None:
        frm = self.owner[tp]
        del self.held[frm][tp]
        self.held[to][tp] = None
        self.owner[tp] = to
        self.count[frm] -= 1
        self.count[to] += 1
        self.topics[frm][tp.topic] -= 1
        self.topics[to][tp.topic] += 1

    def apply(self, steps: Steps) -> Steps:
        """Carry out a chain; return how to undo it."""
        undo = [(tp, self.owner[tp]) for tp, _ in steps]
        for tp, to in steps:
            self.move(tp, to)
        return undo[::-1]

    def undo(self, undo: Steps) -> None:
        for tp, back in undo:
            self.move(tp, back)

    def balanced_around(self, touched: set[str]) -> bool:
        """The condition, given that it held before only ``touched`` members changed."""
        subs = self.group.subscribers
        count = self.count
        for mid in touched:
            c = count[mid]
            for topic, n in self.topics[mid].items():
                if n and min(count[s] for s in subs[topic]) < c - 1:
                    return False
            for topic in self.group.topics_of[mid]:
                holders = (count[s] for s in subs[topic] if self.topics[s][topic])
                if max(holders, default=0) > c + 1:
                    return False
        return True

    def balanced(self) -> bool:
        """The whole condition, topic by topic: its fullest holder within one of its emptiest
        subscriber."""
        count = self.count
        for topic, subs in self.group.subscribers.items():
            held = [count[s] for s in subs if self.topics[s][topic]]
            if held and max(held) > min(count[s] for s in subs) + 1:
                return False
        return True


class _Scope:
    """The members a search looks at (all of them, or one block of a big group): their ids,
    index (position in ``ids``) and, per topic, which of them subscribe. Chains stay inside
    the scope; the balance condition is checked on the whole group."""

    def __init__(self, group: GroupSnapshot, ids: list[str]) -> None:
        self.ids = ids
        self.index = {mid: i for i, mid in enumerate(ids)}
        if len(ids) == len(group.member_ids):
            self.subscribers = group.subscribers
        else:
            self.subscribers = {
                t: [s for s in subs if s in self.index] for t, subs in group.subscribers.items()
            }


#: with racks, one more rack-local partition outweighs any number of moves in a chain
RACK_WEIGHT = 1000
#: with racks and one shared subscription, keeping an owned partition that is rack-local
#: outweighs everything else: Kafka's constrained builder keeps those first (up to the quotas)
#: and only then places the rest by rack, so a chain that gives one up for more locality
#: elsewhere would buy locality with moves Kafka does not make
KEEP_WEIGHT = 1_000_000


def _rack_edges(state: _State, scope: _Scope) -> tuple[np.ndarray, Choices]:
    """``_edges`` when racks are known: a hand-over also gains ``RACK_WEIGHT`` if the partition
    becomes rack-local (a replica on the taker's rack) and loses it if it stops being so; with
    one shared subscription, giving away an owned rack-local partition costs ``KEEP_WEIGHT``
    more (and getting one back saves it)."""
    group = state.group
    before = group.owner
    rack = {m.id: m.rack for m in group.members}
    keep = KEEP_WEIGHT if group.identical_subscriptions else 0

    def value(mid: str, tp: TopicPartition, racks: frozenset[str]) -> int:
        """What holding ``tp`` is worth to ``mid``: locality, then keeping what it owned."""
        local = rack[mid] in racks
        owned = 1 + (keep if local else 0) if before.get(tp) == mid else 0
        return owned + (RACK_WEIGHT if local else 0)

    n = len(scope.ids)
    cost = [[_INF] * n for _ in range(n)]  # lists while filling: numpy's item access is slow
    choices: Choices = {}
    index = scope.index
    for giver in scope.ids:
        g = index[giver]
        row = cost[g]
        for tp in state.held[giver]:
            racks = group.partitions[tp].racks
            leave = value(giver, tp, racks)
            for taker in scope.subscribers[tp.topic]:
                if taker == giver:
                    continue
                c = leave - value(taker, tp, racks)
                t = index[taker]
                per_topic = choices.setdefault((g, t), {})
                best = per_topic.get(tp.topic)
                if best is None or c < best[0]:
                    per_topic[tp.topic] = (c, tp)
                if c < row[t]:
                    row[t] = c
    return np.array(cost, dtype=np.int64), choices


def _edges(state: _State, scope: _Scope) -> tuple[np.ndarray, Choices]:
    """Cost of the best single hand-over from each member to each other one, and per topic the
    best partition for it (which topics a member ends up holding decides the balance condition).

    Per member and topic held: a partition returning to the taker costs -1, one that is not the
    giver's own costs 0, and the giver's own cost +1."""
    if state.racks:
        return _rack_edges(state, scope)
    group = state.group
    before = group.owner
    n = len(scope.ids)
    cost = [[_INF] * n for _ in range(n)]  # lists while filling: numpy's item access is slow
    choices: Choices = {}
    index = scope.index
    for giver in scope.ids:
        tps = state.held[giver]
        g = index[giver]
        row = cost[g]
        by_topic: dict[str, list[TopicPartition]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp)
        for topic, held in by_topic.items():
            returning: dict[str, TopicPartition] = {}
            foreign: TopicPartition | None = None
            own = held[0]
            for tp in held:
                prev = before.get(tp)
                if prev == giver:
                    own = tp
                else:
                    foreign = tp
                    if prev is not None:
                        returning.setdefault(prev, tp)
            base: tuple[int, TopicPartition] = (0, foreign) if foreign is not None else (1, own)
            for taker in scope.subscribers[topic]:
                if taker == giver:
                    continue
                t = index[taker]
                back = returning.get(taker)
                best = (-1, back) if back is not None else base
                choices.setdefault((g, t), {})[topic] = best
                if best[0] < row[t]:
                    row[t] = best[0]
    return np.array(cost, dtype=np.int64), choices


def _shortest(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All-pairs shortest path costs and next hops (Floyd-Warshall)."""
    n = cost.shape[0]
    dist = cost.copy()
    nxt = np.tile(np.arange(n), (n, 1))
    for k in range(n):
        through = dist[:, k, None] + dist[None, k, :]
        better = through < dist
        if better.any():
            dist = np.where(better, through, dist)
            nxt = np.where(better, nxt[:, k, None], nxt)
    return dist, nxt


def _path(nxt: np.ndarray, start: int, end: int, n: int) -> list[int] | None:
    """The members along the shortest chain from ``start`` to ``end`` (None if it loops)."""
    path = [start]
    while True:
        step = int(nxt[path[-1], end])
        if step in path[1:] or len(path) > n + 1:
            return None
        path.append(step)
        if step == end:
            return path


def _candidates(dist: np.ndarray, below: int) -> list[tuple[int, int, int]]:
    """(cost, start, end) of every shortest chain cheaper than ``below``, cheapest first."""
    found = [(int(dist[s, e]), int(s), int(e)) for s, e in zip(*np.nonzero(dist < below), strict=True)]
    found.sort()
    return found


def _cost(path: list[int], cost: np.ndarray) -> int:
    """A chain's real cost (with a negative cycle about it may differ from ``dist``)."""
    return sum(int(cost[a, b]) for a, b in itertools.pairwise(path))


def _variants(path: list[int], cost: np.ndarray, choices: Choices, ids: list[str]) -> list[Steps]:
    """The ways to carry out a chain at its cost: one partition per hand-over, topics varying."""
    options = []
    for a, b in itertools.pairwise(path):
        if (a, b) not in choices:
            return []  # no hand-over there (a path bent by a negative cycle's distances)
        options.append([(tp, ids[b]) for c, tp in choices[(a, b)].values() if c == cost[a, b]])
    variants: list[Steps] = []
    for combo in itertools.islice(itertools.product(*options), _CHOICES_PER_CHAIN):
        if len({tp for tp, _ in combo}) == len(combo):
            variants.append(list(combo))
    return variants


def _improve(state: _State, scope: _Scope, two_steps: bool, below: int = 0) -> int | None:
    """Apply chains that cost less than ``below`` and keep the balance condition, cheapest
    first, as many as touch no member an earlier one touched (their costs stay true; only one
    unless ``below`` is 0); with ``two_steps``, one pair of chains costing less than zero in all.
    Return their cost (None when there is none)."""
    ids = scope.ids
    cost, choices = _edges(state, scope)
    dist, nxt = _shortest(cost)
    tried = 0
    total = 0
    busy: set[str] = set()
    # a first chain of two may cost a little (moves, never rack locality) if the second pays
    slack = (RACK_WEIGHT if state.racks else 1) if two_steps else below
    for _, s, e in _candidates(dist, slack):
        if two_steps and tried >= _SECOND_STEP_TRIES:
            break
        if ids[s] in busy or ids[e] in busy:
            continue
        path = _path(nxt, s, e, len(ids))
        if path is None:
            continue
        gain = _cost(path, cost)
        variants = _variants(path, cost, choices, ids)
        touched = {ids[i] for i in path}
        if gain < below and not two_steps and not touched & busy:
            for steps in variants:
                undo = state.apply(steps)
                if state.balanced_around(touched):
                    if below:
                        return gain
                    total += gain
                    busy |= touched
                    break
                state.undo(undo)
        if two_steps and variants and gain < slack and tried < _SECOND_STEP_TRIES:
            tried += 1
            undo = state.apply(variants[0])
            more = _repair(state, scope, -gain)
            if more is not None:
                return gain + more
            state.undo(undo)
    return total or None


def _violations(state: _State) -> list[tuple[str, str, str]]:
    """(fuller member, topic, emptier member) for every breach of the balance condition."""
    count = state.count
    found: list[tuple[str, str, str]] = []
    for mid, per_topic in state.topics.items():
        for topic, n in per_topic.items():
            if n:
                found.extend(
                    (mid, topic, o) for o in state.group.subscribers[topic] if count[o] <= count[mid] - 2
                )
    return found


def _repair(state: _State, scope: _Scope, below: int) -> int | None:
    """With no breach, one chain costing less than ``below`` that keeps the condition; else
    mend a breach with one chain costing less than ``below``: the fuller member either swaps
    the topic's partitions for another (a cycle through it) or hands a partition on towards
    the emptier member (a chain from one to the other)."""
    breaches = _violations(state)
    if not breaches:
        return _improve(state, scope, False, below)
    group = state.group
    ids, index = scope.ids, scope.index
    cost, choices = _edges(state, scope)
    dist, nxt = _shortest(cost)
    chains: list[tuple[int, list[int], str | None]] = []
    for full, topic, empty in breaches[:4]:
        f, e = index[full], index[empty]
        for taker in group.subscribers[topic]:
            t = index[taker]
            first = choices.get((f, t), {}).get(topic)
            if first is None or dist[t, f] >= _INF // 2 or first[0] + int(dist[t, f]) >= below:
                continue
            back = _path(nxt, t, f, len(ids))
            if back is not None:
                chains.append((first[0] + int(dist[t, f]), [f, *back], topic))
        if dist[f, e] < below:
            path = _path(nxt, f, e, len(ids))
            if path is not None:
                chains.append((int(dist[f, e]), path, None))
    chains.sort(key=lambda c: c[0])
    for _, path, swap in chains:
        gain = _cost(path, cost)
        if swap is not None:
            gain += choices[(path[0], path[1])][swap][0] - int(cost[path[0], path[1]])
        if gain >= below:
            continue
        for steps in _variants(path, cost, choices, ids):
            if swap is not None:
                steps[0] = (choices[(path[0], path[1])][swap][1], ids[path[1]])
                if len({tp for tp, _ in steps}) != len(steps):
                    continue
            undo = state.apply(steps)
            if state.balanced():
                return gain
            state.undo(undo)
    return None


def _search(state: _State, scope: _Scope, two_steps: bool) -> int:
    """Apply chains inside ``scope`` until none helps; return the total cost saved."""
    saved = 0
    while True:
        gain = _improve(state, scope, False)
        if gain is None and two_steps:
            gain = _improve(state, scope, True)
        if gain is None:
            return saved
        saved -= gain


def _blocks(ids: list[str], size: int, sweep: int) -> list[list[str]]:
    """Blocks of at most ``size`` members for one sweep: every ``k``-th member together on even
    sweeps (a spread of subscriptions and racks), consecutive runs on odd ones, so a chain
    one sweep cannot make (its members in different blocks) the next may."""
    k = -(-len(ids) // size)
    if sweep % 2 == 0:
        shift = sweep // 2
        rotated = ids[shift:] + ids[:shift]
        return [rotated[b::k] for b in range(k)]
    start = (sweep // 2) * (size // 2)
    rotated = ids[start:] + ids[:start]
    return [rotated[b * size : (b + 1) * size] for b in range(k)]


def fewer_moves(group: GroupSnapshot, book: LoadBook, racks: bool = False) -> int:
    """Improve ``book`` (balanced) in place; return the cost saved (moves, or with ``racks``
    rack locality first, see ``_rack_edges``). Groups above ``MAX_MEMBERS`` members or
    ``MAX_PAIRS`` (partition, eligible member) pairs are searched in blocks of members small
    enough for both, sweep after sweep (``_blocks``) until a sweep saves nothing or
    ``MAX_SWEEPS`` have run: each chain found is a true improvement of the whole group."""
    ids = group.member_ids
    n = len(ids)
    if n < 2:
        return 0
    pairs = sum(len(group.subscribers[t]) * len(tps) for t, tps in group.topic_partitions.items())
    state = _State(group, {mid: list(tps) for mid, tps in book.held.items()}, racks)
    if n <= MAX_MEMBERS and pairs <= MAX_PAIRS:
        saved = _search(state, _Scope(group, ids), n <= _TWO_STEP_MEMBERS)
    else:
        # a block of b members holds about pairs * (b / n)^2 of the pairs
        size = max(2, min(BLOCK, int(n * (MAX_PAIRS / pairs) ** 0.5)))
        saved = 0
        for sweep in range(MAX_SWEEPS):
            gained = sum(_search(state, _Scope(group, block), False) for block in _blocks(ids, size, sweep))
            saved += gained
            if not gained:
                break
    for tp, mid in state.owner.items():
        if book.owner[tp] != mid:
            book.move(tp, mid)
    return saved
