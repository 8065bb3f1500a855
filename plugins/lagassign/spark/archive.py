"""A class-data archive of the Spark driver JVM, so each evaluation starts sooner.

A Spark driver JVM loads thousands of classes from Spark's jars, before the job's Python starts
and again while the context starts, in every run. Java's application class-data sharing
(AppCDS, JDK 13+) records the loaded classes once in an archive file; a JVM started with it
maps them instead of loading them, which takes a large part off both phases.

* ``build_archive`` records it: one real run of the evaluation job on a tiny synthetic
  snapshot, its driver JVM started with ``-XX:ArchiveClassesAtExit``, written under a temporary
  name and renamed when complete (a truncated archive crashes the JVM that maps it);
  ``make spark-archive`` runs it (``python -m lagassign.spark.archive``) and removes the
  archives of other fingerprints.
* ``archive_options`` gives the driver's JVM options that use it, or nothing when there is no
  archive for this Java, these JVM options and these Spark jars (``fingerprint``): a stale
  archive is never used; runs are only slower without it. The JVM still checks the archive
  against its class path and drops it if they differ (its warning is silenced).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..evaluation import EvaluationParams, write_params
from ..tables.evaluations import EvaluationError
from ..tables.synthetic import generate_snapshot
from .submit import DRIVER_OPTIONS_KEY, JVM_OPTIONS, pyfiles_path, spark_env, submit_command

#: Silences the JVM's warning when it cannot use an archive (a run goes on without it).
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def _jars() -> Path:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise EvaluationError("pyspark is not installed (pip install -e '.[pipeline]')")
    return Path(spec.origin).parent / "jars"


def fingerprint(java_home: str, jvm_options: str) -> str:
    """What an archive is valid for: the Java runtime, the driver's JVM options and the Spark
    jars (names, sizes, times), as 16 hex digits."""
    digest = hashlib.sha256(f"{Path(java_home).resolve()}\0{jvm_options}\n".encode())
    modules = Path(java_home, "lib", "modules")
    for path in [modules, *sorted(_jars().glob("*.jar"))]:
        if path.is_file():
            st = path.stat()
            digest.update(f"{path.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def archive_path(folder: Path, java_home: str, jvm_options: str) -> Path:
    """The archive for this Java, JVM options and Spark jars, in ``folder`` (it may not exist)."""
    return folder / f"spark-driver-{fingerprint(java_home, jvm_options)}.jsa"


def archive_options(folder: Path, java_home: str, jvm_options: str) -> str:
    """The driver's JVM options that map the archive, or "" when there is none (or
    ``LAGASSIGN_SPARK_CDS=off``)."""
    if not java_home or os.environ.get("LAGASSIGN_SPARK_CDS", "").lower() in ("off", "0", "false", "no"):
        return ""
    try:
        path = archive_path(folder, java_home, jvm_options)
    except (OSError, EvaluationError):
        return ""
    return f"-XX:SharedArchiveFile={path} {QUIET}" if path.is_file() else ""


def build_archive(force: bool = False, timeout: float = 300) -> Path:
    """Record the driver JVM's archive (one evaluation of a tiny synthetic snapshot with
    ``spark-submit``); returns its path. An archive already there for this fingerprint is kept
    unless ``force``."""
    java_home = spark_env().get("JAVA_HOME", "")
    if not java_home:
        raise EvaluationError("no Java found for Spark (set JAVA_HOME or LAGASSIGN_JAVA_HOME)")
    folder = pyfiles_path().parent
    final = archive_path(folder, java_home, JVM_OPTIONS)
    if final.is_file() and not force:
        return final
    folder.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    with tempfile.TemporaryDirectory(prefix="lagassign-cds-") as work:
        snapshot = Path(work, "snapshot")
        generate_snapshot(snapshot, 40, 7)
        params = write_params(
            EvaluationParams(str(snapshot), str(Path(work, "out"))), Path(work, "params.json")
        )
        argv, env = submit_command(params, "local[2]", archive=False)
        # the driver's options are one --conf value: it records the archive at its exit
        at = next(i for i, a in enumerate(argv) if a.startswith(f"{DRIVER_OPTIONS_KEY}="))
        argv[at] += f" -XX:ArchiveClassesAtExit={tmp}"
        try:
            done = subprocess.run(
                argv, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout, check=False
            )
            if done.returncode != 0 or not tmp.is_file():
                tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-10:])
                raise EvaluationError(f"recording the Spark driver's class archive failed:\n{tail}")
            tmp.replace(final)
        finally:
            tmp.unlink(missing_ok=True)
    for old in folder.glob("spark-driver-*.jsa"):  # for another Java or Spark: never mapped again
        if old != final:
            old.unlink(missing_ok=True)
    return final


def main(argv: list[str]) -> int:
    """``python -m lagassign.spark.archive [--force]``: record the archive unless it is there."""
    force = "--force" in argv
    started = time.monotonic()
    try:
        path = build_archive(force=force)
    except EvaluationError as exc:
        print(
            f"lagassign: warning: {exc}\nSpark runs work without it, about 2 s slower each.", file=sys.stderr
        )
        return 1
    took = time.monotonic() - started
    print(f"lagassign: Spark driver class archive {path} ({path.stat().st_size >> 20} MiB, {took:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
