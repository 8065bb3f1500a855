"""Entry points refuse bad input with one clear line: planning parameters and snapshot tables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from lagassign.core.errors import LagassignError
from lagassign.core.synthetic import generate_case
from lagassign.evaluation import evaluate_snapshot
from lagassign.pipeline import ParamsError, PlanParams
from lagassign.tables.synthetic import write_snapshot

LAGASSIGN = str(Path(sys.executable).parent / "lagassign")


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (["--threshold", "-1"], "threshold must be a number ≥ 1.0"),
        (["--min-improvement", "2"], "min_improvement must be a fraction"),
        (["--groups", "(["], "groups is not a valid regular expression"),
        (["--strategies", "range,nope"], "unknown strategy 'nope'"),
        (["--max-moves", "-3"], "--max-moves: expected a non-negative integer"),
    ],
)
def test_plan_refuses_bad_parameters_before_touching_kafka(flags, fragment, tmp_path):
    # Port 1 would fail to connect: the parameters must be refused first, and fast.
    run = subprocess.run(
        [
            LAGASSIGN,
            "plan",
            "--bootstrap-server",
            "127.0.0.1:1",
            "--db",
            f"sqlite:///{tmp_path / 'a.db'}",
            *flags,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and fragment in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "a.db").exists()


@pytest.mark.parametrize(
    "values",
    [
        {"threshold": "high"},
        {"apply": "yes"},
        {"strategies": []},
        {"colour": "blue"},
        {"auto_offset_reset": "sometimes"},
    ],
)
def test_plan_params_refuse_wrong_types_and_unknown_keys(values):
    with pytest.raises(LagassignError) as info:
        PlanParams.from_mapping(values)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ParamsError) or "must" in str(info.value)


def test_snapshot_tables_with_missing_columns_are_one_clear_error(tmp_path):
    import random

    write_snapshot([generate_case(random.Random(1), 3, 9, group="g")], tmp_path)
    table = pq.read_table(tmp_path / "partitions.parquet")
    pq.write_table(table.drop_columns(["end"]), tmp_path / "partitions.parquet")
    with pytest.raises(LagassignError, match=r"partitions\.parquet lacks column\(s\) end"):
        evaluate_snapshot(tmp_path)
    pq.write_table(pa.table({"x": [1]}), tmp_path / "members.parquet")
    (tmp_path / "groups.parquet").unlink()
    with pytest.raises(LagassignError, match=r"groups\.parquet is missing"):
        evaluate_snapshot(tmp_path)
