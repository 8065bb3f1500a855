"""The planning tasks record the step a plan failed at as data (``plans.failed_step``), beside
the one-line error text they always wrote ("step NAME failed: ...").

The task callables run for real in this process with a real SQLite audit store reached through
the Airflow connection ``lagassign_db``; no broker is needed: each run fails before any Kafka
request (refused parameters, a missing groups file, a Spark job that never ran, a review
request without a group).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from lagassign.store import AuditStore

pytestmark = pytest.mark.airflow


@pytest.fixture
def store_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The audit store the tasks open: Airflow connection lagassign_db from the environment."""
    url = f"sqlite:///{tmp_path / 'audit.db'}"
    monkeypatch.setenv(
        "AIRFLOW_CONN_LAGASSIGN_DB", json.dumps({"conn_type": "generic", "extra": {"url": url}})
    )
    monkeypatch.setenv(
        "AIRFLOW_CONN_LAGASSIGN_KAFKA", json.dumps({"conn_type": "generic", "host": "127.0.0.1", "port": 1})
    )
    monkeypatch.setenv("LAGASSIGN_BASE_DIR", str(tmp_path / "runs"))
    return url


@pytest.fixture
def tasks() -> ModuleType:
    """``workflow.tasks``, imported only by the tests that run: it loads Airflow (seconds), which
    ``make unit``'s collection should not pay for."""
    from lagassign.workflow import tasks

    return tasks


def _only_plan(url: str) -> dict:
    with AuditStore(url) as store:
        (plan,) = store.list_plans()
    return plan


def test_refused_parameters_fail_the_start_step(tasks: ModuleType, store_url: str) -> None:
    with pytest.raises(tasks.StepFailed):
        tasks.start({"threshold": 0.5}, "lagassign_rebalance", "manual__1", "manual", "alice")
    plan = _only_plan(store_url)
    assert (plan["status"], plan["failed_step"]) == ("failed", "start")
    assert plan["error"].startswith("step start failed: threshold must be a number ≥ 1.0")


def test_a_step_that_fails_is_recorded_with_its_cause_and_kept_by_finish(
    tasks: ModuleType, store_url: str, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-groups.yaml"
    run = tasks.start({"groups_file": str(missing)}, "lagassign_rebalance", "manual__2", "manual", "alice")
    with pytest.raises(tasks.StepFailed):
        tasks.snapshot(run, "lagassign_kafka")
    noted = _only_plan(store_url)
    assert (noted["status"], noted["failed_step"]) == ("running", "snapshot")
    with pytest.raises(tasks.StepFailed):
        tasks.finish(run, {"start": True})
    plan = _only_plan(store_url)
    assert (plan["status"], plan["failed_step"]) == ("failed", "snapshot")
    assert (
        plan["error"] == f"step snapshot failed: cannot read groups file {missing}: No such file or directory"
    )


def test_a_step_that_left_no_cause_is_named_by_finish(tasks: ModuleType, store_url: str) -> None:
    run = tasks.start({}, "lagassign_rebalance", "manual__3", "manual", "alice")
    with pytest.raises(tasks.StepFailed):
        tasks.finish(run, {"start": True, "snapshot": True})
    plan = _only_plan(store_url)
    assert (plan["status"], plan["failed_step"]) == ("failed", "evaluate")
    assert plan["error"] == "step evaluate failed: the Spark job ended with an error (its task log says why)"


def test_a_refused_review_request_fails_at_publish(tasks: ModuleType, store_url: str) -> None:
    with pytest.raises(tasks.StepFailed, match="group is required"):
        tasks.review(
            {"action": "publish", "plan_id": 1}, "lagassign_kafka", "lagassign_review", "manual__4", "bob"
        )
    plan = _only_plan(store_url)
    assert (plan["status"], plan["failed_step"], plan["error"]) == (
        "failed",
        "publish",
        "step publish failed: group is required",
    )
