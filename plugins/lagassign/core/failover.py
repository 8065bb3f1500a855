"""Failover: when an instance of the plan in force dies or a new one appears, the next plan.

Pure: a membership change is read off the plan in force and the status records
(``liveness.Liveness``), and the new assignment is computed from the group as it is now: its
live instances, each owning what the plan in force gave it, and the partitions' lags. What the
dead instances held is orphaned and must move; a newcomer needs its fair share; beyond that,
``lag-optimal`` balances lag under Kafka's count guarantee with as few other moves as it can
(owned partitions stay where they are unless moving them lowers the largest member lag).
Both ``lagassign watch`` and the Airflow ``lagassign_failover`` DAG call these functions.

Example: plan v4 gives w0 {o-0, o-3}, w1 {o-1, o-4}, w2 {o-2, o-5}; w1 is killed. Thirty
seconds later ``membership_change`` reports ``w1 silent for 30 s``; the group as it is now has
members w0 and w2 owning their four partitions, with o-1 and o-4 unowned. ``plan_failover``
gives o-1 and o-4 to w0 and w2 (one each, the lighter one the heavier partition) and moves
nothing else: v5 = w0 {o-0, o-3, o-4}, w2 {o-1, o-2, o-5}, reason "w1 silent for 30 s: 2
orphaned partitions placed, 0 other moves".
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .evaluate import evaluate_group
from .liveness import DEFAULT_SESSION_TIMEOUT_MS, Liveness
from .model import GroupSnapshot
from .results import GroupEvaluation

FAILOVER_STRATEGIES = ("lag-optimal", "sticky")


@dataclass(frozen=True)
class MembershipChange:
    """How the live instances differ from the plan in force (``version``) of one group."""

    group: str
    version: int | None
    died: dict[str, str] = field(default_factory=dict)  # instance -> why ("silent for 31 s", "closed")
    joined: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[Any, ...]:
        """Identity of the change, to tell a new change from the same one seen again."""
        return (self.group, self.version, tuple(sorted(self.died)), self.joined)

    def describe(self) -> str:
        parts = [f"{i} {why}" for i, why in sorted(self.died.items())]
        parts += [f"{i} joined" for i in self.joined]
        return "; ".join(parts)


def membership_change(
    group: str,
    plan_members: Mapping[str, Sequence[Any]] | None,
    version: int | None,
    liveness: Liveness,
    now_ms: int,
    pinned: Collection[str] | None = None,
    announced_since_ms: int | None = None,
) -> MembershipChange | None:
    """The change between the plan in force and the live instances, or None when they agree.

    A group without any status record is not watched (its instances do not announce: an
    older client, or not started yet): no change. ``pinned`` (a groups file's instances)
    limits who may join. An instance of the plan that never announced counts as dead only
    once we have watched for a session timeout (``announced_since_ms``, when watching began),
    so a watcher that just started does not fail over instances it has not heard from yet.
    """
    if not liveness.known(group):
        return None
    planned = set(plan_members or ())
    alive = set(liveness.alive(group, now_ms))
    if pinned is not None:
        alive &= set(pinned)
    died: dict[str, str] = {}
    for instance in sorted(planned - alive):
        gone = liveness.departure(group, instance, now_ms)
        if gone is None:  # alive but not pinned: the groups file no longer lists it
            died[instance] = "is no longer in the groups file"
            continue
        if gone.why == "never announced":
            waited = now_ms - (announced_since_ms if announced_since_ms is not None else now_ms)
            if waited < (liveness.session_timeout_ms or DEFAULT_SESSION_TIMEOUT_MS):
                continue
        died[instance] = gone.why
    joined = tuple(sorted(alive - planned))
    if not died and not joined:
        return None
    return MembershipChange(group, version, died, joined)


@dataclass(frozen=True)
class FailoverPlan:
    """The evaluation of the group as it is now, the strategy chosen, and one line why."""

    evaluation: GroupEvaluation
    chosen: str | None
    reason: str


def plan_failover(group: GroupSnapshot, change: MembershipChange) -> FailoverPlan:
    """The assignment that replaces the plan in force after ``change``.

    ``group`` is the group as it is now: its members are the live instances, owning what the
    plan in force gave them. ``lag-optimal`` is tried first, ``sticky`` if it refuses; the
    evaluation (with ``current``) is what the audit trail records.
    """
    evaluation = evaluate_group(group, [*FAILOVER_STRATEGIES, "current"])
    chosen = next((r for name in FAILOVER_STRATEGIES if (r := evaluation.result(name)) and r.complete), None)
    if chosen is None or chosen.metrics is None:
        return FailoverPlan(evaluation, None, f"{change.describe()}: no strategy could assign the group")
    owned = set(group.owner)
    orphaned = sum(1 for tp in group.assignable if tp not in owned)
    reason = (
        f"{change.describe()}: {_n(orphaned, 'orphaned partition')} placed, "
        f"{_n(chosen.metrics['moves'], 'other move')} ({chosen.strategy}, "
        f"max lag {chosen.metrics['max_lag']:,})"
    )
    return FailoverPlan(evaluation, chosen.strategy, reason)


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"
