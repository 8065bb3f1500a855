"""Reading a case (the JSON contract of docs/ARCHITECTURE.md) into a GroupSnapshot, rejecting bad input.

Every problem is raised as a CaseError whose message names the member or partition at fault,
so the CLI can print it as one line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from itertools import chain, compress, islice, repeat
from operator import add, attrgetter, gt, itemgetter, lt, ne, sub
from typing import Any

import numpy as np

from .errors import CaseError
from .lag import LATEST, RESET_POLICIES, partition_lag
from .model import GroupSnapshot, Member, PartitionColumns, PartitionState, TopicPartition, gc_paused


def load_case_text(text: str, source: str = "case") -> dict[str, Any]:
    """Parse JSON text into a case object, with the position of a syntax error in the message."""
    try:
        case = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise CaseError(f"{source}: malformed JSON at {where}: {exc.msg}") from None
    if not isinstance(case, dict):
        raise CaseError(f"{source}: a case must be a JSON object, got {type(case).__name__}")
    return case


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _offset(entry: Mapping[str, Any], key: str, where: str) -> int | None:
    value = entry.get(key)
    if value is None:
        return None
    if not _is_int(value):
        raise CaseError(f"{where}: '{key}' must be an integer offset, got {value!r}")
    if value < 0:
        raise CaseError(f"{where}: '{key}' offset is negative ({value})")
    return value


def _topic_partition(topic: Any, partition: Any, where: str) -> TopicPartition:
    if not isinstance(topic, str) or not topic:
        raise CaseError(f"{where}: topic must be a non-empty string, got {topic!r}")
    if not _is_int(partition) or partition < 0:
        raise CaseError(f"{where}: partition must be a non-negative integer, got {partition!r}")
    return TopicPartition(topic, partition)


_NO_RACKS: frozenset[str] = frozenset()


def _racks(entry: Mapping[str, Any], where: str) -> frozenset[str]:
    racks = entry.get("racks")
    if racks is None:
        return _NO_RACKS
    if not isinstance(racks, list) or not all(isinstance(r, str) and r for r in racks):
        raise CaseError(f"{where}: 'racks' must be a list of rack names (the replicas' racks)")
    return frozenset(racks)


def _partition_state(entry: Any, index: int, reset: str) -> PartitionState:
    if not isinstance(entry, dict):
        raise CaseError(f"partition #{index}: must be an object, got {type(entry).__name__}")
    get = entry.get
    topic, partition = get("topic"), get("partition")
    if type(topic) is str and topic and type(partition) is int and partition >= 0:
        tp = TopicPartition(topic, partition)  # the common case, checked without calls
    else:
        tp = _topic_partition(topic, partition, f"partition #{index}")
    begin, end, committed, given = get("begin"), get("end"), get("committed"), get("lag")
    racks, rate = get("racks"), get("rate")
    if end is None and begin is None and committed is None and racks is None and rate is None:
        if type(given) is int and given >= 0:  # a lag and nothing else: nothing more to check
            return PartitionState(tp, given)
    elif (
        type(end) is int
        and end >= 0
        and (begin is None or (type(begin) is int and 0 <= begin <= end))
        and (committed is None or (type(committed) is int and committed >= 0))
        and racks is None
        and rate is None
    ):  # offsets (a snapshot's partition): the lag is computed, a given one must agree
        lag = _lag_from_offsets(begin, end, committed, reset)
        if given is None or given == lag:
            return PartitionState(tp, lag, begin, end, committed)
    return _checked_partition_state(entry, tp, reset)


def _lag_from_offsets(begin: int | None, end: int, committed: int | None, reset: str) -> int:
    """``lag.partition_lag`` for offsets already checked (non-negative, begin <= end)."""
    start = begin or 0
    if committed is None or committed > end or committed < start:
        return 0 if reset == LATEST else end - start
    return end - committed


def _checked_partition_state(entry: Mapping[str, Any], tp: TopicPartition, reset: str) -> PartitionState:
    """Every rule on a partition, with a message naming it: for racks, rates and bad input."""
    where = f"partition {tp}"
    racks = _racks(entry, where)
    begin, end, committed = (_offset(entry, k, where) for k in ("begin", "end", "committed"))
    rate = _per_second(entry, "rate", where)
    given = entry.get("lag")
    if given is not None and (not _is_int(given) or given < 0):
        raise CaseError(f"{where}: 'lag' must be a non-negative integer, got {given!r}")
    if end is None:
        if given is None:
            raise CaseError(f"{where}: needs 'lag' or an 'end' offset")
        return PartitionState(tp, given, begin, end, committed, racks, rate)
    if begin is not None and begin > end:
        raise CaseError(f"{where}: begin offset {begin} is beyond end offset {end}")
    computed = partition_lag(end, committed, begin, reset)
    if given is not None and given != computed:
        raise CaseError(f"{where}: 'lag' {given} disagrees with its offsets, which give {computed}")
    return PartitionState(tp, computed, begin, end, committed, racks, rate)


class _Subscriptions:
    """Members' topic lists as frozensets, checked and built once per distinct list: members
    with the same subscription share one object (10,000 members x 1,000 topics at Kafka's
    benchmark point). A list equal to the previous member's costs one comparison."""

    def __init__(self) -> None:
        self.seen: dict[tuple, frozenset[str]] = {}
        self.last_list: list | None = None
        self.last: frozenset[str] = frozenset()

    def of(self, mid: str, topics: Any) -> frozenset[str]:
        if topics is self.last_list or (type(topics) is list and topics == self.last_list):
            return self.last  # equal to a checked list of names: checked too
        if not isinstance(topics, list):
            raise CaseError(f"member {mid}: 'topics' must be a list of topic names")
        try:
            key = tuple(topics)
            known = self.seen.get(key)
        except TypeError:  # an unhashable entry: not a topic name
            key, known = (), None
        if known is None:
            if not all(isinstance(t, str) and t for t in topics):
                raise CaseError(f"member {mid}: 'topics' must be a list of topic names")
            if not topics:
                raise CaseError(f"member {mid}: subscribes to no topic")
            known = self.seen[key] = frozenset(topics)
        self.last_list, self.last = topics, known
        return known


