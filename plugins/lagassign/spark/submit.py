"""Spark glue: how the evaluation job is submitted, and the driver's check of what it wrote.

Submitting (driver side; the CLI, the tests and Airflow's SparkSubmitOperator use the same
pieces from ``spark_submit_settings``):

* application: ``spark_jobs/evaluate_groups.py`` (env ``LAGASSIGN_SPARK_APP`` overrides);
  its only argument is a params file (``lagassign.evaluation.EvaluationParams`` as JSON);
* py-files: a zip of the ``lagassign`` package (``build_pyfiles``), how the library reaches
  executors on a cluster; rebuilt only when a source file changed. Executors also need the
  library's dependencies (numpy, pandas, pyarrow) in their Python;
* env: JAVA_HOME, PYSPARK_PYTHON / PYSPARK_DRIVER_PYTHON (this venv's python: spark-submit
  from a venv fails without them), SPARK_HOME (``lagassign.spark.home``: pyspark's, without the
  zips every Python would compile pyspark from; one set in the environment is kept),
  SPARK_LAUNCHER_OPTS (``JVM_OPTIONS`` for spark-submit's launcher JVM, unless set),
  SPARK_LOCAL_IP=127.0.0.1 for local masters only;
* conf: no UI, log level WARN.

Which task runs which group: ``lagassign.spark.task_plan``; what a task does:
``lagassign.spark.task_run``. After the tasks, ``output_check`` reads the written evaluations
back on the driver for the summary.

Importing this module is cheap (no pyspark, no pandas): DAG files import it at parse time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import py_compile
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from ..evaluation import load_params
from ..tables.evaluations import EvaluationError, read_summary
from .home import job_spark_home

DEFAULT_MASTER = "local[2]"
JAVA_HOME = "/usr/lib/jvm/java-17-openjdk-amd64"  # Spark 4 needs Java 17+; another JDK is installed too
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # plugins/lagassign
PROJECT_ROOT = PACKAGE_DIR.parent.parent  # plugins/lagassign -> the repository (editable install)


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


def _bytecode(path: Path, name: str, work: Path) -> bytes:
    """``path`` compiled by this Python, as a pyc checked against its source's hash (a zip
    keeps no file times to check against); tracebacks name it ``name``."""
    out = work / "module.pyc"
    py_compile.compile(
        str(path), str(out), name, doraise=True, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH
    )
    return out.read_bytes()


def build_pyfiles(dest: str | Path | None = None, force: bool = False) -> Path:
    """Zip the ``lagassign`` package for ``--py-files``; returns its path.

    Each module is there as source and as bytecode (``x.pyc`` beside ``x.py``, compiled by this
    Python, checked against the source's hash): Python caches no bytecode for a zip, so each
    process that imports the library from it (the driver and every worker) would compile it
    again at its start. A Python of another version skips bytecode that is not its own and
    compiles the source.

    The zip's comment is a fingerprint of the sources (names, sizes, mtimes) and of this
    Python's bytecode version: an up-to-date zip is left alone, so calling this at every DAG
    parse costs a directory walk. Entries have a fixed date, and the file is replaced
    atomically (two runs may build at once).
    """
    dest = Path(dest) if dest is not None else pyfiles_path()
    sources = _sources()
    digest = hashlib.sha256(importlib.util.MAGIC_NUMBER)
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
    zipped = zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED)
    with zipped as zf, tempfile.TemporaryDirectory() as work:
        for path, name in sources:
            for entry, data in ((name, path.read_bytes()), (name + "c", _bytecode(path, name, Path(work)))):
                info = zipfile.ZipInfo(entry, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, data)
        zf.comment = fingerprint
    tmp.replace(dest)
    return dest


def spark_binary() -> str:
    """spark-submit of this Python's environment (pyspark installs it next to python)."""
    return str(Path(sys.executable).parent / "spark-submit")


def _is_local(master: str | None) -> bool:
    return master is None or master == "local" or master.startswith("local[")


def _job_spark_home() -> str:
    """``lagassign.spark.home``'s folder, or "" (spark-submit then uses pyspark's own home)
    when it cannot be made: no pyspark here, or a read-only folder."""
    try:
        return str(job_spark_home(pyfiles_path().parent))
    except (EvaluationError, OSError):
        return ""


def spark_env(master: str | None = None) -> dict[str, str]:
    """Environment spark-submit needs here. ``master`` None means "assume local" (Airflow's
    ``spark_default`` connection says local[2]); SPARK_LOCAL_IP is left out for a cluster."""
    env = {
        "SPARK_HOME": os.environ.get("SPARK_HOME") or _job_spark_home(),
        "JAVA_HOME": os.environ.get("LAGASSIGN_JAVA_HOME")
        or (JAVA_HOME if Path(JAVA_HOME).is_dir() else os.environ.get("JAVA_HOME", "")),
        "PYSPARK_PYTHON": os.environ.get("LAGASSIGN_PYSPARK_PYTHON") or sys.executable,
        "PYSPARK_DRIVER_PYTHON": os.environ.get("LAGASSIGN_PYSPARK_PYTHON") or sys.executable,
        # spark-submit first runs a small JVM (``launcher.Main``) that only prints the driver's
        # command: the job's JVM options (client compiler, serial collector) start it sooner
        "SPARK_LAUNCHER_OPTS": os.environ.get("SPARK_LAUNCHER_OPTS") or JVM_OPTIONS,
    }
    if _is_local(master):
        env["SPARK_LOCAL_IP"] = os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")
    return {k: v for k, v in env.items() if v}


def log_config() -> Path | None:
    """The driver's log4j2 settings next to the application (warnings only), if present."""
    app = Path(os.environ.get("LAGASSIGN_SPARK_APP") or PROJECT_ROOT / "spark_jobs" / "evaluate_groups.py")
    path = app.parent / "log4j2.properties"
    return path if path.is_file() else None


#: The JVMs only start the context and schedule tasks (the work is in the Python workers): the
#: client compiler alone and the serial collector about halve their CPU and the start phase;
#: with no hot loop left in the JVM, nothing is lost.
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
DRIVER_OPTIONS_KEY = "spark.driver.extraJavaOptions"

#: The JVM talks to its Python workers (and to the driver's Python) over Unix sockets instead
#: of TCP on the loopback (Spark 4.1+; the workers are always on the executor's machine): over
#: TCP every task waits on each way's delayed acknowledgement.
UNIX_SOCKETS_KEY = "spark.python.unix.domain.socket.enabled"


def spark_conf(archive: bool = True) -> dict[str, str]:
    """Spark settings for the job (the job decides its tasks itself, from the groups).

    The driver logs warnings only from its first line (``log4j2.properties``): ``spark.log.level``
    applies once the context runs, after Spark's start-up lines filled the evaluate task's log.
    Both driver and executor JVMs get ``JVM_OPTIONS``; the driver also maps its class archive
    when one was recorded (``lagassign.spark.archive``; ``archive=False`` leaves it out)."""
    driver = JVM_OPTIONS
    logs = log_config()
    if logs is not None:
        driver = f"-Dlog4j2.configurationFile={logs.as_uri()} {driver}"
    if archive:
        from .archive import archive_options

        cds = archive_options(pyfiles_path().parent, spark_env().get("JAVA_HOME", ""), JVM_OPTIONS)
        driver = f"{driver} {cds}" if cds else driver
    return {
        "spark.ui.enabled": "false",
        "spark.log.level": "WARN",
        UNIX_SOCKETS_KEY: "true",
        "spark.python.worker.faulthandler.enabled": "true",
        DRIVER_OPTIONS_KEY: driver,
        "spark.executor.extraJavaOptions": JVM_OPTIONS,
    }


def spark_submit_settings(
    master: str | None = None, build: bool = True, archive: bool = True
) -> dict[str, Any]:
    """What a SparkSubmitOperator needs: application, py_files, conf, env, spark_binary.

    The params file is the operator's only ``application_args`` entry; the master comes from
    its connection (``spark_default``). ``build`` refreshes the library zip when stale;
    ``archive`` maps the driver's class archive when there is one (``spark_conf``).
    """
    py_files = build_pyfiles() if build else pyfiles_path()
    return {
        "application": str(application_path()),
        "py_files": str(py_files),
        "conf": spark_conf(archive),
        "env": spark_env(master),
        "spark_binary": spark_binary(),
    }


def submit_command(
    params_file: str | Path, master: str = DEFAULT_MASTER, archive: bool = True
) -> tuple[list[str], dict[str, str]]:
    """(argv, extra environment) of spark-submit for one evaluation: the params file is the
    only application argument, so no parameter value is ever part of a command line."""
    s = spark_submit_settings(master, archive=archive)
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
    params = load_params(params_file)
    argv, extra_env = submit_command(params_file, master)
    proc = subprocess.run(
        argv, env={**os.environ, **extra_env}, capture_output=True, text=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise EvaluationError(f"spark-submit exited with {proc.returncode}:\n{tail}")
    return read_summary(params.out)


# -- after the job -----------------------------------------------------------------------------


def output_check(
    target: str | Path, limit: int
) -> tuple[int, int, list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows, groups, failures, log rows of the first ``limit`` groups by name) of the
    evaluations the job wrote, read back on the driver with pyarrow, one batch at a time (five
    small columns; memory grows only with the group names). A log row is ``{group, current,
    best, best_lag, error}`` as ``tables.evaluations.group_lines`` takes it (each the largest
    value among the group's rows)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    data = ds.dataset(target, format="parquet")
    rows, names, failed = 0, set[str](), list[dict[str, Any]]()
    for batch in data.to_batches(columns=["group", "error"], batch_size=1 << 16, use_threads=False):
        rows += batch.num_rows
        names.update(pc.unique(batch.column("group")).to_pylist())
        errors = batch.filter(pc.is_valid(batch.column("error")))
        failed += pa.Table.from_batches([errors]).to_pylist() if errors.num_rows else []
    first = sorted(names)[:limit]
    found: dict[str, dict[str, Any]] = {g: {"group": g} for g in first}
    shown = data.to_table(
        columns=["group", "strategy", "error", "best", "max_lag"],
        filter=ds.field("group").isin(pa.array(first, pa.string())),
    )

    def most(row: dict[str, Any], key: str, value: Any) -> None:
        if value is not None and (row.get(key) is None or value > row[key]):
            row[key] = value

    for r in shown.to_pylist():
        row = found[r["group"]]
        most(row, "current", r["max_lag"] if r["strategy"] == "current" else None)
        most(row, "best", r["strategy"] if r["best"] else None)
        most(row, "best_lag", r["max_lag"] if r["best"] else None)
        most(row, "error", r["error"])
    return rows, len(names), failed, list(found.values())


__all__ = [
    "DEFAULT_MASTER",
    "application_path",
    "build_pyfiles",
    "output_check",
    "pyfiles_path",
    "run_spark_evaluation",
    "spark_binary",
    "spark_conf",
    "spark_env",
    "spark_submit_settings",
    "submit_command",
]
