"""The rules on each field of a case's entries, in one table that both ways of reading a case use.

A case is read in bulk, a column of values at a time, when its entries have the usual shapes;
entry by entry otherwise, or when the bulk reading finds anything wrong, so that the message
names the first entry at fault. Both read their rules here. A ``Check`` says what a value must
be, one value at a time (``holds``: the rule itself) and for a whole column at once
(``all_hold``: the bulk reading's quick test, which may refuse more than the rule does, as it
takes exact types only; a refused column is then read entry by entry). A ``Rule`` ties a field
to its check and to the message that names the entry.

    >>> follow_rules({"end": 5, "committed": -1}, PARTITION_RULES, "partition t-0")
    Traceback (most recent call last):
    ...
    lagassign.core.errors.CaseError: partition t-0: 'committed' offset is negative (-1)
    >>> committed_ok = column_check(PARTITION_RULES, "committed")
    >>> committed_ok([3, None, 4]), committed_ok([3, -1])
    (True, False)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

from .errors import CaseError


class Check(NamedTuple):
    """What a value must be: ``holds`` for one value, ``all_hold`` for a non-empty column."""

    holds: Callable[[Any], bool]
    all_hold: Callable[[Collection[Any]], bool]


class Rule(NamedTuple):
    """A field's check and its message (``str.format`` of ``key`` and ``value``), which follows
    the entry's name. An optional field may be absent or None; a required one may not."""

    key: str
    check: Check
    message: str
    optional: bool = True


def is_int(value: Any) -> bool:
    """An integer that is not a bool (JSON's ``true`` is no partition number)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _each(holds: Callable[[Any], bool]) -> Check:
    """A check whose column form asks each value (for fields seldom given in bulk)."""
    return Check(holds, lambda values: all(map(holds, values)))


def _per_second(positive: bool) -> Check:
    """A finite number of messages per second, >= 0 (``positive``: > 0)."""

    def holds(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return False
        return value > 0 if positive else value >= 0

    return _each(holds)


NAME = Check(
    lambda v: isinstance(v, str) and v != "",
    lambda values: set(map(type, values)) == {str} and "" not in values,
)
INTEGER = Check(is_int, lambda values: set(map(type, values)) == {int})
NOT_NEGATIVE = Check(lambda v: v >= 0, lambda values: min(values) >= 0)  # after INTEGER
COUNT = Check(
    lambda v: is_int(v) and v >= 0,
    lambda values: set(map(type, values)) == {int} and min(values) >= 0,
)
TEXT = _each(lambda v: isinstance(v, str))
RACK_NAMES = _each(lambda v: isinstance(v, list) and all(isinstance(r, str) and r for r in v))


def is_pair(value: Any) -> bool:
    """A ``[topic, partition]`` pair as JSON gives it (in a plan, a status record): a string
    and a partition number >= 0."""
    return (
        isinstance(value, list | tuple)
        and len(value) == 2
        and isinstance(value[0], str)
        and COUNT.holds(value[1])
    )


def _offset_rules(key: str) -> tuple[Rule, ...]:
    return (
        Rule(key, INTEGER, "'{key}' must be an integer offset, got {value!r}"),
        Rule(key, NOT_NEGATIVE, "'{key}' offset is negative ({value})"),
    )


#: a partition's name, checked first (the entry is named by its position until it has one)
PARTITION_NAME_RULES = (
    Rule("topic", NAME, "topic must be a non-empty string, got {value!r}", optional=False),
    Rule("partition", COUNT, "partition must be a non-negative integer, got {value!r}", optional=False),
)
#: the rest of a partition, in the order they are checked
PARTITION_RULES = (
    Rule("racks", RACK_NAMES, "'racks' must be a list of rack names (the replicas' racks)"),
    *_offset_rules("begin"),
    *_offset_rules("end"),
    *_offset_rules("committed"),
    Rule(
        "rate",
        _per_second(False),
        "{key!r} must be a non-negative number of messages per second, got {value!r}",
    ),
    Rule("lag", COUNT, "'lag' must be a non-negative integer, got {value!r}"),
)
MEMBER_ID_RULE = Rule("id", NAME, "has no id (a non-empty string is required)", optional=False)
#: a member's fields besides its id, topics and owned partitions, in the order they are checked
MEMBER_RULES = (
    Rule("rack", TEXT, "'rack' must be a string or null"),
    Rule("instance_id", TEXT, "'instance_id' must be a string or null"),
    Rule(
        "capacity",
        _per_second(True),
        "{key!r} must be a positive number of messages per second, got {value!r}",
    ),
)


def follow_rules(entry: Mapping[str, Any], rules: Sequence[Rule], where: str) -> None:
    """Raise a CaseError naming ``where`` for the first rule a field of ``entry`` breaks."""
    for rule in rules:
        value = entry.get(rule.key)
        if (value is not None or not rule.optional) and not rule.check.holds(value):
            raise CaseError(f"{where}: {rule.message.format(key=rule.key, value=value)}")


def column_check(
    rules: Sequence[Rule], key: str, required: bool = False
) -> Callable[[Collection[Any]], bool]:
    """The quick test of whether a non-empty column of ``key``'s values follows every rule on
    ``key`` (False may only mean "read it entry by entry"). None stands for an absent value,
    allowed for an optional field unless the shape read in bulk has the field (``required``)."""
    on_key = [rule for rule in rules if rule.key == key]
    tests = [rule.check.all_hold for rule in on_key]
    optional = not required and all(rule.optional for rule in on_key)
    if len(tests) == 1 and not optional:
        return tests[0]

    def follows(values: Collection[Any]) -> bool:
        given = [v for v in values if v is not None] if optional and None in values else values
        return not given or all(test(given) for test in tests)

    return follows
