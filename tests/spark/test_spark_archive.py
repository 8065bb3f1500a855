"""The Spark driver's class archive (``lagassign.spark.archive``): recorded once, mapped only
when it matches this Java, these JVM options and these Spark jars, never half-written."""

from __future__ import annotations

import os
import subprocess

import pytest
from lagassign.evaluation import EvaluationParams, write_params
from lagassign.spark import archive
from lagassign.spark.submit import DRIVER_OPTIONS_KEY, JVM_OPTIONS, spark_conf, spark_env, submit_command
from lagassign.tables.evaluations import read_summary
from lagassign.tables.synthetic import generate_snapshot

JAVA_HOME = spark_env().get("JAVA_HOME", "")


def test_no_archive_no_option(tmp_path):
    assert archive.archive_options(tmp_path, JAVA_HOME, JVM_OPTIONS) == ""


def test_the_archive_of_this_fingerprint_is_mapped_and_can_be_switched_off(tmp_path, monkeypatch):
    path = archive.archive_path(tmp_path, JAVA_HOME, JVM_OPTIONS)
    path.write_bytes(b"stand-in")
    options = archive.archive_options(tmp_path, JAVA_HOME, JVM_OPTIONS)
    assert options.split() == [f"-XX:SharedArchiveFile={path}", *archive.QUIET.split()]
    # other JVM options: another fingerprint, so this archive is not used
    assert archive.archive_options(tmp_path, JAVA_HOME, JVM_OPTIONS + " -Xmx1g") == ""
    monkeypatch.setenv("LAGASSIGN_SPARK_CDS", "off")
    assert archive.archive_options(tmp_path, JAVA_HOME, JVM_OPTIONS) == ""


def test_spark_conf_maps_the_archive_only_for_the_driver(tmp_path, monkeypatch):
    monkeypatch.setenv("LAGASSIGN_PYFILES", str(tmp_path / "lagassign.zip"))
    assert "SharedArchiveFile" not in spark_conf()[DRIVER_OPTIONS_KEY]
    archive.archive_path(tmp_path, JAVA_HOME, JVM_OPTIONS).write_bytes(b"stand-in")
    conf = spark_conf()
    assert "-XX:SharedArchiveFile=" in conf[DRIVER_OPTIONS_KEY]
    assert "SharedArchiveFile" not in conf["spark.executor.extraJavaOptions"]
    assert "SharedArchiveFile" not in spark_conf(archive=False)[DRIVER_OPTIONS_KEY]


def test_the_fingerprint_follows_the_spark_jars(tmp_path, monkeypatch):
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "a.jar").write_bytes(b"1")
    monkeypatch.setattr(archive, "_jars", lambda: jars)
    before = archive.fingerprint(JAVA_HOME, JVM_OPTIONS)
    assert archive.fingerprint(JAVA_HOME, JVM_OPTIONS) == before
    (jars / "b.jar").write_bytes(b"2")  # an upgrade of Spark: a new archive is needed
    assert archive.fingerprint(JAVA_HOME, JVM_OPTIONS) != before


@pytest.mark.spark
def test_recorded_archive_is_mapped_by_a_real_spark_submit(tmp_path, monkeypatch):
    """Records the archive with a real spark-submit (into a fresh folder), then runs the job
    again with it and ``-Xshare:on``, which makes the driver JVM fail unless it maps the
    archive: the class path spark-submit gives the driver matches the recorded one."""
    monkeypatch.setenv("LAGASSIGN_PYFILES", str(tmp_path / "lagassign.zip"))
    path = archive.build_archive()
    assert path.parent == tmp_path and path.stat().st_size > 1 << 20
    assert not list(tmp_path.glob(".*.tmp"))  # written under a temporary name, renamed
    assert archive.build_archive() == path  # kept: no second recording

    snapshot = tmp_path / "snapshot"
    generate_snapshot(snapshot, 5, 3)
    params = write_params(EvaluationParams(str(snapshot), str(tmp_path / "out")), tmp_path / "p.json")
    argv, env = submit_command(params, "local[1]")
    at = next(i for i, a in enumerate(argv) if a.startswith(f"{DRIVER_OPTIONS_KEY}="))
    assert f"-XX:SharedArchiveFile={path}" in argv[at]
    argv[at] += " -Xshare:on"
    done = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert read_summary(tmp_path / "out")["groups"] == 5
