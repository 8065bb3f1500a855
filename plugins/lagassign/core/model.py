"""Plain data of a consumer group: partitions, members, the snapshot and an assignment.

Kept free of Kafka, Spark and Airflow so strategies and scoring stay pure and fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple


class TopicPartition(NamedTuple):
    """A partition of a topic; a tuple so that sorting is by topic, then partition."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class PartitionState(NamedTuple):
    """Offsets of one partition for one group, and the lag derived from them (a named tuple:
    a case at Kafka's benchmark point builds 100,000 of them)."""

    tp: TopicPartition
    lag: int
    begin: int | None = None
    end: int | None = None
    committed: int | None = None
    #: racks of the partition's replicas (KIP-881), empty when unknown
    racks: frozenset[str] = frozenset()
    rate: float | None = None  # messages produced per second (inflow), when known


@dataclass(frozen=True)
class Member:
    """A group member: its id, the topics it subscribes to and the partitions it owns now."""

    id: str
    topics: frozenset[str]
    owned: tuple[TopicPartition, ...] = ()
    rack: str | None = None
    instance_id: str | None = None
    capacity: float | None = None  # messages per second it can process, when known


@dataclass(frozen=True)
class GroupSnapshot:
    """One group as strategies see it: members sorted by id, partitions keyed by TopicPartition.

    Only partitions of topics that at least one member subscribes to are assignable; the
    derived views below are computed once and shared by every strategy that runs on the group.
    """

    group: str
    members: tuple[Member, ...]
    partitions: Mapping[TopicPartition, PartitionState]
    auto_offset_reset: str = "latest"
    #: results of pure functions of this group shared between strategies (see strategies.base.memo)
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def member_ids(self) -> list[str]:
        return [m.id for m in self.members]

    @cached_property
    def kafka_order(self) -> tuple[Member, ...]:
        """Members in the order Kafka's assignors sort them (``MemberInfo.compareTo``): static
        members (KIP-345) first, by ``group.instance.id``, then dynamic ones by member id."""
        return tuple(sorted(self.members, key=lambda m: (m.instance_id is None, m.instance_id or "", m.id)))

    @cached_property
    def kafka_subscribers(self) -> dict[str, list[str]]:
        """Topic -> ids of its subscribers in Kafka's member order (``kafka_order``); topics
        with the same subscribers share one list (read-only)."""
        return self._by_topic(self.kafka_order)

    @cached_property
    def rack_aware(self) -> bool:
        """Whether racks are known on both sides: some member has a rack that some replica has."""
        member_racks = {m.rack for m in self.members if m.rack}
        return any(member_racks & st.racks for st in self.partitions.values())

    @cached_property
    def lag(self) -> dict[TopicPartition, int]:
        """Lag of every known partition."""
        return {tp: st.lag for tp, st in self.partitions.items()}

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

    def _by_topic(self, ordered: tuple[Member, ...]) -> dict[str, list[str]]:
        """Topic -> subscriber ids in the order of ``ordered``, built per subscription."""
        position = {m.id: i for i, m in enumerate(ordered)}
        topic_classes: dict[str, list[frozenset[str]]] = {}
        for topics in self.subscriptions:
            for t in topics:
                topic_classes.setdefault(t, []).append(topics)
        merged: dict[tuple[frozenset[str], ...], list[str]] = {}
        subs: dict[str, list[str]] = {}
        for t in sorted(topic_classes):
            classes = tuple(topic_classes[t])
            ids = merged.get(classes)
            if ids is None:
                ids = [mid for c in classes for mid in self.subscriptions[c]]
                ids.sort(key=position.__getitem__)
                merged[classes] = ids
            subs[t] = ids
        return subs

    @cached_property
    def topic_partitions(self) -> dict[str, list[TopicPartition]]:
        """Subscribed topic -> its partitions, sorted by partition number."""
        by_topic: dict[str, list[TopicPartition]] = {t: [] for t in self.subscribers}
        for tp in self.partitions:
            lst = by_topic.get(tp.topic)
            if lst is not None:
                lst.append(tp)
        for lst in by_topic.values():
            lst.sort()
        return by_topic

    @cached_property
    def assignable(self) -> list[TopicPartition]:
        """Every partition of a subscribed topic, sorted by topic then partition."""
        return [tp for t in self.topic_partitions for tp in self.topic_partitions[t]]

    @cached_property
    def assignable_set(self) -> frozenset[TopicPartition]:
        return frozenset(self.assignable)

    @cached_property
    def topics_of(self) -> dict[str, frozenset[str]]:
        """Member id -> the topics it subscribes to."""
        return {m.id: m.topics for m in self.members}

    @cached_property
    def owner(self) -> dict[TopicPartition, str]:
        """Current owner of each owned partition."""
        return {tp: m.id for m in self.members for tp in m.owned}

    @cached_property
    def identical_subscriptions(self) -> bool:
        return len(self.subscriptions) <= 1


@dataclass
class Assignment:
    """What a strategy returns: partitions per member, plus what the strategy wants reported."""

    strategy: str
    members: dict[str, list[TopicPartition]]
    withheld: list[TopicPartition] | None = None
    notes: list[str] = field(default_factory=list)

    def owner_of(self) -> dict[TopicPartition, str]:
        return {tp: mid for mid, tps in self.members.items() for tp in tps}
