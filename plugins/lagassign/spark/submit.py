"""Spark glue: how the evaluation job is submitted, and the function its executors run per group.

Submitting (driver side; the CLI, the tests and Airflow's SparkSubmitOperator use the same
pieces from ``spark_submit_settings``):

* application: ``spark_jobs/evaluate_groups.py`` (env ``LAGASSIGN_SPARK_APP`` overrides);
  its only argument is a params file (``lagassign.pipeline.evaluation.EvaluationParams`` as JSON);
* py-files: a zip of the ``lagassign`` package (``build_pyfiles``), how the library reaches
  executors on a cluster; rebuilt only when a source file changed. Executors also need the
  library's dependencies (numpy, pandas, pyarrow) in their Python;
* env: JAVA_HOME, PYSPARK_PYTHON / PYSPARK_DRIVER_PYTHON (this venv's python: spark-submit
  from a venv fails without them), SPARK_LOCAL_IP=127.0.0.1 for local masters only;
* conf: no UI, log level WARN.

Executor side: ``evaluate_arrow_batches`` (the job's ``mapInArrow`` function) turns a task's
stacked rows, Arrow batches of many groups each, into batches of evaluation rows, each group
through ``lagassign.pipeline.evaluation.evaluate_group_rows``, the function the in-process engine
uses too. No pandas and no JSON on the way in: a group's trip costs a few microseconds per row.
Which task runs which group is decided on the driver by estimated cost (``spread_groups``).

Importing this module is cheap (no pyspark, no pandas): DAG files import it at parse time.
"""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..pipeline.evaluation import evaluate_group_rows
from ..tables.evaluations import EvaluationError, arrow_schema, evaluation_rows

DEFAULT_MASTER = "local[2]"
JAVA_HOME = "/usr/lib/jvm/java-17-openjdk-amd64"  # Spark 4 needs Java 17+; another JDK is installed too
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # plugins/lagassign
PROJECT_ROOT = PACKAGE_DIR.parent.parent  # plugins/lagassign -> the repository (editable install)
GROUPS_PER_OUTPUT_FILE = 2000


def application_path() -> Path:
    """The spark-submit application: ``spark_jobs/evaluate_groups.py`` of the repository."""
    path = Path(os.environ.get("LAGASSIGN_SPARK_APP") or PROJECT_ROOT / "spark_jobs" / "evaluate_groups.py")
    if not path.is_file():
        raise EvaluationError(f"Spark application {path} not found (set LAGASSIGN_SPARK_APP)")
    return path


def pyfiles_path() -> Path:
    """Where the library zip goes: ``LAGASSIGN_PYFILES``, else the repository's ``var/lagassign.zip``."""
    if os.environ.get("LAGASSIGN_PYFILES"):
        return Path(os.environ["LAGASSIGN_PYFILES"])
    return PROJECT_ROOT / "var" / "lagassign.zip"


def _sources() -> list[tuple[Path, str]]:
    return sorted(
        (
            (p, "lagassign/" + p.relative_to(PACKAGE_DIR).as_posix())
            for p in PACKAGE_DIR.rglob("*.py")
            if "__pycache__" not in p.parts
        ),
        key=lambda pa: pa[1],
    )


