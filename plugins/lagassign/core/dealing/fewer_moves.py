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
The search stops as soon as no layout meeting the condition could keep more partitions with
their previous owners (a bound from each member's possible counts, ``_most_kept``): the
chains left to try could only fail.

Used by sticky for mixed subscriptions (identical ones already move the minimum), where its
three passes alone can move more partitions than Kafka's StickyAssignor, and whenever racks
are known (KIP-881): then a hand-over's cost also counts ``RACK_WEIGHT`` per partition that
stops (or starts) being rack-local, so rack locality comes first and moves second, as in
Kafka's sticky assignors (balance first, then racks, then stickiness).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from typing import Any

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
#: rounds refining the bounds on members' counts at most (``_count_ranges``)
_BOUND_ROUNDS = 4
#: subscriber sets per member up to which every combination of them is bounded
_BOUND_CLASSES = 5

Steps = list[tuple[TopicPartition, str]]
#: a breach of the balance condition: (fuller member, topic, emptier member)
Breach = tuple[str, str, str]
#: one giver's hand-overs: per taker (by index), per topic the cost and best partition
Choices = dict[int, dict[str, tuple[int, TopicPartition]]]
#: a square matrix of integers as lists (item access on lists is much cheaper than numpy's)
Matrix = list[list[int]]
#: one giver's ways to carry out its cheapest hand-over to a taker (by index), as steps:
#: filled in as chains ask for them (``_variants``)
Options = dict[int, list[tuple[TopicPartition, str]]]
#: one giver's hand-overs: what it held (in order) when they were worked, their costs, choices
#: and the options worked from them so far
GiverEdges = tuple[tuple[TopicPartition, ...], list[int], Choices, Options]
#: every giver's hand-overs, by the giver's index
AllChoices = list[Choices]
#: per set of topics (as subscriber sets) a member holds, the most partitions it can hold
Caps = dict[tuple[frozenset[str], ...], int]


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
        self.rack = {m.id: m.rack for m in group.members}
        before = group.owner
        #: per partition, its topic and previous owner (read per partition by ``_giver_edges``)
        self.info = {tp: (tp.topic, before.get(tp)) for tp in self.owner}
        self.least: dict[str, int] = {}
        self.most: dict[str, int] = {}
        #: per member, the most it can hold per set of topics it holds (``_count_ranges``)
        self.caps: dict[str, Caps] = {}
        #: per member, how many times what it holds (or their order) changed: a giver's
        #: hand-overs need no second look while it stays the same (``_edges``)
        self.version = dict.fromkeys(held, 0)

    def apply(self, steps: Steps) -> Steps:
        """Carry out a chain; return how to undo it."""
        undo = [(tp, self.owner[tp]) for tp, _ in reversed(steps)]
        self.undo(steps)
        return undo

    def undo(self, undo: Steps) -> None:
        """Carry out the steps ``apply`` returned (or any others)."""
        held, owner, count, topics, version = self.held, self.owner, self.count, self.topics, self.version
        for tp, to in undo:
            frm = owner[tp]
            del held[frm][tp]
            held[to][tp] = None
            owner[tp] = to
            count[frm] -= 1
            count[to] += 1
            topics[frm][tp.topic] -= 1
            topics[to][tp.topic] += 1
            version[frm] += 1
            version[to] += 1

    def tried(self, steps: Steps) -> None:
        """What carrying out a chain and undoing it leaves: its partitions last in their
        holders' order, last step first, and each taker's count of the topic it took (zero
        again) in its place in the taker's topics (both orders decide later choices, so a
        chain known to fail is not carried out but its trace is kept)."""
        held, owner, topics, version = self.held, self.owner, self.topics, self.version
        for tp, to in steps:
            topics[to].setdefault(tp.topic, 0)
        for tp, _ in reversed(steps):
            mid = owner[tp]
            mine = held[mid]
            del mine[tp]
            mine[tp] = None
            version[mid] += 1

    def attempt(self, steps: Steps, touched: set[str]) -> bool:
        """Carry out a chain if the condition holds after it (``balanced_around(touched)``), else
        leave only its trace (``tried``): what ``apply``, the check and ``undo`` leave, but the
        check reads only counts, so a failing chain moves no partition there and back."""
        owner = self.owner
        moves = [(tp, owner[tp], to) for tp, to in steps]
        self._count(moves, 1)  # as ``undo`` counts them, creating the takers' topic entries
        if self.balanced_around(touched):
            held, version = self.held, self.version
            for tp, frm, to in moves:
                del held[frm][tp]
                held[to][tp] = None
                owner[tp] = to
                version[frm] += 1
                version[to] += 1
            return True
        self._count(moves, -1)
        self.tried(steps)
        return False

    def _count(self, moves: list[tuple[TopicPartition, str, str]], sign: int) -> None:
        """Counts and topic counts with each (partition, from, to) move made (``sign`` 1) or
        taken back (-1), the partitions left where they are."""
        count, topics = self.count, self.topics
        for tp, frm, to in moves:
            count[frm] -= sign
            count[to] += sign
            topics[frm][tp.topic] -= sign
            topics[to][tp.topic] += sign

    def balanced_around(self, touched: set[str]) -> bool:
        """The condition, given that it held before only ``touched`` members changed."""
        subs = self.group.subscribers
        count = self.count
        topics = self.topics
        low, high = min(count.values()), max(count.values())
        if high <= low + 1:
            return True  # counts within one: no member can break it
        for mid in touched:
            c = count[mid]
            if low < c - 1:  # some member has 2+ fewer: may it take one of mid's topics?
                for topic, n in topics[mid].items():
                    if n and min(map(count.__getitem__, subs[topic])) < c - 1:
                        return False
            if high > c + 1:  # some member has 2+ more: does it hold a topic mid could take?
                for topic in self.group.topics_of[mid]:
                    for s in subs[topic]:
                        if count[s] > c + 1 and topics[s].get(topic):
                            return False
        return True


class _Scope:
    """The members a search looks at (all of them, or one block of a big group): their ids,
    index (position in ``ids``) and, per topic, which of them subscribe. Chains stay inside
    the scope; the balance condition is checked on the whole group."""

    def __init__(self, group: GroupSnapshot, ids: list[str]) -> None:
        self.ids = ids
        self.index = {mid: i for i, mid in enumerate(ids)}
        #: per giver, its hand-overs as last worked: they depend only on what it holds (in
        #: order), so a chain's search reworks only the members it changed
        self.givers: dict[str, GiverEdges] = {}
        #: per giver, the state's ``version`` of it when ``givers`` was last checked against it
        self.seen: dict[str, int] = {}
        #: shortest paths per cost matrix seen: a search often meets one again (a chain tried
        #: and undone, the two-step search starting where the one-step search ended)
        self._shortest: dict[tuple[tuple[int, ...], ...], tuple[Matrix, Matrix]] = {}
        self.subscribers: dict[str, list[str]]
        if len(ids) == len(group.member_ids):
            self.subscribers = group.subscribers
        else:  # from the block's members, in the group's order: a block is small, a group not
            self.subscribers = {t: [] for t in group.subscribers}
            topics_of = group.topics_of
            for mid in sorted(ids, key=group.member_index.__getitem__):
                for t in topics_of[mid]:
                    self.subscribers[t].append(mid)
        #: per topic, its subscribers in the scope with their index
        self.takers = {t: [(mid, self.index[mid]) for mid in subs] for t, subs in self.subscribers.items()}

    def shortest(self, cost: Matrix) -> tuple[Matrix, Matrix]:
        """``_shortest(cost)``, once per distinct matrix (read the lists, never change them)."""
        key = tuple(map(tuple, cost))
        found = self._shortest.get(key)
        if found is None:
            found = self._shortest[key] = _shortest(cost)
        return found


#: with racks, one more rack-local partition outweighs any number of moves in a chain
RACK_WEIGHT = 1000
#: with racks and one shared subscription, keeping an owned partition that is rack-local
#: outweighs everything else: Kafka's constrained builder keeps those first (up to the quotas)
#: and only then places the rest by rack, so a chain that gives one up for more locality
#: elsewhere would buy locality with moves Kafka does not make
KEEP_WEIGHT = 1_000_000


def _rack_edges(state: _State, scope: _Scope, giver: str) -> tuple[list[int], Choices]:
    """``_giver_edges`` when racks are known: a hand-over also gains ``RACK_WEIGHT`` if the
    partition becomes rack-local (a replica on the taker's rack) and loses it if it stops being
    so; with one shared subscription, giving away an owned rack-local partition costs
    ``KEEP_WEIGHT`` more (and getting one back saves it)."""
    group = state.group
    before = group.owner
    rack = state.rack
    keep = KEEP_WEIGHT if group.identical_subscriptions else 0

    def value(mid: str, tp: TopicPartition, racks: frozenset[str]) -> int:
        """What holding ``tp`` is worth to ``mid``: locality, then keeping what it owned."""
        local = rack[mid] in racks
        owned = 1 + (keep if local else 0) if before.get(tp) == mid else 0
        return owned + (RACK_WEIGHT if local else 0)

    row = [_INF] * len(scope.ids)
    choices: Choices = {}
    index = scope.index
    for tp in state.held[giver]:
        racks = group.partitions[tp].racks
        leave = value(giver, tp, racks)
        for taker in scope.subscribers[tp.topic]:
            if taker == giver:
                continue
            c = leave - value(taker, tp, racks)
            t = index[taker]
            per_topic = choices.setdefault(t, {})
            best = per_topic.get(tp.topic)
            if best is None or c < best[0]:
                per_topic[tp.topic] = (c, tp)
            if c < row[t]:
                row[t] = c
    return row, choices


def _edges(state: _State, scope: _Scope) -> tuple[Matrix, AllChoices, list[Options]]:
    """Cost of the best single hand-over from each member to each other one, and per topic the
    best partition for it (which topics a member ends up holding decides the balance condition),
    with each giver's options (``_variants``). A giver's hand-overs are reworked only when what
    it holds changed (``_Scope.givers``)."""
    cost: Matrix = []
    choices: AllChoices = []
    options: list[Options] = []
    known = scope.givers
    seen = scope.seen
    held = state.held
    version = state.version
    for giver in scope.ids:
        edges = known.get(giver)
        if edges is None or seen[giver] != version[giver]:
            seen[giver] = version[giver]
            key = tuple(held[giver])
            if edges is None or edges[0] != key:
                work = _rack_edges if state.racks else _giver_edges
                edges = known[giver] = (key, *work(state, scope, giver), {})
        cost.append(edges[1])
        choices.append(edges[2])
        options.append(edges[3])
    return cost, choices, options


def _giver_edges(state: _State, scope: _Scope, giver: str) -> tuple[list[int], Choices]:
    """One giver's row of ``_edges`` and its choices, without racks. Per topic held: a
    partition returning to the taker costs -1, one that is not the giver's own costs 0, and
    the giver's own cost +1."""
    info = state.info
    row = [_INF] * len(scope.ids)
    # per topic held, in order of first sight: its last own partition, its last other one,
    # and per previous owner the first partition that would return to it
    seen: dict[str, list[Any]] = {}
    for tp in state.held[giver]:
        topic, prev = info[tp]
        found = seen.get(topic)
        if found is None:
            found = seen[topic] = [None, None, {}]
        if prev == giver:
            found[0] = tp
        else:
            found[1] = tp
            if prev is not None and prev not in found[2]:
                found[2][prev] = tp
    per_taker: Choices = {}
    takers = scope.takers
    for topic, (own, foreign, returning) in seen.items():
        base: tuple[int, TopicPartition] = (0, foreign) if foreign is not None else (1, own)
        for taker, t in takers[topic]:
            if taker == giver:
                continue
            back = returning.get(taker) if returning else None
            best = (-1, back) if back is not None else base
            mine = per_taker.get(t)
            if mine is None:
                per_taker[t] = {topic: best}
            else:
                mine[topic] = best
            if best[0] < row[t]:
                row[t] = best[0]
    return row, per_taker


def _shortest(costs: Matrix) -> tuple[Matrix, Matrix]:
    """All-pairs shortest path costs and next hops (Floyd-Warshall in numpy), as lists."""
    n = len(costs)
    dist = np.array(costs, dtype=np.int64)
    nxt = np.empty_like(dist)
    nxt[:] = np.arange(n)
    through = np.empty_like(dist)
    better = np.empty(dist.shape, dtype=bool)
    # copied where better even when nowhere is: at these sizes a call costs more than its
    # elements, and ``better.any()`` is a call
    for k in range(n):
        np.add(dist[:, k, None], dist[k], out=through)
        np.less(through, dist, out=better)
        np.copyto(dist, through, where=better)
        np.copyto(nxt, nxt[:, k, None], where=better)
    return dist.tolist(), nxt.tolist()


def _path(nxt: Matrix, start: int, end: int, n: int) -> list[int] | None:
    """The members along the shortest chain from ``start`` to ``end`` (None if it loops)."""
    path = [start]
    seen: set[int] = set()  # path[1:]: the start may come back only as the end (a cycle)
    at = start
    while True:
        step = nxt[at][end]
        if step in seen or len(path) > n + 1:
            return None
        path.append(step)
        if step == end:
            return path
        seen.add(step)
        at = step


def _candidates(dist: Matrix, below: int) -> list[tuple[int, int, int]]:
    """(cost, start, end) of every shortest chain cheaper than ``below``, cheapest first."""
    found = [(d, s, e) for s, row in enumerate(dist) for e, d in enumerate(row) if d < below]
    found.sort()
    return found


def _cost(path: list[int], cost: Matrix) -> int:
    """A chain's real cost (with a negative cycle about it may differ from ``dist``)."""
    total = 0
    a = path[0]
    for b in path[1:]:  # a plain loop: chains are short, a generator's overhead is not
        total += cost[a][b]
        a = b
    return total


def _variants(
    path: list[int], cost: Matrix, choices: AllChoices, options: list[Options], ids: list[str]
) -> list[Steps]:
    """The ways to carry out a chain at its cost: one partition per hand-over, topics varying.
    Each hand-over's ways are worked once per state of its giver (``options``): chains tried
    one after another share most of their hand-overs."""
    hops = []
    for a, b in itertools.pairwise(path):
        mine = options[a]
        hop = mine.get(b)
        if hop is None:
            per_topic = choices[a].get(b)
            if per_topic is None:
                return []  # no hand-over there (a path bent by a negative cycle's distances)
            at, taker = cost[a][b], ids[b]
            hop = mine[b] = [(tp, taker) for c, tp in per_topic.values() if c == at]
        hops.append(hop)
    combos = itertools.islice(itertools.product(*hops), _CHOICES_PER_CHAIN)
    if len(set(path)) >= len(path) - 1:  # givers all differ (only the end may be the start)
        return list(map(list, combos))  # so do the partitions they give
    return [list(combo) for combo in combos if len({tp for tp, _ in combo}) == len(combo)]


def _improve(state: _State, scope: _Scope, two_steps: bool, below: int = 0) -> int | None:
    """Apply chains that cost less than ``below`` and keep the balance condition, cheapest
    first, as many as touch no member an earlier one touched (their costs stay true; only one
    unless ``below`` is 0); with ``two_steps``, one pair of chains costing less than zero in all.
    Return their cost (None when there is none)."""
    ids = scope.ids
    cost, choices, options = _edges(state, scope)
    dist, nxt = scope.shortest(cost)
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
        if not two_steps:
            if gain >= below:
                continue
            touched = {ids[i] for i in path}
            if touched & busy:
                continue
            for steps in _variants(path, cost, choices, options, ids):
                if state.attempt(steps, touched):
                    if below:
                        return gain
                    total += gain
                    busy |= touched
                    break
            continue
        variants = _variants(path, cost, choices, options, ids) if gain < slack else []
        if variants:
            tried += 1
            undo = state.apply(variants[0])
            more = _repair(state, scope, -gain)
            if more is not None:
                return gain + more
            state.undo(undo)
    return total or None


def _violations(state: _State) -> list[Breach]:
    """(fuller member, topic, emptier member) for every breach of the balance condition."""
    count = state.count
    found: list[Breach] = []
    low = min(count.values())
    if max(count.values()) <= low + 1:
        return found  # counts within one: no breach
    subscribers = state.group.subscribers
    for mid, per_topic in state.topics.items():
        most = count[mid] - 2
        if low > most:
            continue  # nobody has two fewer
        for topic, n in per_topic.items():
            if n:
                found.extend((mid, topic, o) for o in subscribers[topic] if count[o] <= most)
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
    cost, choices, options = _edges(state, scope)
    dist, nxt = scope.shortest(cost)
    chains: list[tuple[int, list[int], str | None]] = []
    for full, topic, empty in breaches[:4]:
        f, e = index[full], index[empty]
        for taker in group.subscribers[topic]:
            t = index[taker]
            first = choices[f].get(t, {}).get(topic)
            if first is None or dist[t][f] >= _INF // 2 or first[0] + dist[t][f] >= below:
                continue
            back = _path(nxt, t, f, len(ids))
            if back is not None:
                chains.append((first[0] + dist[t][f], [f, *back], topic))
        if dist[f][e] < below:
            path = _path(nxt, f, e, len(ids))
            if path is not None:
                chains.append((dist[f][e], path, None))
    chains.sort(key=lambda c: c[0])
    for _, path, swap in chains:
        gain = _cost(path, cost)
        if swap is not None:
            gain += choices[path[0]][path[1]][swap][0] - cost[path[0]][path[1]]
        if gain >= below:
            continue
        touched = {ids[i] for i in path}
        hopeless = _stays(state, breaches, touched, ids[path[0]], ids[path[-1]])
        for steps in _variants(path, cost, choices, options, ids):
            if swap is not None:
                steps[0] = (choices[path[0]][path[1]][swap][1], ids[path[1]])
                if len({tp for tp, _ in steps}) != len(steps):
                    continue
            if hopeless:
                state.tried(steps)
                continue
            if state.attempt(steps, touched):  # the breaches all touch it: the whole condition
                return gain
    return None


def _stays(state: _State, breaches: list[Breach], touched: set[str], start: str, end: str) -> bool:
    """Whether some breach outlasts every way of carrying out a chain from ``start`` to ``end``
    through ``touched``: one between members it does not touch, or one whose fuller member
    keeps 2+ more than the emptier one and still holds the topic (it holds 2+ of it and gives
    at most one, or gives none: it is not in the chain, or only as its end). The balance check
    of each way would fail on it (``balanced_around`` sees every breach of a touched member)."""
    count, topics = state.count, state.topics
    moves = start != end
    for full, topic, empty in breaches:
        if full not in touched:
            if empty not in touched:
                return True
        elif topics[full][topic] < 2 and (full != end or not moves):
            continue  # it may give its last partition of the topic away
        gap = count[full] - count[empty]
        if moves:
            gap += (full == end) - (full == start) + (empty == start) - (empty == end)
        if gap >= 2:
            return True
    return False


def _can_gain(state: _State, scope: _Scope) -> bool:
    """Whether a chain inside ``scope`` could cost less than zero: it needs a partition that
    goes back to its previous owner (both in the scope) or, with racks, one that could become
    rack-local there. Other hand-overs cost nothing or more."""
    before = state.group.owner
    index = scope.index
    rack = state.rack if state.racks else {}
    for mid in scope.ids:
        for tp in state.held[mid]:
            prev = before.get(tp)
            if prev is not None and prev != mid and prev in index:
                return True
            if state.racks:
                racks = state.group.partitions[tp].racks
                if rack[mid] not in racks and any(rack[s] in racks for s in scope.subscribers[tp.topic]):
                    return True
    return False


def _subsets(classes: list[frozenset[str]]) -> list[tuple[frozenset[str], ...]]:
    """Every non-empty set of ``classes``; above ``_BOUND_CLASSES`` only each one and all."""
    if len(classes) <= _BOUND_CLASSES:
        return [h for k in range(1, len(classes) + 1) for h in itertools.combinations(classes, k)]
    return [(k,) for k in classes] + [tuple(classes)]


def _count_ranges(state: _State) -> dict[str, list[frozenset[str]]] | None:
    """Per member, the topics it can hold in any layout of the state's partitions that meets
    the balance condition, as subscriber sets (topics with the same subscribers are one), with
    the fewest and most partitions it can hold there (``state.least``, ``state.most``); None if
    the bounds contradict.

    Bounds on a member's count c, refined in a few rounds: subscribing to topics H (U
    subscribers) it has at least ceil(H's partitions / U) - 1, as the member holding most of
    them has at most one more, at least the total less the others' most, and at least what
    ``_least_by_load`` finds; holding H, it has c + (U - 1) * (c - 1) + (the others' fewest)
    <= total, c <= H's partitions, and c + (S - 1) * (c - 1) <= H's partitions with the S - 1
    subscribers that may hold nothing else. It can hold a topic only if every subscriber can
    have at least one fewer than its fewest. Work is shared by members of one subscription."""
    group = state.group
    total = sum(state.count.values())
    sets: dict[str, frozenset[str]] = {}
    sizes: Counter[frozenset[str]] = Counter()
    for tp in state.owner:
        k = sets.get(tp.topic)
        if k is None:
            k = sets[tp.topic] = frozenset(group.subscribers[tp.topic])
        sizes[k] += 1
    members = list(state.count)
    theirs = {mid: tuple(k for k in sizes if mid in k) for mid in members}
    allowed = dict(theirs)
    spans: dict[tuple[frozenset[str], ...], tuple[frozenset[str], int]] = {}  # H: (U, H's partitions)

    def span(h: tuple[frozenset[str], ...]) -> tuple[frozenset[str], int]:
        found = spans.get(h)
        if found is None:
            found = spans[h] = (frozenset().union(*h), sum(sizes[k] for k in h))
        return found

    floor: dict[tuple[frozenset[str], ...], int] = {}
    for mine in set(theirs.values()):
        floor[mine] = max(
            (-(-inside // len(them)) - 1 for them, inside in map(span, _subsets(list(mine)))), default=0
        )
    least = {mid: floor[theirs[mid]] for mid in members}
    most = dict.fromkeys(members, total)
    for _ in range(_BOUND_ROUNDS):
        was = (dict(least), dict(most), dict(allowed))
        others_most = sum(most.values())
        for mid in members:
            least[mid] = max(least[mid], total - others_most + most[mid])
        fewest = sum(least.values())
        highs: dict[tuple[frozenset[str], ...], Caps] = {}
        for mid in members:
            mine = allowed[mid]
            caps = highs.get(mine)
            if caps is None:
                caps = highs[mine] = _most_holding(mine, total, fewest, least, allowed, span)
            state.caps[mid] = caps
            most[mid] = min(most[mid], max(caps.values(), default=0))
        lowest = {k: min(map(most.__getitem__, k)) for k in sizes}  # per set, its smallest most
        for mid in members:
            allowed[mid] = tuple(k for k in allowed[mid] if lowest[k] >= least[mid] - 1)
        lows: dict[tuple[Any, ...], int] = {}
        for mid in members:
            if not theirs[mid]:
                continue
            key = (theirs[mid], allowed[mid], least[mid], most[mid])
            low = lows.get(key)
            if low is None:
                low = lows[key] = _least_by_load(mid, theirs[mid], total, sizes, least, most, allowed)
            least[mid] = low
        if was == (least, most, allowed):
            break  # a round that changes nothing: so would the next
    if any(least[mid] > most[mid] for mid in members):
        return None
    state.least, state.most = least, most
    return {mid: list(ks) for mid, ks in allowed.items()}


def _most_holding(
    mine: tuple[frozenset[str], ...],
    total: int,
    fewest: int,
    least: dict[str, int],
    allowed: dict[str, tuple[frozenset[str], ...]],
    span: Callable[[tuple[frozenset[str], ...]], tuple[frozenset[str], int]],
) -> Caps:
    """The most partitions a member that may hold ``mine`` can hold (``_count_ranges``), per
    set of them it holds (above ``_BOUND_CLASSES`` one bound for all of them)."""
    if not mine:
        return {}
    if len(mine) > _BOUND_CLASSES:  # (total + U - 1) // U falls as U grows
        n = min(map(len, mine))
        return {mine: min(sum(span((k,))[1] for k in mine), (total + n - 1) // n)}
    caps: Caps = {}
    for h in _subsets(list(mine)):
        them, inside = span(h)
        n = len(them)
        room = total - fewest + sum(least[o] for o in them)  # for c and U - 1 others
        held = set(h)
        # subscribers that may hold nothing but H (the member itself is one if it may not either)
        only = sum(1 for o in them if held.issuperset(allowed[o])) + (0 if held.issuperset(mine) else 1)
        caps[h] = min(inside, (room + n - 1) // n, (inside + only - 1) // only)
    return caps


def _least_by_load(
    mid: str,
    h: tuple[frozenset[str], ...],
    total: int,
    sizes: Counter[frozenset[str]],
    least: dict[str, int],
    most: dict[str, int],
    allowed: dict[str, tuple[frozenset[str], ...]],
) -> int:
    """The fewest partitions ``mid`` can hold, given that it subscribes to topics H: holding x,
    every member holding one of H's partitions has at most x + 1, and enough of them must
    hold H's partitions, while the others hold only their other topics; if all of them cannot
    hold the total, ``mid`` holds more than x (a count above ``most[mid]`` if none fits)."""
    if not h:
        return least[mid]
    them = frozenset().union(*h)
    inside = sum(sizes[k] for k in h)
    others = [o for o in them if o != mid]
    outside = sum(c for o, c in most.items() if o not in them)
    spare = [min(most[o], sum(sizes[k] for k in allowed[o] if k not in h)) for o in others]

    def fits(x: int) -> bool:
        need = 0 if inside <= x else -(-(inside - x) // (x + 1))  # holders of H besides mid
        if need > len(others):
            return False
        capped = [min(x + 1, most[o]) for o in others]
        gains = sorted((max(0, s - c) for s, c in zip(spare, capped, strict=True)), reverse=True)
        return x + sum(capped) + sum(gains[: len(others) - need]) + outside >= total

    low, high = least[mid], most[mid]
    if fits(low):
        return low
    if not fits(high):
        return high + 1
    while high - low > 1:  # fits(high), not fits(low); the room grows with x
        x = (low + high) // 2
        if fits(x):
            high = x
        else:
            low = x
    return high


def _most_kept(state: _State) -> int | None:
    """Without racks, from a layout that meets the balance condition: at most how many
    partitions any such layout leaves with their previous owners (each holds at most as many
    as it may hold, of the topics it may hold, ``_count_ranges``, and the counts add up).
    None when that is not known (with racks the chains' costs are not moves; an unbalanced
    start; bounds that contradict)."""
    if state.racks or _violations(state):
        return None
    allowed = _count_ranges(state)
    if allowed is None:
        return None
    least, most = state.least, state.most
    before = state.group.owner
    subscribers = state.group.subscribers
    may = {mid: set(ks) for mid, ks in allowed.items()}
    owned: dict[str, Counter[frozenset[str]]] = {mid: Counter() for mid in may}
    sets: dict[str, frozenset[str]] = {}
    for tp in state.owner:
        prev = before.get(tp)
        if prev is not None and prev in may:
            k = sets.get(tp.topic)
            if k is None:
                k = sets[tp.topic] = frozenset(subscribers[tp.topic])
            if k in may[prev]:
                owned[prev][k] += 1
    kept, spare, extra = 0, sum(state.count.values()), 0
    for mid in state.count:
        per_set = owned[mid]
        mine = sum(per_set.values())
        caps = state.caps.get(mid)
        if caps:  # holding the sets H it keeps at most min(its own in H, its most holding H)
            mine = min(mine, max(min(sum(per_set[k] for k in h), cap) for h, cap in caps.items()))
        kept += min(mine, least[mid])
        spare -= least[mid]
        extra += max(0, min(mine, most[mid]) - least[mid])
    if spare < 0:
        return None
    return kept + min(spare, extra)


def _kept(state: _State) -> int:
    """How many partitions sit with their previous owners."""
    before = state.group.owner
    return sum(1 for tp, mid in state.owner.items() if before.get(tp) == mid)


def _search(state: _State, scope: _Scope, two_steps: bool) -> int:
    """Apply chains inside ``scope`` until none helps; return the total cost saved. With
    ``two_steps`` (one search of the whole group) it stops early when no layout meeting the
    condition could keep more partitions with their previous owners (``_most_kept``): every
    chain left to try would fail, changing only the order of partitions, which nothing reads
    after the search."""
    saved = 0
    if not _can_gain(state, scope):
        return 0
    most = _most_kept(state) if two_steps else None
    while True:
        if most is not None and _kept(state) >= most:
            return saved
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
