"""The Spark job's driver-side pieces that need no Spark: partition keys, group costs, the check."""

from __future__ import annotations

from pathlib import Path

import pytest
from lagassign.pipeline.evaluation import EvaluationParams, run_local
from lagassign.spark.submit import (
    estimated_cost,
    group_costs,
    output_check,
    spark_hash_long,
    task_keys,
)
from lagassign.tables.evaluations import EVALUATIONS, read_evaluation_rows, read_summary
from lagassign.tables.snapshot import snapshot_groups
from lagassign.tables.synthetic import generate_snapshot


def test_spark_hash_of_bigints_matches_spark():
    # Spark 4.2's SELECT hash(CAST(v AS BIGINT)) for these values (checked with a local session
    # on 2,000 more values: all equal)
    values = (0, 1, -1, 42, 2**40 + 7, -(2**63), 2**63 - 1)
    expected = (-1670924195, -1712319331, -939490007, 1316951768, 995648648, -853646085, -1604625029)
    assert tuple(spark_hash_long(v) for v in values) == expected


@pytest.mark.parametrize("tasks", [1, 2, 5, 16, 64])
def test_task_keys_are_the_smallest_key_of_each_bucket(tasks):
    keys = task_keys(tasks)
    assert [spark_hash_long(k) % tasks for k in keys] == list(range(tasks))
    for t, key in enumerate(keys):  # no smaller key lands in that bucket
        assert all(spark_hash_long(k) % tasks != t for k in range(key))


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
