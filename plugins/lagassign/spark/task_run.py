"""What one Spark task does on its executor: read only its groups' rows, evaluate each, write
one Parquet part file.

A task reads its groups' rows with pyarrow (the row groups its ranges touch, as one table, or a
scattered file filtered by its groups), and evaluates each group through
``lagassign.evaluation.evaluate_group_columns``, the in-process engine's function, given what
the in-process reader gives it: the group's partitions as column lists (the table's columns
made lists once, then sliced per group) and its members as rows (a column older snapshots lack
is absent). It writes its evaluations as the in-process engine does
(``tables.evaluations.evaluation_table``), into its own Parquet part file in
``OUT/evaluations.parquet`` (under a hidden temporary name, renamed when complete, so a retried
task replaces its file whole). It returns counts only.

Tasks read the snapshot and write OUT by path: both must be at the same path on the driver and
on every executor (one machine, or a shared file system).
"""

from __future__ import annotations

import bisect
import gc
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import lagassign

from ..core.model import gc_paused
from ..core.results import GroupEvaluation
from ..evaluation import evaluate_group_columns
from ..tables.evaluations import EVALUATIONS, arrow_schema, evaluation_table
from .layout import Ranges
from .task_plan import Files, GroupWork, Task, TaskFile

OUTPUT_BATCH_ROWS = 4096  # evaluation rows per Arrow batch written


Spans = list[tuple[int, int]]
"""(offset, length) pieces of one group's rows in a task's table, in file order."""


def _ranged_table(path: str, columns: Sequence[str], groups: Sequence[Ranges]) -> tuple[Any, list[Spans]]:
    """The row groups the ranges touch, read as one table of ``columns``, and each group's
    spans in it."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    meta = file.metadata
    starts = [0]
    for i in range(meta.num_row_groups):
        starts.append(starts[-1] + meta.row_group(i).num_rows)
    needed = sorted(
        {
            rg
            for ranges in groups
            for start, stop in ranges
            for rg in range(bisect.bisect_right(starts, start) - 1, bisect.bisect_left(starts, stop))
        }
    )
    table = file.read_row_groups(needed, columns=list(columns), use_threads=False)
    local = {}  # row group -> where its first row is in ``table``
    at = 0
    for rg in needed:
        local[rg] = at
        at += starts[rg + 1] - starts[rg]
    spans = []
    for ranges in groups:
        mine = []
        for start, stop in ranges:  # a range's row groups are all read, so it is contiguous
            rg = bisect.bisect_right(starts, start) - 1
            mine.append((local[rg] + start - starts[rg], stop - start))
        spans.append(mine)
    return table, spans


def _filtered_table(path: str, columns: Sequence[str], names: Sequence[str]) -> tuple[Any, list[Spans]]:
    """``_ranged_table`` for a file whose groups are scattered: the whole file filtered down to
    these groups, and each group's rows in it (in file order)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["group", *columns])
    table = table.filter(pc.is_in(table.column("group"), value_set=pa.array(list(names), pa.string())))
    rows: dict[str, Spans] = {}
    for i, group in enumerate(table.column("group").to_pylist()):
        rows.setdefault(group, []).append((i, 1))
    return table.drop_columns(["group"]), [rows.get(name, []) for name in names]


def _task_table(
    file: TaskFile, groups: Sequence[GroupWork], ranges: Sequence[Ranges]
) -> tuple[Any, list[Spans]]:
    if file.scattered:
        return _filtered_table(file.path, file.columns, [g.name for g in groups])
    return _ranged_table(file.path, file.columns, ranges)


def _group_rows(table: Any, spans: Sequence[Spans]) -> Iterator[list[dict[str, Any]]]:
    """Each group's rows (dicts; an optional column the file lacks is absent, as from the
    in-process reader)."""
    for mine in spans:
        rows: list[dict[str, Any]] = []
        for offset, length in mine:
            rows += table.slice(offset, length).to_pylist()
        yield rows


