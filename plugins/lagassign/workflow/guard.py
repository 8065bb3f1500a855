"""Which publish action the plans pages offer for one group of a plan, and why.

One rule for the page (which button it draws) and the action route (what it accepts), decided
when the page renders from what the audit store says now: a plan that passed the gate and is
not stale gets the primary "publish" button; one the gate stopped only an explicit override
with a confirmation that shows max lag before and after and the moves; nothing at all when
publishing could only fail or would change nothing (stale, a version being published by
another plan, a candidate equal to the assignment in force, a subscribe() group ...). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

PRIMARY, OVERRIDE, NONE = "primary", "override", "none"
BASELINE = "current"


@dataclass(frozen=True)
class Guard:
    """``mode``: primary | override | none; ``why``: one line for people (the reason there is
    no primary button, or what the override overrides); ``stale``: publishing would be refused
    as stale or held, so the page offers a re-plan instead."""

    mode: str
    why: str = ""
    stale: bool = False


def owners(assignment: Mapping[str, Any] | None) -> dict[tuple[str, int], str]:
    """Partition -> member of an assignment ``{member: [[topic, partition], ...]}``."""
    return {(str(tp[0]), int(tp[1])): str(m) for m, tps in (assignment or {}).items() for tp in tps or ()}


def _result(group: Mapping[str, Any], strategy: str | None) -> Mapping[str, Any] | None:
    return next((r for r in group.get("results") or () if r.get("strategy") == strategy), None)


def in_force_reason(
    plan: Mapping[str, Any],
    newest: Mapping[str, Any] | None,
    snapshot_version: int | None = None,
) -> tuple[str, str] | None:
    """Why a plan must not replace what is in force, from the ledger's newest pending or
    published publication of its group (``newest``) and the version its snapshot saw in force:
    ("stale" | "held", line), or None when nothing newer stands in its way."""
    if newest is None or newest.get("plan_id") == plan.get("id"):
        return None
    version, by = newest.get("version"), newest.get("plan_id")
    if newest.get("state") == "pending":
        return "held", f"version {version} is being published by plan {by}"
    taken, newer_at = plan.get("snapshot_at"), newest.get("snapshot_at")
    if isinstance(taken, datetime) and isinstance(newer_at, datetime) and newer_at > taken:
        return "stale", f"version {version} (plan {by}) in force was computed from a newer snapshot"
    if snapshot_version is not None and version is not None and int(version) > int(snapshot_version):
        return "stale", (
            f"version {version} (plan {by}) was published after this plan's snapshot "
            f"(which saw version {snapshot_version})"
        )
    unknown = not isinstance(taken, datetime) or not isinstance(newer_at, datetime)
    later = by is not None and plan.get("id") is not None and int(by) > int(plan["id"])
    if snapshot_version is None and unknown and later:
        return "stale", f"version {version} in force comes from a newer plan ({by})"
    return None


def publish_guard(
    plan: Mapping[str, Any],
    group: Mapping[str, Any],
    kind: str | None = None,
    newest: Mapping[str, Any] | None = None,
    snapshot_version: int | None = None,
) -> Guard:
    """The publish action to offer for ``group`` of ``plan`` (see the module docstring).

    ``kind``: assign | subscribe from the plan's snapshot (None: unknown); ``newest``: the
    ledger's newest pending or published publication of the group now; ``snapshot_version``:
    the version in force when the plan's snapshot was taken."""
    decision = group.get("decision") or {}
    target = decision.get("chosen") or decision.get("candidate")
    params = plan.get("parameters") or {}
    if params.get("action") or plan.get("trigger") == "failover":
        return Guard(NONE, "this plan records a publication of its own; publish from a planning run's plan")
    if group.get("error"):
        return Guard(NONE, "not evaluated: nothing to publish")
    if plan.get("status") != "succeeded":
        return Guard(NONE, "the run did not finish: nothing to publish")
    if not target or target == BASELINE:
        return Guard(NONE, "no candidate: the current assignment stays")
    if any(p.get("state") == "published" for p in group.get("publications") or ()):
        return Guard(NONE, "already published by this plan")
    if kind == "subscribe":
        return Guard(
            NONE,
            "not publishable: a subscribe() group, assigned by its group coordinator (run its "
            "consumers in assign() mode with PlanConsumer to follow plans)",
        )
    blocked = in_force_reason(plan, newest, snapshot_version)
    if blocked is not None:
        what, line = blocked
        verb = "refused as stale" if what == "stale" else "refused: the version is held"
        return Guard(NONE, f"publishing would be {verb}: {line}; re-plan this group instead", stale=True)
    current, chosen = _result(group, BASELINE), _result(group, target)
    same = current is not None and chosen is not None and "assignment" in chosen
    if same and owners((current or {}).get("assignment")) == owners((chosen or {}).get("assignment")):
        return Guard(NONE, f"{target} is the current assignment: publishing it changes nothing")
    held = newest is not None and newest.get("state") == "published" and chosen is not None
    if held and owners((newest or {}).get("assignment")) == owners((chosen or {}).get("assignment")):
        return Guard(NONE, f"{target} is already in force as version {(newest or {}).get('version')}")
    if decision.get("go"):
        return Guard(PRIMARY)
    return Guard(OVERRIDE, f"the gate said stop: {decision.get('reason') or 'no reason recorded'}")
