"""The plain values of a consumer group: partitions, members, their columns, an assignment.

A group's partitions are held as columns (``PartitionColumns``), in one order: by topic, then
partition number. A partition's position in that order is its *index*; strategies and scoring
that work on indices build no object per partition, which at Kafka's benchmark point (100,000
partitions) is most of the cost. ``model.GroupSnapshot`` holds these values for one group with
the views made of them that strategies share.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any, NamedTuple, Self

if TYPE_CHECKING:
    from .model import GroupSnapshot


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


class Member(NamedTuple):
    """A group member: its id, the topics it subscribes to and the partitions it owns now (a
    named tuple: cheap to make in bulk, 10,000 at Kafka's benchmark point)."""

    id: str
    topics: frozenset[str]
    owned: tuple[TopicPartition, ...] = ()
    rack: str | None = None
    instance_id: str | None = None
    capacity: float | None = None  # messages per second it can process, when known


_NO_RACKS: frozenset[str] = frozenset()
#: ``tuple.__new__(TopicPartition, (topic, number))`` makes a TopicPartition in C, without the
#: named tuple's Python-level ``__new__`` (what it costs: ``bench/README.md``)
_new_tuple = tuple.__new__


@dataclass(slots=True, eq=False)
class PartitionColumns:
    """Every known partition of a group as columns, sorted by topic, then partition number.

    ``topics``, ``numbers`` and ``lags`` have one entry per partition; the optional columns
    (``begin``, ``end``, ``committed``, ``racks``, ``rates``) are None when no partition gives
    them. ``topic_names`` are the distinct topics, sorted, and ``spans`` each topic's range of
    indices. The lists are shared: read them, never change them.
    """

    topics: list[str]
    numbers: list[int]
    lags: list[int]
    begin: list[int | None] | None = None
    end: list[int | None] | None = None
    committed: list[int | None] | None = None
    racks: list[frozenset[str]] | None = None
    rates: list[float | None] | None = None
    topic_names: list[str] = field(init=False, repr=False)
    spans: dict[str, range] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.topic_names = sorted(set(self.topics))
        starts = [bisect_left(self.topics, t) for t in self.topic_names]
        starts.append(len(self.topics))
        self.spans = {t: range(starts[i], starts[i + 1]) for i, t in enumerate(self.topic_names)}

    @classmethod
    def of_states(cls, partitions: Mapping[TopicPartition, PartitionState]) -> PartitionColumns:
        """The columns of a mapping of partition states (any order)."""
        states = [partitions[tp] for tp in sorted(partitions)]
        begin, end, committed = ([getattr(s, k) for s in states] for k in ("begin", "end", "committed"))
        racks = [s.racks for s in states]
        rates = [s.rate for s in states]
        return cls(
            [s.tp.topic for s in states],
            [s.tp.partition for s in states],
            [s.lag for s in states],
            begin if any(v is not None for v in begin) else None,
            end if any(v is not None for v in end) else None,
            committed if any(v is not None for v in committed) else None,
            racks if any(racks) else None,
            rates if any(r is not None for r in rates) else None,
        )

    def __len__(self) -> int:
        return len(self.topics)

    def position(self, topic: str, number: int) -> int | None:
        """The index of partition ``number`` of ``topic``, or None when it is not known."""
        span = self.spans.get(topic)
        if span is None:
            return None
        at = span.start + number
        if at < span.stop and self.numbers[at] == number:  # partitions 0..n-1, the usual case
            return at
        at = bisect_left(self.numbers, number, span.start, span.stop)
        return at if at < span.stop and self.numbers[at] == number else None

    def topic_partitions(self) -> list[TopicPartition]:
        """The TopicPartition of each index."""
        return list(map(_new_tuple, repeat(TopicPartition), zip(self.topics, self.numbers, strict=True)))

    def positions(self, pairs: Sequence[tuple[str, int]]) -> list[int | None]:
        """The index of each (topic, number), None for a partition not known."""
        return [self.position(t, n) for t, n in pairs]

    def states(self, tps: list[TopicPartition] | None = None) -> dict[TopicPartition, PartitionState]:
        """Every partition's state, keyed by TopicPartition (``tps`` if made already), in index order."""
        if tps is None:
            tps = self.topic_partitions()
        n = len(tps)
        none: list[Any] = [None] * n
        fields = zip(
            tps,
            self.lags,
            self.begin or none,
            self.end or none,
            self.committed or none,
            self.racks or [_NO_RACKS] * n,
            self.rates or none,
            strict=True,
        )
        return dict(zip(tps, map(_new_tuple, repeat(PartitionState), fields), strict=True))


class Assignment:
    """What a strategy returns: partitions per member, and those it withholds (cooperative-sticky).

    Made from TopicPartitions per member (``members``), or with ``Assignment.indexed`` from
    partition indices per member (strategies that work on indices): then ``members`` is made
    on first use, and scoring and the output read the indices.
    """

    def __init__(
        self,
        strategy: str,
        members: dict[str, list[TopicPartition]] | None = None,
        withheld: list[TopicPartition] | None = None,
    ) -> None:
        self.strategy = strategy
        self._members = members
        self.withheld = withheld
        self._indexed: dict[str, list[int]] | None = None
        self._group: GroupSnapshot | None = None

    @classmethod
    def indexed(
        cls,
        strategy: str,
        group: GroupSnapshot,
        positions: dict[str, list[int]],
        withheld: list[TopicPartition] | None = None,
        **fields: Any,
    ) -> Self:
        """An assignment given as sorted partition indices of ``group`` per member id;
        ``fields`` go to a subclass's constructor (e.g. ``proven_optimal``)."""
        out = cls(strategy, None, withheld, **fields)
        out._indexed = positions
        out._group = group
        return out

    @property
    def members(self) -> dict[str, list[TopicPartition]]:
        if self._members is None:
            assert self._indexed is not None and self._group is not None
            tps = self._group.tps
            self._members = {mid: list(map(tps.__getitem__, idx)) for mid, idx in self._indexed.items()}
        return self._members

    def positions(self, group: GroupSnapshot) -> dict[str, list[int]]:
        """Partition indices of ``group`` per member (KeyError for a partition it does not know)."""
        if self._indexed is not None and self._group is group:
            return self._indexed
        index = group.index_of
        return {mid: list(map(index.__getitem__, tps)) for mid, tps in self.members.items()}

    def _fields(self) -> tuple:
        return (type(self), self.strategy, self.members, self.withheld)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Assignment) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.strategy!r}, {self.members!r}, withheld={self.withheld!r})"
