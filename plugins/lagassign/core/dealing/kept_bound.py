"""How many partitions any balanced layout can leave with their previous owners, at most.

Sticky's chain search (``fewer_moves``) stops once its layout keeps that many: every chain
left to try would fail (its last searches try dozens of chain pairs for nothing), and a
failing chain changes only the order of partitions, which nothing reads after the search, so
the layout is the same (``tests/core/dealing/test_fewer_moves.py`` checks both). The bound
comes from each member's possible counts and topics (``CountBounds``).
"""

from __future__ import annotations

import itertools
from collections import Counter

from .holdings import Holdings

#: rounds refining the bounds on members' counts at most
_ROUNDS = 4
#: subscriber sets per member up to which every combination of them is bounded
_CLASSES = 5

#: a set of topics, as the subscriber sets of its topics (topics with the same subscribers are one)
Sets = tuple[frozenset[str], ...]
#: per set of topics a member holds, the most partitions it can hold
Caps = dict[Sets, int]


def most_kept(state: Holdings) -> int | None:
    """From a layout without racks that meets the balance condition: at most how many
    partitions any such layout leaves with their previous owners (each holds at most as many
    as it may hold, of the topics it may hold, and the counts add up). None when the bounds
    contradict."""
    bounds = CountBounds(state)
    if not bounds.consistent:
        return None
    owned = _owned_per_set(state, bounds.allowed)
    kept, spare, extra = 0, bounds.total, 0
    for mid in state.count:
        per_set = owned[mid]
        mine = sum(per_set.values())
        caps = bounds.caps.get(mid)
        if caps:  # holding the sets H it keeps at most min(its own in H, its most holding H)
            mine = min(mine, max(min(sum(per_set[k] for k in h), cap) for h, cap in caps.items()))
        least = bounds.least[mid]
        kept += min(mine, least)
        spare -= least
        extra += max(0, min(mine, bounds.most[mid]) - least)
    if spare < 0:
        return None
    return kept + min(spare, extra)


def _owned_per_set(state: Holdings, allowed: dict[str, Sets]) -> dict[str, Counter[frozenset[str]]]:
    """Per member, its previously owned partitions per subscriber set it may hold."""
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
    return owned


