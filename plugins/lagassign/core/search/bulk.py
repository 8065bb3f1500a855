"""lag-optimal's search for very large groups: thousands of swaps at once, with numpy.

What: for a group of one shared subscription, or of subscriptions that share no topic
(Kafka's JMH buckets: each subscription's members are then planned on their own), fresh
(nothing owned), with at least ``BULK_FROM`` members x partitions (Kafka's JMH point:
10,000 x 100,000), without ``max_moves``, ``count_slack`` or the rack polish, lag-optimal
plans here instead of with ``search.engine.Search``. The plan keeps lag-optimal's count
guarantee (within a subscription every member holds floor(P/N) or ceil(P/N) of its
partitions: counts are dealt once, then only swaps are made; members of other subscriptions
cannot take them, so Kafka's balance condition holds) and aims at the same thing, the
smallest largest member lag.

Why: ``Search`` lowers one member at a time, in Python: at the JMH point it stops on its work
bound far above the balanced lower bound. Here every member above a level is handled in the
same numpy round and the level falls step by step, near the bound within the speed goal of
``bench/jmh_point.py`` (the figures: ``bench/README.md``).

Method:
1. Seed: longest-lag-first under the count caps, a chunk at a time: the heaviest partitions
   left go, one each, to the lightest quarter (``SEED_CHUNKS``) of the members that still
   have room (equal loads by lag-optimal's tie hash of the member id). As in lag-optimal's
   own seed, the heaviest members wait: a hot partition's member ends with the lightest
   partitions. Counts are floor(P/N) or ceil(P/N).
2. Levels: with ``floor`` the balanced lower bound (``bounds.balanced_lower_bound_max_lag``),
   a level tau is set a quarter of the way from ``floor`` to the heaviest load (while that
   is more than ``FINE`` above ``floor`` and no level was missed; then half way), or half as
   far below the heaviest load as a level that brought nobody down. In a
   round, every member above tau (a heavy one) looks for a swap, give p and take q
   (d = p - q), that brings it to at most tau while the partner stays at most tau:
   d >= load - tau and d <= tau - partner's load. Candidates come two ways: the heavy
   member against a few of the lightest members (every pair of their partitions; heaviest
   with lightest), and a join on the group's partitions sorted by lag (for each p, the
   partitions just below p - (load - tau), whoever holds them). Each heavy member takes the
   candidate that lands it nearest the group's mean; a partition goes to one heavy member
   (the heaviest asking), a light one serves heavy members while its room lasts; all the
   chosen swaps are made at once. Both members of a swap end at most tau, below the heavy
   member's old load, so the largest lag never grows. When a round brings nobody down to
   tau, one round lowers the members above it as far as a swap can (d >= 1, to the mean if
   possible; the partner still at most tau): a hot partition's member trades its others
   for the lightest ones.
3. A level is reached when nobody is above it. The search ends at ``floor`` (the plan is
   then ``optimal``, as lag-optimal reports it), when not even a level 1 below the heaviest
   load can be reached, or after ``ROUNDS`` rounds (the work bound; with several
   subscriptions, see ``plan``).

Worked example (``BulkSearch`` works at any size; lag-optimal uses it only from
``BULK_FROM``). Members A, B, C share topic t with lags 25, 20, 19, 18, 17, 14, 7, 5, 0; the
tie hash orders them C, A, B. With three members a chunk is one partition: C takes 25, A
20, B 19; then, lightest first, B 18 (37), A 17 (37), C 14 (39), A 7 (44), B 5 (42), C 0. The
bound is 42 (125 / 3, rounded up), the heaviest 44: the level is 43. A is 1 above it; C has
room 4, B room 1. Swapping A's 17 for C's 14 (d = 3) lands A at 41 (the mean, 41.7, rounded
down) and C at 42. The next level, 42, is the bound and nobody is above it: optimal::

    >>> from lagassign.core.strategies.examples import example
    >>> from lagassign.core.strategies.lag_optimal import _tie_key
    >>> g = example({"A": ["t"], "B": ["t"], "C": ["t"]}, {"t": [25, 20, 19, 18, 17, 14, 7, 5, 0]})
    >>> tie = _tie_key(g.group)
    >>> search = BulkSearch(g, {m: tie(m) for m in g.member_ids})
    >>> search.max_lag
    44
    >>> search.run(42)
    >>> {m: [g.lags[i] for i in idx] for m, idx in sorted(search.positions().items())}
    {'A': [20, 14, 7], 'B': [19, 18, 5], 'C': [25, 17, 0]}
"""

from __future__ import annotations

import numpy as np

from ..model import GroupSnapshot

