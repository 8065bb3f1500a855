"""The Lag-Aware Assignor KIP: balanced partition counts first, balanced lag second.

The KIP's pass (heaviest partition first, to the member with the fewest partitions, ties by
least total lag, then id) runs over all topics of the group at once with group-wide counters:
run per topic with per-topic counters, as the KIP text reads, a member can end with one extra
partition of every topic, which breaks the KIP's own count guarantee. With mixed
subscriptions a greedy pass can still leave a member 2+ partitions short of one it could take
from; a repair pass then moves partitions, lightest first, until the KIP's two-case guarantee
holds. Where every topic has one class of subscribers (identical subscriptions, or classes on
topics of their own) the pass is dealt in rounds with numpy (``dealing.rounds``): the same answer,
without a heap step per partition.

Option ``rack`` (KIP-881's racks: members' ``rack``, partitions' replica ``racks``): ``off``
(default, racks ignored), ``prefer`` (among the members with the fewest partitions, a member
on a rack holding a replica goes first: the count guarantee holds) or ``require`` (a partition
with a rack-local subscriber goes only to such members, least loaded first; the count
guarantee may then break: racks before counts).

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

from ..dealing.loadbook import LoadBook, balance_counts
from ..dealing.rounds import rounds_layout
from ..errors import StrategyOptionError
from ..model import Assignment, GroupSnapshot, TopicPartition
from ..shared import Shared
from .base import Strategy, build, build_indexed, shared_layout

RACK_MODES = ("off", "prefer", "require")
#: lag-aware's layout with the default ties, per rack mode; and dealt in rounds (None where
#: rounds do not apply)
_LAYOUT: Shared[dict[str, list[TopicPartition]]] = Shared("lag-aware's layout")
_ROUNDS: Shared[list[list[int]] | None] = Shared("lag-aware's layout dealt in rounds")


def lag_aware_layout(
    group: GroupSnapshot, tie_key: Callable[[str], object] | None = None, rack: str = "off"
) -> dict[str, list[TopicPartition]]:
    """The lag-aware assignment; ties between equal loads go to the smallest ``tie_key``
    (the member id unless given). With the default ties it is computed once per group
    (lag-optimal, with mixed subscriptions, searches from it as its second seed); lag-optimal
    also builds it with hashed ties as its first seed there."""
    rack = rack if group.rack_aware else "off"
    index = lag_aware_index(group, tie_key) if rack == "off" else None
    if index is not None:
        tps = group.tps
        return {mid: [tps[i] for i in idx] for mid, idx in zip(group.member_ids, index, strict=True)}
    if tie_key is not None:
        return _lag_aware_book(group, tie_key, rack).assignment()
    return shared_layout(_LAYOUT, group, lambda: _lag_aware_book(group, rack=rack).assignment(), rack)


def lag_aware_index(
    group: GroupSnapshot, tie_key: Callable[[str], object] | None = None
) -> list[list[int]] | None:
    """The lag-aware assignment (racks off) as partition indices per member index, each list in
    dealing order, by rounds (``dealing.rounds``); None where rounds do not apply (some topic with
    two classes of subscribers). With the default ties it is computed once per group."""
    if tie_key is not None:
        return rounds_layout(group, tie_key)
    layout = _ROUNDS.get(group, lambda: rounds_layout(group))
    return None if layout is None else [list(idx) for idx in layout]


def _taker(book: LoadBook, group: GroupSnapshot, tp: TopicPartition, rack: str) -> str:
    """The member to take ``tp``: the least loaded, or with racks a rack-local one (see ``rack``)."""
    best = book.least_loaded(tp.topic)
    if rack == "off":
        return best
    racks = group.partitions[tp].racks
    if not racks:
        return best
    rack_of = {m.id: m.rack for m in group.members}
    local = [m for m in group.subscribers[tp.topic] if rack_of[m] in racks]
    if rack == "prefer":
        local = [m for m in local if book.count[m] == book.count[best]]
    return min(local, key=book.key) if local else best


def _lag_aware_book(
    group: GroupSnapshot, tie_key: Callable[[str], object] | None = None, rack: str = "off"
) -> LoadBook:
    lag = group.lag
    book = LoadBook(group, by_lag=True, tie_key=tie_key)
    for tp in sorted(group.assignable, key=lambda tp: (-lag[tp], tp)):
        book.add(_taker(book, group, tp, rack), tp)
    if not group.identical_subscriptions and rack != "require":
        balance_counts(book, lambda mid, held: sorted(held, key=lambda tp: (lag[tp], tp)))
    return book


class LagAwareStrategy(Strategy):
    name = "lag-aware"
    summary = "Lag-Aware KIP: counts balanced first, then heaviest partitions to the lightest member"
    options = ("rack",)

    def __init__(self, rack: str = "off") -> None:
        if rack not in RACK_MODES:
            raise StrategyOptionError(f"rack must be one of {', '.join(RACK_MODES)}, got {rack!r}")
        self.rack = rack

    def assign(self, group: GroupSnapshot) -> Assignment:
        index = lag_aware_index(group) if self.rack == "off" or not group.rack_aware else None
        if index is not None:
            return build_indexed(self.name, group, index)
        return build(self.name, group, lag_aware_layout(group, rack=self.rack))
