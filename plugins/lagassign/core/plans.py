"""Plans: the static assignment of a group as it is published, and the rules of its versions.

Record format (the value on the plans topic, JSON; key = group id)::

    {"plan_id": "...", "group": "g", "version": 3, "created_at": "2026-...Z",
     "strategy": "lag-optimal", "snapshot_at": "2026-...Z" | null,
     "members": {"instance-0": [["orders", 0], ["orders", 3]], "instance-1": [...]}}

Pure: ``kafka.plans.PlanStore`` reads and writes the topic, ``publishing`` decides what to write.
A plan never gives a partition to two instances (``normalize_members`` refuses it); versions
only grow per group; "newest" is the highest valid version read in topic order.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from .case_rules import is_pair
from .clock import now_text
from .errors import LagassignError

log = logging.getLogger(__name__)


class PlanError(LagassignError):
    """A plan file or record is malformed, or a plan could not be published or read."""


def normalize_members(members: Any, where: str = "plan") -> dict[str, list[list[Any]]]:
    """Validate ``{instance_id: [[topic, partition], ...]}`` and sort it (ids, then partitions).

    A partition given to two instances is refused: it would be consumed twice under one version.
    """
    if not isinstance(members, Mapping):
        raise PlanError(f"{where}: members must be a mapping of instance id to partitions")
    owner: dict[tuple[str, int], str] = {}
    out: dict[str, list[list[Any]]] = {}
    for iid in sorted(members):
        if not isinstance(iid, str) or not iid:
            raise PlanError(f"{where}: instance ids must be non-empty strings, got {iid!r}")
        pairs = members[iid]
        if not isinstance(pairs, list):
            raise PlanError(f"{where}: instance {iid} must map to a list of [topic, partition] pairs")
        tps: set[tuple[str, int]] = set()
        for pair in pairs:
            if not (is_pair(pair) and pair[0]):
                raise PlanError(f"{where}: instance {iid} has a bad [topic, partition] pair {pair!r}")
            tp = (pair[0], pair[1])
            if tp in owner and owner[tp] != iid:
                raise PlanError(f"{where}: partition {tp[0]}-{tp[1]} is given to both {owner[tp]} and {iid}")
            owner[tp] = iid
            tps.add(tp)
        out[iid] = [[t, p] for t, p in sorted(tps)]
    return out


@dataclass(frozen=True)
class Plan:
    """One published static assignment of a group."""

    plan_id: str
    group: str
    version: int
    created_at: str
    strategy: str
    snapshot_at: str | None
    members: dict[str, list[list[Any]]]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    def partitions_of(self, instance_id: str) -> list[tuple[str, int]]:
        """The partitions this plan gives to one instance (none if it is not in the plan)."""
        return [(t, p) for t, p in self.members.get(instance_id, [])]

    @classmethod
    def from_value(cls, value: bytes | str | Mapping[str, Any], key: str | None = None) -> Plan:
        """Parse a record value (or a loaded JSON object); PlanError if it is not a valid plan."""
        try:
            data = value if isinstance(value, Mapping) else json.loads(value)
        except (ValueError, UnicodeDecodeError):
            raise PlanError(f"plan record for {key or '?'} is not JSON") from None
        if not isinstance(data, Mapping):
            raise PlanError(f"plan record for {key or '?'} is not a JSON object")
        group = data.get("group")
        version = data.get("version")
        if not isinstance(group, str) or not group or (key is not None and group != key):
            raise PlanError(f"plan record for {key or '?'} names group {group!r}")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise PlanError(f"plan record for {group}: bad version {version!r}")
        strategy = data.get("strategy")
        if not isinstance(strategy, str):
            raise PlanError(f"plan record for {group}: bad strategy {strategy!r}")
        return cls(
            plan_id=str(data.get("plan_id") or ""),
            group=group,
            version=version,
            created_at=str(data.get("created_at") or ""),
            strategy=strategy,
            snapshot_at=data.get("snapshot_at"),
            members=normalize_members(data.get("members"), f"plan record for {group}"),
        )


def unchanged(in_force: Mapping[str, Any] | None, members: Mapping[str, Any]) -> bool:
    """True when ``members`` is already the plan in force (both normalised): publishing it again
    would make a version that changes nothing, so none is made."""
    return in_force is not None and dict(in_force) == dict(members)


def next_plan(
    previous: Plan | None,
    group: str,
    strategy: str,
    members: Mapping[str, Any],
    snapshot_at: str | None = None,
    version: int | None = None,
    plan_id: str | None = None,
) -> Plan | None:
    """The plan to write after ``previous``, or None when the members mapping is unchanged.

    ``version`` (e.g. reserved in the audit store before publishing) is used as it is, and
    refused when the topic already holds that version or a newer one: versions only grow.
    """
    members = normalize_members(members, f"plan for {group}")
    if previous is not None and unchanged(previous.members, members):
        return None
    held = previous.version if previous is not None else 0
    if version is not None and version <= held:
        raise PlanError(f"group {group}: version {version} is not above the published version {held}")
    return Plan(
        plan_id=plan_id or uuid.uuid4().hex,
        group=group,
        version=version or held + 1,
        created_at=now_text(),
        strategy=strategy,
        snapshot_at=snapshot_at,
        members=members,
    )


def newest_of(
    records: Iterable[tuple[str | None, bytes | None]], groups: set[str] | None = None
) -> dict[str, Plan]:
    """Newest valid plan per group from (key, value) records in offset order.

    A tombstone (null value) deletes the group's plan; a record that does not parse, or whose
    version is not above the one held, is ignored.
    """
    newest: dict[str, Plan] = {}
    for key, value in records:
        if key is None or (groups is not None and key not in groups):
            continue
        if value is None:
            newest.pop(key, None)
            continue
        try:
            plan = Plan.from_value(value, key)
        except PlanError as exc:
            log.warning("ignoring unreadable plan record: %s", exc)
            continue
        held = newest.get(key)
        if held is None or plan.version >= held.version:
            newest[key] = plan
    return newest
