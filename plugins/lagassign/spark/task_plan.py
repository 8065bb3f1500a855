"""The Spark driver's plan: which groups each task evaluates.

From a snapshot's layout (``spark.layout``: each group's rows in each file) the driver
estimates each group's cost (``estimated_cost``) and cuts the groups, in the files' order, into
many tasks of about equal cost: several per core, so Spark's scheduler balances them
dynamically (a core that finished early takes the next task); a group costlier than a task's
share is a task of its own; the costliest tasks come first, and Spark launches a stage's tasks
in index order. Spark only schedules the tasks; it never sees a snapshot row.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from .layout import (
    GROUP_ROW,
    MEMBER_KEYS,
    OPTIONAL_MEMBER_KEYS,
    OPTIONAL_PARTITION_KEYS,
    PARTITION_KEYS,
    FileLayout,
    Layout,
    Ranges,
    snapshot_layout,
)

TASKS_PER_CORE = 16  # several per core: the scheduler balances them as cores free up
TAIL_LEVELS = 3  # the last runs: a half, a quarter, an eighth of the others, one of each per core
TASK_COST = 200_000  # at most about 5 s of one core per task: a task's rows stay few at any size
MIN_GROUPS_PER_TASK = 25  # a task has a fixed cost of its own (reading its row groups, a file)
GROUP_COST = 10  # a group's fixed cost, in partition rows (a group without rows costs little)
MEMBER_COST = 10  # a member weighs about as much as ten partitions


def estimated_cost(partitions: int, members: int) -> int:
    """About how long a group takes, in partition rows: a member costs about ten partitions,
    a group's fixed part little (fitted on the 10,000-group synthetic snapshot, seed 7, every
    strategy, CPU time), so one large group weighs as many typical ones as its time says."""
    return GROUP_COST + partitions + MEMBER_COST * members


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
class TaskFile:
    """One snapshot file as every task reads it: its path, the columns taken from it, and
    whether it is read by row ranges or (its groups scattered) by a filter."""

    path: str
    columns: tuple[str, ...]
    scattered: bool = False


@dataclass(frozen=True)
class Files:
    """The snapshot files every task reads: partitions and members."""

    partitions: TaskFile
    members: TaskFile


@dataclass(frozen=True)
class Plan:
    """The driver's plan: the tasks, costliest first, and the files they read."""

    tasks: tuple[Task, ...]
    groups: int
    files: Files


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
    runs the last one decided when the job ended: one core idled for up to a whole run; the
    smaller last runs let the cores finish together."""
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
    rows, parts, members = layout if layout is not None else snapshot_layout(Path(folder))
    work = {name: _group_work(name, row, parts, members) for name, row in rows.items()}
    ordered = sorted(work, key=lambda name: _file_position(name, parts, members))
    total = sum(w.cost for w in work.values())
    count = tasks or default_tasks(len(work), total, parallelism)
    cut = cut_tasks([(g, work[g].cost) for g in ordered], count, parallelism)
    return Plan(
        tasks=tuple(Task(i, tuple(work[g] for g in names)) for i, names in enumerate(cut)),
        groups=len(work),
        files=Files(
            _task_file(parts, PARTITION_KEYS, OPTIONAL_PARTITION_KEYS),
            _task_file(members, MEMBER_KEYS, OPTIONAL_MEMBER_KEYS),
        ),
    )


def _group_work(name: str, row: tuple[Any, ...], parts: FileLayout, members: FileLayout) -> GroupWork:
    """A group's work: its ranges in each file read by ranges, and its estimated cost."""
    return GroupWork(
        row,
        () if parts.scattered else tuple(parts.ranges.get(name, ())),
        () if members.scattered else tuple(members.ranges.get(name, ())),
        estimated_cost(parts.rows(name), members.rows(name)),
    )


def _file_position(name: str, parts: FileLayout, members: FileLayout) -> tuple[int, int, str]:
    """Where a group's rows start in the files: partitions, then members (groups without rows last)."""
    p, m = parts.first(name), members.first(name)
    return (p if p >= 0 else 1 << 62, m if m >= 0 else 1 << 62, name)


def _task_file(layout: FileLayout, keys: Sequence[str], optional: Sequence[str]) -> TaskFile:
    """A file as tasks read it: the required columns and the optional ones it has."""
    columns = (*keys, *(c for c in optional if c in layout.columns))
    return TaskFile(layout.path, columns, layout.scattered)
