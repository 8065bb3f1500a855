"""Review, then publish: publish a plan someone looked at (computed with apply off, or stopped by
the gate), or roll a group back to a version published before, each as its own audited run.

The reviewed plan is never changed. A new plan is opened (trigger ``manual``, by the person who
asked, from the ``lagassign_review`` DAG run) that carries the reviewed group's evaluation and
snapshot, and a ``go`` decision whose reason names the review and what the gate had said. Then
the ordinary ``publish_step`` runs on it, so every guard of a scheduled publication holds: the
version is reserved in the ledger first, a plan older than the group's newest published one is
refused, and a group that changed since the snapshot is refused (re-plan it instead).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..core.clock import utc_now
from ..core.clusters import UNKNOWN_CLUSTER, cluster_label
from ..core.gate import GateDecision
from ..core.plans import normalize_members
from ..core.publishing import Publication, PublishFacts, decide_publication
from ..core.results import EVALUATION_KEYS
from ..core.topics import PLAN_TOPIC
from ..kafka.applier import Outcome, apply_publication
from ..kafka.cluster import cluster_of
from ..kafka.plans import PlanStore
from .params import ParamsError, PlanParams
from .ports import AuditTrailPort, PublishingStore
from .publish import publish_step

Log = Callable[[str], None]


@dataclass(frozen=True)
class ReviewRequest:
    """Who asked for a review action (publish, roll back), from which DAG run, and whether only
    as a dry run: what the audit trail records of the request whatever it does."""

    user: str | None
    dag_id: str
    run_id: str
    dry_run: bool = False

    def start_plan(self, store: AuditTrailPort, record: Mapping[str, Any], cluster: str | None) -> int:
        """The request's own audited plan (trigger ``manual``)."""
        return store.start_plan("manual", self.user, self.dag_id, self.run_id, dict(record), cluster=cluster)


def reviewed_decision(group: Mapping[str, Any], plan_id: int, user: str | None) -> GateDecision:
    """The ``go`` decision of a reviewed group: its gate decision's candidate, published on review.

    Refused (ParamsError) when there is nothing to publish: no evaluation, no candidate better
    than the current assignment, or a plan that was already published for this group."""
    name = group.get("group")
    if group.get("error"):
        raise ParamsError(
            f"plan {plan_id}, group {name}: not evaluated ({group['error']}); nothing to publish"
        )
    d = group.get("decision")
    if not d:
        raise ParamsError(f"plan {plan_id}, group {name}: no gate decision recorded; nothing to publish")
    strategy = d.get("chosen") or d.get("candidate")
    if not strategy or strategy == "current":
        raise ParamsError(f"plan {plan_id}, group {name}: no candidate plan to publish ({d.get('reason')})")
    if any(p.get("state") == "published" for p in group.get("publications") or ()):
        raise ParamsError(f"plan {plan_id}, group {name}: already published")
    was = "go" if d.get("go") else "stop"
    reason = (
        f"publish requested by {user or 'an unnamed user'} on review of plan {plan_id} "
        f"(the gate had said {was}: {d.get('reason')})"
    )
    return replace(GateDecision.from_dict(d), go=True, chosen=strategy, candidate=strategy, reason=reason)