#: members x assignable partitions from which lag-optimal plans here (the synthetic mix's
#: largest groups have 300 x 10,000; Kafka's JMH point 10,000 x 100,000)
BULK_FROM = 100_000_000
#: rounds in all: the work bound (each round is a few numpy passes over the heavy members);
#: with several subscriptions, as many member-rounds (a round of n members counts n/N)
ROUNDS = 80
#: below this excess over the bound the level halves; above it it falls to a quarter
FINE = 1_024
#: (heavy member, light member) pairs scored per round, all their partition pairs each
PAIR_BUDGET = 1_000
#: the seed deals the heaviest partitions left to the lightest 1/SEED_CHUNKS of the members at
#: a time (the heaviest members wait, as in longest-lag-first: a hot partition's member then
#: ends with the lightest partitions)
SEED_CHUNKS = 4
#: the partners tried per heavy member at most
MAX_PARTNERS = 64
#: positions below p - excess in the lag-sorted partitions tried by the join (spread out:
#: neighbours in lag order were often dealt to neighbouring members)
OFFSETS = np.array([0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377], dtype=np.int64)
_NONE = np.iinfo(np.int64).max
_INT64_SAFE = 1 << 62


def applies(group: GroupSnapshot, max_moves: int | None, count_slack: int, rack: str) -> bool:
    """Whether lag-optimal plans this group here: subscriptions that share no topic (one
    shared subscription, or Kafka's JMH buckets), nothing owned, no ``max_moves``,
    ``count_slack`` or rack polish, at least ``BULK_FROM`` members x partitions, lags that sum
    within int64."""
    n_members, n_parts = len(group.members), len(group.assignable_index)
    if n_members * n_parts < BULK_FROM or not group.subscriptions_apart:
        return False
    if group.owned_count or max_moves is not None or count_slack or (rack != "off" and group.rack_aware):
        return False
    return max(group.lags, default=0) * n_parts < _INT64_SAFE


def _shares(group: GroupSnapshot) -> list[tuple[list[str], np.ndarray]]:
    """(member ids, partition indices ascending) of each subscription (``subscriptions_apart``)."""
    spans = group.topic_span
    out = []
    for topics, ids in group.subscriptions.items():
        ranges = [np.arange(spans[t].start, spans[t].stop) for t in topics if t in spans]
        index = np.sort(np.concatenate(ranges)) if ranges else np.zeros(0, dtype=np.int64)
        out.append((ids, index.astype(np.int64)))
    return out