def _owned(mid: str, owned_raw: Any) -> tuple[TopicPartition, ...]:
    """A member's owned partitions, sorted and without repeats; [topic, partition] pairs of a
    name and a number (the usual case) are checked in bulk."""
    if (
        type(owned_raw) is list
        and set(map(type, owned_raw)) == {list}
        and set(map(len, owned_raw)) == {2}
        and set(map(type, topics := list(map(_FIRST, owned_raw)))) == {str}
        and "" not in topics
        and _all_ints(numbers := list(map(_SECOND, owned_raw)))
    ):
        return tuple(sorted(set(map(_new_tuple, repeat(TopicPartition), zip(topics, numbers, strict=True)))))
    if not isinstance(owned_raw, list):
        raise CaseError(f"member {mid}: 'owned' must be a list of [topic, partition] pairs")
    owned = []
    for pair in owned_raw:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise CaseError(f"member {mid}: owned entry {pair!r} is not a [topic, partition] pair")
        owned.append(_topic_partition(pair[0], pair[1], f"member {mid} owned"))
    return tuple(sorted(set(owned)))


def _owned_in_bulk(owned_raw: list) -> list[tuple[TopicPartition, ...]] | None:
    """Every member's owned partitions (``_owned``), their pairs checked in one pass over all
    members' lists: None unless every list given is of [name, number] pairs (then ``_owned``,
    member by member, reads or refuses them)."""
    given = [o for o in owned_raw if o]
    if not given:
        return [()] * len(owned_raw)
    pairs = list(chain.from_iterable(given)) if set(map(type, given)) == {list} else []
    if not (
        pairs
        and set(map(type, pairs)) == {list}
        and set(map(len, pairs)) == {2}
        and set(map(type, topics := list(map(_FIRST, pairs)))) == {str}
        and "" not in topics
        and _all_ints(numbers := list(map(_SECOND, pairs)))
    ):
        return None
    tps = list(map(_new_tuple, repeat(TopicPartition), zip(topics, numbers, strict=True)))
    out: list[tuple[TopicPartition, ...]] = []
    at = 0
    for o in owned_raw:
        if o:
            out.append(tuple(sorted(set(tps[at : at + len(o)]))))
            at += len(o)
        else:
            out.append(())
    return out


_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_new_tuple = tuple.__new__  # tuple.__new__(TopicPartition, (topic, number)): a TopicPartition, made in C


