"""The Spark evaluation on a standalone cluster (not only ``local[*]``): same output as in-process.

Runs only when ``LAGASSIGN_SPARK_MASTER`` names a running cluster, e.g. the one of
``scripts/spark-cluster start`` (``spark://127.0.0.1:7077``, two one-core workers); ``.ci/run``
starts it, runs this file and stops it. The snapshot is test_evaluation's 20 groups (edge cases
included: an invalid group, a failed one, ``earliest`` mode, offsets above 2**53).
"""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest
from evaluation_cases import FAILED, SNAPSHOT_ERROR, SPARK_OPTIONS, evaluation_cases
from lagassign.evaluation import EvaluationParams, evaluate_snapshot, write_params
from lagassign.spark.submit import run_spark_evaluation
from lagassign.tables.evaluations import read_evaluations, read_summary
from lagassign.tables.synthetic import write_snapshot

MASTER = os.environ.get("LAGASSIGN_SPARK_MASTER")

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(
        not MASTER,
        reason="LAGASSIGN_SPARK_MASTER is not set (e.g. spark://127.0.0.1:7077 "
        "after scripts/spark-cluster start)",
    ),
]


def _master_status() -> dict | None:
    """The standalone master's JSON status (web UI on 8090 for scripts/spark-cluster), if it answers."""
    url = os.environ.get("LAGASSIGN_SPARK_STATUS", "http://127.0.0.1:8090/json/")
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return json.load(resp)
    except OSError:
        return None


@pytest.fixture(scope="module")
def snapshot_dir(tmp_path_factory) -> Path:
    return write_snapshot(
        evaluation_cases(), tmp_path_factory.mktemp("snapshot"), failed={FAILED: SNAPSHOT_ERROR}
    )


@pytest.fixture(scope="module")
def cluster_out(tmp_path_factory, snapshot_dir) -> Path:
    """One spark-submit run against the cluster."""
    out = tmp_path_factory.mktemp("cluster") / "evaluations"
    params = write_params(
        EvaluationParams(str(snapshot_dir), str(out), **SPARK_OPTIONS), out.parent / "params.json"
    )
    # The driver runs here, on the loopback like the cluster (else it advertises another address).
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    run_spark_evaluation(params, master=MASTER, timeout=300)
    return out


def test_cluster_job_equals_in_process(cluster_out, snapshot_dir):
    expected = [e.to_dict() for e in evaluate_snapshot(snapshot_dir, **SPARK_OPTIONS)]
    got = [e.to_dict() for e in read_evaluations(cluster_out)]
    assert [e["group"] for e in got] == [e["group"] for e in expected]
    for g, e in zip(got, expected, strict=True):
        assert g == e, e["group"]


def test_cluster_summary_names_the_master_and_its_executors(cluster_out):
    summary = read_summary(cluster_out)
    assert summary["engine"] == "spark"
    assert summary["spark"]["master"] == MASTER
    assert (summary["groups"], summary["evaluated"], summary["failed"]) == (20, 18, 2)
    # the library reached the executors (other JVMs, other work dirs) as the --py-files zip
    assert "lagassign.zip" in summary["spark"]["library_executors"]
    if "executors" in summary["spark"]:
        assert summary["spark"]["executors"] >= 2
    status = _master_status()
    if status is not None:  # the master's own record of the run: two workers gave it a core each
        assert sum(1 for w in status["workers"] if w["state"] == "ALIVE") >= 2
        runs = [a for a in status["completedapps"] if a["name"] == "lagassign-evaluate"]
        assert runs, "the master has no record of the job"
        latest = max(runs, key=lambda a: a["starttime"])
        assert latest["cores"] >= 2, latest
