"""The job's SPARK_HOME (``lagassign.spark.home``): pyspark's scripts and jars, no Python zips.

Whether the workers then import pyspark from site-packages is checked on a real Spark job
(``test_evaluation.test_spark_summary_and_schema``); these tests cover the folder itself.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from lagassign.spark.home import LINKED, job_spark_home, pyspark_home
from lagassign.spark.submit import JVM_OPTIONS, spark_env


def test_the_home_links_pysparks_scripts_and_jars_and_has_no_python_zips(tmp_path):
    home = job_spark_home(tmp_path)
    assert home == tmp_path / "spark-home"
    assert sorted(p.name for p in home.iterdir()) == sorted(LINKED)
    for name in LINKED:
        assert (home / name).resolve() == pyspark_home() / name
    assert (home / "bin" / "spark-class").is_file() and any((home / "jars").glob("spark-core_*.jar"))
    assert (pyspark_home() / "python" / "lib" / "pyspark.zip").is_file()  # what it leaves out
    assert not (home / "python").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_a_current_home_is_kept_and_a_stale_one_remade(tmp_path):
    home = job_spark_home(tmp_path)
    inode = home.stat().st_ino
    assert job_spark_home(tmp_path) == home and home.stat().st_ino == inode
    (home / "jars").unlink()
    (home / "jars").symlink_to(tmp_path)  # pyspark moved (reinstalled elsewhere)
    job_spark_home(tmp_path)
    assert (home / "jars").resolve() == pyspark_home() / "jars"


def test_spark_env_sets_the_home_unless_the_environment_has_one(monkeypatch, tmp_path):
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.setenv("LAGASSIGN_PYFILES", str(tmp_path / "lagassign.zip"))
    assert spark_env()["SPARK_HOME"] == str(tmp_path / "spark-home")
    monkeypatch.setenv("SPARK_HOME", "/opt/spark")
    assert spark_env()["SPARK_HOME"] == "/opt/spark"
    assert os.environ["SPARK_HOME"] == "/opt/spark"


def test_the_launcher_jvm_gets_the_job_options(monkeypatch, tmp_path):
    """spark-submit's launcher JVM (spark-class's ``launcher.Main``) takes SPARK_LAUNCHER_OPTS:
    spark_env sets it to the job's JVM options, unless the environment has its own. A real
    spark-class, given an option no JVM knows, fails in that launcher: the variable reaches it."""
    monkeypatch.delenv("SPARK_LAUNCHER_OPTS", raising=False)
    env = spark_env()
    assert env["SPARK_LAUNCHER_OPTS"] == JVM_OPTIONS
    monkeypatch.setenv("SPARK_LAUNCHER_OPTS", "-Xmx64m")
    assert spark_env()["SPARK_LAUNCHER_OPTS"] == "-Xmx64m"
    spark_class = Path(env["SPARK_HOME"], "bin", "spark-class")
    run = {**os.environ, **env, "SPARK_LAUNCHER_OPTS": "-XX:+NoSuchLagassignOption"}
    done = subprocess.run(
        [str(spark_class), "org.apache.spark.deploy.SparkSubmit", "--version"],
        env=run,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "NoSuchLagassignOption" in done.stdout + done.stderr
