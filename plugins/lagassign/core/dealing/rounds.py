"""Rounds: the lag-aware pass, heaviest partition first to the least-loaded member, in bulk.

Where every subscribed topic has one class of subscribers (members with one subscription; the
common case of identical subscriptions, or Kafka's benchmark buckets, each on its own topics),
the Lag-Aware KIP's pass (a partition to the member with the fewest partitions, ties by least
lag, then the tie key) has a known structure: counts grow in rounds. At the start of round r
every member of a class holds r partitions, and the class's next N partitions (heaviest first)
go one each to its N members, the heaviest to the lightest (loads as the round began, ties by
the tie key, then id), because a member that took one in this round has more partitions than
every member that did not. So a round is one sort of N loads: no heap, the same answer as
``loadbook.LoadBook``'s partition-by-partition pass (``tests/core/dealing/test_rounds.py``
checks that on random groups).

Example: members A, B (ids in that order), lags 9, 7, 4, 3, 1. Round 0: 9 to A, 7 to B (both
at 0, ties by id); round 1, A (9) is heavier than B (7): 4 to B, 3 to A; round 2: 1 to the
lighter, B (11 against A's 12). A holds 9, 3 (12), B 7, 4, 1 (12).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..model import GroupSnapshot


def rounds_layout(
    group: GroupSnapshot, tie_key: Callable[[str], object] | None = None
) -> list[list[int]] | None:
    """The lag-aware pass by rounds: partition indices per member index, each list in the order
    the pass dealt them (heaviest first); None where some topic has two classes of subscribers
    (then rounds do not apply). Ties between equal loads go to the smallest ``tie_key`` (then
    id), the id if not given."""
    if not group.subscriptions_apart:
        return None
    lags = group.lags
    spans = group.topic_span
    ids = group.member_ids
    layout: list[list[int]] = [[] for _ in ids]
    for topics, members in zip(group.subscriptions, group.class_members, strict=True):
        idx = [i for t in sorted(topics) if t in spans for i in spans[t]]
        idx.sort(key=lags.__getitem__, reverse=True)  # stable: ties by index
        dealt: list[list[int]] = [[] for _ in members]
        deal_rounds(idx, lags, _tie_order(ids, members, tie_key), dealt)
        for m, part in zip(members, dealt, strict=True):
            layout[m] = part
    return layout


def deal_rounds(
    idx: Sequence[int], lags: Sequence[int], by_tie: Sequence[int], dealt: list[list[int]]
) -> None:
    """Deal the partitions ``idx`` (heaviest first) a round at a time, one each to the members
    (positions into ``dealt``) stably sorted by load so far, in ``by_tie`` order (the first
    round's order, and the order among equal loads)."""
    loads = [0] * len(dealt)
    n = len(dealt)
    for start in range(0, len(idx), n):
        order = sorted(by_tie, key=loads.__getitem__) if start else by_tie
        for pos, i in zip(order, idx[start : start + n], strict=False):
            dealt[pos].append(i)
            loads[pos] += lags[i]


def _tie_order(ids: list[str], members: list[int], tie_key: Callable[[str], object] | None) -> list[int]:
    """Positions into ``members`` (indices into ``ids``, sorted by id) in tie order: by the tie
    key, then id; by id when no key is given."""
    if tie_key is None:
        return list(range(len(members)))
    return sorted(range(len(members)), key=lambda i: (tie_key(ids[members[i]]), ids[members[i]]))