class CountBounds:
    """Per member, the topics it can hold in any layout of the state's partitions that meets
    the balance condition, as subscriber sets (``allowed``), with the fewest and most
    partitions it can hold there (``least``, ``most``) and the most per set of topics it
    holds (``caps``); ``consistent`` is False if the bounds contradict.

    Bounds on a member's count c, refined in a few rounds: subscribing to topics H (U
    subscribers) it has at least ceil(H's partitions / U) - 1, as the member holding most of
    them has at most one more, at least the total less the others' most, and at least what
    ``_least_by_load`` finds; holding H, it has c + (U - 1) * (c - 1) + (the others' fewest)
    <= total, c <= H's partitions, and c + (S - 1) * (c - 1) <= H's partitions with the S - 1
    subscribers that may hold nothing else. It can hold a topic only if every subscriber can
    have at least one fewer than its fewest. Work is shared by members of one subscription."""

    def __init__(self, state: Holdings) -> None:
        group = state.group
        self.total = sum(state.count.values())
        self.sizes: Counter[frozenset[str]] = Counter()  # partitions per subscriber set
        sets: dict[str, frozenset[str]] = {}
        for tp in state.owner:
            k = sets.get(tp.topic)
            if k is None:
                k = sets[tp.topic] = frozenset(group.subscribers[tp.topic])
            self.sizes[k] += 1
        self.members = list(state.count)
        #: per member, the subscriber sets it subscribes to
        self.theirs = {mid: tuple(k for k in self.sizes if mid in k) for mid in self.members}
        self.allowed = dict(self.theirs)
        self.caps: dict[str, Caps] = {}
        self._spans: dict[Sets, tuple[frozenset[str], int]] = {}
        self.least = self._first_floors()
        self.most = dict.fromkeys(self.members, self.total)
        for _ in range(_ROUNDS):
            was = (dict(self.least), dict(self.most), dict(self.allowed))
            self._least_from_the_others_most()
            self._most_from_caps()
            self._allowed_by_most()
            self._least_from_loads()
            if was == (self.least, self.most, self.allowed):
                break  # a round that changes nothing: so would the next
        self.consistent = all(self.least[mid] <= self.most[mid] for mid in self.members)

    def span(self, h: Sets) -> tuple[frozenset[str], int]:
        """H's subscribers and H's partitions."""
        found = self._spans.get(h)
        if found is None:
            found = self._spans[h] = (frozenset().union(*h), sum(self.sizes[k] for k in h))
        return found

    def _first_floors(self) -> dict[str, int]:
        """Per member, the most over its topic sets H of ceil(H's partitions / U) - 1."""
        floor: dict[Sets, int] = {}
        for mine in set(self.theirs.values()):
            spans = map(self.span, _subsets(list(mine)))
            floor[mine] = max((-(-inside // len(them)) - 1 for them, inside in spans), default=0)
        return {mid: floor[self.theirs[mid]] for mid in self.members}

    def _least_from_the_others_most(self) -> None:
        others_most = sum(self.most.values())
        for mid in self.members:
            self.least[mid] = max(self.least[mid], self.total - others_most + self.most[mid])

    def _most_from_caps(self) -> None:
        fewest = sum(self.least.values())
        found: dict[Sets, Caps] = {}
        for mid in self.members:
            mine = self.allowed[mid]
            caps = found.get(mine)
            if caps is None:
                caps = found[mine] = self._most_holding(mine, fewest)
            self.caps[mid] = caps
            self.most[mid] = min(self.most[mid], max(caps.values(), default=0))

    def _allowed_by_most(self) -> None:
        """A member may hold a set only if each of its subscribers may have one fewer."""
        lowest = {k: min(map(self.most.__getitem__, k)) for k in self.sizes}
        for mid in self.members:
            self.allowed[mid] = tuple(k for k in self.allowed[mid] if lowest[k] >= self.least[mid] - 1)

    def _least_from_loads(self) -> None:
        found: dict[tuple, int] = {}
        for mid in self.members:
            if not self.theirs[mid]:
                continue
            key = (self.theirs[mid], self.allowed[mid], self.least[mid], self.most[mid])
            low = found.get(key)
            if low is None:
                low = found[key] = self._least_by_load(mid, self.theirs[mid])
            self.least[mid] = low

    def _most_holding(self, mine: Sets, fewest: int) -> Caps:
        """The most partitions a member that may hold ``mine`` can hold, per set of them it
        holds (above ``_CLASSES`` one bound for all of them)."""
        if not mine:
            return {}
        total = self.total
        if len(mine) > _CLASSES:  # (total + U - 1) // U falls as U grows
            n = min(map(len, mine))
            return {mine: min(sum(self.span((k,))[1] for k in mine), (total + n - 1) // n)}
        caps: Caps = {}
        for h in _subsets(list(mine)):
            them, inside = self.span(h)
            n = len(them)
            room = total - fewest + sum(self.least[o] for o in them)  # for c and U - 1 others
            held = set(h)
            # subscribers that may hold nothing but H (the member itself is one if it may not either)
            only = sum(1 for o in them if held.issuperset(self.allowed[o])) + (
                0 if held.issuperset(mine) else 1
            )
            caps[h] = min(inside, (room + n - 1) // n, (inside + only - 1) // only)
        return caps

    def _least_by_load(self, mid: str, h: Sets) -> int:
        """The fewest partitions ``mid`` can hold, given that it subscribes to topics H: holding
        x, every member holding one of H's partitions has at most x + 1, and enough of them must
        hold H's partitions, while the others hold only their other topics; if all of them
        cannot hold the total, ``mid`` holds more than x (a count above its most if none fits)."""
        most, sizes = self.most, self.sizes
        them = frozenset().union(*h)
        inside = sum(sizes[k] for k in h)
        others = [o for o in them if o != mid]
        outside = sum(c for o, c in most.items() if o not in them)
        spare = [min(most[o], sum(sizes[k] for k in self.allowed[o] if k not in h)) for o in others]

        def fits(x: int) -> bool:
            need = 0 if inside <= x else -(-(inside - x) // (x + 1))  # holders of H besides mid
            if need > len(others):
                return False
            capped = [min(x + 1, most[o]) for o in others]
            gains = sorted((max(0, s - c) for s, c in zip(spare, capped, strict=True)), reverse=True)
            return x + sum(capped) + sum(gains[: len(others) - need]) + outside >= self.total

        low, high = self.least[mid], most[mid]
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


def _subsets(classes: list[frozenset[str]]) -> list[Sets]:
    """Every non-empty set of ``classes``; above ``_CLASSES`` only each one and all."""
    if len(classes) <= _CLASSES:
        return [h for k in range(1, len(classes) + 1) for h in itertools.combinations(classes, k)]
    return [(k,) for k in classes] + [tuple(classes)]
