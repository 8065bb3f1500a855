"""The Spark job's driver side and its tasks, without Spark: the snapshot's layout, the tasks'
reads whatever the files' order and row groups, and the check of the output."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from lagassign.evaluation import EvaluationParams, run_local
from lagassign.spark import layout as row_layout
from lagassign.spark.layout import file_layout
from lagassign.spark.submit import output_check
from lagassign.spark.task_plan import estimated_cost, group_costs, plan_tasks
from lagassign.spark.task_run import run_task
from lagassign.tables.evaluations import EVALUATIONS, read_evaluation_rows, read_summary
from lagassign.tables.snapshot import snapshot_groups
from lagassign.tables.synthetic import generate_snapshot

STRATEGIES = ["current", "lag", "sticky", "drain-optimal"]


@pytest.fixture(scope="module")
def snapshot_dir(tmp_path_factory) -> Path:
    return generate_snapshot(tmp_path_factory.mktemp("snap") / "s", 40, 3)


def test_group_costs_count_each_named_groups_rows(snapshot_dir):
    expected = {
        g["group"]: estimated_cost(len(parts), len(members))
        for g, parts, members in snapshot_groups(snapshot_dir)
        if g["group"] is not None
    }
    assert group_costs(snapshot_dir) == expected


def test_output_check_reads_what_the_summary_says(snapshot_dir, tmp_path):
    out = tmp_path / "out"
    summary = run_local(EvaluationParams(str(snapshot_dir), str(out)))
    rows, groups, failures, shown = output_check(out / EVALUATIONS, 5)
    assert (rows, groups) == (summary["rows"], summary["groups"])
    assert sorted(failures, key=lambda f: f["group"]) == summary["failures"] == read_summary(out)["failures"]
    assert [s["group"] for s in shown] == sorted({r["group"] for r in read_evaluation_rows(out)})[:5]
    for s in shown:
        mine = [r for r in read_evaluation_rows(out) if r["group"] == s["group"]]
        best = [r for r in mine if r["best"]]
        assert s.get("best") == (max(r["strategy"] for r in best) if best else None)
        current = [r["max_lag"] for r in mine if r["strategy"] == "current"]
        assert s.get("current") == (current[0] if current else None)


def _by_tasks_and_in_process(folder: Path, tmp_path: Path, tasks: int) -> tuple[list[dict], list[dict]]:
    """The snapshot's evaluation rows as ``tasks`` Spark tasks write them (run here, without
    Spark) and as one in-process run writes them, each sorted by group and position."""
    plan = plan_tasks(folder, 2, tasks=tasks)
    out = tmp_path / "spark"
    (out / EVALUATIONS).mkdir(parents=True)
    for task in plan.tasks:
        run_task(task, plan.files, out, STRATEGIES, {})
    run_local(EvaluationParams(str(folder), str(tmp_path / "local"), tuple(STRATEGIES)))

    def rows(path: Path) -> list[dict]:
        got = pq.read_table(path / EVALUATIONS).to_pylist()
        return sorted(got, key=lambda r: (r["group"], r["position"] if r["position"] is not None else -1))

    return rows(out), rows(tmp_path / "local")


def _rewrite(folder: Path, name: str, order: str, row_group: int) -> None:
    """Rewrite a snapshot table: rows in another order, small row groups, a row without group."""
    table = pq.read_table(folder / name)
    rows = table.to_pylist()
    if order == "split":  # every third group's last rows moved to the end: two runs each
        moved = {i for i, r in enumerate(rows) if int(r["group"][-3:]) % 3 == 0 and i % 2}
        rows = [r for i, r in enumerate(rows) if i not in moved] + [rows[i] for i in sorted(moved)]
    elif order == "shuffled":
        random.Random(5).shuffle(rows)
    rows.insert(len(rows) // 2, {**rows[0], "group": None})
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), folder / name, row_group_size=row_group)


@pytest.mark.parametrize("order", ["sorted", "split", "shuffled"])
def test_tasks_read_their_groups_rows_whatever_the_files_layout(tmp_path, order, monkeypatch):
    """Row ranges over many row groups (sorted files, groups in two runs), the filter for a
    scattered file, a row without group, a duplicate group row: the same rows as in-process."""
    monkeypatch.setattr(row_layout, "READ_BATCH_ROWS", 41)  # the layout scan's runs cross batches
    folder = generate_snapshot(tmp_path / "s", 24, 4, huge=0)
    groups = pq.read_table(folder / "groups.parquet")
    first = groups.slice(3, 1).to_pylist()[0]
    duplicate = pa.Table.from_pylist([{**first, "error": "a second row is ignored"}], schema=groups.schema)
    pq.write_table(pa.concat_tables([groups, duplicate]), folder / "groups.parquet")
    _rewrite(folder, "partitions.parquet", order, 97)
    _rewrite(folder, "members.parquet", order, 13)
    layout = file_layout(folder / "partitions.parquet")
    assert layout.scattered == (order == "shuffled")
    if order == "sorted":  # one run per group across the scan's batches (two where the unnamed row cuts in)
        assert sorted(len(r) for r in layout.ranges.values())[-2:] in ([1, 1], [1, 2])
        total = pq.ParquetFile(folder / "partitions.parquet").metadata.num_rows - 1  # less the unnamed row
        assert sum(layout.rows(g) for g in layout.ranges) == total
    assert sum(len(r) for r in layout.ranges.values()) > 24 if order == "split" else True

    by_tasks, in_process = _by_tasks_and_in_process(folder, tmp_path, 4)
    assert by_tasks == in_process


def test_tasks_read_older_snapshots_without_the_optional_columns(tmp_path):
    """Snapshots taken before rates, racks, capacities and group types were recorded."""
    from lagassign.tables.snapshot import (
        OPTIONAL_GROUP_COLUMNS,
        OPTIONAL_MEMBER_COLUMNS,
        OPTIONAL_PARTITION_COLUMNS,
    )

    folder = generate_snapshot(tmp_path / "s", 12, 6, huge=0)
    for name, optional in (
        ("groups.parquet", OPTIONAL_GROUP_COLUMNS),
        ("partitions.parquet", OPTIONAL_PARTITION_COLUMNS),
        ("members.parquet", OPTIONAL_MEMBER_COLUMNS),
    ):
        table = pq.read_table(folder / name)
        pq.write_table(table.drop_columns([c for c in optional if c in table.column_names]), folder / name)
    by_tasks, in_process = _by_tasks_and_in_process(folder, tmp_path, 3)
    assert by_tasks == in_process