def publish_reviewed(
    store: PublishingStore,
    kafka_config: Mapping[str, Any] | None,
    plan_id: int,
    group: str,
    request: ReviewRequest,
    log: Log = print,
) -> dict[str, Any]:
    """Publish ``group``'s plan from the reviewed plan ``plan_id`` as a new audited plan; returns
    ``{"plan_id": new plan, "outcome": what publishing did}``.

    A request that is refused (no such plan or group, nothing to publish) leaves its trace too:
    a failed plan saying why. A dry run reads the plans topic as a publish does (when
    ``kafka_config`` is given), so it says stale, unchanged, or the version a publish would make."""
    from ..store import PlanNotFoundError

    user, dry_run = request.user, request.dry_run
    record = {"action": "publish", "reviewed_plan": plan_id, "group": group, "dry_run": dry_run}
    try:
        reviewed = store.get_plan(plan_id)
    except PlanNotFoundError:
        reviewed = None
    try:
        if reviewed is None:
            raise ParamsError(f"there is no plan {plan_id} to publish from")
        found = next((g for g in reviewed["groups"] if g["group"] == group), None)
        if found is None:
            raise ParamsError(f"plan {plan_id} has no group {group!r}")
        decision = reviewed_decision(found, plan_id, user)
        base = {
            k: v
            for k, v in (reviewed.get("parameters") or {}).items()
            if k in PlanParams.__dataclass_fields__
        }
        params = PlanParams.from_mapping({**base, "apply": True, "dry_run": dry_run, "force": False})
    except ParamsError as exc:
        refused(store, record, str(exc), request, (reviewed or {}).get("cluster"))
        raise
    new_id = request.start_plan(store, record, reviewed.get("cluster"))
    try:
        store.set_snapshot(new_id, reviewed.get("snapshot_uri"), reviewed.get("snapshot_at"))
        evaluation = {k: found.get(k) for k in EVALUATION_KEYS}
        store.record_evaluations(new_id, [evaluation])
        store.record_decisions(new_id, [decision])
        log(f"plan {new_id}: group {group}: {decision.reason}")
        outcomes = publish_step(store, new_id, [decision], kafka_config, params, log=log)
    except Exception as exc:
        fail_at_publish(store, new_id, " ".join(str(exc).split()))
        raise
    store.finish_plan(new_id, "succeeded")
    return {"plan_id": new_id, "outcome": outcomes[0] if outcomes else None}


def roll_back(
    store: PublishingStore,
    kafka_config: Mapping[str, Any] | None,
    group: str,
    version: int,
    request: ReviewRequest,
    plan_topic: str = PLAN_TOPIC,
    log: Log = print,
) -> dict[str, Any]:
    """Publish again the members of ``group``'s published ``version``, as a new version and a
    new audited plan (trigger ``manual``, by ``user``).

    The same publishing rules as any plan: the version is reserved in the ledger against the
    version in force (a race with another publisher loses cleanly), "unchanged" when that
    assignment is already in force, a dry run writes nothing."""
    here = None
    if kafka_config is not None:
        here = cluster_of(kafka_config)  # the version line of the cluster the connection reaches
    old = store.publication(group, version, here)
    if old is None or old.get("state") != "published":
        why = _not_published(store, group, version, here, old)
        refused(store, record_of(group, version, request.dry_run), why, request, here)
        raise ParamsError(why)
    new_id = request.start_plan(store, record_of(group, version, request.dry_run), old.get("cluster"))
    try:
        outcome = _publish_again(store, kafka_config, new_id, group, version, old, request, plan_topic, log)
    except Exception as exc:
        fail_at_publish(store, new_id, " ".join(str(exc).split()))
        raise
    store.finish_plan(new_id, "succeeded")
    return {"plan_id": new_id, "outcome": outcome.to_dict()}


def _not_published(
    store: PublishingStore, group: str, version: int, here: str | None, old: Mapping[str, Any] | None
) -> str:
    """Why there is nothing to roll back to: the version was never recorded on this cluster (a
    hint when a plan of unknown cluster published it), or it was not published."""
    state = "never recorded" if old is None else old.get("state")
    on = f" on cluster {cluster_label(here)}" if here is not None else ""
    hint = ""
    if old is None and here is not None and store.publication(group, version, UNKNOWN_CLUSTER):
        hint = " (a plan of unknown cluster published it: `lagassign plans claim` assigns it to one)"
    return f"group {group}: version {version} was not published{on} ({state}); nothing to roll back to{hint}"


