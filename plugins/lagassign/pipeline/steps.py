"""The steps of one planning run before publishing, shared by ``lagassign plan`` and the Airflow tasks.

snapshot -> evaluate -> record evaluations -> gate (-> ``publish``). Each step takes what it needs
explicitly (store, plan id, paths, parameters) so Airflow can run them as separate tasks and the
CLI as one call; each logs one line per group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.clock import parse_utc
from ..core.clusters import manifest_cluster
from ..core.gate import GateDecision, decide_all
from ..core.results import GroupEvaluation
from ..evaluation import EvaluationParams, run_local, write_params
from ..kafka.errors import BrokerUnavailableError
from ..kafka.groupsfile import fill_capacities, load_capacities, load_groups_file
from ..kafka.snapshot import snapshot_to
from ..spark.submit import run_spark_evaluation
from ..tables.evaluations import read_evaluations
from .inflow import add_inflow
from .params import PlanParams
from .ports import AuditTrailPort, PlanningStore

Log = Callable[[str], None]


def snapshot_step(
    store: PlanningStore,
    plan_id: int,
    kafka_config: Mapping[str, Any],
    params: PlanParams,
    out: str | Path,
    progress: Any = None,
    log: Log = print,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Snapshot the cluster into ``out`` and record where and when; returns the manifest.

    ``timeout`` bounds each Kafka request (retried a few times) so an unreachable cluster
    fails the step in bounded time."""
    declared = load_groups_file(params.groups_file) if params.groups_file else []
    snap = snapshot_to(
        out,
        kafka_config,
        groups_regex=params.groups,
        assign_groups=declared,
        auto_offset_reset=params.auto_offset_reset,
        plan_topic=params.plan_topic,
        progress=progress,
        log=log,
        **({"timeout": timeout} if timeout else {}),
    )
    manifest = snap.manifest

    # capacities the groups file configures, for members whose status records state none
    configured = (
        fill_capacities(snap.members, load_capacities(params.groups_file)) if params.groups_file else 0
    )
    if configured:
        log(f"capacity: {configured} members from the groups file")
    known = add_inflow(store, plan_id, snap, log)
    if configured or known["rates"] or known["lag_s"] or known["capacities"]:
        snap.write(out)  # now with rate and lag_s per partition, capacities of members

    store.set_snapshot(plan_id, str(out), parse_utc(manifest.get("snapshot_at")), manifest_cluster(manifest))
    counts = manifest["counts"]
    failures = manifest.get("failed", [])
    if counts["groups"] and counts["failed"] == counts["groups"]:
        # Not one group could be read: the cluster went away (or never answered), which is a
        # failed run, not a run that found nothing worth doing.

        raise BrokerUnavailableError(
            f"snapshot failed for all {counts['groups']} groups; first: "
            f"{failures[0]['group']}: {failures[0]['error']}"
            if failures
            else f"snapshot failed for all {counts['groups']} groups"
        )
    log(
        f"snapshot: {counts['groups']} groups ({counts['failed']} failed), {counts['partitions']} "
        f"partitions, {counts['members']} members -> {out}"
    )
    for failure in manifest.get("failed", []):
        log(f"group {failure['group']}: snapshot failed: {failure['error']}")
    return manifest


def evaluation_params(snapshot: str | Path, out: str | Path, params: PlanParams) -> Any:
    """What the evaluation engines (in-process or the Spark job) are asked to do."""
    return EvaluationParams(
        str(snapshot),
        str(out),
        tuple(params.evaluated_strategies()),
        params.max_moves,
        exact_budget=params.exact_budget,
    )


def evaluate_step(
    snapshot: str | Path,
    out: str | Path,
    params: PlanParams,
    spark_master: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    log: Log = print,
) -> dict[str, Any]:
    """Evaluate every requested strategy for every group, in this process or (``spark_master``)
    with spark-submit; the evaluations land in ``out`` either way. Returns the run's summary."""
    job = evaluation_params(snapshot, out, params)
    if spark_master:
        params_file = write_params(job, Path(out).parent / "spark-params.json")
        summary = run_spark_evaluation(params_file, master=spark_master)
    else:
        summary = run_local(job, None if progress is None else lambda done, total, *_: progress(done, total))
    log(f"evaluated {summary.get('groups')} groups with {summary.get('engine')} -> {out}")
    return summary


def record_step(
    store: AuditTrailPort, plan_id: int, evaluations: str | Path, log: Log = print
) -> list[GroupEvaluation]:
    """Read the evaluations (from either engine) and put them in the audit trail."""
    evaluated = read_evaluations(evaluations)
    store.record_evaluations(plan_id, evaluated)
    for e in evaluated:
        if e.error:
            log(f"group {e.group}: not evaluated: {e.error}")
    log(f"recorded evaluations of {len(evaluated)} groups in plan {plan_id}")
    return evaluated


def gate_step(
    store: AuditTrailPort,
    plan_id: int,
    evaluated: Iterable[GroupEvaluation],
    params: PlanParams,
    log: Log = print,
) -> list[GateDecision]:
    """The gate's decision per group, each recorded with its reason, go or stop."""
    usable = [e for e in evaluated if not e.error]
    decisions = decide_all(
        usable,
        params.threshold,
        params.min_improvement,
        params.max_moves,
        params.strategies and [*params.strategies],
        params.max_catch_up_s,
    )
    store.record_decisions(plan_id, decisions)
    for d in decisions:
        log(f"group {d.group}: {'GO' if d.go else 'stop'}: {d.reason}")
    return decisions
