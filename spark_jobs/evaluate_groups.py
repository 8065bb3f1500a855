"""Evaluate every requested strategy for every group of a snapshot, on Spark.

    spark-submit --py-files var/lagassign.zip spark_jobs/evaluate_groups.py PARAMS.json

PARAMS.json (``lagassign.pipeline.evaluation.EvaluationParams``): {"snapshot": DIR, "out": DIR,
"strategies": [...] | null, "max_moves": N | null, "count_slack": N | null,
"partitions": N | null, "output_files": N | null}. Parameters come only from this file.

The three snapshot tables are stacked into one frame and grouped by group; each group goes
through ``lagassign.spark.submit.evaluate_pandas_group`` (the library: no strategy logic here).
Output: OUT/evaluations.parquet and, last, OUT/summary.json (``lagassign.pipeline.evaluation``).

Big groups must not straggle: the groups are hashed over many tasks (8 per core by default),
and within each task the biggest groups run first (the grouping key starts with minus the
group's row count). Adaptive partition coalescing is off: the input is small in bytes but
costly in CPU, and Spark would otherwise merge the tasks back into one.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import lagassign
from lagassign.pipeline.evaluation import load_params
from lagassign.spark.submit import STACKED_COLUMNS, default_output_files, default_partitions, group_evaluator
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
from pyspark.sql import DataFrame, SparkSession, Window
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


def stacked(spark: SparkSession, folder: Path) -> tuple[DataFrame, int]:
    """One frame of group, partition and member rows (``STACKED_COLUMNS``), and about how many
    groups there are (duplicate group rows are counted twice; they are evaluated once)."""
    groups = _read(spark, folder, GROUPS, GROUP_COLUMNS).where(F.col("group").isNotNull())
    parts = _read(spark, folder, PARTITIONS, PARTITION_COLUMNS)
    members = _read(spark, folder, MEMBERS, MEMBER_COLUMNS)
    as_json = {"ignoreNullFields": "false"}
    frames = [
        groups.select("group", F.lit("g").alias("_row"), "auto_offset_reset", "error"),
        parts.select(
            "group",
            F.lit("p").alias("_row"),
            "topic",
            *(F.col(c).cast("string").alias(c) for c in ("partition", "begin", "end", "committed")),
        ),
        members.select(
            "group",
            F.lit("m").alias("_row"),
            "member_id",
            "instance_id",
            F.to_json("topics", as_json).alias("topics"),
            F.to_json("assignment", as_json).alias("assignment"),
            *(  # older snapshots lack them: null, as unknown
                (F.col(c) if c in members.columns else F.lit(None).cast(t)).alias(c)
                for c, t in (("rack", "string"), ("capacity", "double"))
            ),
        ),
    ]
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame, allowMissingColumns=True)
    return out.select(*STACKED_COLUMNS), groups.count()  # a metadata-only count, for sizing


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
        rows, n_groups = stacked(spark, snapshot)
        parallelism = spark.sparkContext.defaultParallelism
        tasks = params.partitions or default_partitions(n_groups, parallelism)
        files = params.output_files or default_output_files(n_groups)
        spark.conf.set("spark.sql.shuffle.partitions", str(tasks))
        spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
        lap("read")

        # Hash-partitioned by group once (the window); grouping by (-size, group) reuses that
        # partitioning and sorts each task's groups biggest first.
        sized = rows.withColumn("_order", -F.count(F.lit(1)).over(Window.partitionBy("group")))
        fn = group_evaluator(params.names(), params.options())
        evaluations = sized.groupBy("_order", "group").applyInPandas(fn, schema=spark_ddl())

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
