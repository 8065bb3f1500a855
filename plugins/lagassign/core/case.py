"""Reading a case (the JSON contract of docs/ARCHITECTURE.md) into a GroupSnapshot, rejecting bad input.

Every problem is raised as a CaseError whose message names the member or partition at fault,
so the CLI can print it as one line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from .errors import CaseError
from .lag import LATEST, RESET_POLICIES, partition_lag
from .model import GroupSnapshot, Member, PartitionState, TopicPartition


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


def _subscription(mid: str, topics: Any, seen: dict[tuple, frozenset[str]]) -> frozenset[str]:
    """A member's topics as a frozenset, checked and built once per distinct list: members
    with the same subscription share one object (10,000 members x 1,000 topics at Kafka's
    benchmark point)."""
    if not isinstance(topics, list):
        raise CaseError(f"member {mid}: 'topics' must be a list of topic names")
    try:
        key = tuple(topics)
        known = seen.get(key)
    except TypeError:  # an unhashable entry: not a topic name
        key, known = (), None
    if known is not None:
        return known
    if not all(isinstance(t, str) and t for t in topics):
        raise CaseError(f"member {mid}: 'topics' must be a list of topic names")
    if not topics:
        raise CaseError(f"member {mid}: subscribes to no topic")
    seen[key] = frozenset(topics)
    return seen[key]


def _member(entry: Any, index: int, seen: dict[tuple, frozenset[str]]) -> Member:
    if not isinstance(entry, dict):
        raise CaseError(f"member #{index}: must be an object, got {type(entry).__name__}")
    mid = entry.get("id")
    if not isinstance(mid, str) or not mid:
        raise CaseError(f"member #{index}: has no id (a non-empty string is required)")
    topics = _subscription(mid, entry.get("topics"), seen)
    owned_raw = entry.get("owned") or []
    if not isinstance(owned_raw, list):
        raise CaseError(f"member {mid}: 'owned' must be a list of [topic, partition] pairs")
    owned = []
    for pair in owned_raw:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise CaseError(f"member {mid}: owned entry {pair!r} is not a [topic, partition] pair")
        owned.append(_topic_partition(pair[0], pair[1], f"member {mid} owned"))
    rack = entry.get("rack")
    if rack is not None and not isinstance(rack, str):
        raise CaseError(f"member {mid}: 'rack' must be a string or null")
    instance_id = entry.get("instance_id")
    if instance_id is not None and not isinstance(instance_id, str):
        raise CaseError(f"member {mid}: 'instance_id' must be a string or null")
    capacity = _per_second(entry, "capacity", f"member {mid}")
    return Member(mid, topics, tuple(sorted(set(owned))), rack, instance_id, capacity)


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


def parse_case(case: Mapping[str, Any]) -> GroupSnapshot:
    """Validate a case object and build the GroupSnapshot that strategies run on."""
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
    partitions_raw = case.get("partitions")
    if not isinstance(partitions_raw, list):
        raise CaseError("'partitions' must be a list of partitions")

    partitions: dict[TopicPartition, PartitionState] = {}
    for i, entry in enumerate(partitions_raw):
        state = _partition_state(entry, i, reset)
        if state.tp in partitions:
            raise CaseError(f"partition {state.tp} is listed twice")
        partitions[state.tp] = state

    seen: dict[tuple, frozenset[str]] = {}
    members = sorted((_member(e, i, seen) for i, e in enumerate(members_raw)), key=lambda m: m.id)
    topics_with_partitions = {tp.topic for tp in partitions}
    checked: set[frozenset[str]] = set()
    owners: dict[TopicPartition, str] = {}
    previous = None
    for m in members:
        if m.id == previous:
            raise CaseError(f"member {m.id} is listed twice")
        previous = m.id
        if m.topics not in checked:
            missing = sorted(m.topics - topics_with_partitions)
            if missing:
                raise CaseError(
                    f"member {m.id} subscribes to topic {missing[0]}, which has no partitions in the case"
                )
            checked.add(m.topics)
        for tp in m.owned:
            if tp not in partitions:
                raise CaseError(f"member {m.id} owns {tp}, which is not among the partitions")
            if tp in owners:
                raise CaseError(f"partition {tp} is owned by both {owners[tp]} and {m.id}")
            owners[tp] = m.id
    return GroupSnapshot(group, tuple(members), partitions, reset)
