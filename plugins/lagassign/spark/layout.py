"""Where each group's rows are in a snapshot's files, read on the Spark driver.

The driver reads the snapshot's ``group`` columns with pyarrow, streaming (``file_layout``:
each group's row ranges in ``partitions.parquet`` and ``members.parquet``, from a run-end
encoding of the column, one row group at a time), and ``groups.parquet`` (one row per group,
small). The tasks then read only their groups' row ranges.

Row ranges need each group's rows together in a file, which every writer here gives (the
Kafka edge's snapshot and the synthetic one are written group by group). A file whose groups
are scattered over many runs is marked ``scattered``: its tasks read it by a filter instead
(each scans that whole file for its groups: correct, slower).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..tables.evaluations import EvaluationError
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

SCATTERED_RUNS = 2  # more runs per group than this in a file: read it by filter, not by ranges
READ_BATCH_ROWS = 1 << 20  # rows of the group column per step of the driver's layout scan

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