def _member(entry: Any, index: int, subscriptions: _Subscriptions) -> Member:
    if not isinstance(entry, dict):
        raise CaseError(f"member #{index}: must be an object, got {type(entry).__name__}")
    get = entry.get
    mid = get("id")
    if not isinstance(mid, str) or not mid:
        raise CaseError(f"member #{index}: has no id (a non-empty string is required)")
    topics = subscriptions.of(mid, get("topics"))
    owned_raw = get("owned")
    owned = _owned(mid, owned_raw) if owned_raw else ()
    rack, instance_id, capacity = get("rack"), get("instance_id"), get("capacity")
    if rack is not None and not isinstance(rack, str):
        raise CaseError(f"member {mid}: 'rack' must be a string or null")
    if instance_id is not None and not isinstance(instance_id, str):
        raise CaseError(f"member {mid}: 'instance_id' must be a string or null")
    if capacity is not None:
        capacity = _per_second(entry, "capacity", f"member {mid}")
    return Member(mid, topics, owned, rack, instance_id, capacity)


def _members_in_bulk(members_raw: list) -> list[Member] | None:
    """The members, checked in bulk, when every entry is an object with a non-empty string id,
    a list of topic names, owned pairs or none, string or null racks and instance ids, and no
    capacity. Members whose topic list equals the previous member's (the usual case) share
    its check. None when an entry is otherwise or anything is wrong: the caller then checks
    member by member, which names the first one at fault."""
    if set(map(type, members_raw)) != {dict}:
        return None
    n = len(members_raw)

    def column(key: str) -> list:
        return list(map(dict.get, members_raw, repeat(key)))

    ids = column("id")
    if set(map(type, ids)) != {str} or "" in ids or column("capacity").count(None) != n:
        return None
    for key in ("rack", "instance_id"):
        values = column(key)
        if values.count(None) != n and not {str, type(None)}.issuperset(map(type, values)):
            return None
    racks, instance_ids = column("rack"), column("instance_id")
    topic_lists = column("topics")
    # members whose list differs from the previous one's: each such list is checked once
    starts = [0, *compress(range(1, n), map(ne, topic_lists, islice(topic_lists, 1, None)))]
    runs = map(sub, [*starts[1:], n], starts)
    subscriptions = _Subscriptions()
    owned_raw = column("owned")
    try:
        firsts = [subscriptions.of(ids[i], topic_lists[i]) for i in starts]
        owned = _owned_in_bulk(owned_raw)
        if owned is None:
            owned = [_owned(mid, o) if o else () for mid, o in zip(ids, owned_raw, strict=True)]
    except CaseError:
        return None
    topics = chain.from_iterable(map(repeat, firsts, runs))
    fields = zip(ids, topics, owned, racks, instance_ids, repeat(None), strict=False)
    return list(map(_new_tuple, repeat(Member), fields))


def _per_second(entry: Mapping[str, Any], key: str, where: str) -> float | None:
    """An optional messages-per-second figure: a finite number >= 0 (capacity: > 0)."""
    value = entry.get(key)
    if value is None:
        return None
    low_ok = value > 0 if key == "capacity" and isinstance(value, int | float) else True
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
        or not low_ok
    ):
        kind = "a positive" if key == "capacity" else "a non-negative"
        raise CaseError(f"{where}: {key!r} must be {kind} number of messages per second, got {value!r}")
    return float(value)


@gc_paused
def parse_case(case: Mapping[str, Any], *, columns: PartitionColumns | None = None) -> GroupSnapshot:
    """Validate a case object and build the GroupSnapshot that strategies run on.

    ``columns``: the case's partitions, already made and checked (``offset_columns``, as a
    snapshot reader does from its own columns); the case's ``partitions`` are then not read.
    """
    if not isinstance(case, Mapping):
        raise CaseError(f"a case must be a JSON object, got {type(case).__name__}")
    group = case.get("group", "case")
    if not isinstance(group, str) or not group:
        raise CaseError(f"'group' must be a non-empty string, got {group!r}")
    reset = case.get("auto_offset_reset", "latest")
    if not isinstance(reset, str) or reset.lower() not in RESET_POLICIES:
        raise CaseError(f"'auto_offset_reset' must be one of {', '.join(RESET_POLICIES)}, got {reset!r}")
    reset = reset.lower()

    members_raw = case.get("members")
    if not isinstance(members_raw, list):
        raise CaseError("'members' must be a list of members")
    if not members_raw:
        raise CaseError(f"group {group}: empty group (no members)")
    if columns is None:
        partitions_raw = case.get("partitions")
        if not isinstance(partitions_raw, list):
            raise CaseError("'partitions' must be a list of partitions")
        columns = partition_columns(partitions_raw, reset)
        if columns is None:  # not one of the common shapes, or something is wrong: entry by entry
            columns = PartitionColumns.of_states(_partition_states(partitions_raw, reset))

    members = _members_in_bulk(members_raw)
    if members is None:  # not the common shape, or something is wrong: member by member
        subscriptions = _Subscriptions()
        members = [_member(e, i, subscriptions) for i, e in enumerate(members_raw)]
    members.sort(key=attrgetter("id"))
    _check_members(members, columns)
    return GroupSnapshot(group, tuple(members), None, reset, columns=columns)


