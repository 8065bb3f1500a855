"""Task callables of the planning DAGs: each reads what it needs from the run, calls one
pipeline step, and hands small JSON to the next task. No planning logic lives here."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ..core.errors import LagassignError
from ..core.explain import hint
from ..core.outcome import outcome_of, run_succeeded, summary
from ..evaluation import write_params
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
from ..pipeline.failover import failover_step
from ..pipeline.ports import AuditTrailPort
from ..pipeline.review import ReviewRequest, publish_reviewed, refused, roll_back
from ..spark.submit import build_pyfiles
from .hooks import LagassignKafkaHook, groups_file_or_workers, open_store

log = logging.getLogger("lagassign")
STEPS = ("start", "snapshot", "evaluate", "record", "gate", "publish")


class StepFailed(SystemExit):
    """A step of a planning run failed; its message is the one-line cause, also recorded.

    A ``SystemExit``: Airflow's task runner logs it as one line ("Task exited") and fails the
    task, where any other exception is logged with a traceback that repeats what the step
    already said. Code that catches ``Exception`` lets it through, as it should."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def _say(message: str) -> None:
    log.info("%s", message)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if isinstance(exc, LagassignError) else f"{type(exc).__name__}: {text}"


@contextmanager
def _step(run: Mapping[str, Any], name: str) -> Iterator[None]:
    """Record why a step failed in the plan (the plans page shows it), then fail the task with
    that one line instead of leaving the cause only in the task log."""
    try:
        yield
    except Exception as exc:
        cause = _one_line(exc)
        try:
            with open_store() as store:
                store.note_failure(run["plan_id"], f"step {name} failed: {cause}", failed_step=name)
        except Exception:  # the store itself may be the cause; the task log still says why
            log.exception("could not record the failure of step %s", name)
        log.error("plan %s: step %s failed: %s", run["plan_id"], name, cause)
        raise StepFailed(f"step {name} failed: {cause}") from exc


def plan_url(plan_id: int) -> str:
    """The plan's page, for the task logs (Airflow's ``[api] base_url`` when set, else a path)."""
    try:
        from airflow.configuration import conf

        base = str(conf.get("api", "base_url", fallback="") or "").rstrip("/")
    except Exception:  # outside a configured Airflow: the path alone still helps
        base = ""
    return f"{base}/lagassign/plans/{plan_id}"


def trigger_of(run_type: object) -> str:
    """The audit trail's trigger for an Airflow run type.

    Airflow hands the task a ``DagRunType`` enum whose ``str()`` is ``'DagRunType.SCHEDULED'``
    (not its value ``'scheduled'``), so the value is taken from the enum, or from the text after
    the dot; anything that is not a schedule (manual, asset-triggered, backfill) counts as manual.
    """
    value = getattr(run_type, "value", run_type)
    text = str(value).strip().lower().rsplit(".", 1)[-1]
    return "scheduled" if text == "scheduled" else "manual"


def with_default_groups_file(params: Mapping[str, Any]) -> dict[str, Any]:
    """The run's parameters with ``hooks.groups_file_or_workers``'s groups file (the plan records
    which file it used); a run that names none and has no workers' file keeps what it gave."""
    chosen = groups_file_or_workers(params.get("groups_file"))
    return {**params, "groups_file": chosen} if chosen else dict(params)


def start(params: Mapping[str, Any], dag_id: str, run_id: str, run_type: object, user: str | None) -> dict:
    """Validate the parameters, open the plan in the audit trail, lay out the run's folder.

    Parameters that cannot be used are recorded as a failed plan with a one-line reason (so
    the plans page says why), then the task fails with that line."""
    trigger = trigger_of(run_type)
    params = with_default_groups_file(params)
    try:
        plan_params = PlanParams.from_mapping(params)
    except LagassignError as exc:
        with open_store() as store:
            plan_id = store.start_plan(trigger, user, dag_id, run_id, dict(params))
            store.finish_plan(plan_id, "failed", error=f"step start failed: {exc}", failed_step="start")
        log.error("plan %s: parameters refused: %s; page %s", plan_id, exc, plan_url(plan_id))
        raise StepFailed(f"parameters refused: {exc}") from None
    with open_store() as store:
        plan_id = store.start_plan(trigger, user, dag_id, run_id, plan_params.record())
    folder = run_dir(base_dir(), plan_id)
    folder.mkdir(parents=True, exist_ok=True)
    build_pyfiles()  # what --py-files ships to Spark executors; rebuilt only when stale
    run: dict[str, Any] = {
        "plan_id": plan_id,
        "params": plan_params.record(),
        "snapshot": str(folder / "snapshot"),
        "evaluations": str(folder / "evaluations"),
        "spark_params": str(folder / "spark-params.json"),
    }
    # The Spark job takes its parameters from this file, never from an interpolated command line.
    write_params(evaluation_params(run["snapshot"], run["evaluations"], plan_params), run["spark_params"])
    who = user or ("the scheduler" if trigger == "scheduled" else "an unnamed user")
    _say(f"plan {plan_id}: {trigger} run by {who}; folder {folder}; page {plan_url(plan_id)}")
    return run


def snapshot(run: Mapping[str, Any], kafka_conn_id: str) -> dict:
    """Settle publications an earlier run left pending, then snapshot the cluster."""
    params = PlanParams.from_mapping(run["params"])
    with _step(run, "snapshot"), open_store() as store:
        config = LagassignKafkaHook(kafka_conn_id).get_config()
        reconcile_step(store, config, params.plan_topic, log=_say)
        manifest = snapshot_step(store, run["plan_id"], config, params, run["snapshot"], log=_say)
    return {"groups": manifest["counts"]["groups"], "failed": manifest["counts"]["failed"]}


