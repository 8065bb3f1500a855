"""What to do with a group's chosen plan: publish it, or record why not. Pure; the Kafka edge
(``kafka.applier``) carries the answer out and the audit store records it.

Facts come in as ``PublishFacts``, gathered once per run: the group's kind, the assignment, the
plan version in force when the snapshot was taken, the plan in force on the topic now (the topic
is read once per run), the newest publication the audit ledger knows of, and what changed in
the group since the snapshot. ``decide_publication`` answers, in this order:

* ``off``: apply is off; the plan is recorded only;
* ``skip``: a ``subscribe()`` group (its consumers are assigned by the group coordinator and
  cannot follow a static plan);
* ``refuse``: the group has live members of the group protocol (classic or consumer), even
  with ``force``: Kafka accepts offset commits from consumers outside the protocol (assign()
  mode, generation -1) only while a group has no members (Kafka 4 answers UNKNOWN_MEMBER_ID),
  so a plan's consumers could not commit what they process;
* ``skip``: a group whose members, subscriptions or partitions changed since the snapshot
  (unless ``force``);
* ``unchanged``: the plan in force already is this assignment: no new version;
* ``refuse``: stale: a newer plan was published since this run's snapshot, or another run is
  publishing one now, or the ledger holds a plan computed from a newer snapshot (unless
  ``force``);
* ``dry-run``: everything passed; nothing is written;
* ``publish``: write it as ``version`` = one above every version the topic or the ledger knows.

The ledger's reservation (``AuditStore.reserve_publication``) repeats the stale check
atomically, so two planners that decided ``publish`` at the same moment make one version: the
second finds the first one's reservation and records why it stopped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .plans import Plan, unchanged

PUBLISH, UNCHANGED, SKIP, REFUSE, DRY_RUN, OFF = "publish", "unchanged", "skip", "refuse", "dry-run", "off"


@dataclass(frozen=True)
class LedgerEntry:
    """The newest publication of a group that the audit ledger knows of."""

    version: int
    state: str  # pending | published | failed
    plan_id: int
    snapshot_at: datetime | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any] | None) -> LedgerEntry | None:
        """The store's row for it; None for a group the ledger has never published."""
        return None if row is None else cls(row["version"], row["state"], row["plan_id"], row["snapshot_at"])


@dataclass(frozen=True)
class PublishFacts:
    """What the publish step knows about one group that passed the gate."""

    group: str
    strategy: str
    members: Mapping[str, list[list[Any]]]  # normalised {instance: [[topic, partition], ...]}
    plan_id: int | None = None  # the audit plan of this run (its own reservation is no rival)
    kind: str = "assign"  # "assign" | "subscribe"
    snapshot_at: datetime | None = None
    snapshot_version: int | None = None  # plan version in force at snapshot time
    in_force_version: int | None = None  # newest version on the topic now
    in_force_members: Mapping[str, list[list[Any]]] | None = None
    ledger_newest: LedgerEntry | None = None  # newest pending or published entry
    ledger_top_version: int = 0  # highest version in the ledger, failed ones included
    changed: str | None = None  # what changed in the group since the snapshot
    #: live members of the group protocol now (``kafka.admin.live_members``); None: not read
    group_members: tuple[str, ...] | None = None

    @classmethod
    def now(
        cls,
        group: str,
        strategy: str,
        members: Mapping[str, list[list[Any]]],
        in_force: Plan | None,
        ledger: tuple[Mapping[str, Any] | None, int],
        **facts: Any,
    ) -> PublishFacts:
        """The facts with the topic's plan in force and the ledger's (newest, top version) filled in."""
        newest, top = ledger
        return cls(
            group=group,
            strategy=strategy,
            members=members,
            in_force_version=in_force.version if in_force else None,
            in_force_members=in_force.members if in_force else None,
            ledger_newest=LedgerEntry.from_row(newest),
            ledger_top_version=top,
            **facts,
        )


@dataclass(frozen=True)
class Publication:
    """The decision: an action, the version it concerns (if any) and one line for people."""

    action: str
    reason: str
    version: int | None = None

    @property
    def writes(self) -> bool:
        return self.action == PUBLISH


def decide_publication(
    facts: PublishFacts, apply: bool = True, dry_run: bool = False, force: bool = False
) -> Publication:
    """The publish decision for one group (see the module docstring for the order of rules)."""
    f = facts
    if not apply:
        return Publication(OFF, f"not published: apply is off ({f.strategy} recorded)")
    if f.kind == "subscribe":
        return Publication(
            SKIP,
            "not published: a subscribe() group's consumers are assigned by the "
            "group coordinator and cannot follow a static plan",
        )
    if f.group_members:
        return members_refusal(f.group, f.group_members)
    if f.changed and not force:
        return Publication(SKIP, f"skipped: group changed since the snapshot ({f.changed})")
    if unchanged(f.in_force_members, f.members):
        return Publication(
            UNCHANGED,
            f"unchanged: the plan is already in force as version {f.in_force_version}",
            f.in_force_version,
        )
    if not force:
        stale = stale_reason(f)
        if stale:
            return Publication(REFUSE, f"skipped: {stale}; not publishing without force")
    version = max(f.in_force_version or 0, f.ledger_top_version) + 1
    if dry_run:
        return Publication(DRY_RUN, f"dry run: would publish {f.strategy} as version {version}", version)
    return Publication(PUBLISH, f"publish {f.strategy} as version {version}", version)


def members_text(group: str, members: Sequence[str]) -> str:
    """One line on a group whose live protocol members make Kafka refuse assign()-mode commits."""
    shown = ", ".join(members[:3]) + (f" and {len(members) - 3} more" if len(members) > 3 else "")
    return (
        f"group {group} has {len(members)} live member(s) of the group protocol ({shown}); Kafka "
        "accepts commits from assign() consumers only while a group has no members"
    )


def members_refusal(group: str, members: Sequence[str]) -> Publication:
    """The refusal of a plan for a group with live protocol members (``members_text``)."""
    return Publication(REFUSE, f"refused: {members_text(group, members)}")


def stale_reason(f: PublishFacts) -> str | None:
    """Why a plan computed from this run's snapshot must not replace the plan in force, or None."""
    if (
        f.in_force_version is not None
        and f.snapshot_version is not None
        and f.in_force_version > f.snapshot_version
    ):
        return (
            f"version {f.in_force_version} was published after this run's snapshot "
            f"(which saw version {f.snapshot_version})"
        )
    newest = f.ledger_newest
    if newest is not None and newest.plan_id == f.plan_id:
        newest = None  # this run's own reservation (a retried task): not a rival
    if newest is not None and newest.state == "pending" and newest.version > (f.in_force_version or 0):
        return f"version {newest.version} is being published by plan {newest.plan_id}"
    if (
        newest is not None
        and f.snapshot_at is not None
        and newest.snapshot_at is not None
        and newest.snapshot_at > f.snapshot_at
    ):
        return (
            f"version {newest.version} (plan {newest.plan_id}) was computed from a newer snapshot "
            f"({newest.snapshot_at.isoformat(timespec='seconds')})"
        )
    return None
