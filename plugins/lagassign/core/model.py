"""Plain data of a consumer group: partitions, members, the snapshot and an assignment.

Kept free of Kafka, Spark and Airflow so strategies and scoring stay pure and fast.

A group's partitions are held as columns (``PartitionColumns``), in one order: by topic, then
partition number. A partition's position in that order is its *index*; strategies and scoring
that work on indices build no object per partition, which at Kafka's benchmark point (100,000
partitions) is most of the cost. The per-partition objects (``TopicPartition``,
``PartitionState``) and the dicts keyed by them are views made on first use.
"""

from __future__ import annotations

import gc
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from functools import wraps
from itertools import chain, repeat
from operator import add, eq, itemgetter
from typing import Any, Generic, NamedTuple, Self, TypeVar, cast, overload

import numpy as np

_INT64_MAX = 2**63 - 1
#: from this many partitions, bulk work on them is done with numpy (its call overhead pays off)
NUMPY_FROM = 2048
_T = TypeVar("_T")


class _cached(Generic[_T]):
    """``functools.cached_property`` without its lock (Python 3.11 takes one on every first
    access; a group's views are made by one thread): computed on first access, then read
    from the instance's ``__dict__``."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, cls: type | None = None) -> _cached[_T]: ...
    @overload
    def __get__(self, obj: object, cls: type | None = None) -> _T: ...
    def __get__(self, obj: object | None, cls: type | None = None) -> _cached[_T] | _T:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.func(obj)
        return value


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
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


class PartitionColumns:
    """Every known partition of a group as columns, sorted by topic, then partition number.

    ``topics``, ``numbers`` and ``lags`` have one entry per partition; the optional columns
    (``begin``, ``end``, ``committed``, ``racks``, ``rates``) are None when no partition gives
    them. ``topic_names`` are the distinct topics, sorted, and ``spans`` each topic's range of
    indices. The lists are shared: read them, never change them.
    """

    __slots__ = (
        "_arrays",
        "begin",
        "committed",
        "end",
        "lags",
        "numbers",
        "racks",
        "rates",
        "spans",
        "topic_names",
        "topics",
    )

    def __init__(
        self,
        topics: list[str],
        numbers: list[int],
        lags: list[int],
        begin: list[int | None] | None = None,
        end: list[int | None] | None = None,
        committed: list[int | None] | None = None,
        racks: list[frozenset[str]] | None = None,
        rates: list[float | None] | None = None,
    ) -> None:
        self.topics = topics
        self.numbers = numbers
        self.lags = lags
        self.begin = begin
        self.end = end
        self.committed = committed
        self.racks = racks
        self.rates = rates
        self.topic_names: list[str] = sorted(set(topics))
        starts = [bisect_left(topics, t) for t in self.topic_names]
        starts.append(len(topics))
        self.spans: dict[str, range] = {
            t: range(starts[i], starts[i + 1]) for i, t in enumerate(self.topic_names)
        }
        self._arrays: tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray] | None = None

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
        """The index of each (topic, number), None for a partition not known. In bulk: where
        each topic's partitions are 0..n-1 a partition's index is its topic's first index plus
        its number, which is then checked; anything else is searched for."""
        if not pairs:
            return []
        if len(pairs) >= NUMPY_FROM:
            return self._positions_in_bulk(pairs)
        starts = {t: span.start for t, span in self.spans.items()}
        try:
            at = list(map(add, map(starts.__getitem__, map(_FIRST, pairs)), map(_SECOND, pairs)))
            if all(map(eq, map(self.numbers.__getitem__, at), map(_SECOND, pairs))) and all(
                map(eq, map(self.topics.__getitem__, at), map(_FIRST, pairs))
            ):
                return at
        except (KeyError, IndexError):
            pass
        return [self.position(t, n) for t, n in pairs]

    def positions_each(self, lists: Sequence[Sequence[tuple[str, int]]]) -> list[list[int | None]]:
        """``positions`` of each list of pairs, looked up in one call (a call per list cost
        more than its work for short lists, e.g. each member's owned partitions)."""
        found = self.positions(list(chain.from_iterable(lists)))
        out = []
        at = 0
        for pairs in lists:
            out.append(found[at : at + len(pairs)])
            at += len(pairs)
        return out

    def _positions_in_bulk(self, pairs: Sequence[tuple[str, int]]) -> list[int | None]:
        """``positions`` with numpy: the topic's first index plus the number, checked at once."""
        try:
            number_of, starts, stops, numbers = self._index_arrays()
            topic = np.fromiter(map(number_of.__getitem__, map(_FIRST, pairs)), np.intp, len(pairs))
            number = np.fromiter(map(_SECOND, pairs), np.int64, len(pairs))
        except (KeyError, TypeError, ValueError, OverflowError):  # unknown topics, odd numbers
            return [self.position(t, n) for t, n in pairs]
        at = starts[topic] + number
        found = (number >= 0) & (at < stops[topic])
        found &= numbers[np.where(found, at, 0)] == number
        out: list[int | None] = at.tolist()
        for i in np.flatnonzero(~found).tolist():  # numbers not 0..n-1, or not listed
            out[i] = self.position(*pairs[i])
        return out

    def _index_arrays(self) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
        """(topic -> its number, first index per topic, end per topic, numbers as int64), made once."""
        if self._arrays is None:
            spans = list(self.spans.values())
            self._arrays = (
                {t: i for i, t in enumerate(self.spans)},
                np.array([s.start for s in spans], dtype=np.int64),
                np.array([s.stop for s in spans], dtype=np.int64),
                np.array(self.numbers, dtype=np.int64),  # OverflowError beyond int64
            )
        return self._arrays

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


class GroupSnapshot:
    """One group as strategies see it: members sorted by id, partitions keyed by TopicPartition.

    Only partitions of topics that at least one member subscribes to are assignable; the
    derived views below are computed once, on first use, and shared by every strategy that
    runs on the group. Made from a mapping of partition states (``partitions``) or from
    columns (``columns``, as ``case.parse_case`` does); either gives the other on first use.

    Index views (a partition's index is its position in ``columns``, by topic then number;
    a member's index is its position in ``members``), for code that works on indices:
    ``columns``, ``lags``, ``tps``, ``index_of``, ``topic_span``, ``assignable_index``,
    ``member_index``, ``owner_index``, ``subscription_index`` and ``class_members``; as numpy
    arrays ``lag_array``, ``topic_array`` and ``owner_array``.
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

    @_cached
    def partitions(self) -> Mapping[TopicPartition, PartitionState]:
        """Every known partition's state, by TopicPartition (made from the columns on first use)."""
        return self.columns.states(self.tps)

    @_cached
    def columns(self) -> PartitionColumns:
        """The partitions as columns, by topic then number (made from ``partitions`` if needed)."""
        return PartitionColumns.of_states(self.partitions)

    @_cached
    def lags(self) -> list[int]:
        """Lag per partition index."""
        return self.columns.lags

    @_cached
    def tps(self) -> list[TopicPartition]:
        """The TopicPartition of each index."""
        if "partitions" in self.__dict__ and "columns" not in self.__dict__:
            return sorted(self.partitions)
        return self.columns.topic_partitions()

    @_cached
    def pairs(self) -> list[tuple[str, int]]:
        """Each index's (topic, partition) as a plain tuple: a result's ``[topic, partition]``
        lists are made from these, the cheapest source of them."""
        return list(zip(self.columns.topics, self.columns.numbers, strict=True))

    @property
    def has_tps(self) -> bool:
        """Whether ``tps`` is made already."""
        return "tps" in self.__dict__

    @_cached
    def index_of(self) -> dict[TopicPartition, int]:
        """TopicPartition -> its index."""
        return {tp: i for i, tp in enumerate(self.tps)}

    @_cached
    def lag(self) -> dict[TopicPartition, int]:
        """Lag of every known partition."""
        return dict(zip(self.tps, self.lags, strict=True))

    @_cached
    def topic_span(self) -> dict[str, range]:
        """Topic -> the range of its partitions' indices (topics with known partitions)."""
        return self.columns.spans

    @_cached
    def rack_aware(self) -> bool:
        """Whether racks are known on both sides: some member has a rack that some replica has."""
        member_racks = {m.rack for m in self.members if m.rack}
        racks = self.columns.racks
        return bool(member_racks) and racks is not None and any(member_racks & r for r in racks)

    # ---- members and subscriptions ------------------------------------------------------------

    @_cached
    def member_ids(self) -> list[str]:
        return [m.id for m in self.members]

    @_cached
    def member_index(self) -> dict[str, int]:
        """Member id -> its index in ``members``."""
        return {mid: i for i, mid in enumerate(self.member_ids)}

    @_cached
    def kafka_order(self) -> tuple[Member, ...]:
        """Members in the order Kafka's assignors sort them (``MemberInfo.compareTo``): static
        members (KIP-345) first, by ``group.instance.id``, then dynamic ones by member id."""
        if all(m.instance_id is None for m in self.members):
            return self.members  # sorted by id already
        return tuple(sorted(self.members, key=lambda m: (m.instance_id is None, m.instance_id or "", m.id)))

    @_cached
    def kafka_subscribers(self) -> dict[str, list[str]]:
        """Topic -> ids of its subscribers in Kafka's member order (``kafka_order``); topics
        with the same subscribers share one list (read-only)."""
        if self.kafka_order is self.members:
            return self.subscribers
        return self._by_topic(self.kafka_order)

    @_cached
    def subscribers(self) -> dict[str, list[str]]:
        """Topic -> ids of the members subscribed to it, sorted; topics with the same
        subscribers share one list (read-only)."""
        return self._by_topic(self.members)

    @_cached
    def subscriptions(self) -> dict[frozenset[str], list[str]]:
        """Each distinct subscription -> ids of the members that have it, sorted.

        Work per subscription rather than per member: at Kafka's benchmark point, 10,000
        members with one subscription of 1,000 topics, it is one entry instead of 10 million.
        """
        classes: dict[frozenset[str], list[str]] = {}
        for m in self.members:
            classes.setdefault(m.topics, []).append(m.id)
        return classes

    @_cached
    def subscription_index(self) -> list[int]:
        """Per member index, the index of its subscription in ``subscriptions`` (its class)."""
        number = {topics: i for i, topics in enumerate(self.subscriptions)}
        return [number[m.topics] for m in self.members]

    @_cached
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

    @_cached
    def topics_of(self) -> dict[str, frozenset[str]]:
        """Member id -> the topics it subscribes to."""
        return {m.id: m.topics for m in self.members}

    @_cached
    def identical_subscriptions(self) -> bool:
        return len(self.subscriptions) <= 1

    # ---- assignable partitions ------------------------------------------------------------

    @_cached
    def topic_partitions(self) -> dict[str, list[TopicPartition]]:
        """Subscribed topic -> its partitions, sorted by partition number."""
        tps, spans = self.tps, self.topic_span
        empty = range(0)
        out = {}
        for t in self.subscribers:
            span = spans.get(t, empty)
            out[t] = tps[span.start : span.stop]
        return out

    @_cached
    def assignable_index(self) -> list[int]:
        """Indices of every partition of a subscribed topic, ascending (``assignable``'s order)."""
        spans = self.topic_span
        if all(t in self.subscribers for t in spans):
            return list(range(len(self.columns)))
        return [i for t, span in spans.items() if t in self.subscribers for i in span]

    @_cached
    def assignable(self) -> list[TopicPartition]:
        """Every partition of a subscribed topic, sorted by topic then partition."""
        index = self.assignable_index
        if len(index) == len(self.columns):
            return list(self.tps)
        return list(map(self.tps.__getitem__, index))

    @_cached
    def assignable_set(self) -> frozenset[TopicPartition]:
        return frozenset(self.assignable)

    # ---- current owners --------------------------------------------------------------------

    @_cached
    def owner(self) -> dict[TopicPartition, str]:
        """Current owner of each owned partition."""
        return {tp: m.id for m in self.members for tp in m.owned}

    @_cached
    def owned_index(self) -> list[list[int | None]]:
        """Per member index, the indices of the partitions it owns now, ascending (None for
        a partition the group does not list)."""
        return self.columns.positions_each([m.owned for m in self.members])

    @_cached
    def owner_index(self) -> list[int]:
        """Per partition index, the index of the member that owns it now, or -1."""
        owners = [-1] * len(self.columns)
        for k, idx in enumerate(self.owned_index):
            for at in idx:
                if at is not None:
                    owners[at] = k
        return owners

    @_cached
    def owned_by(self) -> dict[str, frozenset[int]]:
        """Member id -> the indices of the partitions it owns now (those the group lists)."""
        return {
            mid: frozenset(cast(list[int], idx))
            if None not in idx
            else frozenset(i for i in idx if i is not None)
            for mid, idx in zip(self.member_ids, self.owned_index, strict=True)
            if idx
        }

    @_cached
    def owned_count(self) -> int:
        """How many partitions are owned now."""
        return sum(len(m.owned) for m in self.members)

    # ---- numpy views -----------------------------------------------------------------------

    @_cached
    def lag_array(self) -> np.ndarray:
        """Lags per partition index as int64 (object dtype if one does not fit in int64)."""
        lags = self.lags
        if lags and max(lags) > _INT64_MAX:
            return np.array(lags, dtype=object)
        return np.array(lags, dtype=np.int64)

    @_cached
    def topic_array(self) -> np.ndarray:
        """Per partition index, the index of its topic in ``columns.topic_names`` (int32)."""
        out = np.empty(len(self.columns), dtype=np.int32)
        for i, span in enumerate(self.topic_span.values()):
            out[span.start : span.stop] = i
        return out

    @_cached
    def owner_array(self) -> np.ndarray:
        """``owner_index`` as an int32 array."""
        return np.array(self.owner_index, dtype=np.int32)


class Assignment:
    """What a strategy returns: partitions per member, plus what the strategy wants reported.

    Made from TopicPartitions per member (``members``), or with ``Assignment.indexed`` from
    partition indices per member (strategies that work on indices): then ``members`` is made
    on first use, and scoring and the output read the indices.
    """

    def __init__(
        self,
        strategy: str,
        members: dict[str, list[TopicPartition]] | None = None,
        withheld: list[TopicPartition] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.strategy = strategy
        self._members = members
        self.withheld = withheld
        self.notes: list[str] = [] if notes is None else notes
        self._indexed: dict[str, list[int]] | None = None
        self._group: GroupSnapshot | None = None

    @classmethod
    def indexed(
        cls,
        strategy: str,
        group: GroupSnapshot,
        positions: dict[str, list[int]],
        withheld: list[TopicPartition] | None = None,
        notes: list[str] | None = None,
        **fields: Any,
    ) -> Self:
        """An assignment given as sorted partition indices of ``group`` per member id;
        ``fields`` go to a subclass's constructor (e.g. ``proven_optimal``)."""
        out = cls(strategy, None, withheld, notes, **fields)
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

    @members.setter
    def members(self, value: dict[str, list[TopicPartition]]) -> None:
        self._members = value
        self._indexed = None
        self._group = None

    def positions(self, group: GroupSnapshot) -> dict[str, list[int]]:
        """Partition indices of ``group`` per member (KeyError for a partition it does not know)."""
        if self._indexed is not None and self._group is group:
            return self._indexed
        members = self.members
        found = group.columns.positions_each(list(members.values()))
        if any(None in idx for idx in found):  # a partition the group does not list: the KeyError names it
            index = group.index_of
            return {mid: list(map(index.__getitem__, tps)) for mid, tps in members.items()}
        return dict(zip(members, found, strict=True))  # type: ignore[arg-type]  # no None in found

    def is_indexed(self, group: GroupSnapshot) -> bool:
        """Whether this assignment was given as indices of ``group`` (nothing to convert)."""
        return self._indexed is not None and self._group is group

    def owner_of(self) -> dict[TopicPartition, str]:
        return {tp: mid for mid, tps in self.members.items() for tp in tps}

    def _fields(self) -> tuple:
        return (type(self), self.strategy, self.members, self.withheld, self.notes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Assignment) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.strategy!r}, {self.members!r}, withheld={self.withheld!r})"
