"""The Lag-Aware Assignor KIP: balanced partition counts first, balanced lag second.

The KIP's pass (heaviest partition first, to the member with the fewest partitions, ties by
least total lag, then id) runs over all topics of the group at once with group-wide counters:
run per topic with per-topic counters, as the KIP text reads, a member can end with one extra
partition of every topic, which breaks the KIP's own count guarantee. With mixed
subscriptions a greedy pass can still leave a member 2+ partitions short of one it could take
from; a repair pass then moves partitions, lightest first, until the KIP's two-case guarantee
holds.

Spec: the Lag-Aware Assignor KIP (its two-case count guarantee).

Example: lag's example, with group-wide counters the hot partitions go to different members::

    >>> from lagassign.core.strategies.examples import example, show
    >>> g = example({"C0": ["t0", "t1"], "C1": ["t0", "t1"]}, {"t0": [9, 1], "t1": [9, 1]})
    >>> show(LagAwareStrategy().assign(g), g)
    C0: t0-0 t0-1  (lag 10)
    C1: t1-0 t1-1  (lag 10)
"""

from __future__ import annotations

from collections.abc import Callable

from ..model import Assignment, GroupSnapshot, TopicPartition
from .base import Strategy, build, memo
from .loadbook import LoadBook, balance_counts


def lag_aware_layout(
    group: GroupSnapshot, tie_key: Callable[[str], object] | None = None
) -> dict[str, list[TopicPartition]]:
    """The lag-aware assignment; ties between equal loads go to the smallest ``tie_key``
    (the member id unless given). With the default ties it is computed once per group
    (lag-optimal compares with it); lag-optimal also builds it with hashed ties as a seed."""
    if tie_key is not None:
        return _lag_aware_book(group, tie_key).assignment()
    return memo(group, "lag-aware", lambda: _lag_aware_book(group).assignment())


def _lag_aware_book(group: GroupSnapshot, tie_key: Callable[[str], object] | None = None) -> LoadBook:
    lag = group.lag
    book = LoadBook(group, by_lag=True, tie_key=tie_key)
    for tp in sorted(group.assignable, key=lambda tp: (-lag[tp], tp)):
        book.add(book.least_loaded(tp.topic), tp)
    if not group.identical_subscriptions:
        balance_counts(book, lambda mid, held: sorted(held, key=lambda tp: (lag[tp], tp)))
    return book


class LagAwareStrategy(Strategy):
    name = "lag-aware"
    summary = "Lag-Aware KIP: counts balanced first, then heaviest partitions to the lightest member"

    def assign(self, group: GroupSnapshot) -> Assignment:
        return build(self.name, group, lag_aware_layout(group))
