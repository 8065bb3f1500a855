"""Give owned partitions back along chains of hand-overs while Kafka's balance condition holds.

A chain of hand-overs that ends where it started (a cycle) changes no member's count, and a
chain from one member to another changes only two; either may still break Kafka's balance
condition (a fuller member may now hold a topic a much emptier one could take), so every chain
is checked against it before it stays. This pass looks for chains that return more partitions
to their previous owners than they take from them, with all-pairs shortest paths over the
members (``chains``; a hand-over's cost in ``handovers``), applies the best ones that keep the
condition, and repeats until none is left. When no single chain helps, a chain that breaks
the condition followed by one that mends it is tried. Each step lowers the number of moved
partitions by at least one. Ties between equal choices follow the recency rule (``holdings``).

Used by sticky for mixed subscriptions (identical ones already move the minimum), where its
three passes alone can move more partitions than Kafka's StickyAssignor, and whenever racks
are known (KIP-881): then a hand-over's cost also counts ``handovers.RACK_WEIGHT`` per
partition that stops (or starts) being rack-local, so rack locality comes first and moves
second, as in Kafka's sticky assignors (balance first, then racks, then stickiness).
"""

from __future__ import annotations

from ..model import GroupSnapshot
from .chains import candidates, cost, path, shortest
from .handovers import INF, RACK_WEIGHT, edges, variants
from .holdings import Holdings, Layout, Scope, Steps

#: above this many members, or (partition, eligible member) pairs, the search runs in blocks
#: of members (each round costs members cubed plus the pairs, and saves at least one move)
MAX_MEMBERS = 100
MAX_PAIRS = 200_000
#: sweeps over the blocks of a big group at most
MAX_SWEEPS = 6
#: members per block (a smaller block is a faster round, a larger one finds more chains)
BLOCK = 40
#: chains tried as the first of two when no single chain helps (bounds the search's cost)
_SECOND_STEP_TRIES = 20
#: two-chain search only up to this many members
_TWO_STEP_MEMBERS = 60
#: breaches of the condition a repair looks at, in the order they are found
_BREACHES_LOOKED_AT = 4

#: a breach of the balance condition: (fuller member, topic, emptier member)
Breach = tuple[str, str, str]


def fewer_moves(group: GroupSnapshot, layout: Layout, racks: bool = False) -> Layout:
    """``layout`` (balanced) improved: fewer moves, or with ``racks`` rack locality first (see
    ``handovers``); each member's partitions in the search's recency order. Groups above
    ``MAX_MEMBERS`` members or ``MAX_PAIRS`` (partition, eligible member) pairs are searched in
    blocks of members (``_search_in_blocks``): each chain found is a true improvement of the
    whole group."""
    ids = group.member_ids
    state = Holdings(group, {mid: list(layout.get(mid, ())) for mid in ids}, racks)
    pairs = sum(len(group.subscribers[t]) * len(tps) for t, tps in group.topic_partitions.items())
    if len(ids) <= MAX_MEMBERS and pairs <= MAX_PAIRS:
        _search(state, Scope(group, ids), len(ids) <= _TWO_STEP_MEMBERS)
    else:
        _search_in_blocks(state, pairs)
    return {mid: list(tps) for mid, tps in state.held.items()}


def _search(state: Holdings, scope: Scope, two_steps: bool) -> int:
    """Apply chains inside ``scope`` until none helps (with ``two_steps``, no pair of chains
    either); return the total cost saved. It stops as soon as every partition sits where it
    is worth most (``_can_gain``): no chain, nor pair of chains, could then cost less than zero."""
    saved = 0
    while _can_gain(state, scope):
        gain = _chains(state, scope)
        if gain is None and two_steps:
            gain = _two_chains(state, scope)
        if gain is None:
            return saved
        saved -= gain
    return saved


def _search_in_blocks(state: Holdings, pairs: int) -> int:
    """``_search`` in blocks of members small enough for ``MAX_MEMBERS`` and ``MAX_PAIRS``,
    sweep after sweep (``_blocks``) until a sweep saves nothing or ``MAX_SWEEPS`` have run."""
    group = state.group
    ids = group.member_ids
    # a block of b members holds about pairs * (b / n)^2 of the pairs
    size = max(2, min(BLOCK, int(len(ids) * (MAX_PAIRS / pairs) ** 0.5)))
    saved = 0
    for sweep in range(MAX_SWEEPS):
        gained = sum(_search(state, Scope(group, block), False) for block in _blocks(ids, size, sweep))
        saved += gained
        if not gained:
            break
    return saved


class _Chart:
    """A scope's hand-overs as they are when it is made: their costs, the partitions that
    carry them out, and the cheapest chain between every two members."""

    def __init__(self, state: Holdings, scope: Scope) -> None:
        self.ids = scope.ids
        self.cost, self.choices = edges(state, scope)
        self.dist, self.nxt = shortest(self.cost)

    def path(self, start: int, end: int) -> list[int] | None:
        return path(self.nxt, start, end)

    def variants(self, chain: list[int]) -> list[Steps]:
        return variants(chain, self.cost, self.choices, self.ids)