def _partition_states(partitions_raw: list, reset: str) -> dict[TopicPartition, PartitionState]:
    """Every partition checked on its own, in the case's order: the first one at fault is named."""
    partitions: dict[TopicPartition, PartitionState] = {}
    for i, entry in enumerate(partitions_raw):
        state = _partition_state(entry, i, reset)
        if state.tp in partitions:
            raise CaseError(f"partition {state.tp} is listed twice")
        partitions[state.tp] = state
    return partitions


def _check_members(members: list[Member], columns: PartitionColumns) -> None:
    """Ids unique, subscriptions to topics with partitions, owned partitions known and owned
    once: checked in bulk, and member by member only to name the first culprit."""
    ids = [m.id for m in members]
    owned = list(chain.from_iterable(m.owned for m in members))
    distinct = set(owned)
    if (
        all(map(lt, ids, islice(ids, 1, None)))
        and all(topics.issubset(columns.spans) for topics in {m.topics for m in members})
        and len(distinct) == len(owned)
        and (not owned or distinct.issubset(zip(columns.topics, columns.numbers, strict=True)))
    ):
        return
    _name_first_culprit(members, columns)


def _name_first_culprit(members: list[Member], columns: PartitionColumns) -> None:
    """Every member rule, member by member (sorted by id): raise for the first that fails."""
    checked: set[frozenset[str]] = set()
    owners: dict[TopicPartition, str] = {}
    spans = columns.spans
    previous = None
    for m in members:
        if m.id == previous:
            raise CaseError(f"member {m.id} is listed twice")
        previous = m.id
        if m.topics not in checked:
            if not m.topics.issubset(spans):
                missing = min(t for t in m.topics if t not in spans)
                raise CaseError(
                    f"member {m.id} subscribes to topic {missing}, which has no partitions in the case"
                )
            checked.add(m.topics)
        for tp in m.owned:
            if columns.position(tp.topic, tp.partition) is None:
                raise CaseError(f"member {m.id} owns {tp}, which is not among the partitions")
            if tp in owners:
                raise CaseError(f"partition {tp} is owned by both {owners[tp]} and {m.id}")
            owners[tp] = m.id


#: from this many partitions an unsorted list is sorted with numpy (its call overhead pays off)
_NUMPY_SORT_FROM = 512
_INT64_MAX = 2**63 - 1
_TOPIC, _NUMBER, _LAG = itemgetter("topic"), itemgetter("partition"), itemgetter("lag")
_BEGIN, _END, _COMMITTED = itemgetter("begin"), itemgetter("end"), itemgetter("committed")


def partition_columns(partitions_raw: list, reset: str) -> PartitionColumns | None:
    """The partitions as columns, checked in bulk, when every entry has one of the two common
    shapes: ``{topic, partition, lag}`` (a case file) or ``{topic, partition, begin, end,
    committed}`` (a snapshot's). None when an entry has another shape or anything is wrong:
    the caller then checks entry by entry, which names the first one at fault."""
    if not partitions_raw:
        return PartitionColumns([], [], [])
    if set(map(type, partitions_raw)) != {dict}:
        return None
    shapes = set(map(len, partitions_raw))
    try:
        topics = list(map(_TOPIC, partitions_raw))
        numbers = list(map(_NUMBER, partitions_raw))
        if shapes == {3}:
            lags = list(map(_LAG, partitions_raw))
        elif shapes == {5}:
            begin, end = list(map(_BEGIN, partitions_raw)), list(map(_END, partitions_raw))
            committed = list(map(_COMMITTED, partitions_raw))
            return offset_columns(topics, numbers, begin, end, committed, reset)
        else:
            return None
        names = set(topics)
    except (KeyError, TypeError):  # another shape, or an unhashable topic
        return None
    if set(map(type, names)) != {str} or "" in names:
        return None
    if not (_all_ints(numbers) and _all_ints(lags)):
        return None
    ordered = _sorted_columns([topics, numbers, lags], names)
    if ordered is None:  # a partition listed twice
        return None
    return PartitionColumns(*ordered)


