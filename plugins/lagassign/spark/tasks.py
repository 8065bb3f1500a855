"""The Spark job's work: which groups each task evaluates (driver side) and the task itself
(executor side). Spark only schedules the tasks; it never sees a snapshot row.

Driver side (``plan_tasks``): the driver reads the snapshot's ``group`` columns with pyarrow,
streaming (``file_layout``: each group's row ranges in ``partitions.parquet`` and
``members.parquet``, from a run-end encoding of the column, one row group at a time), and
``groups.parquet`` (one row per group, small). From the row counts it estimates each group's
cost (``estimated_cost``) and cuts the groups, in the files' order, into many tasks of about
equal cost: several per core, so Spark's scheduler balances them dynamically (a core that
finished early takes the next task); a group costlier than a task's share is a task of its own;
the costliest tasks come first, and Spark launches a stage's tasks in index order.

Executor side (``run_task``): a task reads only its groups' rows with pyarrow (the row groups
its ranges touch, as one table), and evaluates each group through
``lagassign.evaluation.evaluate_group_columns``, the in-process engine's function,
given what the in-process reader gives it: the group's partitions as column lists (the table's
columns made lists once, then sliced per group) and its members as rows (a column older
snapshots lack is absent). It writes its evaluations as the in-process engine does
(``tables.evaluations.evaluation_table``), into its own Parquet part file in
``OUT/evaluations.parquet`` (under a hidden temporary name, renamed when complete, so a retried
task replaces its file whole). It returns counts only.

Row ranges need each group's rows together in a file, which every writer here gives (the
Kafka edge's snapshot and the synthetic one are written group by group). A file whose groups
are scattered over many runs is read by a filter instead (each task scans that whole file for
its groups: correct, slower).

Tasks read the snapshot and write OUT by path: both must be at the same path on the driver and
on every executor (one machine, or a shared file system).
"""

from __future__ import annotations

import itertools
import math
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..core.model import gc_paused
from ..core.results import GroupEvaluation
from ..evaluation import evaluate_group_columns
from ..tables.evaluations import EVALUATIONS, EvaluationError, arrow_schema, evaluation_table
from ..tables.snapshot import (
    GROUP_COLUMNS,
    GROUPS,
    MEMBER_COLUMNS,
    MEMBERS,
    PARTITION_COLUMNS,
    PARTITIONS,
)

# Columns each reader takes: what ``evaluate_group_rows`` uses (the group row's kind, state and
# plan version, a partition's lag and lag_s, a member's client id and host are not used).
GROUP_KEYS = ("group", "auto_offset_reset", "error", "protocol")
OPTIONAL_GROUP_KEYS = ("group_type",)
PARTITION_KEYS = ("topic", "partition", "begin", "end", "committed")
OPTIONAL_PARTITION_KEYS = ("rate", "racks")
MEMBER_KEYS = ("member_id", "instance_id", "topics", "assignment")
OPTIONAL_MEMBER_KEYS = ("rack", "capacity")

TASKS_PER_CORE = 16  # several per core: the scheduler balances them as cores free up
TAIL_LEVELS = 3  # the last runs: a half, a quarter, an eighth of the others, one of each per core
TASK_COST = 200_000  # at most about 5 s of one core per task: a task's rows stay few at any size
MIN_GROUPS_PER_TASK = 25  # a task costs ~0.1 s by itself (reading its row groups, a file)
GROUP_COST = 10  # a group's fixed cost, in partition rows (a group without rows costs little)
MEMBER_COST = 10  # a member weighs about as much as ten partitions
SCATTERED_RUNS = 2  # more runs per group than this in a file: read it by filter, not by ranges
READ_BATCH_ROWS = 1 << 20  # rows of the group column per step of the driver's layout scan
OUTPUT_BATCH_ROWS = 4096  # evaluation rows per Arrow batch written


def estimated_cost(partitions: int, members: int) -> int:
    """About how long a group takes, in partition rows. Fitted on the 10,000-group synthetic
    snapshot (seed 7; 400 groups and its four 10,000-partition ones, every strategy, CPU time):
    about 30 us per partition and 250-450 us per member, no fixed part to speak of, so a
    typical group (100 partitions, 10 members) costs about 210 (5 ms) and a 10,000-partition
    group with 150 members about 11,500 (0.3-0.6 s): 60 typical groups, not the 85 that
    counting partitions and members alike gave."""
    return GROUP_COST + partitions + MEMBER_COST * members


