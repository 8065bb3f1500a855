"""Benchmark: the Spark evaluation of every strategy at several sizes, local and on the cluster.

Snapshots come from ``lagassign.core.synthetic.generate_cases`` (about 10 members and 100
partitions per group, one group of 10,000 partitions per 2,500 groups, seeded). Up to 10,000
groups the snapshot is ``generate_snapshot(N, seed)``, the one ``scripts/make_snapshot.py`` and
``bench/spark_ratio.py`` write; above, it is written in chunks of 10,000 groups (chunk ``c`` seeded
``seed + c``, its groups renamed to follow on), so generating it stays within a few GiB, and the
100,000-group snapshot is the 10,000-group one and nine more like it. Each size runs through the
real ``spark-submit`` (``lagassign.spark.submit.run_spark_evaluation``) in local mode
(``local[2]``) and on the standalone cluster of ``scripts/spark-cluster`` (two one-core workers;
started here and stopped afterwards unless it was already running).

Printed per run: wall time of spark-submit, groups per second, the job's own phases, peak RSS
of the driver (SparkSubmit JVM + driver python) and of the executors (executor JVMs + Python
workers; in local mode the tasks run inside the driver JVM, so only the Python workers count),
sampled from /proc every 0.25 s, and the longest task (from Spark's event log) against the wall
time. Goals on the 2-core machine: 10,000 groups under 180 s; linear (time ratio of the largest
to the smallest size at most 1.1 x their size ratio: 100k/10k at most 11, issue 16 goal 4);
memory flat (the largest size's peak RSS, driver and executors, at most 1.5 x the smallest's);
no task longer than a third of the run.

    .venv/bin/python bench/spark_scale.py [--sizes 1000,10000] [--seed 7] [--modes local,cluster]
    .venv/bin/python bench/spark_scale.py --sizes 10000,100000 --modes cluster   # goal 4
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "bench"))

import sparkcluster  # noqa: E402
from lagassign.core.synthetic import generate_cases  # noqa: E402
from lagassign.evaluation import EvaluationParams, write_params  # noqa: E402
from lagassign.spark.archive import main as record_archive  # noqa: E402
from lagassign.spark.submit import run_spark_evaluation  # noqa: E402
from lagassign.tables.snapshot import (  # noqa: E402
    GROUPS,
    MANIFEST,
    MEMBERS,
    PARTITIONS,
    ROW_GROUP_ROWS,
    arrow_schemas,
)
from lagassign.tables.synthetic import generate_snapshot, snapshot_tables  # noqa: E402
from procs import PAGE, RSS, STARTTIME, TICKS, Sampler, boot_time, cmdline, stats  # noqa: E402

WORK = REPO / "var" / "bench" / "spark_scale"
MASTERS = {"local": "local[2]", "cluster": sparkcluster.MASTER_URL}
GOAL_SECONDS, GOAL_LINEAR, GOAL_MEMORY, GOAL_STRAGGLER = 180.0, 1.1, 1.5, 1 / 3
CHUNK = 10_000  # groups per generated chunk above this size


# -- memory: RSS of the run's processes, from /proc ----------------------------------------------


def _role(cmdline: str) -> str | None:
    if "org.apache.spark.deploy.SparkSubmit" in cmdline or "evaluate_groups.py" in cmdline:
        return "driver"
    if "CoarseGrainedExecutorBackend" in cmdline:
        return "executor_jvm"
    if "pyspark.daemon" in cmdline or "pyspark.worker" in cmdline:
        return "python_workers"
    return None


class MemorySampler(Sampler):
    """Peak of the summed RSS per role, over processes started after ``since`` (epoch seconds),
    so long-running daemons (master, workers) and other people's processes are left out."""

    def __init__(self, since: float, every: float = 0.25) -> None:
        super().__init__(every)
        self.since, self.boot = since, boot_time()
        self.peak: dict[str, int] = {"driver": 0, "executor_jvm": 0, "python_workers": 0, "executors": 0}

    def sample(self) -> None:
        now = dict.fromkeys(("driver", "executor_jvm", "python_workers"), 0)
        for pid, fields in stats().items():
            cmd = cmdline(pid)
            role = _role(cmd) if cmd is not None else None
            if role is None or self.boot + int(fields[STARTTIME]) / TICKS < self.since - 1:
                continue
            now[role] += int(fields[RSS]) * PAGE
        now["executors"] = now["executor_jvm"] + now["python_workers"]
        for key, value in now.items():
            self.peak[key] = max(self.peak[key], value)

    def stop(self) -> dict[str, int]:
        self.halt()
        return self.peak


