"""Evaluating a whole snapshot: in-process, on disk, and on Spark (one real spark-submit run).

The synthetic snapshot has 20 groups of mixed sizes, lag shapes and subscriptions, written by the
Kafka edge's own writer; among them one group whose case is invalid (a partition without an end
offset), one the snapshot failed for, one in ``earliest`` mode with missing commits, and one with
offsets above 2**53 (exact only if no float sneaks in on the way to the executors).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import lagassign
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from evaluation_cases import FAILED, HUGE, INVALID, SNAPSHOT_ERROR, SPARK_OPTIONS, evaluation_cases
from lagassign.core.results import GroupEvaluation
from lagassign.evaluation import EvaluationParams, evaluate_snapshot, load_params, write_params
from lagassign.spark.submit import (
    JAVA_HOME,
    build_pyfiles,
    run_spark_evaluation,
    spark_submit_settings,
    submit_command,
)
from lagassign.spark.task_plan import Task, cut_tasks, default_tasks, plan_tasks, task_shares
from lagassign.spark.task_run import run_task
from lagassign.tables.evaluations import (
    EVALUATIONS,
    SUMMARY,
    EvaluationError,
    arrow_schema,
    evaluation_rows,
    read_evaluations,
    read_summary,
    write_evaluations,
)
from lagassign.tables.synthetic import write_snapshot


@pytest.fixture(scope="module")
def cases() -> list[dict]:
    return evaluation_cases()


@pytest.fixture(scope="module")
def snapshot_dir(tmp_path_factory, cases) -> Path:
    folder = write_snapshot(cases, tmp_path_factory.mktemp("snapshot"), failed={FAILED: SNAPSHOT_ERROR})
    # as the Kafka edge records them for some groups (a synthetic snapshot has none)
    groups = pq.read_table(folder / "groups.parquet").to_pylist()
    for row in groups:
        row["group_type"], row["protocol"] = ON_CLUSTER.get(row["group"], (None, None))
    pq.write_table(
        pa.Table.from_pylist(groups, schema=pq.read_schema(folder / "groups.parquet")),
        folder / "groups.parquet",
    )
    return folder


#: group -> (group type, assignor) in the snapshot
ON_CLUSTER = {"g00": ("consumer", "uniform"), "g01": (None, "range"), FAILED: ("classic", "sticky")}


def test_both_engines_carry_group_type_and_assignor(evaluated):
    """What the cluster runs reaches the evaluation (also a failed group's); groups the
    snapshot says nothing about carry nothing, in the contract form too."""
    found = {e.group: (e.group_type, e.assignor) for e in evaluated if e.group_type or e.assignor}
    assert found == ON_CLUSTER
    by_group = {e.group: e.to_dict() for e in evaluated}
    assert by_group["g00"]["group_type"] == "consumer" and "group_type" not in by_group["g01"]
    assert "assignor" not in by_group["g02"] and by_group[FAILED]["assignor"] == "sticky"


@pytest.fixture(scope="module")
def evaluated(snapshot_dir) -> list[GroupEvaluation]:
    return evaluate_snapshot(snapshot_dir)


@pytest.fixture(scope="module")
def local(evaluated) -> list[dict]:
    """The evaluations in their contract form (``lagassign evaluate --json``'s objects)."""
    return as_dicts(evaluated)


def as_dicts(evaluations) -> list[dict]:
    return [e.to_dict() for e in evaluations]


# -- in-process -----------------------------------------------------------------------------------


def test_synthetic_snapshot_has_the_kafka_edges_schema(snapshot_dir):
    from lagassign.tables.snapshot import arrow_schemas

    for name, schema in arrow_schemas().items():
        assert pq.read_schema(snapshot_dir / name).remove_metadata() == schema
    manifest = json.loads((snapshot_dir / "manifest.json").read_text())
    assert manifest["counts"]["groups"] == 20 and manifest["failed"][0]["group"] == FAILED


def test_every_group_is_evaluated_or_explained(local, cases):
    assert [e["group"] for e in local] == sorted(c["group"] for c in cases)
    errors = {e["group"]: e["error"] for e in local if "error" in e}
    broken = next(c for c in cases if c["group"] == INVALID)["partitions"][4]
    assert errors == {
        INVALID: f"group {INVALID}: partition {broken['topic']}-{broken['partition']} has no end offset",
        FAILED: f"snapshot failed: {SNAPSHOT_ERROR}",
    }
    for e in local:
        if "error" not in e:
            assert [r["strategy"] for r in e["results"]] == lagassign.strategy_names()
            known = {"group", "members", "partitions", "best", "lower_bound_max_lag", "results"}
            on_cluster = {"group_type", "assignor"} & set(e)
            assert set(e) == known | on_cluster
            said = zip(("group_type", "assignor"), ON_CLUSTER.get(e["group"], (None, None)), strict=True)
            assert on_cluster == {k for k, v in said if v}


def test_in_process_equals_lagassign_evaluate_on_each_case(local, cases):
    """What the snapshot path computes is what `lagassign evaluate CASE.json` computes."""
    by_group = {e["group"]: e for e in local}
    for case in cases:
        if case["group"] in (INVALID, FAILED):
            continue
        got = {k: v for k, v in by_group[case["group"]].items() if k not in ("group_type", "assignor")}
        assert got == lagassign.evaluate(case), case["group"]


def test_huge_offsets_stay_exact(local):
    huge = next(e for e in local if e["group"] == HUGE)
    current = next(r for r in huge["results"] if r["strategy"] == "current")
    assert sum(current["metrics"]["lag"].values()) == 5 * (777 - 3)


def test_strategies_and_options_are_passed_on(snapshot_dir):
    got = as_dicts(evaluate_snapshot(snapshot_dir, ["lag-optimal", "current"], max_moves=2))
    for e in got:
        if "error" not in e:
            assert [r["strategy"] for r in e["results"]] == ["lag-optimal", "current"]
            optimal = e["results"][0]
            assert "refused" in optimal or optimal["metrics"]["moves"] <= 2, optimal


def test_the_exact_budget_reaches_lag_optimal_from_the_plan_params(tmp_path, snapshot_dir, monkeypatch):
    from lagassign.core.strategies import lag_optimal
    from lagassign.pipeline import PlanParams
    from lagassign.pipeline.steps import evaluation_params

    params = PlanParams.from_mapping({"exact_budget": 1.5, "strategies": ["lag-optimal"]})
    assert evaluation_params(snapshot_dir, tmp_path / "ev", params).options()["exact_budget"] == 1.5
    with pytest.raises(lagassign.LagassignError, match="exact_budget"):
        PlanParams.from_mapping({"exact_budget": -2})
    seen = []
    real = lag_optimal.LagOptimalStrategy.__init__

    def spy(self, *args, **kwargs):  # records what each group's strategy is built with
        seen.append(kwargs.get("exact_budget"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(lag_optimal.LagOptimalStrategy, "__init__", spy)
    evaluate_snapshot(snapshot_dir, ["lag-optimal"], exact_budget=0.05)
    assert seen and set(seen) == {0.05}


def test_progress_reports_each_group(snapshot_dir):
    seen = []
    evaluate_snapshot(snapshot_dir, ["current"], progress=lambda *args: seen.append(args))
    assert [s[0] for s in seen] == list(range(1, 21)) and {s[1] for s in seen} == {20}


def test_round_trip_through_parquet(tmp_path, evaluated):
    summary = write_evaluations(evaluated, tmp_path / "ev", seconds=1.25)
    assert read_evaluations(tmp_path / "ev") == evaluated
    part = tmp_path / "ev" / EVALUATIONS / "part-00000.parquet"
    assert pq.read_schema(part).remove_metadata() == arrow_schema()
    assert summary == read_summary(tmp_path / "ev")
    assert summary["engine"] == "local"
    assert (summary["groups"], summary["evaluated"], summary["failed"]) == (20, 18, 2)
    assert summary["rows"] == 18 * len(lagassign.strategy_names()) + 2
    assert summary["strategies"] == lagassign.strategy_names()
    assert [f["group"] for f in summary["failures"]] == [FAILED, INVALID]


def test_rows_carry_the_metrics_as_columns_and_the_result_in_its_json_form(evaluated):
    ev = next(e for e in evaluated if e.error is None and e.best)
    rows = evaluation_rows(ev)
    best = [r for r in rows if r["best"]]
    assert [r["strategy"] for r in best] == [ev.best]
    for row, result in zip(rows, ev.results, strict=True):
        assert json.loads(row["result_json"]) == result.to_dict()
        if result.metrics:
            assert row["max_lag"] == result.metrics["max_lag"]
            assert row["imbalance"] == result.metrics["imbalance"]


def test_rewriting_replaces_and_incomplete_output_is_refused(tmp_path, evaluated):
    out = tmp_path / "ev"
    write_evaluations(evaluated, out)
    write_evaluations(evaluated[:3], out)
    assert read_evaluations(out) == evaluated[:3]
    (out / SUMMARY).unlink()
    with pytest.raises(EvaluationError, match="did not complete"):
        read_evaluations(out)


def test_executor_function_equals_in_process(snapshot_dir, evaluated, tmp_path):
    """``run_task`` as the Spark job runs it, without Spark: each task writes its part file, and
    the rows are the in-process engine's, whatever the tasks and the order of their groups."""
    plan = plan_tasks(snapshot_dir, 2, tasks=3)
    assert sorted(g.name for t in plan.tasks for g in t.groups) == [e.group for e in evaluated]
    shuffled = [
        Task(t.index, tuple(random.Random(t.index).sample(t.groups, len(t.groups)))) for t in plan.tasks
    ]
    out = tmp_path / "out"
    (out / EVALUATIONS).mkdir(parents=True)
    done = [run_task(t, plan.files, out, lagassign.strategy_names(), {}) for t in shuffled]
    parts = sorted((out / EVALUATIONS).iterdir())
    assert [p.name for p in parts] == [f"part-{t.index:05d}.parquet" for t in plan.tasks]  # no temporary left
    rows = pq.read_table(out / EVALUATIONS).to_pylist()
    assert sum(d["rows"] for d in done) == len(rows)
    by_group = {e.group: e for e in evaluated}
    expected = [row for t in shuffled for g in t.groups for row in evaluation_rows(by_group[g.name])]
    assert sorted(rows, key=_row_key) == sorted(expected, key=_row_key)


def _row_key(row: dict) -> tuple:
    return (row["group"], row["position"] if row["position"] is not None else -1)


def test_tasks_are_runs_of_about_equal_cost_costliest_first():
    costs = [(f"g{i:02d}", 110) for i in range(40)]
    costs[7] = ("big1", 10_000)
    costs[30] = ("big2", 10_000)
    tasks = cut_tasks(costs, 8)
    assert sorted(g for t in tasks for g in t) == sorted(g for g, _ in costs)
    cost = dict(costs)
    loads = [sum(cost[g] for g in t) for t in tasks]
    assert tasks[0] == ["big1"] and tasks[1] == ["big2"]  # alone, and first
    assert loads == sorted(loads, reverse=True)
    share = sum(cost.values()) / 8
    assert all(load <= share for load, t in zip(loads, tasks, strict=True) if len(t) > 1)
    assert task_shares(8, 1) == [1.0] * 8  # one core: no tail of smaller runs
    order = [g for g, _ in costs if not g.startswith("big")]
    for t in tasks[2:]:  # neighbours in the files stay together (around the big groups)
        assert [order.index(g) for g in t] == list(range(order.index(t[0]), order.index(t[0]) + len(t)))
    assert cut_tasks(costs, 8) == tasks  # deterministic


def test_the_last_tasks_are_smaller_so_the_cores_finish_together():
    costs = [(f"g{i:03d}", 100) for i in range(470)]  # 47,000: a share of 4,000
    assert task_shares(16, 2) == [1.0] * 10 + [0.5, 0.5, 0.25, 0.25, 0.125, 0.125]
    tasks = cut_tasks(costs, 16, cores=2)
    loads = [100 * len(t) for t in tasks]
    assert loads == [4000] * 10 + [2000] * 2 + [1000] * 2 + [500] * 2
    assert sorted(g for t in tasks for g in t) == [g for g, _ in costs]
    # a group of a whole share or more is alone (and first); the ends it passed add no runs
    costs[5] = ("big", 10_000)
    tasks = cut_tasks(costs, 16, cores=2)
    assert tasks[0] == ["big"] and len(tasks) <= 16
    assert all(len(t) > 1 for t in tasks[1:-1])


# -- parameters and submission --------------------------------------------------------------------


def test_params_file(tmp_path):
    path = tmp_path / "p.json"
    # the shape the DAG's start task writes
    path.write_text(
        json.dumps({"snapshot": "snap", "out": "/abs/ev", "strategies": ["lag", "current"], "max_moves": 5})
    )
    params = load_params(path)
    assert params.snapshot == str(tmp_path / "snap") and params.out == "/abs/ev"
    assert params.names() == ["lag", "current"] and params.options()["max_moves"] == 5
    written = load_params(write_params(params, tmp_path / "again.json"))
    assert written == params
    for bad, message in [
        ({"snapshot": "s", "out": "o", "strategy": ["lag"]}, "unknown evaluation parameter 'strategy'"),
        ({"snapshot": "s"}, "'out' must be a path"),
        ({"snapshot": "s", "out": "o", "strategies": []}, "empty"),
        ({"snapshot": "s", "out": "o", "strategies": "lag"}, "list of names"),
        ({"snapshot": "s", "out": "o", "strategies": ["nope"]}, "unknown strategy 'nope'"),
        ({"snapshot": "s", "out": "o", "max_moves": -1}, "non-negative"),
        ({"snapshot": "s", "out": "o", "partitions": 0}, "at least 1"),
        ({"snapshot": "s", "out": "o", "exact_budget": -1}, "exact_budget"),
        ({"snapshot": "s", "out": "o", "exact_budget": "5"}, "exact_budget"),
    ]:
        path.write_text(json.dumps(bad))
        with pytest.raises(lagassign.LagassignError, match=message):
            load_params(path)
    path.write_text("{nope")
    with pytest.raises(EvaluationError, match="malformed JSON"):
        load_params(path)


def test_submit_command_takes_parameters_from_the_file_only(tmp_path):
    params = write_params(EvaluationParams("s", "o", strategies=("lag", "current")), tmp_path / "p.json")
    argv, env = submit_command(params, master="local[2]")
    assert argv[0].endswith("spark-submit") and argv[-2].endswith("spark_jobs/evaluate_groups.py")
    assert argv[-1] == str(params)
    assert argv[argv.index("--master") + 1] == "local[2]"
    assert argv[argv.index("--py-files") + 1].endswith("lagassign.zip")
    assert env["PYSPARK_PYTHON"] == env["PYSPARK_DRIVER_PYTHON"] == sys.executable
    assert env["SPARK_LOCAL_IP"] == "127.0.0.1"
    assert "SPARK_LOCAL_IP" not in submit_command(params, master="spark://cluster:7077")[1]
    settings = spark_submit_settings()
    assert set(settings) == {"application", "py_files", "conf", "env", "spark_binary"}
    assert settings["conf"]["spark.ui.enabled"] == "false"


def test_library_zip_is_importable_and_rebuilt_only_when_stale(tmp_path):
    zip_path = build_pyfiles(tmp_path / "lagassign.zip")
    stamp = zip_path.stat().st_mtime_ns
    assert build_pyfiles(zip_path).stat().st_mtime_ns == stamp
    code = "import lagassign.evaluation, lagassign.spark.submit; print(lagassign.__file__)"
    env = {**os.environ, "PYTHONPATH": str(zip_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    # imported from the bytecode beside each source (no process compiles the library again)
    assert out.stdout.strip() == str(zip_path / "lagassign" / "__init__.pyc")
    with zipfile.ZipFile(zip_path) as zf:
        names = set(zf.namelist())
        entries = {info.filename: zf.read(info) for info in zf.infolist()}
    assert {n + "c" for n in names if n.endswith(".py")} == {n for n in names if n.endswith(".pyc")}
    # bytecode that does not match its source is not used: the source is
    entries["lagassign/__init__.py"] += b"\nSTALE_CHECK = 1\n"
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(tampered, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    code = "import lagassign; print(lagassign.STALE_CHECK, lagassign.__file__)"
    env["PYTHONPATH"] = str(tampered)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "1"


def test_work_is_spread_over_enough_tasks():
    assert default_tasks(20, 2_000, 2) == 2  # small: one task per core
    assert default_tasks(10_000, 2_100_000, 2) == 32  # large: 16 per core
    assert default_tasks(100_000, 21_000_000, 2) == 105  # larger: each task about 200,000
    assert default_tasks(1, 10_000, 8) == 1


# -- on Spark -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spark_out(tmp_path_factory, snapshot_dir) -> Path:
    """One spark-submit run of the job, shared by the Spark tests."""
    if not Path(JAVA_HOME).is_dir() and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java 17 for Spark")
    out = tmp_path_factory.mktemp("spark") / "evaluations"
    params = write_params(
        EvaluationParams(str(snapshot_dir), str(out), **SPARK_OPTIONS), out.parent / "params.json"
    )
    run_spark_evaluation(params, master="local[2]", timeout=600)
    return out


@pytest.mark.spark
def test_spark_job_equals_in_process(spark_out, snapshot_dir):
    expected = as_dicts(evaluate_snapshot(snapshot_dir, **SPARK_OPTIONS))
    got = as_dicts(read_evaluations(spark_out))
    assert [e["group"] for e in got] == [e["group"] for e in expected]
    for g, e in zip(got, expected, strict=True):
        if "error" in e:
            assert g == e
            continue
        for key in ("members", "partitions", "best", "lower_bound_max_lag"):
            assert g[key] == e[key], (e["group"], key)
        for rg, re_ in zip(g["results"], e["results"], strict=True):
            assert rg == re_, (e["group"], re_["strategy"])
    assert got == expected


@pytest.mark.spark
def test_spark_summary_and_schema(spark_out):
    summary = read_summary(spark_out)
    assert summary["engine"] == "spark"
    assert (summary["groups"], summary["evaluated"], summary["failed"]) == (20, 18, 2)
    assert summary["strategies"] == lagassign.strategy_names()
    assert summary["options"] == SPARK_OPTIONS
    # the library reached the executors as the --py-files zip, not from the venv
    assert "lagassign.zip" in summary["spark"]["library_executors"]
    # pyspark from site-packages (compiled once), not from the pyspark.zip Spark's own home puts
    # first on the workers' path (lagassign.spark.home)
    assert summary["spark"]["pyspark_executors"].endswith("site-packages/pyspark/__init__.py")
    parts = sorted((spark_out / EVALUATIONS).glob("part-*.parquet"))
    # one part file per task (a task per core here: too few groups for more)
    assert len(parts) == summary["spark"]["output_files"] == summary["spark"]["tasks"] == 2
    schema = pq.read_schema(parts[0])
    assert [(f.name, f.type) for f in schema] == [(f.name, f.type) for f in arrow_schema()]