def record(run: Mapping[str, Any]) -> int:
    """Put the Spark job's evaluations in the audit trail."""
    with _step(run, "record"), open_store() as store:
        return len(record_step(store, run["plan_id"], run["evaluations"], log=_say))


def gate(run: Mapping[str, Any]) -> list[dict]:
    """The gate's decision per group (one log line each, also for groups not evaluated)."""
    params = PlanParams.from_mapping(run["params"])
    with _step(run, "gate"), open_store() as store:
        plan = store.get_plan(run["plan_id"], evaluations=False)
        for g in plan["groups"]:
            if g.get("error"):
                why = hint(g["error"])
                _say(f"group {g['group']}: stop: not evaluated: {g['error']}" + (f" ({why})" if why else ""))
        evaluated = store.evaluations(run["plan_id"])
        if not evaluated and not plan["groups"]:
            _say("gate: no group found (check the groups regex, the groups file and the status topic)")
        return [d.to_dict() for d in gate_step(store, run["plan_id"], evaluated, params, log=_say)]


def publish(run: Mapping[str, Any], decisions: list[dict], kafka_conn_id: str) -> list[dict]:
    params = PlanParams.from_mapping(run["params"])
    with _step(run, "publish"), open_store() as store:
        config = LagassignKafkaHook(kafka_conn_id).get_config() if params.apply else None
        return publish_step(store, run["plan_id"], decisions, config, params, log=_say)


def finish(run: Mapping[str, Any] | None, completed: Mapping[str, bool]) -> None:
    """Close the plan in the audit trail: succeeded, or failed at the first step that did not end."""
    if run is None:
        raise StepFailed(
            "the run never started: its parameters were refused (the start task's log and the plans "
            "page say why)"
        )
    failed = next((s for s in STEPS if not completed.get(s)), None)
    plan_id = run["plan_id"]
    with open_store() as store:
        if failed is None:
            store.finish_plan(plan_id, "succeeded")
            plan = store.get_plan(plan_id, evaluations=False)
            conclude(plan)
            return
        noted = store.get_plan(plan_id, evaluations=False)
        error = noted.get("error") or failure_text(failed)
        store.finish_plan(plan_id, "failed", error=error, failed_step=noted.get("failed_step") or failed)
    raise StepFailed(f"plan {plan_id}: failed: {error} ({plan_url(plan_id)})")


def conclude(plan: Mapping[str, Any]) -> None:
    """The run's final line: each group's outcome as the pages show it, and the plan's page.
    A run in which a publication was refused or failed fails with that line (its task, then
    its Airflow run, turn red): a run that published nothing never reads as published."""
    outcomes = [(g["group"], outcome_of(plan, g)) for g in plan.get("groups") or ()]
    line = f"plan {plan['id']}: {summary(outcomes)}; page {plan_url(plan['id'])}"
    if run_succeeded(o for _, o in outcomes):
        _say(line)
        return
    log.error("%s", line)
    raise StepFailed(line)


def failure_text(step: str) -> str:
    """The recorded error of a step that left no cause of its own (the Spark job, a killed task)."""
    if step == "evaluate":
        return "step evaluate failed: the Spark job ended with an error (its task log says why)"
    return f"step {step} failed (its task log says why); nothing published after it"


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


def review(
    conf: Mapping[str, Any], kafka_conn_id: str, dag_id: str, run_id: str, user: str | None
) -> dict[str, Any]:
    """The plans page's actions: publish a reviewed plan's group, or roll a group back to a
    version published before."""
    action, group = conf.get("action") or "publish", conf.get("group")
    dry_run = bool(conf.get("dry_run"))
    version: int = conf.get("version") or 0
    plan_id: int = conf.get("plan_id") or 0
    record = {k: conf.get(k) for k in ("action", "plan_id", "version", "group", "dry_run") if k in conf}
    problem = None
    if not group:
        problem = "group is required"
    elif action == "rollback":
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            problem = f"version (a published version number) is required to roll back, got {version!r}"
    elif action == "publish":
        if not isinstance(plan_id, int) or isinstance(plan_id, bool) or plan_id < 1:
            problem = f"plan_id (a plan number) is required to publish, got {plan_id!r}"
    else:
        problem = f"action must be publish or rollback, got {action!r}"
    config = None
    if problem is None:
        try:  # a dry run reads the plans topic too: it says what a real publish would do
            config = LagassignKafkaHook(kafka_conn_id).get_config()
        except Exception as exc:
            problem = f"no Kafka settings to publish with: {_one_line(exc)}"
    request = ReviewRequest(user, dag_id, run_id, dry_run)
    with open_store() as store:
        if problem is not None:
            _refused(store, record, problem, request)
        try:
            if action == "rollback":
                done = roll_back(store, config, str(group), version, request, log=_say)
            else:
                done = publish_reviewed(store, config, plan_id, str(group), request, log=_say)
        except LagassignError as exc:
            line = _one_line(exc)
            log.error("%s", line)
            raise StepFailed(line) from None
        conclude(store.get_plan(done["plan_id"], evaluations=False))
    return done


def _refused(store: AuditTrailPort, record: Mapping[str, Any], problem: str, request: ReviewRequest) -> None:
    """A review run that cannot start still leaves its trace: a failed plan saying why."""
    new_id = refused(store, record, problem, request)
    log.error("plan %s: %s; page %s", new_id, problem, plan_url(new_id))
    raise StepFailed(problem)
