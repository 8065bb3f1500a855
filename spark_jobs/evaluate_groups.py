"""Evaluate every requested strategy for every group of a snapshot, on Spark.

    spark-submit --py-files var/lagassign.zip spark_jobs/evaluate_groups.py PARAMS.json

PARAMS.json (``lagassign.pipeline.evaluation.EvaluationParams``): {"snapshot": DIR, "out": DIR,
"strategies": [...] | null, "max_moves": N | null, "count_slack": N | null,
"partitions": N | null, "output_files": N | null}. Parameters come only from this file.

The driver counts each group's partitions and members (one small aggregation) and spreads the
groups over the tasks by estimated cost (``lagassign.spark.submit.spread_groups``: costliest
first, each to the least-loaded task), so the big groups land on different tasks and no task
straggles. The three snapshot tables are stacked into one frame, shuffled once to those tasks
and sorted by group; each task runs ``lagassign.spark.submit.evaluate_arrow_batches`` over its
rows as Arrow batches of many groups each (``mapInArrow``: no pandas, no JSON, no per-group
Python call from Spark), each group through the library (no strategy logic here).
Output: OUT/evaluations.parquet and, last, OUT/summary.json (``lagassign.pipeline.evaluation``).

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
    estimated_cost,
    group_evaluator,
    spread_groups,
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


def group_costs(groups: DataFrame, parts: DataFrame, members: DataFrame) -> dict[str, int]:
    """Group -> estimated cost (``estimated_cost``), from the partition and member counts: one
    small aggregation, brought to the driver as Arrow (100,000 groups: a few MB)."""
    n_parts = parts.groupBy("group").agg(F.count(F.lit(1)).alias("p"))
    n_members = members.groupBy("group").agg(F.count(F.lit(1)).alias("m"))
    sizes = (
        groups.select("group")
        .distinct()
        .join(n_parts, "group", "left")
        .join(n_members, "group", "left")
        .toArrow()
    )
    names = sizes.column("group").to_pylist()
    ps, ms = sizes.column("p").to_pylist(), sizes.column("m").to_pylist()
    return {g: estimated_cost(p or 0, m or 0) for g, p, m in zip(names, ps, ms, strict=True)}


def task_keys(spark: SparkSession, tasks: int) -> list[int]:
    """For each task t, a key that Spark's hash partitioning into ``tasks`` partitions sends to
    partition t (``repartition(tasks, key)`` computes pmod(hash(key), tasks)), so the driver's
    spread of the groups is what the tasks get, with no two buckets sharing a task."""
    found = (
        spark.range(0, 64 * tasks)
        .select(F.expr(f"pmod(hash(id), {tasks})").alias("t"), "id")
        .groupBy("t")
        .agg(F.min("id").alias("id"))
        .collect()
    )
    keys = {r["t"]: r["id"] for r in found}
    if len(keys) < tasks:  # 64 draws per task: a miss has odds of about e**-64
        raise EvaluationError(f"no partitioning key found for {tasks - len(keys)} of {tasks} tasks")
    return [keys[t] for t in range(tasks)]


def stacked(
    spark: SparkSession, groups: DataFrame, parts: DataFrame, members: DataFrame, placement: DataFrame
) -> DataFrame:
    """One frame of group, partition and member rows (``STACKED_COLUMNS``) in Spark's own types,
    each row with its group's task key (``_key``); rows of groups without a group row drop out."""

    def keyed(frame: DataFrame) -> DataFrame:
        return frame.join(F.broadcast(placement), "group")

    frames = [
        keyed(groups).select(
            "group",
            "_key",
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
    return out.select("_key", *STACKED_COLUMNS)


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
        costs = group_costs(groups, parts, members)
        n_groups = len(costs)
        parallelism = spark.sparkContext.defaultParallelism
        tasks = params.partitions or default_partitions(n_groups, parallelism)
        files = params.output_files or default_output_files(n_groups)
        spark.conf.set("spark.sql.shuffle.partitions", str(tasks))
        spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
        keys = task_keys(spark, tasks)
        spread = spread_groups(costs, tasks)
        placement = spark.createDataFrame(
            pa.table(
                {
                    "group": pa.array(list(spread), pa.string()),
                    "_key": pa.array([keys[t] for t in spread.values()], pa.int64()),
                }
            )
        )
        lap("read")

        # Each task gets its spread of groups (one shuffle), sorted by group so each group's
        # rows are contiguous, and evaluates them as Arrow batches of many groups each.
        rows = stacked(spark, groups, parts, members, placement)
        fn = group_evaluator(params.names(), params.options())
        evaluations = (
            rows.repartition(tasks, "_key")
            .sortWithinPartitions("group")
            .drop("_key")
            .mapInArrow(fn, spark_ddl())
        )

        clear_output(out)
        target = str(out / EVALUATIONS)
        evaluations.repartition(files).write.mode("overwrite").parquet(target)
        lap("evaluate")

        failed = F.when(F.col("error").isNotNull(), F.struct("group", "error"))
        check = (
            spark.read.parquet(target)
            .agg(F.count(F.lit(1)), F.count_distinct("group"), F.collect_list(failed))
            .first()
        )
        n_rows, n_groups, failures = check[0], check[1], [f.asDict() for f in check[2]]
        found = (
            spark.read.parquet(target)
            .groupBy("group")
            .agg(
                F.max(F.when(F.col("strategy") == "current", F.col("max_lag"))).alias("current"),
                F.max(F.when(F.col("best"), F.col("strategy"))).alias("best"),
                F.max(F.when(F.col("best"), F.col("max_lag"))).alias("best_lag"),
                F.max("error").alias("error"),
            )
            .orderBy("group")
            .limit(LOG_GROUPS)
            .collect()
        )
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
        for line in group_lines([r.asDict() for r in found], n_groups):
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
