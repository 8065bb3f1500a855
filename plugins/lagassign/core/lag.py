"""Lag rules of KAFKA-5337 and the Lag-Aware Assignor KIP, with the odd cases decided.

lag = end - committed, never negative. Where the consumer has no usable position the lag is
what it will face once ``auto.offset.reset`` applies:

* no committed offset: ``latest`` -> 0; ``earliest`` or any other value -> end - begin
  (the seeds' rule: anything but ``latest`` is read as "from the beginning").
* committed below begin (the data it pointed at expired) and committed beyond end (the log
  was truncated, e.g. after an unclean leader election): the broker answers OFFSET_OUT_OF_RANGE
  and the consumer resets by the same policy, so both are treated as "no committed offset".
* begin unknown where it is needed: taken as 0 (the whole log counts as lag).
* end unknown: there is no lag to compute; callers decide (a case file is rejected, a live
  snapshot records the partition as failed).
"""

from __future__ import annotations

from .errors import CaseError

LATEST = "latest"
#: Kafka's auto.offset.reset values lagassign accepts (anything but latest reads from the beginning).
RESET_POLICIES = ("earliest", "latest", "none")


def partition_lag(
    end: int | None,
    committed: int | None,
    begin: int | None = None,
    auto_offset_reset: str = LATEST,
) -> int:
    """Lag of one partition from its offsets, by the rules in this module's docstring."""
    if end is None:
        raise CaseError("end offset missing: lag cannot be computed")
    for name, value in (("end", end), ("begin", begin), ("committed", committed)):
        if value is not None and value < 0:
            raise CaseError(f"{name} offset is negative ({value})")
    if begin is not None and begin > end:
        raise CaseError(f"begin offset {begin} is beyond end offset {end}")
    return lag_of_checked_offsets(end, committed, begin, auto_offset_reset)


def lag_of_checked_offsets(
    end: int, committed: int | None, begin: int | None = None, auto_offset_reset: str = LATEST
) -> int:
    """The rules of this module's docstring alone, for offsets already checked (none negative,
    begin <= end): ``partition_lag`` after its checks, for callers that check a column at once."""
    start = begin or 0
    if committed is None or committed > end or committed < start:
        return 0 if auto_offset_reset.lower() == LATEST else end - start
    return end - committed
