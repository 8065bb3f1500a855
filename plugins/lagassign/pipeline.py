"""The steps of one planning run, shared by ``lagassign plan`` and the Airflow tasks.

snapshot -> evaluate -> record evaluations -> gate -> publish -> record the outcome.
Each step takes what it needs explicitly (store, plan id, paths, parameters) so Airflow can
run them as separate tasks and the CLI as one call; each logs one line per group.
Nothing is published without its audit record: the version is reserved in the store first,
then written to the plans topic, then marked published. A run that dies in between leaves a
pending publication that the next run reconciles against the topic.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import LagassignError
from .gate import DEFAULT_MIN_IMPROVEMENT, DEFAULT_THRESHOLD, GateDecision, decide_all, validate_parameters
from .strategies import strategy_names

Log = Callable[[str], None]

PLAN_TOPIC = "lagassign.plans"


class ParamsError(LagassignError):
    """Planning parameters (CLI flags, DAG params) that cannot be used."""


@dataclass(frozen=True)
class PlanParams:
    """What one planning run is asked to do; validated once, before any work starts."""

    groups: str | None = None
    groups_file: str | None = None
    strategies: tuple[str, ...] | None = None
    threshold: float = DEFAULT_THRESHOLD
    min_improvement: float = DEFAULT_MIN_IMPROVEMENT
    max_moves: int | None = None
    apply: bool = False
    dry_run: bool = False
    force: bool = False
    auto_offset_reset: str = "latest"
    plan_topic: str = PLAN_TOPIC

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> PlanParams:
        """Build from a mapping (DAG params, parsed flags); unknown keys and bad values refused."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ParamsError(f"unknown parameter {unknown[0]!r}; known: {', '.join(sorted(known))}")
        data = dict(values)
        if data.get("groups") in ("", ".*"):
            data["groups"] = None
        if data.get("groups_file") == "":
            data["groups_file"] = None
        strategies = data.get("strategies")
        if isinstance(strategies, str):  # "a,b" from a command line; "" means all
            strategies = [s.strip() for s in strategies.split(",") if s.strip()] or None
        if strategies is not None:
            if not isinstance(strategies, list | tuple) or not strategies:
                raise ParamsError(f"strategies must be a non-empty list of names (or unset for all), "
                                  f"got {strategies!r}")
            data["strategies"] = tuple(strategies)
        params = cls(**data)
        params.validate()
        return params

    def validate(self) -> None:
        if self.groups is not None:
            if not isinstance(self.groups, str):
                raise ParamsError(f"groups must be a regular expression, got {self.groups!r}")
            try:
                re.compile(self.groups)
            except re.error as exc:
                raise ParamsError(
                    f"groups is not a valid regular expression ({exc}): {self.groups!r}"
                ) from None
        if self.strategies is not None:
            unknown = [s for s in self.strategies if s not in strategy_names()]
            if unknown:
                raise ParamsError(f"unknown strategy {unknown[0]!r}; known: {', '.join(strategy_names())}")
        validate_parameters(self.threshold, self.min_improvement, self.max_moves, self.strategies)
        for name in ("apply", "dry_run", "force"):
            if not isinstance(getattr(self, name), bool):
                raise ParamsError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.auto_offset_reset not in ("earliest", "latest", "none"):
            raise ParamsError(
                f"auto_offset_reset must be earliest, latest or none, got {self.auto_offset_reset!r}"
            )
        if not isinstance(self.plan_topic, str) or not self.plan_topic:
            raise ParamsError("plan_topic must be a topic name")

    def evaluated_strategies(self) -> list[str]:
        """The strategies to evaluate: the requested ones plus ``current``, the gate's baseline."""
        names = list(self.strategies) if self.strategies else strategy_names()
        return names if "current" in names else [*names, "current"]

    def record(self) -> dict[str, Any]:
        """JSON form for the audit trail and XCom (holds no secrets: Kafka settings are not here)."""
        out = asdict(self)
        out["strategies"] = list(self.strategies) if self.strategies else None
        return out


def base_dir(explicit: str | None = None) -> Path:
    """Where snapshots and evaluations go: argument > LAGASSIGN_BASE_DIR > $AIRFLOW_HOME/lagassign."""
    if explicit:
        return Path(explicit)
    if os.environ.get("LAGASSIGN_BASE_DIR"):
        return Path(os.environ["LAGASSIGN_BASE_DIR"])
    return Path(os.environ.get("AIRFLOW_HOME", Path.home() / "airflow")) / "lagassign"


def run_dir(base: str | Path, plan_id: int) -> Path:
    """The folder of one plan's snapshot and evaluations."""
    return Path(base) / f"plan-{plan_id:06d}"


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# -- steps ---------------------------------------------------------------------------------


