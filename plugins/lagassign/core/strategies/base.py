"""The one small interface every strategy implements, and helpers they share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from ..model import Assignment, GroupSnapshot, TopicPartition
from ..shared import Shared


class Strategy(ABC):
    """An assignment strategy: a pure, deterministic function of the group snapshot.

    Subclasses set ``name`` (the registry key, a contract) and ``summary`` (one line for
    people), take their options as keyword arguments, and implement ``assign``.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    #: keyword options the constructor takes (e.g. ``max_moves``); evaluate passes only these.
    options: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def assign(self, group: GroupSnapshot) -> Assignment:
        """Return the partitions of every member; raise StrategyRefusedError if it cannot."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class CertifiedAssignment(Assignment):
    """An Assignment whose strategy proved that no assignment under the rules it keeps (its
    count rules and options, e.g. ``max_moves``) has a smaller max lag; scoring reports it as
    ``optimal``."""

    def __init__(
        self, *args: Any, proven_optimal: bool = False, proven_catch_up: bool = False, **kwargs: Any
    ) -> None:
        """``Assignment``'s arguments, and what the strategy proved."""
        super().__init__(*args, **kwargs)
        self.proven_optimal = proven_optimal
        #: no plan under the strategy's rules catches up sooner (drain-optimal's exact search)
        self.proven_catch_up = proven_catch_up
        #: a largest catch-up time the strategy proved no plan under its rules beats (or None)
        self.catch_up_bound: float | None = None

    def _fields(self) -> tuple:
        return (*super()._fields(), self.proven_optimal, self.proven_catch_up)


def build(
    name: str,
    group: GroupSnapshot,
    pairs: Iterable[tuple[str, TopicPartition]] | Mapping[str, Iterable[TopicPartition]],
    **extra,
) -> Assignment:
    """An Assignment listing every member (empty ones too), each list sorted."""
    members: dict[str, list[TopicPartition]] = {mid: [] for mid in group.member_ids}
    if isinstance(pairs, Mapping):
        for mid, tps in pairs.items():
            members[mid].extend(tps)
    else:
        for mid, tp in pairs:
            members[mid].append(tp)
    for tps in members.values():
        tps.sort()
    return Assignment(name, members, **extra)


def build_indexed(name: str, group: GroupSnapshot, layout: list[list[int]], **extra) -> Assignment:
    """An Assignment from partition indices per member index (``group.members`` order), each
    list sorted here; no per-partition object is made."""
    for idx in layout:
        idx.sort()
    return Assignment.indexed(name, group, dict(zip(group.member_ids, layout, strict=True)), **extra)


def shared_layout(
    key: Shared[dict[str, list[TopicPartition]]],
    group: GroupSnapshot,
    compute: Callable[[], dict[str, list[TopicPartition]]],
    variant: Hashable = None,
) -> dict[str, list[TopicPartition]]:
    """A layout computed once per group and shared (evaluate runs sticky, cooperative-sticky
    and lag-optimal's sticky seed on the same group); each caller gets its own lists."""
    return {mid: list(tps) for mid, tps in key.get(group, compute, variant).items()}


def kept_owned_index(group: GroupSnapshot) -> list[list[int]]:
    """Owned partitions each member may keep: still listed and of a topic it subscribes to, as
    partition indices per member index, ascending."""
    topics = group.columns.topics
    return [
        [i for i in idx if i is not None and topics[i] in m.topics]
        for m, idx in zip(group.members, group.owned_index, strict=True)
    ]


def kept_owned(group: GroupSnapshot) -> dict[str, list[TopicPartition]]:
    """``kept_owned_index`` as partitions per member id."""
    tps = group.tps
    kept = kept_owned_index(group)
    return {m.id: [tps[i] for i in idx] for m, idx in zip(group.members, kept, strict=True)}


def fresh_apart(group: GroupSnapshot) -> list[list[int]] | None:
    """Sticky's layout, worked directly, for a group where nobody owns a partition, no racks
    are known and members that share a topic share their whole subscription (each topic has
    one subscription: identical subscriptions, or Kafka's JMH buckets). None for any other
    group. ``uniform`` uses it for mixed subscriptions; sticky's own passes give the same.

    Why it is sticky's: sticky deals the partitions, fewest subscribers first and then by topic
    and number, each to the subscriber with the fewest, ties by id. A subscription's topics
    all have its members as subscribers, so its partitions come in index order and go round
    its members in id order: the j-th to member j mod n. Counts then differ by at most one
    within each subscription, and no member can take a partition of another subscription's
    topic, so sticky's balancing moves nothing. Partition indices per member index."""
    if group.owned_count or group.rack_aware or not group.subscriptions_apart:
        return None
    spans = group.topic_span
    layout: list[list[int]] = [[] for _ in group.members]
    for topics, members in zip(group.subscriptions, group.class_members, strict=True):
        dealt = [i for t in sorted(topics) if t in spans for i in spans[t]]  # index order
        for j, k in enumerate(members):  # members ascending: in id order
            layout[k] = dealt[j :: len(members)]
    return layout


def cyclic(items: Sequence[int], start: int, count: int) -> list[int]:
    """``count`` items of ``items`` taken in a circle from position ``start``."""
    n = len(items)
    if start + count <= n:
        return list(items[start : start + count])
    head = list(items[start:])
    rounds, rest = divmod(count - len(head), n)
    return head + list(items) * rounds + list(items[:rest])
