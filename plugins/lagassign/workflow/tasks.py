"""Task callables of the planning DAGs: each reads what it needs from the run, calls one
pipeline step, and hands small JSON to the next task. No planning logic lives here."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..pipeline import (
    PlanParams,
    base_dir,
    evaluation_params,
    gate_step,
    publish_step,
    reconcile_step,
    record_step,
    run_dir,
    snapshot_step,
)
from ..pipeline.evaluation import write_params
from ..spark.submit import build_pyfiles
from .hooks import LagassignKafkaHook, open_store

log = logging.getLogger("lagassign")
STEPS = ("start", "snapshot", "evaluate", "record", "gate", "publish")


def _say(message: str) -> None:
    log.info("%s", message)


def start(params: Mapping[str, Any], dag_id: str, run_id: str, run_type: str, user: str | None) -> dict:
    """Validate the parameters, open the plan in the audit trail, lay out the run's folder."""
    plan_params = PlanParams.from_mapping(params)
    trigger = "scheduled" if run_type == "scheduled" else "manual"
    with open_store() as store:
        plan_id = store.start_plan(trigger, user, dag_id, run_id, plan_params.record())
    folder = run_dir(base_dir(), plan_id)
    folder.mkdir(parents=True, exist_ok=True)
    build_pyfiles()  # what --py-files ships to Spark executors; rebuilt only when stale
    run = {
        "plan_id": plan_id,
        "params": plan_params.record(),
        "snapshot": str(folder / "snapshot"),
        "evaluations": str(folder / "evaluations"),
        "spark_params": str(folder / "spark-params.json"),
    }
    # The Spark job takes its parameters from this file, never from an interpolated command line.
    write_params(evaluation_params(run["snapshot"], run["evaluations"], plan_params), run["spark_params"])
    _say(f"plan {plan_id}: {trigger} run by {user or 'the scheduler'}; folder {folder}")
    return run


def snapshot(run: Mapping[str, Any], kafka_conn_id: str) -> dict:
    """Settle publications an earlier run left pending, then snapshot the cluster."""
    params = PlanParams.from_mapping(run["params"])
    config = LagassignKafkaHook(kafka_conn_id).get_config()
    with open_store() as store:
        reconcile_step(store, config, params.plan_topic, log=_say)
        manifest = snapshot_step(store, run["plan_id"], config, params, run["snapshot"], log=_say)
    return {"groups": manifest["counts"]["groups"], "failed": manifest["counts"]["failed"]}


def record(run: Mapping[str, Any]) -> int:
    with open_store() as store:
        return len(record_step(store, run["plan_id"], run["evaluations"], log=_say))


def gate(run: Mapping[str, Any]) -> list[dict]:
    params = PlanParams.from_mapping(run["params"])
    with open_store() as store:
        evaluated = store.evaluations(run["plan_id"])
        return [d.to_dict() for d in gate_step(store, run["plan_id"], evaluated, params, log=_say)]


def publish(run: Mapping[str, Any], decisions: list[dict], kafka_conn_id: str) -> list[dict]:
    params = PlanParams.from_mapping(run["params"])
    config = LagassignKafkaHook(kafka_conn_id).get_config() if params.apply else None
    with open_store() as store:
        return publish_step(store, run["plan_id"], decisions, config, params, log=_say)


def finish(run: Mapping[str, Any] | None, completed: Mapping[str, bool]) -> None:
    """Close the plan in the audit trail: succeeded, or failed at the first step that did not end."""
    if run is None:
        raise RuntimeError("the run never started (its parameters were refused); nothing recorded")
    failed = next((s for s in STEPS if not completed.get(s)), None)
    with open_store() as store:
        if failed is None:
            store.finish_plan(run["plan_id"], "succeeded")
            _say(f"plan {run['plan_id']}: succeeded")
            return
        store.finish_plan(run["plan_id"], "failed", error=f"step {failed} failed; nothing published after it")
    raise RuntimeError(f"plan {run['plan_id']}: step {failed} failed (see its log); recorded as failed")


def failover(
    groups: list[str],
    settings: Any,
    kafka_conn_id: str,
    dag_id: str,
    run_id: str,
    user: str | None,
    events: list[dict],
) -> list[dict]:
    """Run the failover step for each group (one audit plan each); what each one did."""
    from ..pipeline.failover import failover_step

    if not groups:
        _say("failover: no group named by the triggering events or the parameters; nothing to do")
        return []
    for event in events:
        _say(
            f"group {event['group']}: {event.get('change')} (seen by the triggerer under plan "
            f"v{event.get('version')})"
        )
    config = LagassignKafkaHook(kafka_conn_id).get_config()
    outcomes = []
    with open_store() as store:
        for group in groups:
            outcomes.append(
                failover_step(
                    store,
                    config,
                    group,
                    settings,
                    base_dir(),
                    user or "asset event",
                    dag_id,
                    f"{run_id}:{group}",
                    log=_say,
                )
            )
    return outcomes
