"""Reading a case (the JSON contract of docs/ARCHITECTURE.md) into a GroupSnapshot, rejecting bad input.

Every problem is raised as a CaseError whose message names the member or partition at fault,
so the CLI can print it as one line. Partitions are read in bulk when they have the usual shapes
(``case_columns``) and entry by entry otherwise or when the bulk reading finds anything wrong;
members are read entry by entry, their owned pairs tested a column at a time (pair by pair when
that quick test fails); both follow the one table of rules in ``case_rules``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import chain, islice, repeat
from operator import attrgetter, lt
from typing import Any

from .case_columns import offset_columns, partition_columns
from .case_rules import (
    MEMBER_ID_RULE,
    MEMBER_RULES,
    NAME,
    PARTITION_NAME_RULES,
    PARTITION_RULES,
    column_check,
    follow_rules,
)
from .errors import CaseError
from .lag import RESET_POLICIES, lag_of_checked_offsets
from .model import GroupSnapshot, Member, PartitionColumns, PartitionState, TopicPartition, gc_paused

__all__ = ["load_case_text", "offset_columns", "parse_case", "partition_columns"]


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


_NO_RACKS: frozenset[str] = frozenset()
#: the quick tests of owned pairs' topics and numbers: the rules on a partition's
_PAIR_TOPICS_OK = column_check(PARTITION_NAME_RULES, "topic")
_PAIR_NUMBERS_OK = column_check(PARTITION_NAME_RULES, "partition")
_new_tuple = tuple.__new__  # tuple.__new__(TopicPartition, (topic, number)): a TopicPartition, made in C


def _partition_state(entry: Any, index: int, reset: str) -> PartitionState:
    """One partition, every rule checked, with a message naming it."""
    if not isinstance(entry, dict):
        raise CaseError(f"partition #{index}: must be an object, got {type(entry).__name__}")
    tp = _topic_partition(entry, f"partition #{index}")
    where = f"partition {tp}"
    follow_rules(entry, PARTITION_RULES, where)
    get = entry.get
    begin, end, committed, given = get("begin"), get("end"), get("committed"), get("lag")
    racks: Any = get("racks")
    rate: Any = get("rate")
    racks = _NO_RACKS if racks is None else frozenset(racks)
    rate = None if rate is None else float(rate)
    if end is None:
        if given is None:
            raise CaseError(f"{where}: needs 'lag' or an 'end' offset")
        return PartitionState(tp, given, begin, end, committed, racks, rate)
    if begin is not None and begin > end:  # the offsets' other rules are checked above
        raise CaseError(f"{where}: begin offset {begin} is beyond end offset {end}")
    computed = lag_of_checked_offsets(end, committed, begin, reset)
    if given is not None and given != computed:
        raise CaseError(f"{where}: 'lag' {given} disagrees with its offsets, which give {computed}")
    return PartitionState(tp, computed, begin, end, committed, racks, rate)


def _topic_partition(entry: Mapping[str, Any], where: str) -> TopicPartition:
    """The ``topic`` and ``partition`` of an entry, checked."""
    follow_rules(entry, PARTITION_NAME_RULES, where)
    return TopicPartition(entry["topic"], entry["partition"])


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
            if not all(map(NAME.holds, topics)):
                raise CaseError(f"member {mid}: 'topics' must be a list of topic names")
            if not topics:
                raise CaseError(f"member {mid}: subscribes to no topic")
            known = self.seen[key] = frozenset(topics)
        self.last_list, self.last = topics, known
        return known


def _owned(mid: str, owned_raw: Any) -> tuple[TopicPartition, ...]:
    """A member's owned partitions, each pair checked, sorted and without repeats: a list of
    [name, number] pairs is checked a column at a time, pair by pair only to name the first
    one at fault."""
    if not isinstance(owned_raw, list):
        raise CaseError(f"member {mid}: 'owned' must be a list of [topic, partition] pairs")
    if not _pairs_ok(owned_raw):
        for pair in owned_raw:
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise CaseError(f"member {mid}: owned entry {pair!r} is not a [topic, partition] pair")
            _topic_partition({"topic": pair[0], "partition": pair[1]}, f"member {mid} owned")
    return tuple(sorted(set(map(_new_tuple, repeat(TopicPartition), owned_raw))))


def _pairs_ok(pairs: list) -> bool:
    """The quick test of owned [name, number] pairs (False may only mean "check pair by pair")."""
    if not all(isinstance(pair, list | tuple) and len(pair) == 2 for pair in pairs):
        return False
    return _PAIR_TOPICS_OK([pair[0] for pair in pairs]) and _PAIR_NUMBERS_OK([pair[1] for pair in pairs])


def _member(entry: Any, index: int, subscriptions: _Subscriptions) -> Member:
    """One member, every rule checked, with a message naming it."""
    if not isinstance(entry, dict):
        raise CaseError(f"member #{index}: must be an object, got {type(entry).__name__}")
    follow_rules(entry, (MEMBER_ID_RULE,), f"member #{index}")
    get = entry.get
    mid: str = entry["id"]
    topics = subscriptions.of(mid, get("topics"))
    owned = _owned(mid, get("owned")) if get("owned") else ()
    follow_rules(entry, MEMBER_RULES, f"member {mid}")
    capacity = get("capacity")
    return Member(
        mid, topics, owned, get("rack"), get("instance_id"), None if capacity is None else float(capacity)
    )


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
