"""Rounds: the lag-aware pass, heaviest partition first to the least-loaded member, in bulk.

Where every subscribed topic has one class of subscribers (members with one subscription; the
common case of identical subscriptions, or Kafka's benchmark buckets, each on its own topics),
the Lag-Aware KIP's pass (a partition to the member with the fewest partitions, ties by least
lag, then the tie key) has a known structure: counts grow in rounds. At the start of round r
every member of a class holds r partitions, and the class's next N partitions (heaviest first)
go one each to its N members, the heaviest to the lightest (loads as the round began, ties by
the tie key, then id), because a member that took one in this round has more partitions than
every member that did not. So a round is one sort of N loads, done here with numpy on partition
indices: no per-partition object and no heap, the same answer as ``loadbook.LoadBook``'s
partition-by-partition pass (``tests/core/dealing/test_rounds.py`` checks that on random groups).

Example: members A, B (ids in that order), lags 9, 7, 4, 3, 1. Round 0: 9 to A, 7 to B (both
at 0, ties by id); round 1, A (9) is heavier than B (7): 4 to B, 3 to A; round 2: 1 to the
lighter, B (11 against A's 12). A holds 9, 3 (12), B 7, 4, 1 (12).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..model import NUMPY_FROM, GroupSnapshot

#: loads summed in int64 stay below this (lags are never negative)
_INT64_SAFE = 1 << 62


def closed_classes(group: GroupSnapshot) -> list[tuple[list[int], np.ndarray]] | None:
    """Per subscription class whose topics no other class subscribes to: (member indices,
    its partitions' indices, heaviest first, ties by index); None when some topic has two
    classes of subscribers, or loads might not fit in int64 (then rounds do not apply)."""
    lags = group.lag_array
    if lags.dtype == object or (len(lags) and int(lags.sum()) >= _INT64_SAFE):
        return None
    claimed: dict[str, int] = {}
    for k, topics in enumerate(group.subscriptions):
        for t in topics:
            if claimed.setdefault(t, k) != k:
                return None
    spans = group.topic_span
    out = []
    for topics, members in zip(group.subscriptions, group.class_members, strict=True):
        ranges = [spans[t] for t in sorted(topics) if t in spans]
        if len(ranges) == 1:
            idx = np.arange(ranges[0].start, ranges[0].stop, dtype=np.int64)
        elif ranges:
            idx = np.concatenate([np.arange(r.start, r.stop, dtype=np.int64) for r in ranges])
        else:
            idx = np.empty(0, dtype=np.int64)
        # heaviest first, ties by index (idx is ascending: a stable sort of -lag keeps that)
        idx = idx[np.argsort(-lags[idx], kind="stable")]
        out.append((members, idx))
    return out


def deal_rounds(lags: np.ndarray, tie_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Deal partitions with these lags (heaviest first) to ``len(tie_rank)`` members in rounds:
    (member position of each partition, final loads). Within a round the lightest member goes
    first, equal loads by ``tie_rank`` (distinct integers)."""
    n = len(tie_rank)
    taker = np.empty(len(lags), dtype=np.int64)
    loads = np.zeros(n, dtype=np.int64)
    by_tie = np.argsort(tie_rank, kind="stable")
    for start in range(0, len(lags), n):
        block = lags[start : start + n]
        # by load, equal loads in tie order (a stable sort of the members in tie order)
        order = by_tie[np.argsort(loads[by_tie], kind="stable")] if start else by_tie
        order = order[: len(block)]
        taker[start : start + len(block)] = order
        loads[order] += block
    return taker, loads


def rounds_layout(
    group: GroupSnapshot, tie_key: Callable[[str], object] | None = None
) -> list[list[int]] | None:
    """The lag-aware pass by rounds: partition indices per member index, each list in the order
    the pass dealt them (heaviest first); None where rounds do not apply (``closed_classes``).
    Ties between equal loads go to the smallest ``tie_key`` (then id), the id if not given.
    Groups under ``NUMPY_FROM`` partitions are dealt in plain Python (``_rounds_plain``)."""
    if len(group.lags) < NUMPY_FROM and sum(group.lags) < _INT64_SAFE:
        return _rounds_plain(group, tie_key)
    classes = closed_classes(group)
    if classes is None:
        return None
    lags = group.lag_array
    ids = group.member_ids
    layout: list[list[int]] = [[] for _ in ids]
    for members, idx in classes:
        if tie_key is None:
            rank = np.arange(len(members))  # members are sorted by id
        else:
            keyed = sorted(range(len(members)), key=lambda i: (tie_key(ids[members[i]]), ids[members[i]]))
            rank = np.empty(len(members), dtype=np.int64)
            rank[keyed] = np.arange(len(members))
        taker, _ = deal_rounds(lags[idx], rank)
        # each member's partitions in dealing order: a stable sort by taker keeps it
        order = np.argsort(taker, kind="stable")
        cuts = np.searchsorted(taker[order], np.arange(1, len(members)))
        for m, part in zip(members, np.split(idx[order], cuts), strict=True):
            layout[m] = part.tolist()
    return layout


def _tie_order(ids: list[str], members: list[int], tie_key: Callable[[str], object] | None) -> list[int]:
    """Positions into ``members`` (indices into ``ids``, sorted by id) in tie order: by the tie
    key, then id; by id when no key is given."""
    if tie_key is None:
        return list(range(len(members)))
    return sorted(range(len(members)), key=lambda i: (tie_key(ids[members[i]]), ids[members[i]]))


def deal_rounds_plain(
    idx: Sequence[int], lags: Sequence[int], by_tie: Sequence[int], dealt: list[list[int]]
) -> None:
    """``deal_rounds`` on lists: the partitions ``idx`` (heaviest first) a round at a time, one
    each to the members (positions into ``dealt``) stably sorted by load so far, in ``by_tie``
    order (the first round's order, and the order among equal loads)."""
    loads = [0] * len(dealt)
    n = len(dealt)
    for start in range(0, len(idx), n):
        order = sorted(by_tie, key=loads.__getitem__) if start else by_tie
        for pos, i in zip(order, idx[start : start + n], strict=False):
            dealt[pos].append(i)
            loads[pos] += lags[i]


def _rounds_plain(group: GroupSnapshot, tie_key: Callable[[str], object] | None) -> list[list[int]] | None:
    """``rounds_layout`` on lists, for a small group whose loads fit in int64: the same classes
    (``closed_classes``: a stable sort of each class's partitions, heaviest first) and rounds
    (``deal_rounds``: per round the members stably sorted by load, in tie order)."""
    claimed: dict[str, int] = {}
    for k, topics in enumerate(group.subscriptions):
        for t in topics:
            if claimed.setdefault(t, k) != k:
                return None
    lags = group.lags
    spans = group.topic_span
    ids = group.member_ids
    layout: list[list[int]] = [[] for _ in ids]
    for topics, members in zip(group.subscriptions, group.class_members, strict=True):
        idx = [i for t in sorted(topics) if t in spans for i in spans[t]]
        idx.sort(key=lags.__getitem__, reverse=True)  # stable: ties by index
        dealt: list[list[int]] = [[] for _ in members]
        deal_rounds_plain(idx, lags, _tie_order(ids, members, tie_key), dealt)
        for m, part in zip(members, dealt, strict=True):
            layout[m] = part
    return layout
