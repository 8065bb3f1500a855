"""The two DAGs, for real: DagBag, and ``airflow dags test`` end to end against the broker,
Spark in local mode (spark-submit through SparkSubmitOperator) and the audit store."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from dagbagkit import REPO_DAGS, dagbag_report
from kafkakit import airflow_home, only_declared


@pytest.fixture(scope="module")
def airflow(tmp_path_factory, broker):
    home = tmp_path_factory.mktemp("airflow")
    return home, airflow_home(home, broker)


def _dags_test(env: dict, conf: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "airflow"),
            "dags",
            "test",
            "lagassign_rebalance",
            "-c",
            json.dumps(conf),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


_DAGBAG_REPORT = """
daily, manual = bag.dags.get("lagassign_daily"), bag.dags.get("lagassign_rebalance")
failover = bag.dags.get("lagassign_failover")
assets = list(failover.timetable.asset_condition.objects)
print(json.dumps({
    "failover_assets": [a.name for a in assets],
    "failover_watchers": [type(w.trigger).__name__ for a in assets for w in a.watchers],
    "failover_tasks": sorted(failover.task_ids),
    "errors": {k: str(v) for k, v in bag.import_errors.items()},
    "dags": sorted(bag.dags),
    "daily_schedule": str(daily.schedule), "catchup": daily.catchup,
    "max_active_runs": daily.max_active_runs,
    "params": sorted(manual.params.keys()), "tasks": sorted(manual.task_ids),
}))
"""


@pytest.mark.one_broker
def test_dagbag_loads_the_five_dags_without_errors(airflow):
    _home, env = airflow
    info = dagbag_report(_DAGBAG_REPORT, env, timeout=120)
    assert info["errors"] == {}
    assert info["dags"] == REPO_DAGS
    # The failover DAG is scheduled by an asset whose watcher is our status-topic trigger.
    assert info["failover_assets"] == ["lagassign_membership"]
    assert info["failover_watchers"] == ["MembershipTrigger"] and info["failover_tasks"] == ["failover"]
    assert info["daily_schedule"] == "@daily" and info["catchup"] is False and info["max_active_runs"] == 1
    assert {"groups", "strategies", "threshold", "min_improvement", "max_moves", "apply", "dry_run"} <= set(
        info["params"]
    )
    assert set(info["tasks"]) == {"start", "snapshot", "evaluate", "record", "gate", "publish", "finish"}


def test_rebalance_end_to_end_publishes_the_skewed_group_and_gates_the_balanced_one(airflow, broker):
    from demo_groups import build
    from lagassign.kafka.plans import PlanStore
    from lagassign.store import AuditStore

    home, env = airflow
    prefix = f"e2e{uuid.uuid4().hex[:6]}-"
    groups_file = build(broker.config(), broker.create_topic, home / "demo", prefix=prefix)
    # The audit store comes from the Airflow connection lagassign_db, not the environment variable.
    elsewhere = home / "not-the-store.db"
    run = _dags_test(
        {**env, "LAGASSIGN_DB_URL": f"sqlite:///{elsewhere}"},
        {"groups": only_declared(groups_file), "groups_file": str(groups_file), "apply": True},
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert not elsewhere.exists()

    with AuditStore(env["LAGASSIGN_DB_URL"]) as store:
        plans = store.list_plans()
        assert plans and plans[0]["status"] == "succeeded"
        plan = store.get_plan(plans[0]["id"])
    assert plan["trigger"] == "manual" and plan["dag_id"] == "lagassign_rebalance"
    groups = {g["group"]: g for g in plan["groups"]}
    skewed, balanced = groups[f"{prefix}orders-enricher"], groups[f"{prefix}audit-sink"]
    assert skewed["decision"]["go"] is True
    assert [p["state"] for p in skewed["publications"]] == ["published"]
    assert balanced["decision"]["go"] is False
    assert "threshold" in balanced["decision"]["reason"]
    assert balanced["publications"] == []
    assert {r["strategy"] for r in skewed["results"]} >= {"lag-optimal", "lag", "range", "current"}

    with PlanStore(broker.config()) as topic:
        newest = topic.read([f"{prefix}orders-enricher", f"{prefix}audit-sink"])
    assert newest[f"{prefix}orders-enricher"].version == 2
    assert newest[f"{prefix}orders-enricher"].strategy == skewed["decision"]["chosen"]
    assert newest[f"{prefix}audit-sink"].version == 1  # untouched
    # The log says what was done per group, one line each.
    assert f"group {prefix}orders-enricher: published" in run.stdout + run.stderr


@pytest.mark.one_broker
def test_invalid_params_fail_before_any_task_runs(airflow):
    """A value outside the schema (an unknown strategy) is refused by Airflow itself."""
    conf = {"strategies": ["nope"]}
    from lagassign.store import AuditStore

    _home, env = airflow
    with AuditStore(env["LAGASSIGN_DB_URL"]) as store:
        before = len(store.list_plans())
    run = _dags_test(env, conf)
    assert run.returncode != 0
    assert "ParamValidationError" in run.stdout + run.stderr or "Invalid input" in run.stdout + run.stderr
    with AuditStore(env["LAGASSIGN_DB_URL"]) as store:
        assert len(store.list_plans()) == before


@pytest.mark.one_broker
@pytest.mark.parametrize(
    ("conf", "message"),
    [
        ({"threshold": 0.5}, "threshold must be a number ≥ 1.0"),
        ({"groups": "(["}, "groups is not a valid regular expression"),
    ],
)
def test_values_the_form_cannot_check_fail_at_start_with_one_recorded_line(airflow, conf, message):
    """Ranges and regular expressions are checked by the start task (the form would clamp a
    number to a schema minimum silently): the run fails with one line, recorded as a failed plan."""
    from lagassign.store import AuditStore

    _home, env = airflow
    run = _dags_test(env, conf)
    assert run.returncode != 0
    assert message in run.stdout + run.stderr
    with AuditStore(env["LAGASSIGN_DB_URL"]) as store:
        newest = store.list_plans(limit=1)[0]
    assert newest["status"] == "failed" and message in newest["error"]
    assert newest["error"].startswith("step start failed: ")
