"""Evaluate every requested strategy for every group of a snapshot, on Spark.

    spark-submit --py-files var/lagassign.zip spark_jobs/evaluate_groups.py PARAMS.json

PARAMS.json (``lagassign.pipeline.evaluation.EvaluationParams``): {"snapshot": DIR, "out": DIR,
"strategies": [...] | null, "max_moves": N | null, "count_slack": N | null,
"partitions": N | null, "output_files": N | null}. Parameters come only from this file.

The driver counts each group's partitions and members (reading the snapshot's ``group``
columns with pyarrow: a Spark aggregation would cost seconds of jobs) and spreads the groups
over the tasks by estimated cost (``lagassign.spark.submit.spread_groups``: costliest first,
each to the least-loaded task), so the big groups land on different tasks and no task
straggles; each task's key comes from Spark's own hash, computed on the driver
(``task_keys``). The three snapshot tables are stacked into one frame, shuffled once to those tasks
and sorted costliest group first; each task runs ``lagassign.spark.submit.evaluate_arrow_batches`` over its
rows as Arrow batches of many groups each (``mapInArrow``: no pandas, no JSON, no per-group
Python call from Spark), each group through the library (no strategy logic here).
Output: OUT/evaluations.parquet and, last, OUT/summary.json (``lagassign.pipeline.evaluation``);
the summary's counts are read back from the written files on the driver (``output_check``).
Like ``spark.read.parquet`` of local paths, this needs the snapshot and OUT at the same path on
the driver and the executors (the standalone cluster here runs on one machine).

Adaptive partition coalescing is off: the input is small in bytes but costly in CPU, and Spark
would otherwise merge the tasks back into one.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import lagassign
import pyarrow as pa
from lagassign.pipeline.evaluation import load_params
from lagassign.spark.submit import (
    STACKED_COLUMNS,
    default_output_files,
    default_partitions,
    group_costs,
    group_evaluator,
    output_check,
    spread_groups,
    task_keys,
)
from lagassign.tables.evaluations import (
    EVALUATIONS,
    LOG_GROUPS,
    EvaluationError,
    clear_output,
    group_lines,
    make_summary,
    spark_ddl,
    write_summary,
)
from lagassign.tables.snapshot import (
    GROUP_COLUMNS,
    GROUPS,
    MEMBER_COLUMNS,
    MEMBERS,
    PARTITION_COLUMNS,
    PARTITIONS,
)
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F


def _read(spark: SparkSession, folder: Path, name: str, columns: tuple[str, ...]) -> DataFrame:
    path = folder / name
    if not path.exists():
        raise EvaluationError(f"snapshot {folder}: {name} is missing")
    df = spark.read.parquet(str(path))
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise EvaluationError(f"snapshot {folder}: {name} lacks column(s) {', '.join(missing)}")
    return df


def tables(spark: SparkSession, folder: Path) -> tuple[DataFrame, DataFrame, DataFrame]:
    """The snapshot's groups (named ones), partitions and members."""
    groups = _read(spark, folder, GROUPS, GROUP_COLUMNS).where(F.col("group").isNotNull())
    parts = _read(spark, folder, PARTITIONS, PARTITION_COLUMNS)
    members = _read(spark, folder, MEMBERS, MEMBER_COLUMNS)
    return groups, parts, members