def _chains(state: Holdings, scope: Scope, below: int = 0) -> int | None:
    """Apply chains that cost less than ``below`` and keep the balance condition, cheapest
    first, as many as touch no member an earlier one touched (their costs stay true; only the
    first unless ``below`` is 0). Return their cost (None when there is none)."""
    chart = _Chart(state, scope)
    ids = chart.ids
    total = 0
    busy: set[str] = set()
    for _, s, e in candidates(chart.dist, below):
        if ids[s] in busy or ids[e] in busy:
            continue
        chain = chart.path(s, e)
        if chain is None:
            continue
        gain = cost(chain, chart.cost)
        touched = {ids[i] for i in chain}
        if gain >= below or touched & busy:
            continue
        for steps in chart.variants(chain):
            if state.attempt(steps, touched):
                if below:
                    return gain
                total += gain
                busy |= touched
                break
    return total or None


def _two_chains(state: Holdings, scope: Scope) -> int | None:
    """One pair of chains costing less than zero in all: a first one that may cost a little
    (moves, never rack locality) and may break the condition, carried out, then one that pays
    for it and keeps or mends the condition (``_repair``); the first taken back if there is
    none. At most ``_SECOND_STEP_TRIES`` first chains. Return the pair's cost."""
    if not state.racks and _no_return_fits(state):
        return None
    chart = _Chart(state, scope)
    slack = RACK_WEIGHT if state.racks else 1
    tried = 0
    for _, s, e in candidates(chart.dist, slack):
        if tried >= _SECOND_STEP_TRIES:
            break
        chain = chart.path(s, e)
        if chain is None:
            continue
        gain = cost(chain, chart.cost)
        ways = chart.variants(chain) if gain < slack else []
        if not ways:
            continue
        tried += 1
        undo = state.apply(ways[0])
        more = _repair(state, scope, -gain)
        if more is not None:
            return gain + more
        state.apply(undo)
    return None


def _repair(state: Holdings, scope: Scope, below: int) -> int | None:
    """With no breach, one chain costing less than ``below`` that keeps the condition; else
    one chain costing less than ``below`` that mends the breaches (``_mending_chains``).
    Return its cost (None when there is none)."""
    breaches = _violations(state)
    if not breaches:
        return _chains(state, scope, below)
    chart = _Chart(state, scope)
    ids = chart.ids
    for _, chain, swap in _mending_chains(scope, chart, breaches, below):
        gain = cost(chain, chart.cost)
        first = chart.choices[chain[0]][chain[1]][swap] if swap is not None else None
        if first is not None:
            gain += first[0] - chart.cost[chain[0]][chain[1]]
        if gain >= below:
            continue
        touched = {ids[i] for i in chain}
        hopeless = _stays(state, breaches, touched, ids[chain[0]], ids[chain[-1]])
        for steps in chart.variants(chain):
            if first is not None:
                steps[0] = (first[1], ids[chain[1]])
                if len({tp for tp, _ in steps}) != len(steps):
                    continue
            if hopeless:
                state.touch(steps)  # it would fail: only its trace, as ``attempt`` leaves it
                continue
            if state.attempt(steps, touched):  # the breaches all touch it: the whole condition
                return gain
    return None


def _mending_chains(
    scope: Scope, chart: _Chart, breaches: list[Breach], below: int
) -> list[tuple[int, list[int], str | None]]:
    """(cost, chain, swapped topic) of chains that may mend one of the first breaches,
    cheapest first: the fuller member either swaps the topic's partition for another (a cycle
    through it, its first hand-over of that topic) or hands a partition on towards the emptier
    member (a chain from one to the other, no swapped topic)."""
    index = scope.index
    dist = chart.dist
    found: list[tuple[int, list[int], str | None]] = []
    for full, topic, empty in breaches[:_BREACHES_LOOKED_AT]:
        f, e = index[full], index[empty]
        for _, t in scope.takers[topic]:
            first = chart.choices[f].get(t, {}).get(topic)
            if first is None or dist[t][f] >= INF // 2 or first[0] + dist[t][f] >= below:
                continue
            back = chart.path(t, f)
            if back is not None:
                found.append((first[0] + dist[t][f], [f, *back], topic))
        if dist[f][e] < below:
            chain = chart.path(f, e)
            if chain is not None:
                found.append((dist[f][e], chain, None))
    found.sort(key=lambda c: c[0])
    return found


def _violations(state: Holdings) -> list[Breach]:
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


def _stays(state: Holdings, breaches: list[Breach], touched: set[str], start: str, end: str) -> bool:
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


def _can_gain(state: Holdings, scope: Scope) -> bool:
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
                if rack[mid] not in racks and any(rack[s] in racks for s, _ in scope.takers[tp.topic]):
                    return True
    return False


def _no_return_fits(state: Holdings) -> bool:
    """Without racks, whether no balanced layout two chains away keeps more partitions with
    their previous owners, so no pair of chains can cost less than zero. A pair that does
    gives some member ``m`` back one of its partitions. If ``m`` holds only its own, that
    raises its count by one or two, and two chains raise counts by two in all: by one when
    some other subscriber of that topic has two fewer than ``m`` now, or two have one fewer,
    the layout breaks the balance condition (by two, when one has no more than ``m``)."""
    count, owner = state.count, state.owner
    subscribers = state.group.subscribers
    foreign = {owner[tp] for tp, (_, prev) in state.info.items() if prev != owner[tp]}
    for tp, (topic, prev) in state.info.items():
        if prev is None or prev == owner[tp] or prev not in count:
            continue
        if prev in foreign:
            return False  # it may swap a partition that is not its own for this one
        most = count[prev] - 1
        below = [count[s] for s in subscribers[topic] if s != prev and count[s] <= most]
        if prev in subscribers[topic] and len(below) < 2 and min(below, default=most) > most - 1:
            return False
    return True


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
