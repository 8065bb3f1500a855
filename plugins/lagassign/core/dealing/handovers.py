"""What each single hand-over between two members costs, and which partitions carry it out.

A hand-over gives one partition of a topic from a giver to a member subscribed to it. Without
racks it costs +1 if the partition leaves its previous owner, -1 if it returns to it, else 0.
With racks (KIP-881) it also gains ``RACK_WEIGHT`` if the partition becomes rack-local and
loses it if it stops being so, so rack locality comes first and moves second, as in Kafka's
sticky assignors. Ties between partitions of equal cost follow the recency rule
(``holdings``). ``edges`` gives the search (``fewer_moves``) a cost matrix over the members of
a scope; ``variants`` the ways to carry out a chain through it at its cost.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..model import TopicPartition
from .holdings import Holdings, Scope, Steps

#: no hand-over between two members
INF = 1 << 30
#: with racks, one more rack-local partition outweighs any number of moves in a chain
RACK_WEIGHT = 1000
#: with racks and one shared subscription, keeping an owned partition that is rack-local
#: outweighs everything else: Kafka's constrained builder keeps those first (up to the quotas)
#: and only then places the rest by rack, so a chain that gives one up for more locality
#: elsewhere would buy locality with moves Kafka does not make
KEEP_WEIGHT = 1_000_000
#: partition choices tried per chain (topics per hand-over, multiplied along the chain)
CHOICES_PER_CHAIN = 8

#: a square matrix of integers as lists (item access on lists is much cheaper than numpy's)
Matrix = list[list[int]]
#: one giver's hand-overs: per taker (by index), per topic the cost and best partition
Choices = dict[int, dict[str, tuple[int, TopicPartition]]]


def edges(state: Holdings, scope: Scope) -> tuple[Matrix, list[Choices]]:
    """Cost of the best single hand-over from each member to each other one, and per topic the
    best partition for it (which topics a member ends up holding decides the balance condition).
    A giver's hand-overs are reworked only when what it holds, or its order, changed."""
    cost: Matrix = []
    choices: list[Choices] = []
    known = scope.givers
    for giver in scope.ids:
        key = tuple(state.held[giver])
        found = known.get(giver)
        if found is None or found[0] != key:
            work = _rack_row if state.racks else _row
            found = known[giver] = (key, *work(state, scope, giver))
        cost.append(found[1])
        choices.append(found[2])
    return cost, choices


def _row(state: Holdings, scope: Scope, giver: str) -> tuple[list[int], Choices]:
    """One giver's costs and choices without racks. Per topic held: a partition returning to
    the taker costs -1 (the least recently touched one), one that is not the giver's own 0,
    the giver's own +1 (the most recently touched one of each)."""
    info = state.info
    row = [INF] * len(scope.ids)
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
    for topic, (own, foreign, returning) in seen.items():
        base: tuple[int, TopicPartition] = (0, foreign) if foreign is not None else (1, own)
        for taker, t in scope.takers[topic]:
            if taker == giver:
                continue
            back = returning.get(taker)
            best = (-1, back) if back is not None else base
            per_taker.setdefault(t, {})[topic] = best
            if best[0] < row[t]:
                row[t] = best[0]
    return row, per_taker


def _rack_row(state: Holdings, scope: Scope, giver: str) -> tuple[list[int], Choices]:
    """One giver's costs and choices with racks: per taker and topic the least recently
    touched partition of least cost, the cost counting rack locality (``RACK_WEIGHT``) and,
    with one shared subscription, an owned rack-local partition given away (``KEEP_WEIGHT``)."""
    group = state.group
    before = group.owner
    rack = state.rack
    keep = KEEP_WEIGHT if group.identical_subscriptions else 0

    def value(mid: str, tp: TopicPartition, racks: frozenset[str]) -> int:
        """What holding ``tp`` is worth to ``mid``: locality, then keeping what it owned."""
        local = rack[mid] in racks
        owned = 1 + (keep if local else 0) if before.get(tp) == mid else 0
        return owned + (RACK_WEIGHT if local else 0)

    row = [INF] * len(scope.ids)
    choices: Choices = {}
    for tp in state.held[giver]:
        racks = group.partitions[tp].racks
        leave = value(giver, tp, racks)
        for taker, t in scope.takers[tp.topic]:
            if taker == giver:
                continue
            c = leave - value(taker, tp, racks)
            per_topic = choices.setdefault(t, {})
            best = per_topic.get(tp.topic)
            if best is None or c < best[0]:
                per_topic[tp.topic] = (c, tp)
            if c < row[t]:
                row[t] = c
    return row, choices


def variants(path: list[int], cost: Matrix, choices: list[Choices], ids: list[str]) -> list[Steps]:
    """The ways to carry out a chain at its cost: one partition per hand-over, topics varying
    (at most ``CHOICES_PER_CHAIN``)."""
    hops = []
    for a, b in itertools.pairwise(path):
        per_topic = choices[a].get(b)
        if per_topic is None:
            return []  # no hand-over there (a path bent by a negative cycle's distances)
        at, taker = cost[a][b], ids[b]
        hops.append([(tp, taker) for c, tp in per_topic.values() if c == at])
    combos = itertools.islice(itertools.product(*hops), CHOICES_PER_CHAIN)
    if len(set(path)) >= len(path) - 1:  # givers all differ (only the end may be the start)
        return list(map(list, combos))  # so do the partitions they give
    return [list(combo) for combo in combos if len({tp for tp, _ in combo}) == len(combo)]
