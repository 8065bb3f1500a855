"""The failover step: one group's new plan after a membership change, recorded and published.

Shared by ``lagassign watch`` and the Airflow ``lagassign_failover`` DAG. It runs in-process
(no Spark: one group, milliseconds of planning) and leaves the same audit trail as a planning
run: a plan with trigger ``failover``, the group's snapshot, its evaluation, a decision whose
reason names the change, and the publication in the ledger.

Steps: read the plan in force and the statuses again (the change may have healed or been handled
by someone else meanwhile: then nothing is published), snapshot the group (its live instances
own what the plan in force gave them), ``failover.plan_failover``, then publish through the
same decision and applier as every other plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.case import parse_case
from ..core.clock import parse_utc
from ..core.clusters import manifest_cluster
from ..core.failover import FailoverPlan, MembershipChange, membership_change, plan_failover
from ..core.gate import GateDecision
from ..core.plans import Plan, normalize_members
from ..core.publishing import PublishFacts, decide_publication
from ..core.topics import PLAN_TOPIC, STATUS_TOPIC
from ..kafka.admin import AdminHook
from ..kafka.applier import Outcome, apply_publication
from ..kafka.cluster import cluster_of
from ..kafka.groupsfile import AssignGroup, load_groups_file
from ..kafka.plans import PlanStore
from ..kafka.snapshot import take_snapshot
from ..kafka.status import now_ms, read_status
from ..tables.snapshot import Snapshot
from .inflow import add_inflow
from .params import run_dir
from .ports import PlanningStore, PublishingStore

Log = Callable[[str], None]


@dataclass(frozen=True)
class FailoverSettings:
    """Where to look and how long silence means death; the same for the watcher and the DAG."""

    plan_topic: str = PLAN_TOPIC
    status_topic: str = STATUS_TOPIC
    session_timeout_ms: int | None = 30_000
    groups_file: str | None = None
    auto_offset_reset: str = "latest"

    def record(self) -> dict[str, Any]:
        """Every setting by name, as a failover plan's parameters record them."""
        return asdict(self)


def declared_group(settings: FailoverSettings, group: str) -> AssignGroup | None:
    """The group's entry in the groups file (pinned instances and topics), or None."""
    if not settings.groups_file:
        return None

    return next((g for g in load_groups_file(settings.groups_file) if g.group == group), None)