class BulkSearch:
    """A plan dealt longest-lag-first in chunks, then lowered level by level with rounds of
    simultaneous swaps (see the module doc)."""

    def __init__(
        self,
        group: GroupSnapshot,
        ties: dict[str, bytes],
        members: list[str] | None = None,
        index: np.ndarray | None = None,
    ) -> None:
        """The whole group (one shared subscription), or ``members`` sharing the partitions
        ``index`` (ascending) among themselves."""
        self.group_ids = group.member_ids if members is None else members
        self.ids = sorted(self.group_ids, key=ties.__getitem__)
        n = len(self.ids)
        if index is None:
            index = np.asarray(group.assignable_index, dtype=np.int64)
        lags = np.asarray(group.lags, dtype=np.int64)[index]
        # items: the partitions in ascending lag (ties by index), fixed; who holds them changes
        asc = np.argsort(lags, kind="stable")
        self.part, self.val = index[asc], lags[asc]
        n_items = len(asc)
        # longest-lag-first in chunks: the heaviest partitions left go to the members with
        # room that are lightest so far, one each (capped LPT, a chunk at a time)
        self.owner = np.empty(n_items, dtype=np.int64)
        self.slot = np.empty(n_items, dtype=np.int64)
        count = np.zeros(n, dtype=np.int64)
        load = np.zeros(n, dtype=np.int64)
        fewest, ceil_left = divmod(n_items, n)
        done = 0
        while done < n_items:
            room = np.flatnonzero((count < fewest) | ((count == fewest) & (ceil_left > 0)))
            chunk = max(1, len(room) // SEED_CHUNKS)
            takers = room[np.argsort(load[room], kind="stable")][: min(chunk, n_items - done)]
            at_ceil = count[takers] == fewest
            if at_ceil.sum() > ceil_left:  # only so many members may end at the ceiling
                takers = takers[~at_ceil | (np.cumsum(at_ceil) <= ceil_left)]
            ceil_left -= int((count[takers] == fewest).sum())
            these = np.arange(n_items - 1 - done, n_items - 1 - done - len(takers), -1)
            self.owner[these] = takers
            self.slot[these] = count[takers]
            count[takers] += 1
            load[takers] += self.val[these]
            done += len(takers)
        self.width = -(-n_items // n)
        self.rows = np.full((n, self.width), -1, dtype=np.int64)  # items per member, -1: none
        self.rows[self.owner, self.slot] = np.arange(n_items)
        self._val_or_none = np.concatenate((self.val, [-1]))  # row entry -1 reads -1
        # ... or above every lag: taking it would raise the giver (no swap gives nothing)
        self._val_or_over = np.concatenate((self.val, [int(self.val.max(initial=0)) + 1]))
        self.load = load  # each member's dealt lags, summed as they were dealt
        self.mean = int(self.val.sum()) // n
        self.rounds = 0
        self.limit = ROUNDS
        self._rng = np.random.default_rng(0)

    @property
    def max_lag(self) -> int:
        return int(self.load.max(initial=0))

    def run(self, floor: int, rounds: int = ROUNDS) -> None:
        """Lower the level from the heaviest load to ``floor`` (see the module doc), in at most
        ``rounds`` rounds."""
        self.limit = rounds
        coarse = True
        cut = 0  # how far below the heaviest load the level is set; 0: choose afresh
        while self.rounds < self.limit:
            top = self.max_lag
            excess = top - floor
            if excess <= 0:
                return
            if not cut:
                cut = excess - (excess // 4 if coarse and excess > FINE else excess // 2)
            if self._level(top - cut):
                cut = 0
            elif self.max_lag < top or self._lower(top - cut):
                coarse, cut = False, 0  # missed, but lower: half the excess at a time from here
            else:
                cut //= 2  # nothing came down: a nearer level, until there is none
                if not cut:
                    return

    def positions(self) -> dict[str, list[int]]:
        """Sorted partition indices per member id, in the group's (or ``members``') order."""
        rows = np.where(self.rows >= 0, self.part[np.maximum(self.rows, 0)], -1)
        rows.sort(axis=1)
        out = {}
        for mid, row in zip(self.ids, rows.tolist(), strict=True):
            out[mid] = row[1:] if row and row[0] < 0 else row  # at most one gap per member
        return {mid: out[mid] for mid in self.group_ids}

    # -- one level -------------------------------------------------------------------------

    def _level(self, tau: int) -> bool:
        """Rounds until nobody is above ``tau`` (True), or a round finds no swap or the
        rounds run out (False)."""
        while self.rounds < self.limit:
            self.rounds += 1
            if not (self.load > tau).any():
                return True
            if not self._round(tau):
                return False
        return not (self.load > tau).any()

    def _lower(self, tau: int) -> bool:
        """One round in which the members above ``tau`` take swaps that lower them at all (to
        the mean if they can), partners staying at most ``tau``; False if none can."""
        if self.rounds >= self.limit:
            return False
        self.rounds += 1
        return self._round(tau, reach=False)

    def _round(self, tau: int, reach: bool = True) -> bool:
        """One swap for as many members above ``tau`` (heaviest first) as can find one
        (bringing them to at most ``tau``, or with ``reach`` off lowering them at all); False
        if none can."""
        load, rows = self.load, self.rows
        heavy = np.flatnonzero(load > tau)
        heavy = heavy[np.argsort(-load[heavy], kind="stable")]
        n_heavy = len(heavy)
        excess = load[heavy] - tau
        need = excess if reach else np.ones(n_heavy, dtype=np.int64)  # the least d
        aim = excess if reach else np.maximum(load[heavy] - self.mean, 1)  # the join's d
        items = rows[heavy]  # n_heavy x width
        p = self._val_or_none[items]
        best = np.full(n_heavy, _NONE)
        give = np.zeros(n_heavy, dtype=np.int64)
        take = np.zeros(n_heavy, dtype=np.int64)
        self._pairs(heavy, tau, need, items, p, best, give, take)
        self._join(heavy, tau, need, aim, items, p, best, give, take)
        found = best != _NONE
        if not found.any():
            return False
        heavy, give, take = heavy[found], give[found], take[found]
        # each partition taken once (by the heaviest asking); a light member serves heavy
        # members, heaviest first, while its room lasts
        _, first = np.unique(take, return_index=True)
        first.sort()
        heavy, give, take = heavy[first], give[first], take[first]
        light = self.owner[take]
        d = self.val[give] - self.val[take]
        by_light = np.lexsort((np.arange(len(light)), light))
        used = np.cumsum(d[by_light])
        starts = np.concatenate(([True], light[by_light][1:] != light[by_light][:-1]))
        used -= np.maximum.accumulate(np.where(starts, used - d[by_light], 0))
        fits = np.zeros(len(light), dtype=bool)
        fits[by_light] = used <= tau - load[light[by_light]]
        heavy, give, take, light, d = heavy[fits], give[fits], take[fits], light[fits], d[fits]
        at_give, at_take = self.slot[give], self.slot[take]
        rows[heavy, at_give], rows[light, at_take] = take, give
        self.owner[give], self.owner[take] = light, heavy
        self.slot[give], self.slot[take] = at_take, at_give
        np.subtract.at(load, heavy, d)  # heavy members are distinct; light ones may repeat
        np.add.at(load, light, d)
        return True

    def _score(self, heavy_load: np.ndarray, d: np.ndarray, ok: np.ndarray) -> np.ndarray:
        """How far the heavy member lands from the mean (allowed candidates only)."""
        score = heavy_load - d
        score -= self.mean
        np.abs(score, out=score)
        score[~ok] = _NONE
        return score

    def _pairs(self, heavy, tau, need, items, p, best, give, take) -> None:
        """Each heavy member against a few of the lightest members, every partition pair."""
        load, rows, width = self.load, self.rows, self.width
        room = tau - load
        light = np.flatnonzero(room > 0)
        n_heavy = len(heavy)
        per = int(max(1, min(MAX_PARTNERS, PAIR_BUDGET // n_heavy, len(light) // n_heavy)))
        light = light[np.argsort(-room[light], kind="stable")][: per * n_heavy]
        if self.rounds % 2 == 0:  # every other round the partners are mixed up
            light = self._rng.permutation(light)
        m = min(n_heavy, len(light))
        if not m:
            return
        per = len(light) // m
        partners = light[: m * per].reshape(per, m).T  # m x per: heavy i with lights i, i+m, ...
        their = rows[partners]  # m x per x width
        q = self._val_or_over[their]
        d = p[:m, None, :, None] - q[:, :, None, :]  # below 0 where either side has no partition
        ok = (d >= need[:m, None, None, None]) & (d <= room[partners][:, :, None, None])
        score = self._score(load[heavy[:m]][:, None, None, None], d, ok).reshape(m, -1)
        pick = score.argmin(1)
        at = np.arange(m)
        partner, rest = np.divmod(pick, width * width)
        mine, yours = np.divmod(rest, width)
        best[:m] = score[at, pick]
        give[:m] = items[at, mine]
        take[:m] = their[at, partner, yours]

    def _join(self, heavy, tau, need, aim, items, p, best, give, take) -> None:
        """For each partition p of a heavy member, the partitions just below p - aim in lag
        order (the lightest ones if that is below them all), whoever holds them: a better
        candidate replaces the pair's."""
        val, load = self.val, self.load
        row, col = np.nonzero((items >= 0) & (p >= need[:, None]))  # only those can give d >= need
        if not len(row):
            return
        mine = p[row, col]
        at = np.searchsorted(val, np.maximum(mine - aim[row], 0), side="right") - 1
        cand = at[:, None] - OFFSETS[None, :]
        ok = cand >= 0
        np.maximum(cand, 0, out=cand)
        d = mine[:, None] - val[cand]
        ok &= (d <= tau - load[self.owner[cand]]) & (d >= need[row][:, None])
        score = self._score(load[heavy[row]][:, None], d, ok)
        pick = score.argmin(1)
        lines = np.arange(len(row))
        s = score[lines, pick]
        # the best line of each heavy member, the first of equals (rows come grouped, in order)
        starts = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1])))
        lowest = np.minimum.reduceat(s, starts)
        hits = np.flatnonzero(s == np.repeat(lowest, np.diff(np.append(starts, len(s)))))
        first = hits[np.concatenate(([True], row[hits][1:] != row[hits][:-1]))]
        h = row[first]
        better = s[first] < best[h]
        h, first = h[better], first[better]
        best[h] = s[first]
        give[h] = items[h, col[first]]
        take[h] = cand[first, pick[first]]


def plan(group: GroupSnapshot, ties: dict[str, bytes], floor: int) -> tuple[dict[str, list[int]], int]:
    """lag-optimal's plan of a group ``applies`` accepts: sorted partition indices per member
    id, and its largest lag.

    Each subscription's members are planned on their own, lightest subscription first (by
    total lag per member): those reach ``floor`` soonest. The work bound is shared: ``ROUNDS``
    rounds of the whole group's members; each subscription may spend its share of what is
    left, and what it does not spend passes on to the heavier ones after it."""
    found: dict[str, list[int]] = {}
    top = 0
    budget = ROUNDS * len(group.members)  # member-rounds
    searches = [BulkSearch(group, ties, members, index) for members, index in _shares(group) if len(index)]
    searches.sort(key=lambda search: search.mean)
    for left, search in zip(range(len(searches), 0, -1), searches, strict=True):
        n = len(search.ids)
        search.run(floor, max(1, budget // left // n))
        budget -= search.rounds * n
        found.update(search.positions())
        top = max(top, search.max_lag)
    return {mid: found.get(mid, []) for mid in group.member_ids}, top
