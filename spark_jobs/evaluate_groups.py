"""Evaluate every requested strategy for every group of a snapshot, on Spark.

    spark-submit --py-files var/lagassign.zip spark_jobs/evaluate_groups.py PARAMS.json

PARAMS.json (``lagassign.evaluation.EvaluationParams``): {"snapshot": DIR, "out": DIR,
"strategies": [...] | null, "max_moves": N | null, "count_slack": N | null,
"partitions": N | null, "output_files": N | null}. Parameters come only from this file.

Spark only schedules the work; it never sees a snapshot row:

* the driver plans (``lagassign.spark.task_plan.plan_tasks``, pyarrow only, while the Spark
  context starts): it reads the snapshot's ``group`` columns, finds each group's rows, and cuts
  the groups into many tasks of about equal estimated cost, several per core, the costliest
  first, a big group alone;
* one Spark stage of those tasks (an RDD of task descriptions, one per partition, launched in
  order): each task reads only its groups' rows from the snapshot with pyarrow, evaluates each
  group through the library (``lagassign.spark.task_run.run_task``, the in-process engine's
  per-group function) and writes its own part file into OUT/evaluations.parquet; Spark carries
  back only counts. No shuffle, no sort, no Spark SQL;
* the driver reads the written files back (``lagassign.spark.submit.output_check``) and writes
  OUT/summary.json last (``lagassign.tables.evaluations``).

Paths: the tasks read the snapshot and write OUT by path, so both must be at the same path on
the driver and on every executor. That holds here (``local[*]``, and the standalone cluster of
``scripts/spark-cluster`` runs on one machine) and on any cluster with a shared file system
mounted alike (NFS and the like). A cluster on object storage would need the snapshot and OUT
as URIs opened through a pyarrow file system (``pyarrow.fs.FileSystem.from_uri``) in the tasks
and on the driver, with the same rename-when-complete (or a commit of each task's file).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import lagassign
import pyarrow.parquet as pq
from lagassign.evaluation import load_params
from lagassign.spark.layout import snapshot_layout
from lagassign.spark.submit import output_check
from lagassign.spark.task_plan import Plan, plan_tasks
from lagassign.spark.task_run import freeze_survivors, part_name, run_task
from lagassign.tables.evaluations import (
    EVALUATIONS,
    LOG_GROUPS,
    EvaluationError,
    arrow_schema,
    clear_output,
    group_lines,
    make_summary,
    write_summary,
)


class _Planner(threading.Thread):
    """Reads the snapshot's layout while the Spark context starts (pyarrow releases the GIL;
    the JVM starts in its own process). The number of tasks needs the cores, so this finds the
    groups and their rows; ``plan`` cuts them once the cores are known."""

    def __init__(self, snapshot: Path) -> None:
        super().__init__(daemon=True)
        self.snapshot = snapshot
        self.error: BaseException | None = None
        self.layout: Any = None

    def run(self) -> None:
        try:
            self.layout = snapshot_layout(self.snapshot)
        except BaseException as exc:  # handed to the main thread
            self.error = exc


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: evaluate_groups.py PARAMS.json", file=sys.stderr)
        return 2
    params = load_params(argv[1])  # refuses bad parameters before Spark starts
    started = time.monotonic()
    phases: dict[str, float] = {}  # seconds per phase, for the scale measurements

    def lap(name: str) -> None:
        phases[name] = round(time.monotonic() - started - sum(phases.values()), 3)

    snapshot, out = Path(params.snapshot), Path(params.out)
    planner = _Planner(snapshot)
    planner.start()
    from pyspark import SparkConf, SparkContext

    sc = SparkContext.getOrCreate(SparkConf().setAppName("lagassign-evaluate"))
    lap("start")
    try:
        sc.setLogLevel("WARN")
        planner.join()
        if planner.error is not None:
            raise planner.error
        parallelism = sc.defaultParallelism
        # each task writes one part file: ``partitions`` (else ``output_files``) sets how many
        plan: Plan = plan_tasks(
            snapshot, parallelism, params.partitions or params.output_files, layout=planner.layout
        )
        planner.layout = None  # the plan keeps what the tasks need
        clear_output(out)
        (out / EVALUATIONS).mkdir()
        lap("read")

        # the function Spark pickles into every task: small values only (not the plan)
        names, options, target, files = params.names(), params.options(), str(out), plan.files

        def evaluate(task: Any) -> dict[str, Any]:
            done = run_task(task, files, target, names, options)
            freeze_survivors()
            return done

        done = sc.parallelize(plan.tasks, max(1, len(plan.tasks))).map(evaluate).collect()
        for left in (out / EVALUATIONS).glob(".part-*.tmp"):  # of a failed attempt that was retried
            left.unlink(missing_ok=True)
        if not done:  # no group: one empty part file, as the in-process engine writes
            pq.write_table(arrow_schema().empty_table(), out / EVALUATIONS / part_name(0))
        lap("evaluate")

        n_rows, n_groups, failures, found = output_check(out / EVALUATIONS, LOG_GROUPS)
        expected = (sum(d["rows"] for d in done), plan.groups)
        if (n_rows, n_groups) != expected:
            raise EvaluationError(
                f"evaluations {out}: the tasks wrote {expected[0]} rows of {expected[1]} groups, "
                f"but {n_rows} rows of {n_groups} groups are there"
            )
        lap("check")
        summary = make_summary(
            "spark",
            n_groups,
            names,
            failures,
            n_rows,
            time.monotonic() - started,
            snapshot=str(snapshot),
            options={k: v for k, v in options.items() if v is not None},
            spark={
                "master": sc.master,
                "version": sc.version,
                "tasks": len(plan.tasks),
                "output_files": len(plan.tasks),
                "library_driver": lagassign.__file__,
                "library_executors": done[0]["library"] if done else None,
                "pyspark_executors": done[0]["pyspark"] if done else None,
                "phases": phases,
            },
        )
        write_summary(out, summary)
        for line in group_lines(found, n_groups):
            print(f"lagassign: {line}")
        print(
            f"lagassign: evaluated {n_groups} groups ({len(failures)} failed), {n_rows} rows "
            f"-> {out} in {summary['seconds']} s"
        )
    finally:
        stop(sc)
    return 0


def stop(sc: Any) -> None:
    """``sc.stop()`` without its wait of up to a second: pyspark's stop shuts its accumulator
    server down, whose handler polls the JVM's connection every 1,000 ms and only then sees the
    shutdown (``pyspark/accumulators.py``). This job uses no accumulator and its process ends
    right after, so the server (a daemon thread) is closed without waiting for it."""
    server = getattr(sc, "_accumulatorServer", None)
    if server is not None:
        sc._accumulatorServer = None
        server.server_shutdown = True  # its handler leaves at its next poll
        server.server_close()
    sc.stop()


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except lagassign.LagassignError as exc:
        print(f"lagassign: error: {exc}", file=sys.stderr)
        sys.exit(2)