def failover_step(
    store: PlanningStore,
    kafka_config: Mapping[str, Any],
    group: str,
    settings: FailoverSettings,
    base: str | Path,
    triggered_by: str,
    dag_id: str | None = None,
    run_id: str | None = None,
    seen: MembershipChange | None = None,
    log: Log = print,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Plan and publish ``group`` after a membership change; returns the publish outcome.

    ``seen`` is the change the caller observed (for the record); the step checks the group
    again and publishes nothing when the plan in force already matches the live instances.
    """
    parameters = {"group": group, "change": seen.describe() if seen else None, **settings.record()}
    plan_id = store.start_plan("failover", triggered_by, dag_id, run_id, parameters)
    try:
        store.set_cluster(plan_id, cluster_of(kafka_config, timeout))
        spec = declared_group(settings, group)
        with PlanStore(dict(kafka_config), settings.plan_topic, timeout) as topic:
            in_force = topic.read([group]).get(group)
            seen_now = _GroupNow(kafka_config, group, settings, spec, in_force, timeout)
            change = seen_now.change()
            if change is None:
                return _nothing_to_do(store, plan_id, group, in_force, log)
            snap = seen_now.snapshot()
            snapshot_at = _record_snapshot(store, plan_id, snap, run_dir(base, plan_id) / "snapshot", log)
            case = snap.cases().get(group)
            if case is None:
                return _cannot_plan(store, plan_id, group, change, snap, log)
            planned = plan_failover(parse_case(case), change)
            store.record_evaluations(plan_id, [planned.evaluation])
            store.record_decisions(plan_id, [_decision(group, planned)])
            if planned.chosen is None:
                store.finish_plan(plan_id, "failed", error=planned.reason)
                return Outcome(group, False, planned.reason, None, "skip").to_dict()
            outcome = _publish(store, topic, plan_id, group, planned, in_force, snapshot_at)
        log(f"group {group}: {planned.reason}; {outcome.reason}")
        store.finish_plan(plan_id, "succeeded")
        return outcome.to_dict()
    except BaseException as exc:
        store.finish_plan(plan_id, "failed", error=str(exc) or type(exc).__name__)
        raise


def _nothing_to_do(
    store: PlanningStore, plan_id: int, group: str, in_force: Plan | None, log: Log
) -> dict[str, Any]:
    """The plan in force already matches the live instances (or there is none): a stop decision
    that says so, and a succeeded plan."""
    note = (
        f"nothing to do: plan v{in_force.version} already matches the live instances"
        if in_force
        else "nothing to do: the group has no plan in force"
    )
    log(f"group {group}: {note}")
    store.record_decisions(plan_id, [GateDecision(group, False, note)])
    store.finish_plan(plan_id, "succeeded")
    held = in_force.version if in_force else None
    return Outcome(group, False, note, held, "unchanged").to_dict()


def _record_snapshot(
    store: PlanningStore, plan_id: int, snap: Snapshot, folder: Path, log: Log
) -> datetime | None:
    """The group's snapshot, with its inflow, written to the run's folder and recorded; its time."""
    add_inflow(store, plan_id, snap, log)
    snap.write(folder)
    snapshot_at = parse_utc(snap.manifest.get("snapshot_at"))
    store.set_snapshot(plan_id, str(folder), snapshot_at, manifest_cluster(snap.manifest))
    return snapshot_at


def _cannot_plan(
    store: PlanningStore, plan_id: int, group: str, change: MembershipChange, snap: Snapshot, log: Log
) -> dict[str, Any]:
    """The snapshot could not read the group: its error recorded as the evaluation, a stop
    decision naming the change, and a failed plan."""
    why = next((g["error"] for g in snap.groups if g["group"] == group), None) or "not found"
    store.record_evaluations(plan_id, [{"group": group, "error": why}])
    note = f"{change.describe()}: cannot plan the group: {why}"
    store.record_decisions(plan_id, [GateDecision(group, False, note)])
    store.finish_plan(plan_id, "failed", error=note)
    log(f"group {group}: {note}")
    return Outcome(group, False, note, None, "skip").to_dict()


@dataclass(frozen=True)
class _GroupNow:
    """The group a failover run looks at: where to read it, its groups-file entry (``spec``) and
    the plan in force, read once from the plans topic."""

    kafka_config: Mapping[str, Any]
    group: str
    settings: FailoverSettings
    spec: AssignGroup | None
    in_force: Plan | None
    timeout: float

    def change(self) -> MembershipChange | None:
        """The membership change as the status topic shows it now (None: nothing to do)."""
        s, in_force = self.settings, self.in_force
        timeout_ms = s.session_timeout_ms
        liveness = read_status(self.kafka_config, s.status_topic, self.timeout, [self.group], timeout_ms)
        return membership_change(
            self.group,
            in_force.members if in_force else None,
            in_force.version if in_force else None,
            liveness,
            now_ms(),
            pinned=list(self.spec.instances) if self.spec else None,
            announced_since_ms=0,
        )

    def snapshot(self) -> Snapshot:
        """A snapshot of this one group, with the plan in force already read."""
        s = self.settings
        return take_snapshot(
            AdminHook(dict(self.kafka_config), timeout=self.timeout),
            groups_regex=re.escape(self.group),
            assign_groups=[self.spec] if self.spec else [],
            auto_offset_reset=s.auto_offset_reset,
            plan_topic=s.plan_topic,
            status_topic=s.status_topic,
            session_timeout_ms=s.session_timeout_ms,
            plans={self.group: self.in_force} if self.in_force else {},
        )


def _publish(
    store: PublishingStore,
    topic: PlanStore,
    plan_id: int,
    group: str,
    planned: FailoverPlan,
    in_force: Plan | None,
    snapshot_at: datetime | None,
) -> Outcome:
    """Decide and carry out the publication of the failover plan, through the ledger (called
    only for a plan with a chosen strategy)."""
    chosen = planned.chosen
    assert chosen is not None
    result = planned.evaluation.result(chosen)
    assert result is not None and result.assignment is not None
    facts = PublishFacts.now(
        group,
        chosen,
        normalize_members(result.assignment, group),
        in_force,
        store.ledger_state([group], store.get_plan(plan_id, evaluations=False)["cluster"])[group],
        plan_id=plan_id,
        snapshot_at=snapshot_at,
        snapshot_version=in_force.version if in_force else None,
    )
    return apply_publication(store, topic, plan_id, facts, decide_publication(facts))


def _decision(group: str, planned: FailoverPlan) -> GateDecision:
    """The failover's decision for the audit trail: go whenever a complete plan exists."""
    current = planned.evaluation.result("current")
    chosen = planned.evaluation.result(planned.chosen) if planned.chosen else None
    cur = (current.metrics if current else None) or {}
    new = (chosen.metrics if chosen else None) or {}
    cur_max, new_max = cur.get("max_lag"), new.get("max_lag")
    return GateDecision(
        group,
        planned.chosen is not None,
        planned.reason,
        chosen=planned.chosen,
        candidate=planned.chosen,
        current_max_lag=cur_max,
        current_imbalance=cur.get("imbalance"),
        chosen_max_lag=new_max,
        improvement=(cur_max - new_max) / cur_max if cur_max and new_max is not None else None,
        moves=new.get("moves"),
        unconsumed=len((current.unassigned if current else None) or ()),
    )