# -- tasks: the event log -------------------------------------------------------------------------


def conf_dir(events: Path) -> Path:
    """A SPARK_CONF_DIR whose spark-defaults.conf turns on an uncompressed event log."""
    folder = events.parent / f"conf-{events.name}"
    folder.mkdir(parents=True, exist_ok=True)
    events.mkdir(parents=True, exist_ok=True)
    (folder / "spark-defaults.conf").write_text(
        f"spark.eventLog.enabled true\nspark.eventLog.dir file://{events}\nspark.eventLog.compress false\n"
    )
    return folder


def longest_task(events: Path) -> dict[str, Any]:
    """The longest task of the run (seconds, stage) and how many tasks its stage had."""
    best: dict[str, Any] = {"seconds": 0.0, "stage": None, "stage_tasks": 0}
    per_stage: dict[int, int] = {}
    for log in (p for p in events.rglob("*") if p.is_file()):
        for line in log.read_text(errors="replace").splitlines():
            if '"SparkListenerTaskEnd"' not in line:
                continue
            event = json.loads(line)
            info, stage = event["Task Info"], event["Stage ID"]
            per_stage[stage] = per_stage.get(stage, 0) + 1
            seconds = (info["Finish Time"] - info["Launch Time"]) / 1000
            if seconds > best["seconds"]:
                best = {"seconds": seconds, "stage": stage}
    best["stage_tasks"] = per_stage.get(best["stage"], 0)
    return best


# -- runs -------------------------------------------------------------------------------------------


def snapshot(groups: int, seed: int) -> Path:
    """The seeded synthetic snapshot of ``groups`` groups (made once, then reused; the name
    carries the row group size, so a snapshot written with other row groups is not reused)."""
    folder = WORK / f"snapshot-{groups}-{seed}-rg{ROW_GROUP_ROWS}"
    if not (folder / "manifest.json").is_file():
        if groups <= CHUNK:
            generate_snapshot(folder, groups, seed)
        else:
            chunked_snapshot(folder, groups, seed)
    return folder


