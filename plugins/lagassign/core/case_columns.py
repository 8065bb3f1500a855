"""A case's partitions read in bulk into columns, when every entry has one of the usual shapes.

The two shapes are ``{topic, partition, lag}`` (a case file) and ``{topic, partition, begin,
end, committed}`` (a snapshot's). Each column is checked at once by the rules of
``case_rules``; anything else, or anything wrong, gives None, and ``case`` then reads the
partitions entry by entry, which names the first one at fault.
"""

from __future__ import annotations

from itertools import chain, compress, islice, repeat
from operator import add, gt, itemgetter, lt, ne

from .case_rules import PARTITION_NAME_RULES, PARTITION_RULES, column_check
from .lag import lag_of_checked_offsets
from .values import PartitionColumns

_TOPIC, _NUMBER, _LAG = itemgetter("topic"), itemgetter("partition"), itemgetter("lag")
_OFFSETS = tuple(itemgetter(key) for key in ("begin", "end", "committed"))
_TOPICS_OK = column_check(PARTITION_NAME_RULES, "topic")
_NUMBERS_OK = column_check(PARTITION_NAME_RULES, "partition")
_LAGS_OK = column_check(PARTITION_RULES, "lag", required=True)
_OFFSETS_OK = tuple(column_check(PARTITION_RULES, key, key == "end") for key in ("begin", "end", "committed"))


def partition_columns(partitions_raw: list, reset: str) -> PartitionColumns | None:
    """The partitions as columns, checked in bulk, when every entry has one of the usual
    shapes (module doc); None otherwise, or when anything is wrong."""
    if not partitions_raw:
        return PartitionColumns([], [], [])
    if set(map(type, partitions_raw)) != {dict}:
        return None
    shapes = set(map(len, partitions_raw))
    try:
        topics = list(map(_TOPIC, partitions_raw))
        numbers = list(map(_NUMBER, partitions_raw))
        if shapes == {5}:
            begin, end, committed = (list(map(get, partitions_raw)) for get in _OFFSETS)
            return offset_columns(topics, numbers, begin, end, committed, reset)
        if shapes != {3}:
            return None
        lags = list(map(_LAG, partitions_raw))
    except KeyError:  # another shape
        return None
    if not _LAGS_OK(lags):
        return None
    return _sorted_named_columns([topics, numbers, lags])


def offset_columns(
    topics: list, numbers: list, begin: list, end: list, committed: list, reset: str
) -> PartitionColumns | None:
    """``partition_columns`` of partitions given as offsets (a snapshot's shape: topic,
    partition, begin, end, committed, one list each, in any order), their lags computed under
    ``reset`` (lower case). None when anything is wrong: the caller then checks entry by entry,
    which names the first one at fault."""
    if not topics:
        return PartitionColumns([], [], [])
    if not all(ok(column) for ok, column in zip(_OFFSETS_OK, (begin, end, committed), strict=True)):
        return None
    if None in begin:
        beyond = any(b is not None and b > e for b, e in zip(begin, end, strict=True))
    else:
        beyond = any(map(gt, begin, end))
    if beyond:  # a begin offset beyond its end offset
        return None
    lags = list(map(lag_of_checked_offsets, end, committed, begin, repeat(reset)))
    return _sorted_named_columns([topics, numbers, lags, begin, end, committed])


def _sorted_named_columns(columns: list[list]) -> PartitionColumns | None:
    """The columns (topics, numbers, then any others) sorted by topic and number, once the
    topics and numbers follow their rules; None when they do not or a partition is listed twice."""
    topics, numbers = columns[0], columns[1]
    try:
        names = set(topics)
    except TypeError:  # an unhashable topic
        return None
    if not (_TOPICS_OK(names) and _NUMBERS_OK(numbers)):
        return None
    ordered = _sorted_columns(columns, names)
    return None if ordered is None else PartitionColumns(*ordered)


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