# -- driver: the snapshot's layout ----------------------------------------------------------------

Ranges = tuple[tuple[int, int], ...]
"""Row ranges (start, stop) of one group in one file, in file order."""


@dataclass
class FileLayout:
    """Where each group's rows are in one snapshot file: ranges per group, or ``scattered``
    (too many runs: the tasks filter the file by group instead); ``columns``: the file's
    column names (read with its footer once, for the plan)."""

    path: str
    ranges: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    scattered: bool = False
    columns: tuple[str, ...] = ()

    def rows(self, group: str) -> int:
        return sum(stop - start for start, stop in self.ranges.get(group, ()))

    def first(self, group: str) -> int:
        found = self.ranges.get(group)
        return found[0][0] if found else -1


def file_layout(path: str | Path) -> FileLayout:
    """Each group's row ranges in a snapshot file, from its ``group`` column read one row group
    at a time (memory stays flat however large the file): runs of equal names, merged across
    batch boundaries; rows without a group are left out."""
    import numpy as np
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    layout = FileLayout(str(path), columns=tuple(file.schema_arrow.names))
    ranges = layout.ranges
    offset, runs = 0, 0
    last: str | None = None
    for batch in file.iter_batches(batch_size=READ_BATCH_ROWS, columns=["group"], use_threads=False):
        encoded = pc.run_end_encode(batch.column(0))
        ends = (np.asarray(encoded.run_ends.to_numpy(zero_copy_only=False), dtype=np.int64) + offset).tolist()
        start = offset
        for name, stop in zip(encoded.values.to_pylist(), ends, strict=True):
            if name is not None:
                mine = ranges.setdefault(name, [])
                if name == last and mine and mine[-1][1] == start:
                    mine[-1] = (mine[-1][0], stop)  # the run goes on over the batch boundary
                else:
                    mine.append((start, stop))
                    runs += 1
            last, start = name, stop
        offset += batch.num_rows
    layout.scattered = runs > SCATTERED_RUNS * len(ranges) + 16
    return layout


GROUP_ROW = (*GROUP_KEYS, *OPTIONAL_GROUP_KEYS)
"""The fields of a group row as the plan carries it (a tuple: the plan stays small)."""


def group_rows(path: str | Path, names: Sequence[str] | None = None) -> dict[str, tuple[Any, ...]]:
    """Named group -> its row of ``groups.parquet`` (the first one, as in-process): the values
    of GROUP_ROW (``group_type`` absent from older snapshots: null). ``names``: the file's
    column names when already read."""
    import pyarrow.parquet as pq

    names = names if names is not None else pq.read_schema(path).names
    columns = [c for c in GROUP_ROW if c in names]
    table = pq.read_table(path, columns=columns)
    values = [table.column(c).to_pylist() if c in columns else [None] * table.num_rows for c in GROUP_ROW]
    out: dict[str, tuple[Any, ...]] = {}
    for row in zip(*values, strict=True):
        if row[0] is not None and row[0] not in out:
            out[row[0]] = row
    return out


def _check_columns(folder: Path, name: str, columns: Sequence[str]) -> list[str]:
    """The file's column names, after checking it exists and has the required ones."""
    import pyarrow.parquet as pq

    path = folder / name
    if not path.exists():
        raise EvaluationError(f"snapshot {folder}: {name} is missing")
    present = pq.read_schema(path).names
    missing = [c for c in columns if c not in present]
    if missing:
        raise EvaluationError(f"snapshot {folder}: {name} lacks column(s) {', '.join(missing)}")
    return present


Layout = tuple[dict[str, tuple[Any, ...]], FileLayout, FileLayout]
"""(named group rows, partitions layout, members layout) of a snapshot."""


class GroupWork(NamedTuple):
    """One group of a task: its group row (GROUP_ROW's values) and its row ranges in each file
    (empty for a file read by filter). A tuple: a plan of 100,000 groups stays small."""

    values: tuple[Any, ...]
    parts: Ranges
    members: Ranges
    cost: int

    @property
    def name(self) -> str:
        return str(self.values[0])

    def row(self) -> dict[str, Any]:
        """The group row as ``evaluate_group_rows`` takes it."""
        return dict(zip(GROUP_ROW, self.values, strict=True))


