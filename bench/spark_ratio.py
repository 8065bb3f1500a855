"""Benchmark: Spark ``local[2]`` against the in-process one-core engine, on the same snapshot.

Both engines evaluate every strategy (or ``--strategies``) on one synthetic snapshot
(``scripts/make_snapshot.py --groups N --seed S``) in the same run, one after the other, and
the benchmark prints their wall times and the ratio Spark / in-process. The in-process side is
``lagassign.evaluation.run_local`` (one core, this process); the Spark side is the
real ``spark-submit`` of ``spark_jobs/evaluate_groups.py`` (``run_spark_evaluation``), timed
from the command to its exit, with the job's own phases (start, read, evaluate, check) and the
CPU seconds and peak RSS of its processes by role. Both outputs are compared row for row (the
evaluations must be identical). Goal (issue 16): the ratio at most 0.6 for 10,000 groups on
the 2-core machine.

    .venv/bin/python bench/spark_ratio.py [--groups 10000] [--seed 7] [--repeat 1]

``--repeat`` runs both engines that many times, alternating, and reports each pair's ratio
(the machine is shared: ratios of neighbouring runs are the honest figure).

The driver's class archive (``lagassign.spark.archive``) is recorded first when missing, as
``make test``, ``make demo`` and ``make ui`` record it: a checkout set up with ``make setup``
alone has none, and its Spark runs would start about 2 s later than an installed one's.

``--floor`` also runs the job's own tasks (``plan_tasks``, ``run_task``: the same reading,
evaluating and writing) in two plain Python processes (``multiprocessing``, spawned, so each
imports the library as a Spark worker does), one task at a time each, the next to whichever
is free: what two cores do without Spark. Spark's own share of its wall time is the
difference, and the floor's ratio is the best the Spark job could reach on this machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from lagassign.evaluation import EvaluationParams, run_local, write_params  # noqa: E402
from lagassign.spark.archive import main as record_archive  # noqa: E402
from lagassign.spark.submit import submit_command  # noqa: E402
from lagassign.tables.evaluations import EvaluationError, read_evaluation_rows, read_summary  # noqa: E402
from lagassign.tables.snapshot import ROW_GROUP_ROWS  # noqa: E402
from lagassign.tables.synthetic import generate_snapshot  # noqa: E402
from procs import PAGE, PPID, RSS, STIME, TICKS, UTIME, Sampler, cmdline, stats  # noqa: E402

WORK = REPO / "var" / "bench" / "spark_ratio"
GOAL = 0.6


def _role(cmdline: str) -> str | None:
    if "pyspark.daemon" in cmdline or "pyspark.worker" in cmdline:
        return "python_workers"
    if "org.apache.spark.deploy.SparkSubmit" in cmdline or "CoarseGrainedExecutorBackend" in cmdline:
        return "jvm"
    if "evaluate_groups.py" in cmdline:
        return "driver_python"
    return None


class CpuSampler(Sampler):
    """CPU seconds (user + system) of a process tree (spark-submit and every process it starts:
    JVMs, the driver's Python, the Python workers), by role, from /proc every 0.2 s: the largest
    value seen per process (a process's last 0.2 s before it ends are missed). Other people's
    Spark jobs are not in the tree, so they do not count."""

    def __init__(self, root: int, every: float = 0.2) -> None:
        super().__init__(every)
        self.tree = {root}
        self.seen: dict[int, tuple[str, float]] = {}
        self.peak_rss: dict[str, int] = {}  # role -> largest summed RSS seen, bytes

    def sample(self) -> None:
        now = stats()
        grown = True
        while grown:  # children of the tree, then their children
            new = {pid for pid, f in now.items() if int(f[PPID]) in self.tree} - self.tree
            self.tree |= new
            grown = bool(new)
        rss: dict[str, int] = {}
        for pid in self.tree & set(now):
            cmd = cmdline(pid)
            role = _role(cmd) if cmd is not None else None
            if role is not None:
                cpu = (int(now[pid][UTIME]) + int(now[pid][STIME])) / TICKS
                self.seen[pid] = (role, max(cpu, self.seen.get(pid, (role, 0.0))[1]))
                rss[role] = rss.get(role, 0) + int(now[pid][RSS]) * PAGE
        for role, value in rss.items():
            self.peak_rss[role] = max(value, self.peak_rss.get(role, 0))

    def stop(self) -> dict[str, float]:
        self.halt()
        out: dict[str, float] = {"jvm": 0.0, "driver_python": 0.0, "python_workers": 0.0}
        for role, cpu in self.seen.values():
            out[role] += cpu
        return out


def snapshot(groups: int, seed: int) -> Path:
    """The seeded synthetic snapshot of ``groups`` groups (made once, then reused; the name
    carries the row group size, so a snapshot written with other row groups is not reused)."""
    folder = WORK / f"snapshot-{groups}-{seed}-rg{ROW_GROUP_ROWS}"
    if not (folder / "manifest.json").is_file():
        generate_snapshot(folder, groups, seed)
    return folder


def evaluations(out: Path) -> list[dict[str, Any]]:
    """An output's evaluation rows, in a canonical order (for the equality check)."""
    return sorted(read_evaluation_rows(out), key=lambda r: (r["group"], r.get("strategy") or ""))


def run_spark(
    params: Path, out: Path, master: str, conf: list[str]
) -> tuple[dict[str, Any], dict[str, float], dict[str, int]]:
    """spark-submit of the job (``submit_command``, plus ``--conf`` settings), waited for: its
    summary, the CPU seconds of its processes and their peak RSS (MiB), by role."""
    argv, env = submit_command(params, master)
    for setting in conf:  # after the job's own settings: these win
        argv[-2:-2] = ["--conf", setting]
    with subprocess.Popen(
        argv, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as proc:
        sampler = CpuSampler(proc.pid)
        sampler.start()
        output, _ = proc.communicate()
        cpu = sampler.stop()
    if proc.returncode != 0:
        tail = "\n".join(output.strip().splitlines()[-15:])
        raise EvaluationError(f"spark-submit exited with {proc.returncode}:\n{tail}")
    return read_summary(out), cpu, {role: rss >> 20 for role, rss in sampler.peak_rss.items()}


def _floor_task(job: tuple[Any, Any, str, list[str], dict[str, Any]]) -> int:
    from lagassign.spark.task_run import run_task

    return run_task(*job)["rows"]


def run_floor(snap: Path, out: Path, strategies: list[str] | None, processes: int = 2) -> tuple[float, float]:
    """(wall, CPU) seconds of the Spark job's tasks for ``snap`` run by ``processes`` plain
    Python processes (spawned: each imports the library itself), the next task to whichever is
    free. The CPU is the processes' own (user + system, collected when the pool ends), to set
    beside the Spark workers' for the same tasks."""
    import multiprocessing
    import resource

    def children_cpu() -> float:
        use = resource.getrusage(resource.RUSAGE_CHILDREN)
        return use.ru_utime + use.ru_stime

    from lagassign.evaluation import EvaluationParams as Params
    from lagassign.spark.task_plan import plan_tasks
    from lagassign.tables.evaluations import EVALUATIONS, clear_output, make_summary, write_summary

    params = Params(str(snap), str(out), tuple(strategies) if strategies else None)
    t = time.monotonic()
    plan = plan_tasks(snap, processes)
    clear_output(out)
    (out / EVALUATIONS).mkdir()
    jobs = [(task, plan.files, str(out), params.names(), params.options()) for task in plan.tasks]
    cpu = children_cpu()
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        rows = sum(pool.imap_unordered(_floor_task, jobs, chunksize=1))
        pool.close()
        pool.join()  # waited for: their CPU is in this process's children's usage now
    took, cpu = time.monotonic() - t, children_cpu() - cpu
    write_summary(out, make_summary("floor", plan.groups, params.names(), [], rows, took))
    return took, cpu


def run_pair(
    snap: Path,
    strategies: list[str] | None,
    master: str,
    label: str,
    conf: list[str],
    spark_only: bool,
    floor: bool = False,
) -> dict[str, Any]:
    """One in-process run and one Spark run of the same snapshot: wall and CPU seconds, the
    job's phases, and whether both wrote the same evaluations."""
    names = tuple(strategies) if strategies else None
    local_out, spark_out = WORK / f"out-local-{label}", WORK / f"out-spark-{label}"
    local_s = local_cpu = 0.0
    if not spark_only or not (local_out / "summary.json").is_file():
        t, c = time.monotonic(), time.process_time()
        run_local(EvaluationParams(str(snap), str(local_out), names))
        local_s, local_cpu = time.monotonic() - t, time.process_time() - c
    params = write_params(EvaluationParams(str(snap), str(spark_out), names), WORK / f"params-{label}.json")
    t = time.monotonic()
    spark, cpu, rss = run_spark(params, spark_out, master, conf)
    spark_s = time.monotonic() - t
    floor_s = floor_cpu = float("nan")
    floor_out = WORK / f"out-floor-{label}"
    if floor:
        floor_s, floor_cpu = run_floor(snap, floor_out, strategies)
    local_rows = evaluations(local_out)  # read once, compared with both
    return {
        "floor_s": floor_s,
        "floor_cpu": floor_cpu,
        "floor_identical": floor and evaluations(floor_out) == local_rows,
        "groups": spark["groups"],
        "local_s": local_s,
        "local_cpu": local_cpu,
        "spark_s": spark_s,
        "spark_cpu": cpu,
        "spark_rss_mib": rss,
        "ratio": spark_s / local_s if local_s else float("nan"),
        "tasks": spark["spark"]["tasks"],
        "phases": spark["spark"]["phases"],
        "job_s": spark["seconds"],
        "identical": local_rows == evaluations(spark_out),
        "load": os.getloadavg()[0],
    }


def per(part: float, whole: float) -> str:
    """``part / whole`` with two decimals, or "nan" without a whole (``--spark-only``)."""
    return f"{part / whole:.2f}" if whole else "nan"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--strategies", default=None, help="comma-separated (default: every strategy)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--conf", action="append", default=[], help="extra Spark KEY=VALUE (repeatable)")
    parser.add_argument(
        "--spark-only", action="store_true", help="reuse an earlier in-process output; time Spark only"
    )
    parser.add_argument(
        "--floor", action="store_true", help="also time the job's tasks in two plain Python processes"
    )
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    t = time.monotonic()
    snap = snapshot(args.groups, args.seed)
    took = time.monotonic() - t
    print(f"snapshot of {args.groups} groups (seed {args.seed}) ready in {took:.1f} s", flush=True)
    record_archive([])  # prints which archive the runs map
    strategies = args.strategies.split(",") if args.strategies else None
    results = []
    for i in range(args.repeat):
        r = run_pair(
            snap,
            strategies,
            args.master,
            f"{args.groups}-{args.seed}-{i}",
            args.conf,
            args.spark_only,
            args.floor,
        )
        results.append(r)
        phases = " ".join(f"{k}={v:g}" for k, v in r["phases"].items())
        cpu = r["spark_cpu"]
        print(
            f"run {i + 1}: {r['groups']} groups; in-process (1 core): {r['local_s']:.1f} s wall, "
            f"{r['local_cpu']:.1f} s CPU; {args.master}: {r['spark_s']:.1f} s wall ({r['tasks']} tasks; "
            f"job {r['job_s']:.1f} s: {phases}), {sum(cpu.values()):.1f} s CPU (JVM {cpu['jvm']:.1f}, "
            f"driver Python {cpu['driver_python']:.1f}, workers {cpu['python_workers']:.1f}; peak RSS MiB: "
            + ", ".join(f"{k} {v}" for k, v in sorted(r["spark_rss_mib"].items()))
            + "); "
            f"ratio {r['ratio']:.2f}; identical: {r['identical']}; load average {r['load']:.1f}",
            flush=True,
        )
        if args.floor:
            print(
                f"  floor (the same tasks in two plain Python processes): {r['floor_s']:.1f} s wall, "
                f"{r['floor_cpu']:.1f} s CPU ({per(r['floor_cpu'], r['local_cpu'])} the one core's CPU for "
                f"the same work), ratio {per(r['floor_s'], r['local_s'])}; Spark's own share "
                f"{r['spark_s'] - r['floor_s']:.1f} s (Spark / floor {per(r['spark_s'], r['floor_s'])}); "
                f"identical: {r['floor_identical']}",
                flush=True,
            )
    best = min(r["ratio"] for r in results)
    ratios = ", ".join(f"{r['ratio']:.2f}" for r in results)
    ok = all(r["identical"] for r in results) and best <= GOAL
    print(
        f"goal: {args.master} at most {GOAL:g} x in-process: {'MET' if best <= GOAL else 'MISSED'} "
        f"(ratio {ratios}); outputs identical: "
        f"{all(r['identical'] for r in results)}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