def stacked(
    spark: SparkSession, groups: DataFrame, parts: DataFrame, members: DataFrame, placement: DataFrame
) -> DataFrame:
    """One frame of group, partition and member rows (``STACKED_COLUMNS``) in Spark's own types,
    each row with its group's task key (``_key``) and rank by cost (``_order``); rows of groups
    without a group row drop out."""

    def keyed(frame: DataFrame) -> DataFrame:
        return frame.join(F.broadcast(placement), "group")

    frames = [
        keyed(groups).select(
            "group",
            "_key",
            "_order",
            F.lit("g").alias("_row"),
            "auto_offset_reset",
            "error",
            "protocol",  # older snapshots lack group_type: null, as unknown
            (F.col("group_type") if "group_type" in groups.columns else F.lit(None).cast("string")).alias(
                "group_type"
            ),
        ),
        keyed(parts).select(
            "group",
            "_key",
            "_order",
            F.lit("p").alias("_row"),
            "topic",
            "partition",
            "begin",
            "end",
            "committed",
            *(  # older snapshots lack them: null, as unknown
                (F.col(c) if c in parts.columns else F.lit(None).cast(t)).alias(c)
                for c, t in (("rate", "double"), ("racks", "array<string>"))
            ),
        ),
        keyed(members).select(
            "group",
            "_key",
            "_order",
            F.lit("m").alias("_row"),
            "member_id",
            "instance_id",
            "topics",
            "assignment",
            *(  # older snapshots lack them: null, as unknown
                (F.col(c) if c in members.columns else F.lit(None).cast(t)).alias(c)
                for c, t in (("rack", "string"), ("capacity", "double"))
            ),
        ),
    ]
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame, allowMissingColumns=True)
    return out.select("_key", "_order", *STACKED_COLUMNS)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: evaluate_groups.py PARAMS.json", file=sys.stderr)
        return 2
    params = load_params(argv[1])  # refuses bad parameters before Spark starts
    started = time.monotonic()
    phases: dict[str, float] = {}  # seconds per phase, for the scale measurements

    def lap(name: str) -> None:
        phases[name] = round(time.monotonic() - started - sum(phases.values()), 3)

    spark = SparkSession.builder.appName("lagassign-evaluate").getOrCreate()
    lap("start")
    try:
        spark.sparkContext.setLogLevel("WARN")
        snapshot, out = Path(params.snapshot), Path(params.out)
        groups, parts, members = tables(spark, snapshot)
        costs = group_costs(snapshot)
        n_groups = len(costs)
        parallelism = spark.sparkContext.defaultParallelism
        tasks = params.partitions or default_partitions(n_groups, parallelism)
        files = params.output_files or default_output_files(n_groups)
        spark.conf.set("spark.sql.shuffle.partitions", str(tasks))
        spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
        keys = task_keys(tasks)
        spread = spread_groups(costs, tasks)
        placement = spark.createDataFrame(
            pa.table(
                {
                    "group": pa.array(list(spread), pa.string()),
                    "_key": pa.array([keys[t] for t in spread.values()], pa.int64()),
                    # spread_groups lists the groups costliest first: each task starts with its
                    # biggest groups, so none is left to the end of a task (no straggling)
                    "_order": pa.array(range(len(spread)), pa.int64()),
                }
            )
        )
        lap("read")

        # Each task gets its spread of groups (one shuffle), sorted costliest group first (each
        # group's rows contiguous), and evaluates them as Arrow batches of many groups each.
        rows = stacked(spark, groups, parts, members, placement)
        fn = group_evaluator(params.names(), params.options())
        evaluations = (
            rows.repartition(tasks, "_key")
            .sortWithinPartitions("_order")
            .drop("_key", "_order")
            .mapInArrow(fn, spark_ddl())
        )

        clear_output(out)
        target = str(out / EVALUATIONS)
        evaluations.repartition(files).write.mode("overwrite").parquet(target)
        lap("evaluate")

        n_rows, n_groups, failures, found = output_check(target, LOG_GROUPS)
        executor_lib = (
            spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("lagassign").__file__).first()
        )
        lap("check")
        summary = make_summary(
            "spark",
            n_groups,
            params.names(),
            failures,
            n_rows,
            time.monotonic() - started,
            snapshot=str(snapshot),
            options={k: v for k, v in params.options().items() if v is not None},
            spark={
                "master": spark.sparkContext.master,
                "version": spark.version,
                "tasks": tasks,
                "output_files": files,
                "library_driver": lagassign.__file__,
                "library_executors": executor_lib,
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
        spark.stop()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except lagassign.LagassignError as exc:
        print(f"lagassign: error: {exc}", file=sys.stderr)
        sys.exit(2)