@dataclass(frozen=True)
class Task:
    """What one Spark task does: evaluate these groups, write part file ``index``."""

    index: int
    groups: tuple[GroupWork, ...]


@dataclass(frozen=True)
class Files:
    """The snapshot files every task reads, the columns it takes from each, and whether each
    is read by row ranges or (its groups scattered) by a filter."""

    partitions: str
    members: str
    partition_columns: tuple[str, ...]
    member_columns: tuple[str, ...]
    partitions_scattered: bool = False
    members_scattered: bool = False


@dataclass(frozen=True)
class Plan:
    """The driver's plan: the tasks, costliest first, and the files they read."""

    tasks: tuple[Task, ...]
    groups: int
    files: Files


def snapshot_layout(folder: str | Path) -> Layout:
    """(named group rows, partitions layout, members layout) of a snapshot, after checking its
    tables and columns as the in-process reader does."""
    folder = Path(folder)
    groups = _check_columns(folder, GROUPS, GROUP_COLUMNS)
    _check_columns(folder, PARTITIONS, PARTITION_COLUMNS)
    _check_columns(folder, MEMBERS, MEMBER_COLUMNS)
    return (
        group_rows(folder / GROUPS, groups),
        file_layout(folder / PARTITIONS),
        file_layout(folder / MEMBERS),
    )


def group_costs(folder: str | Path) -> dict[str, int]:
    """Group -> estimated cost (``estimated_cost``) of a snapshot's named groups, from their
    partition and member row counts (``file_layout``)."""
    rows, parts, members = snapshot_layout(folder)
    return {g: estimated_cost(parts.rows(g), members.rows(g)) for g in rows}


def default_tasks(groups: int, cost: int, parallelism: int) -> int:
    """How many tasks share the groups: TASKS_PER_CORE per core, more when the work is large
    (each at most about TASK_COST, so a task's rows and output stay small at any size), but
    at least MIN_GROUPS_PER_TASK groups a task and every core with work."""
    cores = max(1, parallelism)
    wanted = max(TASKS_PER_CORE * cores, math.ceil(cost / TASK_COST))
    return max(1, min(groups, wanted, max(cores, math.ceil(groups / MIN_GROUPS_PER_TASK))))


