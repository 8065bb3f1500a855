"""A consumer group as strategies see it (``GroupSnapshot``), and the views of it they share.

Kept free of Kafka, Spark and Airflow so strategies and scoring stay pure and fast. The plain
values it is made of (``TopicPartition``, ``PartitionState``, ``Member``, ``PartitionColumns``)
and what a strategy returns (``Assignment``) live in ``values``; they are importable from here
too, as every strategy reads them with the group. The per-partition objects and the dicts keyed
by them are views made on first use.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property, wraps
from typing import Any, TypeVar

from .values import Assignment, Member, PartitionColumns, PartitionState, TopicPartition

__all__ = [
    "Assignment",
    "GroupSnapshot",
    "Member",
    "PartitionColumns",
    "PartitionState",
    "TopicPartition",
    "gc_paused",
]


_F = TypeVar("_F", bound=Callable[..., Any])


def gc_paused(func: _F) -> _F:
    """Run ``func`` with Python's cycle collector paused (then resumed, if it was running).

    Planning a group allocates many small containers that never form cycles (a plan at
    Kafka's benchmark point has 100,000 ``[topic, partition]`` lists). Each few thousand new
    containers the collector walks every live one, the caller's case included (10,000 members
    x 1,000 topic names there): most of the time spent would be the collector's, for nothing
    to collect. Reference counting still frees everything; cycles made meanwhile are collected
    at the next collection after the call.
    """

    @wraps(func)
    def paused(*args: Any, **kwargs: Any) -> Any:
        if not gc.isenabled():
            return func(*args, **kwargs)
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            gc.enable()

    return paused  # type: ignore[return-value]


class GroupSnapshot:
    """One group as strategies see it: members sorted by id, partitions keyed by TopicPartition.

    Only partitions of topics that at least one member subscribes to are assignable; the
    derived views below are computed once, on first use, and shared by every strategy that
    runs on the group. A view only one strategy or scoring reads is kept by that module in
    ``shared`` (``shared.Shared``), not here. Made from a mapping of partition states
    (``partitions``) or from columns (``columns``, as ``case.parse_case`` does); either gives
    the other on first use.

    Index views (a partition's index is its position in ``columns``, by topic then number;
    a member's index is its position in ``members``), for code that works on indices:
    ``columns``, ``lags``, ``tps``, ``index_of``, ``topic_span``, ``assignable_index``,
    ``member_index``, ``owned_index``, ``owner_index`` and ``class_members``.
    """

    def __init__(
        self,
        group: str,
        members: tuple[Member, ...],
        partitions: Mapping[TopicPartition, PartitionState] | None = None,
        auto_offset_reset: str = "latest",
        *,
        columns: PartitionColumns | None = None,
    ) -> None:
        if partitions is None and columns is None:
            raise ValueError("a GroupSnapshot needs its partitions or their columns")
        self.group = group
        self.members = members
        self.auto_offset_reset = auto_offset_reset
        #: values computed once per group and shared by strategies and scoring (``shared.Shared``)
        self.shared: dict[tuple[object, object], object] = {}
        if partitions is not None:
            self.__dict__["partitions"] = partitions
        if columns is not None:
            self.__dict__["columns"] = columns

    def __repr__(self) -> str:
        return f"GroupSnapshot({self.group!r}, {len(self.members)} members, {len(self.columns)} partitions)"

    # ---- partitions ------------------------------------------------------------------------

    @cached_property
    def partitions(self) -> Mapping[TopicPartition, PartitionState]:
        """Every known partition's state, by TopicPartition (made from the columns on first use)."""
        return self.columns.states(self.tps)

    @cached_property
    def columns(self) -> PartitionColumns:
        """The partitions as columns, by topic then number (made from ``partitions`` if needed)."""
        return PartitionColumns.of_states(self.partitions)

    @cached_property
    def lags(self) -> list[int]:
        """Lag per partition index."""
        return self.columns.lags

    @cached_property
    def tps(self) -> list[TopicPartition]:
        """The TopicPartition of each index."""
        return self.columns.topic_partitions()

    @cached_property
    def index_of(self) -> dict[TopicPartition, int]:
        """TopicPartition -> its index."""
        return {tp: i for i, tp in enumerate(self.tps)}

    @cached_property
    def lag(self) -> dict[TopicPartition, int]:
        """Lag of every known partition."""
        return dict(zip(self.tps, self.lags, strict=True))

    @cached_property
    def topic_span(self) -> dict[str, range]:
        """Topic -> the range of its partitions' indices (topics with known partitions)."""
        return self.columns.spans

    @cached_property
    def rack_aware(self) -> bool:
        """Whether racks are known on both sides: some member has a rack that some replica has."""
        member_racks = {m.rack for m in self.members if m.rack}
        racks = self.columns.racks
        return bool(member_racks) and racks is not None and any(member_racks & r for r in racks)

    # ---- members and subscriptions ------------------------------------------------------------

    @cached_property
    def member_ids(self) -> list[str]:
        return [m.id for m in self.members]

    @cached_property
    def member_index(self) -> dict[str, int]:
        """Member id -> its index in ``members``."""
        return {mid: i for i, mid in enumerate(self.member_ids)}

    @cached_property
    def kafka_order(self) -> tuple[Member, ...]:
        """Members in the order Kafka's assignors sort them (``MemberInfo.compareTo``): static
        members (KIP-345) first, by ``group.instance.id``, then dynamic ones by member id."""
        if all(m.instance_id is None for m in self.members):
            return self.members  # sorted by id already
        return tuple(sorted(self.members, key=lambda m: (m.instance_id is None, m.instance_id or "", m.id)))

    @cached_property
    def kafka_subscribers(self) -> dict[str, list[str]]:
        """Topic -> ids of its subscribers in Kafka's member order (``kafka_order``); topics
        with the same subscribers share one list (read-only)."""
        if self.kafka_order is self.members:
            return self.subscribers
        return self._by_topic(self.kafka_order)

    @cached_property
    def subscribers(self) -> dict[str, list[str]]:
        """Topic -> ids of the members subscribed to it, sorted; topics with the same
        subscribers share one list (read-only)."""
        return self._by_topic(self.members)

    @cached_property
    def subscriptions(self) -> dict[frozenset[str], list[str]]:
        """Each distinct subscription -> ids of the members that have it, sorted.

        Work per subscription rather than per member: at Kafka's benchmark point, 10,000
        members with one subscription of 1,000 topics, it is one entry instead of 10 million.
        """
        classes: dict[frozenset[str], list[str]] = {}
        for m in self.members:
            classes.setdefault(m.topics, []).append(m.id)
        return classes

    @cached_property
    def class_members(self) -> list[list[int]]:
        """Per subscription (in ``subscriptions`` order), the indices of its members, ascending."""
        index = self.member_index
        return [[index[mid] for mid in ids] for ids in self.subscriptions.values()]

    def _by_topic(self, ordered: Sequence[Member]) -> dict[str, list[str]]:
        """Topic -> subscriber ids in the order of ``ordered``, built per subscription."""
        topic_classes: dict[str, list[frozenset[str]]] = {}
        for topics in self.subscriptions:
            for t in topics:
                topic_classes.setdefault(t, []).append(topics)
        merged: dict[tuple[frozenset[str], ...], list[str]] = {}
        subs: dict[str, list[str]] = {}
        position: dict[str, int] | None = None
        for t in sorted(topic_classes):
            classes = tuple(topic_classes[t])
            ids = merged.get(classes)
            if ids is None:
                if len(classes) == 1 and ordered is self.members:
                    ids = self.subscriptions[classes[0]]  # sorted by id already
                else:
                    if position is None:
                        position = {m.id: i for i, m in enumerate(ordered)}
                    ids = [mid for c in classes for mid in self.subscriptions[c]]
                    ids.sort(key=position.__getitem__)
                merged[classes] = ids
            subs[t] = ids
        return subs

    @cached_property
    def subscriptions_per_topic(self) -> Counter[str]:
        """Topic -> how many distinct subscriptions include it."""
        return Counter(t for topics in self.subscriptions for t in topics)

    @cached_property
    def subscriptions_apart(self) -> bool:
        """No topic in two subscriptions: each subscription's members share its partitions
        only among themselves (identical subscriptions, Kafka's JMH buckets)."""
        return all(n == 1 for n in self.subscriptions_per_topic.values())

    @cached_property
    def topics_of(self) -> dict[str, frozenset[str]]:
        """Member id -> the topics it subscribes to."""
        return {m.id: m.topics for m in self.members}

    @cached_property
    def identical_subscriptions(self) -> bool:
        return len(self.subscriptions) <= 1

    # ---- assignable partitions ------------------------------------------------------------

    @cached_property
    def topic_partitions(self) -> dict[str, list[TopicPartition]]:
        """Subscribed topic -> its partitions, sorted by partition number."""
        tps, spans = self.tps, self.topic_span
        empty = range(0)
        out = {}
        for t in self.subscribers:
            span = spans.get(t, empty)
            out[t] = tps[span.start : span.stop]
        return out

    @cached_property
    def assignable_index(self) -> list[int]:
        """Indices of every partition of a subscribed topic, ascending (``assignable``'s order)."""
        spans = self.topic_span
        if all(t in self.subscribers for t in spans):
            return list(range(len(self.columns)))
        return [i for t, span in spans.items() if t in self.subscribers for i in span]

    @cached_property
    def assignable(self) -> list[TopicPartition]:
        """Every partition of a subscribed topic, sorted by topic then partition."""
        index = self.assignable_index
        if len(index) == len(self.columns):
            return list(self.tps)
        return list(map(self.tps.__getitem__, index))

    @cached_property
    def assignable_set(self) -> frozenset[TopicPartition]:
        return frozenset(self.assignable)

    # ---- current owners --------------------------------------------------------------------

    @cached_property
    def owner(self) -> dict[TopicPartition, str]:
        """Current owner of each owned partition."""
        return {tp: m.id for m in self.members for tp in m.owned}

    @cached_property
    def owned_index(self) -> list[list[int | None]]:
        """Per member index, the indices of the partitions it owns now, ascending (None for
        a partition the group does not list)."""
        return [self.columns.positions(m.owned) for m in self.members]

    @cached_property
    def owner_index(self) -> list[int]:
        """Per partition index, the index of the member that owns it now, or -1."""
        owners = [-1] * len(self.columns)
        for k, idx in enumerate(self.owned_index):
            for at in idx:
                if at is not None:
                    owners[at] = k
        return owners

    @cached_property
    def owned_count(self) -> int:
        """How many partitions are owned now."""
        return sum(len(m.owned) for m in self.members)