def chunked_snapshot(folder: Path, groups: int, seed: int) -> Path:
    """A snapshot of ``groups`` groups written CHUNK groups at a time (each chunk as
    ``generate_cases(CHUNK, seed + c)``, renamed ``group-NNNNNN`` in order), so memory stays
    that of one chunk; the manifest is written last."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    schemas = arrow_schemas()
    writers = {name: pq.ParquetWriter(folder / name, schemas[name]) for name in (GROUPS, PARTITIONS, MEMBERS)}
    counts = dict.fromkeys(("groups", "partitions", "members", "failed"), 0)
    failures: list[dict[str, str]] = []
    try:
        for c, first in enumerate(range(0, groups, CHUNK)):
            cases, failed = generate_cases(min(CHUNK, groups - first), seed + c)
            names = {case["group"]: f"group-{first + i:06d}" for i, case in enumerate(cases)}
            for case in cases:
                case["group"] = names[case["group"]]
            failed = {names[g]: e for g, e in failed.items()}
            snap = snapshot_tables(cases, failed)
            for name, rows in ((GROUPS, snap.groups), (PARTITIONS, snap.partitions), (MEMBERS, snap.members)):
                writers[name].write_table(
                    pa.Table.from_pylist(rows, schema=schemas[name]), row_group_size=ROW_GROUP_ROWS
                )
            counts["groups"] += len(snap.groups)
            counts["partitions"] += len(snap.partitions)
            counts["members"] += len(snap.members)
            counts["failed"] += len(failed)
            failures += [{"group": g, "error": e} for g, e in sorted(failed.items())]
    finally:
        for writer in writers.values():
            writer.close()
    manifest = {"cluster_id": "synthetic", "bootstrap_servers": None, "counts": counts, "failed": failures}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return folder


def run(mode: str, groups: int, seed: int) -> dict[str, Any]:
    snap = snapshot(groups, seed)
    label = f"{mode}-{groups}"
    out, events = WORK / f"out-{label}", WORK / f"events-{label}"
    shutil.rmtree(events, ignore_errors=True)
    params = write_params(EvaluationParams(str(snap), str(out)), WORK / f"params-{label}.json")
    os.environ["SPARK_CONF_DIR"] = str(conf_dir(events))
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # driver on the loopback, like the cluster
    sampler = MemorySampler(time.time())
    sampler.start()
    started = time.monotonic()
    try:
        summary = run_spark_evaluation(params, master=MASTERS[mode], timeout=4 * 3600)
    finally:
        wall = time.monotonic() - started
        peak = sampler.stop()
        del os.environ["SPARK_CONF_DIR"]
    task = longest_task(events)
    return {
        "mode": mode,
        "groups": groups,
        "evaluated": summary["evaluated"],
        "failed": summary["failed"],
        "rows": summary["rows"],
        "tasks": summary["spark"]["tasks"],
        "wall_s": round(wall, 1),
        "job_s": summary["seconds"],
        "phases": summary["spark"]["phases"],
        "groups_per_s": round(groups / wall, 1),
        "driver_mib": peak["driver"] >> 20,
        "executors_mib": peak["executors"] >> 20,
        "executor_jvm_mib": peak["executor_jvm"] >> 20,
        "python_workers_mib": peak["python_workers"] >> 20,
        "longest_task_s": round(task["seconds"], 1),
        "longest_task_share": round(task["seconds"] / wall, 3),
    }


def report(results: list[dict[str, Any]], sizes: list[int]) -> bool:
    head = (
        f"{'mode':8} {'groups':>7} {'tasks':>5} {'wall s':>7} {'groups/s':>8} {'driver MiB':>10} "
        f"{'exec MiB':>8} {'(jvm+py)':>11} {'longest task':>14}  phases s"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        phases = " ".join(f"{k}={v:g}" for k, v in r["phases"].items())
        print(
            f"{r['mode']:8} {r['groups']:>7} {r['tasks']:>5} {r['wall_s']:>7.1f} {r['groups_per_s']:>8.1f} "
            f"{r['driver_mib']:>10} {r['executors_mib']:>8} "
            f"{r['executor_jvm_mib']:>5}+{r['python_workers_mib']:<5} "
            f"{r['longest_task_s']:>6.1f} ({r['longest_task_share']:.0%})  {phases}"
        )
    ok = True
    small, big = min(sizes), max(sizes)
    for mode in dict.fromkeys(r["mode"] for r in results):
        by = {r["groups"]: r for r in results if r["mode"] == mode}
        checks = []
        if 10_000 in by:
            checks.append(
                (
                    f"10000 groups under {GOAL_SECONDS:.0f} s",
                    by[10_000]["wall_s"] < GOAL_SECONDS,
                    f"{by[10_000]['wall_s']:.1f} s",
                )
            )
        if small in by and big in by and small != big:
            ratio, limit = by[big]["wall_s"] / by[small]["wall_s"], GOAL_LINEAR * big / small
            checks.append(
                (
                    f"{big / 1000:g}k/{small / 1000:g}k time ratio at most {limit:g} (linear)",
                    ratio <= limit,
                    f"{ratio:.2f}",
                )
            )
            for key, name in (("driver_mib", "driver"), ("executors_mib", "executors")):
                grew = by[big][key] / max(1, by[small][key])
                checks.append(
                    (
                        f"{name} peak RSS flat ({big / 1000:g}k at most {GOAL_MEMORY:g} x {small / 1000:g}k)",
                        grew <= GOAL_MEMORY,
                        f"{by[small][key]} -> {by[big][key]} MiB ({grew:.2f} x)",
                    )
                )
        worst = max(by.values(), key=lambda r: r["longest_task_share"])
        checks.append(
            (
                "no task longer than a third of the run",
                worst["longest_task_share"] < GOAL_STRAGGLER,
                f"max {worst['longest_task_share']:.0%} ({worst['groups']} groups)",
            )
        )
        for name, met, value in checks:
            ok &= met
            print(f"{mode:8} {'MET ' if met else 'MISS'} {name}: {value}")
    return ok


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Spark evaluation at several sizes, local and cluster")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--modes", default="local,cluster")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = [m for m in args.modes.split(",") if m]
    unknown = set(modes) - set(MASTERS)
    if unknown:
        parser.error(f"unknown mode(s) {', '.join(sorted(unknown))}; known: local, cluster")
    WORK.mkdir(parents=True, exist_ok=True)
    for n in sizes:
        t = time.monotonic()
        snapshot(n, args.seed)
        print(f"snapshot of {n} groups ready ({time.monotonic() - t:.1f} s)", flush=True)
    record_archive([])  # prints which archive the runs map
    results: list[dict[str, Any]] = []
    started_cluster = False
    try:
        for mode in modes:
            if mode == "cluster" and sparkcluster.alive_workers(sparkcluster.master_status()) < 2:
                sparkcluster.start()
                started_cluster = True
            for n in sizes:
                results.append(run(mode, n, args.seed))
                print(json.dumps(results[-1]), flush=True)
    finally:
        if started_cluster:
            sparkcluster.stop()
    print()
    ok = report(results, sizes)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
