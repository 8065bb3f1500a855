"""The job's SPARK_HOME (``lagassign.spark.home``): pyspark's scripts and jars, no Python zips.

Whether the workers then import pyspark from site-packages is checked on a real Spark job
(``test_evaluation.test_spark_summary_and_schema``); these tests cover the folder itself.
"""

from __future__ import annotations

import os

from lagassign.spark.home import LINKED, job_spark_home, pyspark_home
from lagassign.spark.submit import spark_env


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
