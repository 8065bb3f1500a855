"""The job's SPARK_HOME: pyspark's own, without the zips that make every Python compile pyspark.

pip's pyspark is its own Spark home, and Spark puts ``SPARK_HOME/python/lib/pyspark.zip`` (all
of pyspark's source) and py4j's zip first on the Python path of the driver and of every Python
worker daemon. Nothing caches bytecode inside a zip, so each of those processes compiles
pyspark at its start, several times slower than importing it from site-packages, on the run's
critical path.

``job_spark_home`` is a folder beside the library zip (``var/spark-home``) with pyspark's
``bin``, ``sbin`` and ``jars`` as symbolic links and no ``python/lib``: Spark's path entries then
name files that do not exist, which Python skips, and the processes import the same pyspark
from site-packages, bytecode and all. It suits any interpreter that has this pyspark installed,
as this venv's python (``PYSPARK_PYTHON``) has; the executors of a cluster use their own home.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from ..tables.evaluations import EvaluationError

#: What the job needs of a Spark home: the scripts (spark-submit, spark-class), the cluster
#: scripts, and the jars.
LINKED = ("bin", "sbin", "jars")


def pyspark_home() -> Path:
    """The installed pyspark package folder (pip's Spark home), found without importing it."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise EvaluationError("pyspark is not installed (pip install -e '.[pipeline]')")
    return Path(spec.origin).resolve().parent


def _current(home: Path, source: Path) -> bool:
    return all(
        (home / name).is_symlink() and Path(os.readlink(home / name)) == source / name for name in LINKED
    )


def job_spark_home(folder: Path) -> Path:
    """``folder/spark-home`` linked to the installed pyspark, made (or remade, when pyspark moved)
    under a temporary name and renamed: two runs may make it at once, and a half-made home is
    never used. Cheap when it is there (a few ``readlink`` calls), as DAG files call it."""
    source = pyspark_home()
    home = folder / "spark-home"
    if _current(home, source):
        return home
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".spark-home.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    for name in LINKED:
        (tmp / name).symlink_to(source / name)
    old = folder / f".spark-home.{os.getpid()}.old"
    try:
        if home.exists() or home.is_symlink():
            home.rename(old)  # a stale home (pyspark moved): out of the way first
        tmp.rename(home)
    except OSError:  # another run moved or made it in the meantime: use theirs
        shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)
    return home


__all__ = ["job_spark_home", "pyspark_home"]