def _group_columns(table: Any, spans: Sequence[Spans]) -> Iterator[dict[str, list[Any]]]:
    """Each group's values per column (as ``snapshot_group_columns`` gives them in-process): the
    table's columns made Python lists once, then sliced."""
    # only the rows the spans cover become Python values (the row groups read hold more)
    first = min((o for mine in spans for o, _ in mine), default=0)
    end = max((o + n for mine in spans for o, n in mine), default=0)
    values = {name: table.column(name).slice(first, end - first).to_pylist() for name in table.column_names}
    spans = [[(o - first, n) for o, n in mine] for mine in spans]
    for mine in spans:
        if len(mine) == 1:
            ((offset, length),) = mine
            yield {name: column[offset : offset + length] for name, column in values.items()}
        else:
            yield {name: [v for o, n in mine for v in column[o : o + n]] for name, column in values.items()}


def part_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


@gc_paused
def run_task(
    task: Task, files: Files, out: str | Path, strategies: Sequence[str], options: Mapping[str, Any]
) -> dict[str, Any]:
    """Evaluate a task's groups and write them as ``OUT/evaluations.parquet/part-NNNNN.parquet``;
    returns ``{task, groups, rows, library, pyspark}`` (counts and where the worker's lagassign
    and pyspark came from: the rows go to the file).

    Python's cycle collector is paused for the whole task, as ``run_local`` pauses it for its
    whole run: between groups it walked the batch of evaluations waiting to be written (and
    everything the worker had imported) at each collection, finding nothing to free."""
    import pyarrow.parquet as pq

    folder = Path(out) / EVALUATIONS
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / part_name(task.index)
    tmp = folder / f".{final.name}.{os.getpid()}.tmp"  # hidden: readers skip it
    parts = _group_columns(*_task_table(files.partitions, task.groups, [g.parts for g in task.groups]))
    members = _group_rows(*_task_table(files.members, task.groups, [g.members for g in task.groups]))
    written = 0
    with pq.ParquetWriter(tmp, arrow_schema()) as writer:
        for batch in _batches(task.groups, parts, members, strategies, options):
            table = evaluation_table(batch)
            writer.write_table(table)
            written += table.num_rows
    tmp.replace(final)
    pyspark = sys.modules.get("pyspark")  # where the worker's pyspark came from (a zip is slow)
    return {
        "task": task.index,
        "groups": len(task.groups),
        "rows": written,
        "library": lagassign.__file__,
        "pyspark": getattr(pyspark, "__file__", None),
    }


def freeze_survivors() -> None:
    """After a task, in its Spark worker: move everything the worker holds to the cycle
    collector's permanent generation (``gc.freeze``).

    The collector is paused during a task (``run_task``); the first collection after it would
    be a full one, over the worker's whole heap (numpy, pyarrow, the library and its caches),
    after every task, and it finds nothing to free. Frozen objects are still freed by reference
    counting; only cyclic garbage alive at this moment would never be collected, and a task
    leaves none. The worker ends with the job."""
    gc.freeze()


def _batches(
    groups: Sequence[GroupWork],
    parts: Iterable[dict[str, list[Any]]],
    members: Iterable[list[dict[str, Any]]],
    strategies: Sequence[str],
    options: Mapping[str, Any],
) -> Iterator[list[GroupEvaluation]]:
    """The groups' evaluations, one group at a time, in batches of about OUTPUT_BATCH_ROWS rows."""
    batch: list[GroupEvaluation] = []
    rows = 0
    for work, p, m in zip(groups, parts, members, strict=True):
        evaluation = evaluate_group_columns(work.row(), p, m, strategies, options)
        batch.append(evaluation)
        rows += max(1, len(evaluation.results))
        if rows >= OUTPUT_BATCH_ROWS:
            yield batch
            batch, rows = [], 0
    if batch:
        yield batch