def _publish_again(
    store: PublishingStore,
    kafka_config: Mapping[str, Any] | None,
    new_id: int,
    group: str,
    version: int,
    old: Mapping[str, Any],
    request: ReviewRequest,
    plan_topic: str,
    log: Log,
) -> Outcome:
    """The roll back's plan ``new_id``: recorded (the diff against the plan in force, a go
    decision), then its publication decided and carried out as any plan's."""
    strategy = str(old.get("strategy") or "current")
    now = utc_now()
    store.set_snapshot(new_id, None, now)
    reason = (
        f"roll back to version {version} ({strategy}, published by plan {old.get('plan_id')}) "
        f"by {request.user or 'an unnamed user'}"
    )
    in_force = None
    if kafka_config is not None:  # a dry run reads it too, to say what a roll back would do
        with PlanStore(dict(kafka_config), plan_topic) as reader:
            in_force = reader.read([group]).get(group)
    held = (
        in_force.members
        if in_force
        else (store.last_published(group, old.get("cluster")) or {}).get("assignment")
    )
    store.record_evaluations(new_id, [rollback_evaluation(group, strategy, held, old["assignment"])])
    store.record_decisions(new_id, [GateDecision(group, True, reason, chosen=strategy, candidate=strategy)])
    log(f"plan {new_id}: group {group}: {reason}")
    facts = PublishFacts.now(
        group,
        strategy,
        normalize_members(old["assignment"], group),
        in_force,
        store.ledger_state([group], old.get("cluster")).get(group, (None, 0)),
        plan_id=new_id,
        kind="assign",
        snapshot_at=now,
        snapshot_version=in_force.version if in_force else None,
        changed=None,
    )
    outcome = _apply(
        store,
        kafka_config,
        plan_topic,
        new_id,
        facts,
        decide_publication(facts, True, request.dry_run, False),
    )
    log(f"group {group}: {outcome.reason}")
    return outcome


def _apply(
    store: PublishingStore,
    kafka_config: Mapping[str, Any] | None,
    plan_topic: str,
    new_id: int,
    facts: PublishFacts,
    action: Publication,
) -> Outcome:
    """Carry out the decision, connecting to the plans topic only when it writes."""
    topic = None
    if action.writes:
        topic = PlanStore(dict(kafka_config or {}), plan_topic)
    try:
        return apply_publication(store, topic, new_id, facts, action, False)
    finally:
        if topic is not None:
            topic.close()


def record_of(group: str, version: int, dry_run: bool) -> dict[str, Any]:
    """What a roll back's plan records as its parameters."""
    return {"action": "rollback", "group": group, "version": version, "dry_run": dry_run}


def refused(
    store: AuditTrailPort,
    record: Mapping[str, Any],
    why: str,
    request: ReviewRequest,
    cluster: str | None = None,
) -> int:
    """A review request refused before anything was published: a failed plan that says why,
    so the audit trail holds every request."""
    new_id = request.start_plan(store, record, cluster)
    fail_at_publish(store, new_id, why)
    return int(new_id)


def fail_at_publish(store: AuditTrailPort, plan_id: int, why: str) -> None:
    """Close ``plan_id`` as failed at its publish step, saying why."""
    store.finish_plan(plan_id, "failed", error=f"step publish failed: {why}", failed_step="publish")


def rollback_evaluation(
    group: str, strategy: str, in_force: Mapping[str, Any] | None, target: Mapping[str, Any]
) -> dict[str, Any]:
    """A roll back's evaluation for the audit trail: ``current`` is the assignment in force, the
    rolled-back version's strategy its assignment, with partition counts and moves (no lag: a
    roll back takes no snapshot), so its page shows the diff against the plan in force."""
    now = normalize_members(in_force or {}, group)
    then = normalize_members(target, group)

    def owners(members: Mapping[str, Any]) -> dict[tuple[str, int], str]:
        return {(str(t), int(p)): m for m, tps in members.items() for t, p in tps}

    before, after = owners(now), owners(then)
    moves = sum(1 for tp, m in after.items() if before.get(tp) not in (None, m))

    def result(name: str, members: Mapping[str, Any], moved: int) -> dict[str, Any]:
        count = {m: len(tps) for m, tps in members.items()}
        spread = max(count.values()) - min(count.values()) if count else 0
        return {
            "strategy": name,
            "assignment": dict(members),
            "metrics": {"count": count, "count_spread": spread, "moves": moved},
        }

    results = [result("current", now, 0)]
    if strategy != "current":
        results.append(result(strategy, then, moves))
    return {
        "group": group,
        "members": len(set(now) | set(then)),
        "partitions": len(set(before) | set(after)),
        "results": results,
    }