def snapshot_step(
    store: Any,
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
    from .kafka.groupsfile import load_groups_file
    from .kafka.snapshot import snapshot_to

    declared = load_groups_file(params.groups_file) if params.groups_file else []
    snap = snapshot_to(
        out, kafka_config, groups_regex=params.groups, assign_groups=declared,
        auto_offset_reset=params.auto_offset_reset, plan_topic=params.plan_topic,
        progress=progress, log=log, **({"timeout": timeout} if timeout else {}),
    )
    manifest = snap.manifest
    store.set_snapshot(plan_id, str(out), _parse_time(manifest.get("snapshot_at")))
    counts = manifest["counts"]
    failures = manifest.get("failed", [])
    if counts["groups"] and counts["failed"] == counts["groups"]:
        # Not one group could be read: the cluster went away (or never answered), which is a
        # failed run, not a run that found nothing worth doing.
        from .kafka.errors import BrokerUnavailableError

        raise BrokerUnavailableError(
            f"snapshot failed for all {counts['groups']} groups; first: "
            f"{failures[0]['group']}: {failures[0]['error']}" if failures else
            f"snapshot failed for all {counts['groups']} groups"
        )
    log(f"snapshot: {counts['groups']} groups ({counts['failed']} failed), {counts['partitions']} "
        f"partitions, {counts['members']} members -> {out}")
    for failure in manifest.get("failed", []):
        log(f"group {failure['group']}: snapshot failed: {failure['error']}")
    return manifest


def evaluation_params(snapshot: str | Path, out: str | Path, params: PlanParams) -> Any:
    """What the evaluation engines (in-process or the Spark job) are asked to do."""
    from .evaluation import EvaluationParams

    return EvaluationParams(str(snapshot), str(out), tuple(params.evaluated_strategies()), params.max_moves)


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
    from .evaluation import run_local, write_params

    job = evaluation_params(snapshot, out, params)
    if spark_master:
        from .spark import run_spark_evaluation

        params_file = write_params(job, Path(out).parent / "spark-params.json")
        summary = run_spark_evaluation(params_file, master=spark_master)
    else:
        summary = run_local(job, None if progress is None else lambda done, total, *_: progress(done, total))
    log(f"evaluated {summary.get('groups')} groups with {summary.get('engine')} -> {out}")
    return summary


def record_step(store: Any, plan_id: int, evaluations: str | Path, log: Log = print) -> list[dict[str, Any]]:
    """Read the evaluations (from either engine) and put them in the audit trail."""
    from .evaluation import read_evaluations

    evaluated = read_evaluations(evaluations)
    store.record_evaluations(plan_id, evaluated)
    for e in evaluated:
        if e.get("error"):
            log(f"group {e['group']}: not evaluated: {e['error']}")
    log(f"recorded evaluations of {len(evaluated)} groups in plan {plan_id}")
    return evaluated


def gate_step(
    store: Any, plan_id: int, evaluated: Iterable[Mapping[str, Any]], params: PlanParams, log: Log = print
) -> list[GateDecision]:
    """The gate's decision per group, each recorded with its reason, go or stop."""
    usable = [e for e in evaluated if not e.get("error")]
    decisions = decide_all(
        usable, params.threshold, params.min_improvement, params.max_moves,
        params.strategies and [*params.strategies],
    )
    store.record_decisions(plan_id, decisions)
    for d in decisions:
        log(f"group {d.group}: {'GO' if d.go else 'stop'}: {d.reason}")
    return decisions


def publish_step(
    store: Any,
    plan_id: int,
    decisions: Iterable[GateDecision | Mapping[str, Any]],
    kafka_config: Mapping[str, Any] | None,
    params: PlanParams,
    log: Log = print,
    timeout: float = 30.0,
) -> list[dict[str, Any]]:
    """Publish the plans the gate let through, when ``apply`` is on; one outcome per group,
    also recorded in the audit trail.

    Per group: skip it if it changed since the snapshot (members, subscriptions, partitions)
    or if its plan is already in force; reserve the version in the audit store (refused for a
    snapshot older than the group's newest plan unless ``force``); write the plan record to
    the topic; mark it published. Without its audit record nothing reaches the topic.
    """
    go = [d if isinstance(d, GateDecision) else GateDecision(**_decision_fields(d)) for d in decisions]
    go = [d for d in go if d.go]
    outcomes: list[dict[str, Any]] = []
    if not go:
        log("publish: no group passed the gate")
        return outcomes
    if not params.apply:
        for d in go:
            note = f"not published: apply is off ({d.chosen} recorded)"
            _outcome(store, plan_id, d, outcomes, log, False, note)
        return outcomes
    from .kafka.errors import PlanError
    from .kafka.plans import PlanStore, normalize_members
    from .store import StalePlanError

    plan = store.get_plan(plan_id)
    evaluations = {(g["group"], r["strategy"]): r for g in plan["groups"] for r in g.get("results", [])}
    changes = {} if params.force else changed_since_snapshot(
        kafka_config or {}, params, plan.get("snapshot_uri"), [d.group for d in go], timeout)
    with PlanStore(dict(kafka_config or {}), params.plan_topic, timeout) as topic:
        for d in go:
            members = evaluations[(d.group, d.chosen)]["assignment"]
            if changes.get(d.group):
                _outcome(store, plan_id, d, outcomes, log, False,
                         f"skipped: group changed since the snapshot ({changes[d.group]})")
                continue
            in_force = topic.newest(d.group)
            # The same rule PlanStore.publish applies: an equal plan is never written again.
            if in_force is not None and in_force.members == normalize_members(members, d.group):
                _outcome(store, plan_id, d, outcomes, log, False,
                         f"unchanged: the plan is already in force as version {in_force.version}",
                         version=in_force.version)
                continue
            if params.dry_run:
                nxt = (in_force.version + 1) if in_force else 1
                _outcome(store, plan_id, d, outcomes, log, False,
                         f"dry run: would publish {d.chosen} as version {nxt}", version=nxt)
                continue
            try:
                pub = store.mark_publication_pending(
                    plan_id, d.group, strategy=d.chosen, assignment=members, force=params.force,
                    min_version=(in_force.version + 1) if in_force else None,
                )
            except StalePlanError as exc:
                _outcome(store, plan_id, d, outcomes, log, False, f"skipped: {exc}")
                continue
            try:
                written, _ = topic.publish(
                    d.group, d.chosen, members, snapshot_at=_iso(plan.get("snapshot_at")),
                    version=pub["version"], plan_id=str(plan_id),
                )
            except PlanError as exc:
                if "not above the published version" not in str(exc):
                    raise  # delivery unknown: the publication stays pending for reconciliation
                # Another run published a newer version first: ours never reached the topic.
                store.mark_publication_failed(d.group, pub["version"], str(exc))
                _outcome(store, plan_id, d, outcomes, log, False, f"skipped: {exc}")
                continue
            store.mark_published(d.group, pub["version"])
            _outcome(store, plan_id, d, outcomes, log, True,
                     f"published {d.chosen} as version {written.version} on {params.plan_topic}",
                     version=written.version)
    return outcomes


def changed_since_snapshot(
    kafka_config: Mapping[str, Any],
    params: PlanParams,
    snapshot_uri: str | None,
    groups: list[str],
    timeout: float = 30.0,
) -> dict[str, str]:
    """Group -> what changed since the snapshot, for the given groups (read again, now)."""
    from .kafka.admin import AdminHook
    from .kafka.groupsfile import load_groups_file
    from .kafka.snapshot import take_snapshot
    from .snapshot import describe_changes, read_snapshot

    if not snapshot_uri or not groups:
        return {}
    before = {row["group"]: case for row, case in read_snapshot(snapshot_uri) if row["group"] in groups}
    declared = [g for g in (load_groups_file(params.groups_file) if params.groups_file else [])
                if g.group in groups]
    discovered = [g for g in groups if g not in {a.group for a in declared}]
    regex = "|".join(re.escape(g) for g in discovered) if discovered else "(?!)"
    now = take_snapshot(AdminHook(dict(kafka_config), timeout=timeout), groups_regex=regex,
                        assign_groups=declared, auto_offset_reset=params.auto_offset_reset,
                        plan_topic=params.plan_topic).cases()
    changes = {}
    for group in groups:
        if before.get(group) is None:
            continue
        change = describe_changes(before[group], now.get(group))
        if change:
            changes[group] = change
    return changes


def _outcome(
    store: Any, plan_id: int, decision: GateDecision, outcomes: list[dict[str, Any]], log: Log,
    published: bool, note: str, version: int | None = None,
) -> None:
    store.record_outcome(plan_id, decision.group, note)
    log(f"group {decision.group}: {note}")
    outcomes.append({"group": decision.group, "published": published, "version": version, "reason": note})


def _decision_fields(d: Mapping[str, Any]) -> dict[str, Any]:
    known = {f.name for f in fields(GateDecision)}
    return {k: v for k, v in d.items() if k in known}


def reconcile_step(
    store: Any,
    kafka_config: Mapping[str, Any],
    plan_topic: str = PLAN_TOPIC,
    log: Log = print,
    timeout: float = 30.0,
) -> list[dict[str, Any]]:
    """Settle publications left pending by a run that died between the topic and the store.

    The topic is the truth: a pending version found there (same plan) is marked published;
    one the topic does not hold, while it holds nothing newer, is marked failed.
    """
    pending = store.pending_publications()
    if not pending:
        return []
    from .kafka.plans import PlanStore

    settled = []
    with PlanStore(dict(kafka_config), plan_topic, timeout) as topic:
        newest = topic.read({p["group"] for p in pending})
        for p in pending:
            held = newest.get(p["group"])
            if held is not None and held.version == p["version"] and held.plan_id == str(p["plan_id"]):
                store.mark_published(p["group"], p["version"])
                state = "published"
            else:
                store.mark_publication_failed(p["group"], p["version"], "not found on the plans topic")
                state = "failed"
            log(f"group {p['group']}: reconciled pending version {p['version']} as {state}")
            settled.append({**p, "state": state})
    return settled


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return str(value)