def build_pyfiles(dest: str | Path | None = None, force: bool = False) -> Path:
    """Zip the ``lagassign`` package for ``--py-files``; returns its path.

    The zip's comment is a fingerprint of the sources (names, sizes, mtimes): an up-to-date zip
    is left alone, so calling this at every DAG parse costs a directory walk. Entries have a
    fixed date, and the file is replaced atomically (two runs may build at once).
    """
    dest = Path(dest) if dest is not None else pyfiles_path()
    sources = _sources()
    digest = hashlib.sha256()
    for path, name in sources:
        st = path.stat()
        digest.update(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    fingerprint = f"lagassign {digest.hexdigest()}".encode()
    if not force and dest.is_file():
        try:
            with zipfile.ZipFile(dest) as zf:
                if zf.comment == fingerprint:
                    return dest
        except zipfile.BadZipFile:
            pass
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path, name in sources:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
        zf.comment = fingerprint
    tmp.replace(dest)
    return dest


def spark_binary() -> str:
    """spark-submit of this Python's environment (pyspark installs it next to python)."""
    return str(Path(sys.executable).parent / "spark-submit")


def _is_local(master: str | None) -> bool:
    return master is None or master == "local" or master.startswith("local[")


def spark_env(master: str | None = None) -> dict[str, str]:
    """Environment spark-submit needs here. ``master`` None means "assume local" (Airflow's
    ``spark_default`` connection says local[2]); SPARK_LOCAL_IP is left out for a cluster."""
    env = {
        "JAVA_HOME": os.environ.get("LAGASSIGN_JAVA_HOME")
        or (JAVA_HOME if Path(JAVA_HOME).is_dir() else os.environ.get("JAVA_HOME", "")),
        "PYSPARK_PYTHON": os.environ.get("LAGASSIGN_PYSPARK_PYTHON") or sys.executable,
        "PYSPARK_DRIVER_PYTHON": os.environ.get("LAGASSIGN_PYSPARK_PYTHON") or sys.executable,
    }
    if _is_local(master):
        env["SPARK_LOCAL_IP"] = os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")
    return {k: v for k, v in env.items() if v}


def log_config() -> Path | None:
    """The driver's log4j2 settings next to the application (warnings only), if present."""
    app = Path(os.environ.get("LAGASSIGN_SPARK_APP") or PROJECT_ROOT / "spark_jobs" / "evaluate_groups.py")
    path = app.parent / "log4j2.properties"
    return path if path.is_file() else None


def spark_conf() -> dict[str, str]:
    """Spark settings for the job (the job sets its shuffle partitions itself, from the groups).

    The driver logs warnings only from its first line (``log4j2.properties``): ``spark.log.level``
    applies once the context runs, after Spark's start-up lines filled the evaluate task's log."""
    conf = {
        "spark.ui.enabled": "false",
        "spark.log.level": "WARN",
        "spark.python.worker.faulthandler.enabled": "true",
    }
    logs = log_config()
    if logs is not None:
        conf["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile={logs.as_uri()}"
    return conf


def spark_submit_settings(master: str | None = None, build: bool = True) -> dict[str, Any]:
    """What a SparkSubmitOperator needs: application, py_files, conf, env, spark_binary.

    The params file is the operator's only ``application_args`` entry; the master comes from
    its connection (``spark_default``). ``build`` refreshes the library zip when stale.
    """
    py_files = build_pyfiles() if build else pyfiles_path()
    return {
        "application": str(application_path()),
        "py_files": str(py_files),
        "conf": spark_conf(),
        "env": spark_env(master),
        "spark_binary": spark_binary(),
    }


def submit_command(params_file: str | Path, master: str = DEFAULT_MASTER) -> tuple[list[str], dict[str, str]]:
    """(argv, extra environment) of spark-submit for one evaluation: the params file is the
    only application argument, so no parameter value is ever part of a command line."""
    s = spark_submit_settings(master)
    argv = [
        s["spark_binary"],
        "--master",
        master,
        "--name",
        "lagassign-evaluate",
        "--py-files",
        s["py_files"],
    ]
    for key, value in s["conf"].items():
        argv += ["--conf", f"{key}={value}"]
    argv += [s["application"], str(params_file)]
    return argv, s["env"]


def run_spark_evaluation(
    params_file: str | Path, master: str = DEFAULT_MASTER, timeout: float | None = None
) -> dict[str, Any]:
    """Run the Spark job with spark-submit and wait; returns the summary it wrote.

    spark-submit's output is captured; on failure its last lines are in the error.
    """
    from ..pipeline.evaluation import load_params
    from ..tables.evaluations import read_summary

    params = load_params(params_file)
    argv, extra_env = submit_command(params_file, master)
    proc = subprocess.run(
        argv, env={**os.environ, **extra_env}, capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise EvaluationError(f"spark-submit exited with {proc.returncode}:\n{tail}")
    return read_summary(params.out)


# -- the job's sizing ---------------------------------------------------------------------------


MIN_GROUPS_PER_TASK = 25
GROUP_COST = 10  # a group's fixed cost, in partition rows (parsing, twelve strategies' set-up)


def default_partitions(groups: int, parallelism: int) -> int:
    """Tasks sharing the groups: up to 8 per core, so a core that drew a slow task is not left
    holding a long queue; but every core gets work, and a task gets at least
    MIN_GROUPS_PER_TASK groups (a task costs ~0.1 s by itself)."""
    cores = max(1, parallelism)
    return max(1, min(groups, 8 * cores, max(cores, math.ceil(groups / MIN_GROUPS_PER_TASK))))


def default_output_files(groups: int) -> int:
    """Parquet part files: one per GROUPS_PER_OUTPUT_FILE groups."""
    return max(1, math.ceil(groups / GROUPS_PER_OUTPUT_FILE))


def estimated_cost(partitions: int, members: int) -> int:
    """About how long a group takes, in partition rows: measured on the synthetic snapshots, the
    strategies' time grows with the partitions (~0.1 ms each, all strategies) over a fixed
    ~1 ms; members add a little."""
    return GROUP_COST + partitions + members


def spread_groups(costs: Mapping[str, int], tasks: int) -> dict[str, int]:
    """Group -> task (0 .. tasks-1) with about equal summed cost per task: the costliest group
    first, each to the task with the least cost so far (longest-processing-time first), so a
    big group lands on a task of few small ones instead of straggling behind a full one.
    Deterministic: ties go by group name and the lowest task number."""
    import heapq

    heap = [(0, t) for t in range(max(1, tasks))]
    out: dict[str, int] = {}
    for group, cost in sorted(costs.items(), key=lambda gc: (-gc[1], gc[0])):
        load, task = heapq.heappop(heap)
        out[group] = task
        heapq.heappush(heap, (load + cost, task))
    return out


def spark_hash_long(value: int) -> int:
    """Spark's ``hash(value)`` of a bigint (Murmur3 x86 32-bit, seed 42; what
    ``repartition(n, column)`` partitions a bigint column by): lets the driver pick partition
    keys without running a Spark job."""
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    def mix(h1: int, k1: int) -> int:
        k1 = rotl((k1 * 0xCC9E2D51) & mask, 15) * 0x1B873593 & mask
        return (rotl(h1 ^ k1, 13) * 5 + 0xE6546B64) & mask

    v = value & 0xFFFFFFFFFFFFFFFF
    h1 = mix(mix(42, v & mask), v >> 32) ^ 8
    h1 = ((h1 ^ (h1 >> 16)) * 0x85EBCA6B) & mask
    h1 = ((h1 ^ (h1 >> 13)) * 0xC2B2AE35) & mask
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def task_keys(tasks: int) -> list[int]:
    """For each task t, the smallest bigint key that ``repartition(tasks, key)`` (pmod(hash(key),
    tasks)) sends to partition t, so the driver's spread of the groups is what the tasks get,
    with no two buckets sharing a task. Computed here, not by a Spark job."""
    keys: dict[int, int] = {}
    key = 0
    while len(keys) < tasks:
        keys.setdefault(spark_hash_long(key) % tasks, key)  # Python's % is pmod for tasks > 0
        key += 1
    return [keys[t] for t in range(tasks)]


def group_costs(folder: str | Path) -> dict[str, int]:
    """Group -> estimated cost (``estimated_cost``) of a snapshot's named groups, from its
    partition and member counts, read on the driver with pyarrow (only the ``group`` columns:
    100,000 groups in well under a second; a Spark aggregation costs seconds of jobs)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from ..tables.snapshot import GROUPS, MEMBERS, PARTITIONS

    def counts(name: str) -> dict[str, int]:
        found = pc.value_counts(pq.read_table(Path(folder, name), columns=["group"]).column("group"))
        return dict(zip(found.field("values").to_pylist(), found.field("counts").to_pylist(), strict=True))

    names = pq.read_table(Path(folder, GROUPS), columns=["group"]).column("group").drop_null()
    parts, members = counts(PARTITIONS), counts(MEMBERS)
    return {g: estimated_cost(parts.get(g, 0), members.get(g, 0)) for g in pc.unique(names).to_pylist()}


def output_check(
    target: str | Path, limit: int
) -> tuple[int, int, list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows, groups, failures, log rows of the first ``limit`` groups by name) of the
    evaluations the job wrote, read back on the driver with pyarrow (five small columns; two
    Spark jobs cost seconds). A log row is ``{group, current, best, best_lag, error}`` as
    ``tables.evaluations.group_lines`` takes it (each the largest value among the group's rows)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(target, columns=["group", "strategy", "error", "best", "max_lag"])
    names = sorted(pc.unique(table.column("group")).to_pylist())
    failed = table.filter(pc.is_valid(table.column("error"))).select(["group", "error"]).to_pylist()
    first = names[:limit]
    found: dict[str, dict[str, Any]] = {g: {"group": g} for g in first}
    shown = table.filter(pc.is_in(table.column("group"), pa.array(first, pa.string())))

    def most(row: dict[str, Any], key: str, value: Any) -> None:
        if value is not None and (row.get(key) is None or value > row[key]):
            row[key] = value

    for r in shown.to_pylist():
        row = found[r["group"]]
        most(row, "current", r["max_lag"] if r["strategy"] == "current" else None)
        most(row, "best", r["strategy"] if r["best"] else None)
        most(row, "best_lag", r["max_lag"] if r["best"] else None)
        most(row, "error", r["error"])
    return table.num_rows, len(names), failed, list(found.values())


# -- executor side ------------------------------------------------------------------------------

# The stacked frame the job hands to the executors: one row per group ("g"), partition ("p")
# and member ("m"), in Spark's own types (Arrow carries int64 with nulls exactly, and topics and
# assignment as lists), each task's rows sorted so one group's rows are contiguous.
STACKED_COLUMNS = (
    "group",
    "_row",
    "auto_offset_reset",
    "error",
    "protocol",
    "group_type",
    "topic",
    "partition",
    "begin",
    "end",
    "committed",
    "rate",
    "racks",
    "member_id",
    "instance_id",
    "topics",
    "assignment",
    "rack",
    "capacity",
)
_PARTITION_KEYS = ("group", "topic", "partition", "begin", "end", "committed", "rate", "racks")
_MEMBER_KEYS = ("group", "member_id", "instance_id", "topics", "assignment", "rack", "capacity")
OUTPUT_BATCH_ROWS = 4096  # evaluation rows per Arrow batch handed back to Spark


def group_evaluator(strategies: Sequence[str], options: Mapping[str, Any]) -> Callable[[Any], Any]:
    """The ``mapInArrow`` function for these strategies and options (a plain function, which
    Spark pickles with its arguments; executors import this module from the zip)."""
    names, opts = list(strategies), dict(options)

    def evaluate(batches):  # no type hints: Spark would try to infer the UDF type from them
        return evaluate_arrow_batches(batches, names, opts)

    return evaluate


_NO_GROUP = object()


def _stacked_groups(
    batches: Iterable[Any],
) -> Iterator[tuple[dict[str, Any] | None, list[dict[str, Any]], list[dict[str, Any]]]]:
    """(group row or None, partition rows, member rows) per group of a stream of stacked Arrow
    batches whose rows are contiguous per group (a group may run over a batch boundary)."""
    current: Any = _NO_GROUP
    grow: dict[str, Any] | None = None
    parts: list[dict[str, Any]] = []
    members: list[dict[str, Any]] = []
    for batch in batches:
        cols = {name: batch.column(name).to_pylist() for name in STACKED_COLUMNS}
        groups, kinds = cols["group"], cols["_row"]
        pcols = [cols[k] for k in _PARTITION_KEYS]
        mcols = [cols[k] for k in _MEMBER_KEYS]
        for i in range(batch.num_rows):
            group = groups[i]
            if group != current:
                if current is not _NO_GROUP:
                    yield grow, parts, members
                current, grow, parts, members = group, None, [], []
            kind = kinds[i]
            if kind == "p":
                parts.append({k: c[i] for k, c in zip(_PARTITION_KEYS, pcols, strict=True)})
            elif kind == "m":
                members.append({k: c[i] for k, c in zip(_MEMBER_KEYS, mcols, strict=True)})
            elif grow is None:  # a duplicate group row is evaluated once, as in-process
                grow = {
                    "group": group,
                    "auto_offset_reset": cols["auto_offset_reset"][i],
                    "error": cols["error"][i],
                    "protocol": cols["protocol"][i],
                    "group_type": cols["group_type"][i],
                }
    if current is not _NO_GROUP:
        yield grow, parts, members


def evaluate_arrow_batches(
    batches: Iterable[Any], strategies: Sequence[str], options: Mapping[str, Any]
) -> Iterator[Any]:
    """``mapInArrow`` function: a task's stacked rows (Arrow batches, each group's rows
    contiguous) -> Arrow batches of evaluation rows (``FIELDS``), many groups per batch.

    Each group goes through ``evaluate_group_rows``, the in-process engine's function, with rows
    shaped as the in-process reader gives them (pyarrow's ``to_pylist``). A group without a
    groups.parquet row yields nothing, as in the in-process engine.
    """
    import pyarrow as pa

    schema = arrow_schema()
    rows: list[dict[str, Any]] = []
    for grow, parts, members in _stacked_groups(batches):
        if grow is None:
            continue
        rows += evaluation_rows(evaluate_group_rows(grow, parts, members, strategies, options))
        if len(rows) >= OUTPUT_BATCH_ROWS:
            yield pa.RecordBatch.from_pylist(rows, schema=schema)
            rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=schema)


__all__ = [
    "DEFAULT_MASTER",
    "STACKED_COLUMNS",
    "application_path",
    "build_pyfiles",
    "default_output_files",
    "default_partitions",
    "estimated_cost",
    "evaluate_arrow_batches",
    "group_costs",
    "group_evaluator",
    "output_check",
    "pyfiles_path",
    "run_spark_evaluation",
    "spark_binary",
    "spark_conf",
    "spark_env",
    "spark_hash_long",
    "spark_submit_settings",
    "spread_groups",
    "submit_command",
    "task_keys",
]
