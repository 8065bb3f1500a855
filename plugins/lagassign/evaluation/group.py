"""One group's evaluation from its snapshot rows: the function both engines (this process and a
Spark task) call, so they cannot drift apart."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..core.case import offset_columns, parse_case
from ..core.errors import LagassignError
from ..core.evaluate import evaluate_group
from ..core.lag import RESET_POLICIES
from ..core.model import GroupSnapshot, gc_paused
from ..core.results import GroupEvaluation
from ..tables.snapshot import case_from_rows, column_rows


def _partition_key(row: Mapping[str, Any]) -> tuple[str, int]:
    part = row.get("partition")
    return (str(row.get("topic") or ""), part if isinstance(part, int) else -1)


def _member_key(row: Mapping[str, Any]) -> tuple[str, str]:
    return (str(row.get("instance_id") or row.get("member_id") or ""), str(row.get("member_id") or ""))


@gc_paused  # the whole group, not only its strategies: see the docstring
def evaluate_group_rows(
    group_row: Mapping[str, Any],
    partitions: Iterable[Mapping[str, Any]],
    members: Iterable[Mapping[str, Any]],
    strategies: Sequence[str],
    options: Mapping[str, Any],
) -> GroupEvaluation:
    """One group's evaluation from its snapshot rows, or why it could not be evaluated (the
    snapshot failed for it, or its case is invalid).

    Rows are put in a canonical order first, so the result does not depend on the order in
    which a reader (pyarrow in-process or in a Spark task) delivers them. Never raises for one
    group's data: a run over thousands of groups goes on.

    Python's cycle collector is paused for the whole group (sorting its rows and building its
    case, as well as planning it): the engine holds every group's rows of the snapshot, and
    each collection walked all of them, a third of the in-process engine's time.
    """
    name = group_row["group"]
    # what the cluster runs for the group (absent from older snapshots and synthetic ones)
    kafka = (group_row.get("group_type"), group_row.get("protocol"))
    if group_row.get("error"):
        return GroupEvaluation(name, error=f"snapshot failed: {group_row['error']}").on_cluster(*kafka)
    return _evaluated(
        group_row,
        lambda: parse_case(
            case_from_rows(
                name,
                sorted(partitions, key=_partition_key),
                sorted(members, key=_member_key),
                group_row.get("auto_offset_reset"),
            )
        ),
        strategies,
        options,
    )


@gc_paused
def evaluate_group_columns(
    group_row: Mapping[str, Any],
    partitions: Mapping[str, list[Any]],
    members: Iterable[Mapping[str, Any]],
    strategies: Sequence[str],
    options: Mapping[str, Any],
) -> GroupEvaluation:
    """``evaluate_group_rows`` of a group whose partitions are given as columns
    (``snapshot_group_columns``): the same evaluation. Offsets without rates or racks (the
    usual snapshot) become the case's partition columns directly, with no dict per partition
    made and read back; anything else, or anything wrong, goes through the rows."""
    reset = group_row.get("auto_offset_reset") or "latest"
    topics, numbers, end = partitions["topic"], partitions["partition"], partitions["end"]
    plain = (
        not group_row.get("error")
        and isinstance(reset, str)
        and reset.lower() in RESET_POLICIES
        and None not in topics
        and None not in numbers
        and None not in end
        and all(c not in partitions or partitions[c].count(None) == len(topics) for c in ("rate", "racks"))
    )
    columns = (
        offset_columns(topics, numbers, partitions["begin"], end, partitions["committed"], reset.lower())
        if plain
        else None
    )
    if columns is None:
        return evaluate_group_rows(group_row, column_rows(partitions), members, strategies, options)
    return _evaluated(
        group_row,
        lambda: parse_case(
            case_from_rows(group_row["group"], (), sorted(members, key=_member_key), reset), columns=columns
        ),
        strategies,
        options,
    )


def _evaluated(
    group_row: Mapping[str, Any],
    parse: Callable[[], GroupSnapshot],
    strategies: Sequence[str],
    options: Mapping[str, Any],
) -> GroupEvaluation:
    """The evaluation of the group ``parse`` builds, told what the cluster runs for it; an
    error in this group's data (or a bug it meets) becomes its evaluation's error instead of
    ending a run over thousands of groups."""
    name = group_row["group"]
    # what the cluster runs for the group (absent from older snapshots and synthetic ones)
    kafka = (group_row.get("group_type"), group_row.get("protocol"))
    try:
        return evaluate_group(parse(), strategies, **options).on_cluster(*kafka)
    except LagassignError as exc:
        return GroupEvaluation(name, error=str(exc)).on_cluster(*kafka)
    except Exception as exc:  # a bug for one group's data must not lose every other group
        error = f"internal error: {type(exc).__name__}: {exc}"
        return GroupEvaluation(name, error=error).on_cluster(*kafka)
