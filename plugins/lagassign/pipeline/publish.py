"""Publishing the plans the gate let through, and settling publications a dead run left pending.

Per group, ``core.publishing.decide_publication`` decides from facts gathered once per run and
``kafka.applier`` carries it out. Nothing is published without its audit record: the version is
reserved in the ledger first, then written to the plans topic, then marked published. A run that
dies in between leaves a pending publication that a later run reconciles against the topic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta
from typing import Any

from ..core.clusters import cluster_label
from ..core.gate import GateDecision
from ..core.plans import normalize_members
from ..core.publishing import PublishFacts, decide_publication
from ..core.topics import PLAN_TOPIC
from ..kafka.admin import AdminHook, live_members
from ..kafka.applier import apply_publication
from ..kafka.cluster import cluster_of
from ..kafka.errors import BrokerUnavailableError, PlanError
from ..kafka.groupsfile import load_groups_file
from ..kafka.plans import PlanStore
from ..kafka.snapshot import take_snapshot
from ..tables.snapshot import describe_changes, group_rows, read_snapshot
from .params import PlanParams
from .ports import AuditTrailPort, LedgerPort, PublishingStore

Log = Callable[[str], None]


def publish_step(
    store: PublishingStore,
    plan_id: int,
    decisions: Iterable[GateDecision | Mapping[str, Any]],
    kafka_config: Mapping[str, Any] | None,
    params: PlanParams,
    log: Log = print,
    timeout: float = 30.0,
) -> list[dict[str, Any]]:
    """Publish the plans the gate let through, when ``apply`` is on; one outcome per group,
    also recorded in the audit trail.

    The facts of every group are gathered once (its kind and plan version from the snapshot,
    the plans topic read once, the audit ledger, what changed since the snapshot), each group's
    action is decided by ``publishing.decide_publication`` and carried out by
    ``kafka.applier.apply_publication``: a version is reserved in the ledger, written to the
    topic, then marked published (or failed, with the broker's reason).
    """
    go = [d if isinstance(d, GateDecision) else GateDecision.from_dict(d) for d in decisions]
    go = [d for d in go if d.go]
    if not go:
        log("publish: no group passed the gate")
        return []
    plan = store.get_plan(plan_id)
    if params.apply and kafka_config is not None:
        plan = {**plan, "cluster": same_cluster(store, plan, kafka_config, timeout)}
    facts = _publish_facts(store, plan, go, kafka_config if params.apply else None, params, timeout)
    outcomes = []
    topic = None
    try:
        for d in go:
            decision = decide_publication(facts[d.group], params.apply, params.dry_run, params.force)
            if decision.writes and topic is None:
                topic = PlanStore(dict(kafka_config or {}), params.plan_topic, timeout)
            outcome = apply_publication(store, topic, plan_id, facts[d.group], decision, params.force)
            log(f"group {d.group}: {outcome.reason}")
            outcomes.append(outcome.to_dict())
    finally:
        if topic is not None:
            topic.close()
    return outcomes


def _publish_facts(
    store: PublishingStore,
    plan: Mapping[str, Any],
    go: list[GateDecision],
    kafka_config: Mapping[str, Any] | None,
    params: PlanParams,
    timeout: float,
) -> dict[str, Any]:
    """Per group that passed the gate: what ``decide_publication`` needs, each source read once."""
    evaluations = {(g["group"], r["strategy"]): r for g in plan["groups"] for r in g.get("results", [])}
    rows = group_rows(plan["snapshot_uri"]) if plan.get("snapshot_uri") else {}
    assign = [d.group for d in go if rows.get(d.group, {}).get("kind", "assign") != "subscribe"]
    in_force: dict[str, Any] = {}
    changes: dict[str, str] = {}
    members: dict[str, list[str]] | None = None  # unknown: the applier asks per group
    if kafka_config is not None and assign:
        try:  # Kafka refuses assign()-mode commits while a group has protocol members
            members = live_members(kafka_config, assign, timeout)
        except BrokerUnavailableError:
            members = None

        with PlanStore(dict(kafka_config), params.plan_topic, timeout) as topic:
            in_force = topic.read(assign)  # the one read of the plans topic in this step
        if not params.force:
            changes = changed_since_snapshot(
                kafka_config, params, plan.get("snapshot_uri"), assign, timeout, plans=in_force
            )
    ledger = store.ledger_state(assign, plan.get("cluster"))
    facts = {}
    for d in go:
        row = rows.get(d.group, {})
        facts[d.group] = PublishFacts.now(
            d.group,
            d.chosen or "",
            normalize_members(evaluations[(d.group, d.chosen)]["assignment"], d.group),
            in_force.get(d.group),
            ledger.get(d.group, (None, 0)),
            plan_id=plan["id"],
            kind=row.get("kind") or "assign",
            snapshot_at=plan.get("snapshot_at"),
            snapshot_version=row.get("plan_version"),
            changed=changes.get(d.group),
            group_members=None if members is None else tuple(members.get(d.group, ())),
        )
    return facts


def same_cluster(
    store: AuditTrailPort, plan: Mapping[str, Any], kafka_config: Mapping[str, Any], timeout: float
) -> str:
    """The cluster the connection reaches, which must be the plan's: a plan made on one cluster
    (staging) is never published on another (production). A plan of unknown cluster takes it."""
    here = cluster_of(kafka_config, timeout)
    if not plan.get("cluster"):
        store.set_cluster(plan["id"], here)
    elif plan["cluster"] != here:
        raise PlanError(
            f"plan {plan['id']} was made on cluster {cluster_label(plan['cluster'])}, but the Kafka "
            f"connection reaches cluster {here}: plan the groups again on that cluster"
        )
    return here


def changed_since_snapshot(
    kafka_config: Mapping[str, Any],
    params: PlanParams,
    snapshot_uri: str | None,
    groups: list[str],
    timeout: float = 30.0,
    plans: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """Group -> what changed since the snapshot, for the given groups (read again, now;
    ``plans``: the plans in force, when the caller read the plans topic already)."""
    if not snapshot_uri or not groups:
        return {}
    before = {row["group"]: case for row, case in read_snapshot(snapshot_uri) if row["group"] in groups}
    declared = [
        g for g in (load_groups_file(params.groups_file) if params.groups_file else []) if g.group in groups
    ]
    regex = "|".join(re.escape(g) for g in groups)  # narrows declared groups too
    now = take_snapshot(
        AdminHook(dict(kafka_config), timeout=timeout),
        groups_regex=regex,
        assign_groups=declared,
        auto_offset_reset=params.auto_offset_reset,
        plan_topic=params.plan_topic,
        plans=plans,
    ).cases()
    changes = {}
    for group in groups:
        was = before.get(group)
        if was is None:
            continue
        change = describe_changes(was, now.get(group))
        if change:
            changes[group] = change
    return changes


#: A reservation older than this cannot be in flight any more (a publish takes seconds).
RECONCILE_AFTER = timedelta(minutes=5)


def reconcile_step(
    store: LedgerPort,
    kafka_config: Mapping[str, Any],
    plan_topic: str = PLAN_TOPIC,
    log: Log = print,
    timeout: float = 30.0,
) -> list[dict[str, Any]]:
    """Settle publications left pending by a run that died between the topic and the store.

    The topic is the truth: a pending version found there (same plan) is marked published;
    one the topic does not hold is marked failed. Only reservations that cannot be in flight
    are settled (their run has ended, or they are older than ``RECONCILE_AFTER``): a run that
    is publishing right now keeps its reservation.
    """
    if not store.pending_publications(settled_after=RECONCILE_AFTER):
        return []

    here = cluster_of(kafka_config, timeout)  # only this cluster's topic can settle them
    pending = store.pending_publications(settled_after=RECONCILE_AFTER, cluster=here)
    if not pending:
        return []

    settled = []
    with PlanStore(dict(kafka_config), plan_topic, timeout) as topic:
        newest = topic.read({p["group"] for p in pending})
        for p in pending:
            held = newest.get(p["group"])
            if held is not None and held.version == p["version"] and held.plan_id == str(p["plan_id"]):
                store.mark_published(p["group"], p["version"], cluster=here)
                state = "published"
            else:
                store.mark_publication_failed(
                    p["group"], p["version"], "not found on the plans topic", cluster=here
                )
                state = "failed"
            log(f"group {p['group']}: reconciled pending version {p['version']} as {state}")
            settled.append({**p, "state": state})
    return settled
