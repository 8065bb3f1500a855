"""Carry out a publish decision (``publishing.decide_publication``): the thin Kafka half.

For ``publish``: reserve the version in the audit ledger (a compare-and-set against the version
this run saw in force), write the plan record, then mark it published, or failed when the
broker refused it (too large even compressed, not authorised: no endless retry). When the write
is uncertain (no acknowledgement in time) the reservation stays pending and the next run
reconciles it against the topic. Every other decision is recorded as it is. Either way the
group's outcome line goes to the audit trail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from ..core.clock import iso_z, now_text
from ..core.plans import Plan
from ..core.publishing import Publication, PublishFacts, members_refusal
from .admin import live_members
from .errors import BrokerUnavailableError
from .ledger_port import PublicationLedger
from .plans import PlanDeliveryError, PlanStore, PlanTooLargeError

if TYPE_CHECKING:
    from ..store.errors import VersionConflictError


@dataclass(frozen=True)
class Outcome:
    """What publishing did for one group: the line for people and the version concerned."""

    group: str
    published: bool
    reason: str
    version: int | None = None
    action: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "published": self.published,
            "version": self.version,
            "reason": self.reason,
            "action": self.action,
        }


def apply_publication(
    ledger: PublicationLedger,
    topic: PlanStore | None,
    plan_id: int,
    facts: PublishFacts,
    decision: Publication,
    force: bool = False,
) -> Outcome:
    """Carry out ``decision`` for ``facts.group`` and record the outcome in the audit trail."""
    # The store loads SQLAlchemy; imported here, it stays off the import path of the CLI.
    from ..store import StalePlanError, VersionConflictError

    group = facts.group
    if not decision.writes:
        outcome = Outcome(group, False, decision.reason, decision.version, decision.action)
        return _record(ledger, plan_id, outcome)
    assert topic is not None, "a publish decision needs the plans topic"
    members = facts.group_members if facts.group_members is not None else _members_now(topic, group)
    if members:  # a caller that did not read them: Kafka would refuse the plan's commits
        refusal = members_refusal(group, members)
        return _record(ledger, plan_id, Outcome(group, False, refusal.reason, None, refusal.action))
    reserve = partial(_reserve, ledger, plan_id, facts, decision.version, force)
    try:
        try:
            pub, lost = reserve(None), ""
        except VersionConflictError as exc:
            pub, lost = _reserve_past_lost_version(reserve, topic, group, exc)
    except (VersionConflictError, StalePlanError) as exc:
        # Another run reserved a version since this run decided: newer in force, or from a
        # newer snapshot. The reservation repeats the checks atomically; losing is no failure.
        return _record(ledger, plan_id, Outcome(group, False, f"skipped: {exc}", None, "refuse"))
    plan = _plan_record(plan_id, facts, pub["version"])
    try:
        topic.write(plan)
    except (PlanTooLargeError, PlanDeliveryError) as exc:
        ledger.mark_publication_failed(group, pub["version"], str(exc), cluster=pub.get("cluster"))
        return _record(ledger, plan_id, Outcome(group, False, f"failed: {exc}", pub["version"], "failed"))
    ledger.mark_published(group, pub["version"], cluster=pub.get("cluster"))
    done = f"published {facts.strategy} as version {plan.version} on {topic.topic}{lost}"
    return _record(ledger, plan_id, Outcome(group, True, done, plan.version, "publish"))


def _reserve(
    ledger: PublicationLedger,
    plan_id: int,
    facts: PublishFacts,
    min_version: int | None,
    force: bool,
    topic_version: int | None,
) -> dict[str, Any]:
    """Reserve the group's next version in the ledger, pending, against the version in force."""
    return dict(
        ledger.mark_publication_pending(
            plan_id,
            facts.group,
            strategy=facts.strategy,
            assignment=dict(facts.members),
            snapshot_at=facts.snapshot_at,
            force=force,
            min_version=min_version,
            expected_version=facts.in_force_version or 0,
            topic_version=topic_version,
        )
    )


def _reserve_past_lost_version(
    reserve: Callable[[int | None], dict[str, Any]],
    topic: PlanStore,
    group: str,
    conflict: VersionConflictError,
) -> tuple[dict[str, Any], str]:
    """Reserve again when the rival is a published version the topic no longer holds (read again
    now): no race, the topic was deleted and created again, or the cluster rebuilt behind the
    same key. Returns the reservation and the note for the outcome; any other rival is raised."""
    now = topic.read([group]).get(group) if conflict.state == "published" else None
    held = now.version if now is not None else 0
    if conflict.state != "published" or conflict.version is None or held >= conflict.version:
        raise conflict
    lost = (
        f" (the topic no longer held version {conflict.version}, published by plan {conflict.plan_id}: "
        "it was created again, or the cluster rebuilt)"
    )
    return reserve(held), lost


def _plan_record(plan_id: int, facts: PublishFacts, version: int) -> Plan:
    """The plan record written to the plans topic for the reserved ``version``."""
    return Plan(
        plan_id=str(plan_id),
        group=facts.group,
        version=version,
        created_at=now_text(),
        strategy=facts.strategy,
        snapshot_at=iso_z(facts.snapshot_at),
        members=dict(facts.members),
    )


def _members_now(topic: PlanStore, group: str) -> tuple[str, ...]:
    """The group's live protocol members now; none when the cluster cannot say (the plan's
    consumers then find out themselves: ``PlanConsumer`` fails on a refused commit)."""
    try:
        return tuple(live_members(topic.config, [group], topic.timeout).get(group, ()))
    except BrokerUnavailableError:
        return ()


def _record(ledger: PublicationLedger, plan_id: int, outcome: Outcome) -> Outcome:
    ledger.record_outcome(plan_id, outcome.group, outcome.reason)
    return outcome