def task_shares(tasks: int, cores: int) -> list[float]:
    """Relative sizes of ``tasks`` runs: equal, but for a tail of TAIL_LEVELS x ``cores`` runs of
    a half, a quarter, an eighth of the others (with two cores or more, and enough tasks). With equal
    runs the last one decided when the job ended: one core idled for up to a whole run (0.5 s of
    the 10,000-group job, runs of 0.85 s); the smaller last runs let the cores finish together."""
    tail = TAIL_LEVELS * cores if cores > 1 and tasks >= (TAIL_LEVELS + 2) * cores else 0
    return [1.0] * (tasks - tail) + [0.5 ** (1 + i // cores) for i in range(tail)]


def cut_tasks(costs: Sequence[tuple[str, int]], tasks: int, cores: int = 1) -> list[list[str]]:
    """Groups (in file order, with their costs) cut into runs of the sizes ``task_shares`` gives,
    the costliest first: a run closes before it would pass its end (the ends are cumulative, so
    runs a little short never add runs); a group costing a whole share or more is a task of its
    own. Neighbours in the files stay together, so each task reads few row groups.
    Deterministic (ties keep file order)."""
    total = sum(c for _, c in costs)
    shares = task_shares(max(1, tasks), max(1, cores))
    unit = total / sum(shares)
    ends = [unit * s for s in itertools.accumulate(shares)]
    ends[-1] = math.inf  # the last run takes whatever is left
    out: list[tuple[int, list[str]]] = []
    run: list[str] = []
    load = done = at = 0  # this run's cost, the cost cut so far, the run's index in ``ends``
    for name, cost in costs:
        alone = cost >= unit
        if run and (alone or done + cost > ends[at]):
            out.append((load, run))
            run, load, at = [], 0, at + 1
        while ends[at] <= done:  # ends already passed (by a big group, or a run's first group)
            at += 1
        done += cost
        if alone:
            out.append((cost, [name]))
            continue
        run.append(name)
        load += cost
    if run:
        out.append((load, run))
    order = sorted(range(len(out)), key=lambda i: (-out[i][0], i))
    return [out[i][1] for i in order]


def plan_tasks(
    folder: str | Path, parallelism: int, tasks: int | None = None, layout: Layout | None = None
) -> Plan:
    """The tasks for a snapshot (about ``tasks`` of them, else ``default_tasks``), from its
    ``snapshot_layout`` (read here unless given)."""
    folder = Path(folder)
    rows, parts, members = layout if layout is not None else snapshot_layout(folder)
    work: dict[str, GroupWork] = {}
    for name, row in rows.items():
        work[name] = GroupWork(
            row,
            () if parts.scattered else tuple(parts.ranges.get(name, ())),
            () if members.scattered else tuple(members.ranges.get(name, ())),
            estimated_cost(parts.rows(name), members.rows(name)),
        )

    def position(name: str) -> tuple[int, int, str]:  # file order: partitions, then members
        p, m = parts.first(name), members.first(name)
        return (p if p >= 0 else 1 << 62, m if m >= 0 else 1 << 62, name)

    ordered = sorted(work, key=position)
    total = sum(w.cost for w in work.values())
    count = tasks or default_tasks(len(work), total, parallelism)
    cut = cut_tasks([(g, work[g].cost) for g in ordered], count, parallelism)

    def present(layout: FileLayout, keys: Sequence[str], optional: Sequence[str]) -> tuple[str, ...]:
        return (*keys, *(c for c in optional if c in layout.columns))

    return Plan(
        tasks=tuple(Task(i, tuple(work[g] for g in names)) for i, names in enumerate(cut)),
        groups=len(work),
        files=Files(
            parts.path,
            members.path,
            present(parts, PARTITION_KEYS, OPTIONAL_PARTITION_KEYS),
            present(members, MEMBER_KEYS, OPTIONAL_MEMBER_KEYS),
            parts.scattered,
            members.scattered,
        ),
    )


# -- executor: one task ---------------------------------------------------------------------------


Spans = list[tuple[int, int]]
"""(offset, length) pieces of one group's rows in a task's table, in file order."""


def _ranged_table(path: str, columns: Sequence[str], groups: Sequence[Ranges]) -> tuple[Any, list[Spans]]:
    """The row groups the ranges touch, read as one table of ``columns``, and each group's
    spans in it."""
    import bisect

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
    path: str, columns: Sequence[str], scattered: bool, groups: Sequence[GroupWork], ranges: Sequence[Ranges]
) -> tuple[Any, list[Spans]]:
    if scattered:
        return _filtered_table(path, columns, [g.name for g in groups])
    return _ranged_table(path, columns, ranges)


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
    everything the worker had imported) at each collection. 10,000 groups in ``local[2]``:
    workers' CPU 47.5-49.3 s -> 42.2-43.2 s, wall 28.8-29.6 s -> 25.9-26.6 s."""
    import pyarrow.parquet as pq

    import lagassign

    folder = Path(out) / EVALUATIONS
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / part_name(task.index)
    tmp = folder / f".{final.name}.{os.getpid()}.tmp"  # hidden: readers skip it
    parts = _group_columns(
        *_task_table(
            files.partitions,
            files.partition_columns,
            files.partitions_scattered,
            task.groups,
            [g.parts for g in task.groups],
        )
    )
    members = _group_rows(
        *_task_table(
            files.members,
            files.member_columns,
            files.members_scattered,
            task.groups,
            [g.members for g in task.groups],
        )
    )
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

    The collector is paused during a task (``run_task``); the first collection after it was a
    full one, over the worker's whole heap (numpy, pyarrow, the library and its caches), 27-32
    ms after every task, and it found nothing (0 objects collected after each of the 33 tasks of
    the 10,000-group job). Frozen objects are still freed by reference counting; only cyclic
    garbage alive at this moment would never be collected, and a task leaves none (measured
    so). The worker ends with the job."""
    import gc

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


__all__ = [
    "FileLayout",
    "Files",
    "GroupWork",
    "Layout",
    "Plan",
    "Task",
    "cut_tasks",
    "default_tasks",
    "estimated_cost",
    "file_layout",
    "group_costs",
    "group_rows",
    "part_name",
    "plan_tasks",
    "run_task",
    "snapshot_layout",
]