def offset_columns(
    topics: list, numbers: list, begin: list, end: list, committed: list, reset: str
) -> PartitionColumns | None:
    """``partition_columns`` of partitions given as offsets (a snapshot's shape: topic,
    partition, begin, end, committed, one list each, in any order), their lags computed under
    ``reset`` (lower case). None when anything is wrong: the caller then checks entry by entry,
    which names the first one at fault."""
    if not topics:
        return PartitionColumns([], [], [])
    try:
        if not _offsets_valid(begin, end, committed):
            return None
        lags = list(map(_lag_from_offsets, begin, end, committed, repeat(reset)))
        names = set(topics)
    except TypeError:  # an unhashable topic
        return None
    if set(map(type, names)) != {str} or "" in names:
        return None
    if not (_all_ints(numbers) and _all_ints(lags)):
        return None
    ordered = _sorted_columns([topics, numbers, lags, begin, end, committed], names)
    if ordered is None:  # a partition listed twice
        return None
    return PartitionColumns(*ordered)


def _all_ints(values: list) -> bool:
    """Every value a non-negative int (not a bool)."""
    return set(map(type, values)) == {int} and min(values) >= 0


def _offsets_valid(begin: list, end: list, committed: list) -> bool:
    """Offsets of the snapshot shape: non-negative ints, begin and committed optional, begin <= end."""
    if not _all_ints(end):
        return False
    for column in (begin, committed):
        given = [v for v in column if v is not None] if None in column else column
        if given and not _all_ints(given):
            return False
    if None in begin:
        return not any(b is not None and b > e for b, e in zip(begin, end, strict=True))
    return not any(map(gt, begin, end))


def _sorted_columns(columns: list[list], names: set[str]) -> list[list] | None:
    """The columns (topics, numbers, then any others) in the order of topic and number; None
    when a partition is listed twice. Listed topic by topic, each topic's partitions in
    order (the usual case), costs a few passes, and nothing more when the topics are in order
    too; anything else, a sort."""
    topics, numbers = columns[0], columns[1]
    n = len(topics)
    starts = [0, *compress(range(1, n), map(ne, topics, islice(topics, 1, None)))]
    stops = [*starts[1:], n]
    runs_in_order = map(_increasing, map(numbers.__getitem__, map(slice, starts, stops)))
    if len(starts) == len(names) and all(runs_in_order):
        # each topic in one run, its partitions in order: put the runs in order
        firsts = list(map(topics.__getitem__, starts))
        if _increasing(firsts):
            return columns
        runs = sorted(zip(firsts, starts, stops, strict=True))
        return [list(chain.from_iterable(col[a:b] for _, a, b in runs)) for col in columns]
    keys = _sort_keys(topics, numbers, names)
    if len(keys) >= _NUMPY_SORT_FROM and max(keys) <= _INT64_MAX:
        array = np.array(keys, dtype=np.int64)
        by_key = np.argsort(array, kind="stable")
        ordered = array[by_key]
        if not bool((ordered[1:] > ordered[:-1]).all()):
            return None
        order = by_key.tolist()
    else:
        order = sorted(range(n), key=keys.__getitem__)
        if not _increasing(list(map(keys.__getitem__, order))):
            return None
    return [list(map(col.__getitem__, order)) for col in columns]


def _sort_keys(topics: list[str], numbers: list[int], names: set[str]) -> list[int]:
    """One integer per partition, in the order of (topic, number)."""
    if len(names) == 1:
        return numbers
    top = max(numbers) + 1
    number = {t: i * top for i, t in enumerate(sorted(names))}
    return list(map(add, map(number.__getitem__, topics), numbers))


def _increasing(keys: list[int]) -> bool:
    return all(map(lt, keys, islice(keys, 1, None)))
