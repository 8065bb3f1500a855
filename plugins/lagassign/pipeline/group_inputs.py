"""A read of the cluster as the health rules read it: each group's partitions with their
observations (the stored window and now), who holds them, and the instances and members to
show beside it.

An assign()-mode group's holders are its instances (announced on the status topic, named by
its plan in force, or pinned by the groups file); a subscribe-mode group's are the members the
broker reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..core.clock import iso_z
from ..core.health import GroupInput, InstanceInput, PartitionInput, Point
from ..core.liveness import Liveness
from ..core.plans import Plan
from ..kafka.overview import ClusterView

#: One stored observation of a partition: (time, end offset, committed, lag, owner).
Observed = tuple[datetime, int | None, int | None, int | None, str | None]
#: A group's stored observations per partition.
GroupHistory = Mapping[tuple[str, int], Sequence[Observed]]

TP = tuple[str, int]


@dataclass
class Holders:
    """Who holds a group's partitions: the live members' names in order, each partition's
    owner, the capacities instances stated, and the instances and member rows to show."""

    members: list[str] = field(default_factory=list)
    owners: dict[TP, str] = field(default_factory=dict)
    capacities: dict[str, float] = field(default_factory=dict)
    instances: list[InstanceInput] = field(default_factory=list)
    member_rows: list[dict[str, Any]] = field(default_factory=list)


def group_inputs(
    view: ClusterView, history: Mapping[str, GroupHistory] | None = None
) -> tuple[list[GroupInput], dict[str, dict[str, Any]]]:
    """Each group of ``view`` as the rules read it (its observations: ``history`` and now), and
    the members and instances to show beside it (group -> {"members", "instances"})."""
    snap = view.snapshot
    now_s = view.observed_at.timestamp()
    history = history or {}
    parts_of = _rows_by_group(snap.partitions)
    members_of = _rows_by_group(snap.members)
    seconds: dict[datetime, float] = {}  # one conversion per observation time
    inputs, shown = [], {}
    for g in snap.groups:
        name = g["group"]
        plan = view.plans.get(name) if g.get("kind") == "assign" else None
        plan_members = {iid: _tps(tps) for iid, tps in (plan.members.items() if plan else ())}
        if g.get("kind") == "assign":
            pinned = view.declared.get(name, ())
            held = instance_holders(_instances(name, view.liveness, plan_members, int(now_s * 1000), pinned))
        else:
            held = member_holders(members_of.get(name, []))
        parts = partition_inputs(parts_of.get(name, []), history.get(name, {}), held.owners, now_s, seconds)
        inputs.append(_group_input(g, plan, plan_members, held, parts))
        shown[name] = {"members": held.member_rows, "instances": [_instance_row(i) for i in held.instances]}
    return inputs, shown


def _rows_by_group(rows: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(row["group"], []).append(row)
    return out


def _member_id(row: Mapping[str, Any]) -> str:
    return str(row.get("instance_id") or row.get("member_id"))


def _tps(value: Any) -> list[TP]:
    out = []
    for a in value or ():
        if isinstance(a, Mapping):
            out.append((str(a["topic"]), int(a["partition"])))
        else:
            out.append((str(a[0]), int(a[1])))
    return sorted(out)


def instance_holders(instances: list[InstanceInput]) -> Holders:
    """An assign()-mode group's holders: its live instances and what they say they hold."""
    held = Holders(instances=instances)
    for i in instances:
        if i.alive:
            held.members.append(i.instance)
            for tp in i.partitions:
                held.owners[tp] = i.instance
            if i.capacity:
                held.capacities[i.instance] = i.capacity
    return held


def member_holders(rows: Iterable[Mapping[str, Any]]) -> Holders:
    """A subscribe-mode group's holders: the members the broker reports and their assignments."""
    held = Holders()
    for m in rows:
        mid = _member_id(m)
        held.members.append(mid)
        tps = _tps(m.get("assignment"))
        for tp in tps:
            held.owners[tp] = mid
        held.member_rows.append(
            {
                "id": mid,
                "client_id": m.get("client_id"),
                "host": m.get("host"),
                "partitions": [list(tp) for tp in tps],
            }
        )
    return held


def partition_inputs(
    rows: Iterable[Mapping[str, Any]],
    past: GroupHistory,
    owners: Mapping[TP, str],
    now_s: float,
    seconds: dict[datetime, float],
) -> tuple[PartitionInput, ...]:
    """A group's partitions with their points: the stored ones before now, then now's.
    ``seconds`` caches each observation time's conversion across groups."""
    parts = []
    for row in rows:
        tp = (row["topic"], int(row["partition"]))
        points = []
        for t, end, c, lag, _o in past.get(tp, ()):
            at = seconds.get(t)
            if at is None:
                at = seconds[t] = t.timestamp()
            if at < now_s:
                points.append(Point(at, end, c, lag))
        points.append(Point(now_s, row.get("end"), row.get("committed"), row.get("lag")))
        parts.append(PartitionInput(tp[0], tp[1], tuple(points), owners.get(tp)))
    return tuple(parts)


def _group_input(
    g: Mapping[str, Any],
    plan: Plan | None,
    plan_members: dict[str, list[TP]],
    held: Holders,
    parts: tuple[PartitionInput, ...],
) -> GroupInput:
    return GroupInput(
        g["group"],
        kind=g.get("kind") or "subscribe",
        partitions=parts,
        members=tuple(held.members),
        group_type=g.get("group_type"),
        state=g.get("state"),
        plan_version=plan.version if plan else g.get("plan_version"),
        plan=plan_members or None,
        instances=tuple(held.instances),
        capacities=held.capacities,
        error=read_error(g),
    )


def read_error(g: Mapping[str, Any]) -> str | None:
    """What could not be read of a group. An assign()-mode group without a live instance was
    read completely (the snapshot notes "no live instance (…)"): its instances' state is what
    the rules judge, not a read error."""
    text = g.get("error") or ""
    if g.get("kind") == "assign" and text.startswith("no live instance ("):
        depth, end = 0, len(text)
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if ch == ")" and depth == 0:
                end = i + 1
                break
        text = text[end:].removeprefix("; ")
    return text or None


def _instances(
    group: str,
    liveness: Liveness,
    plan: Mapping[str, list[TP]],
    now_ms: int,
    declared: Iterable[str] = (),
) -> list[InstanceInput]:
    """Every instance the group has: announced (alive or not), named by its plan in force, or
    pinned by the groups file (one that never announced itself says so)."""
    out = []
    for iid in sorted(liveness.known(group) | set(plan) | set(declared)):
        st = liveness.status(group, iid)
        alive = liveness.is_alive(group, iid, now_ms)
        gone = None if alive else liveness.departure(group, iid, now_ms)
        out.append(
            InstanceInput(
                iid,
                alive,
                version=st.version if st else None,
                in_plan=iid in plan,
                partitions=tuple((tp.topic, tp.partition) for tp in st.partitions) if st and alive else (),
                pending=tuple((tp.topic, tp.partition) for tp in st.pending) if st and alive else (),
                # stated only: a rate "while behind" also describes a steady consumer with the
                # few messages of lag between two polls, which would read as overloaded
                capacity=st.capacity if st else None,
                why=gone.why if gone else None,
                host=st.host if st else None,
                last_seen=st.time_ms / 1000 if st else None,
            )
        )
    return out


def _instance_row(i: InstanceInput) -> dict[str, Any]:
    state = "alive" if i.alive else ("left" if i.why == "closed" else "dead")
    return {
        "instance": i.instance,
        "alive": i.alive,
        "state": state,
        "why": i.why,
        "version": i.version,
        "in_plan": i.in_plan,
        "partitions": [list(tp) for tp in i.partitions],
        "pending": [list(tp) for tp in i.pending],
        "host": i.host,
        "last_seen": iso_z(datetime.fromtimestamp(i.last_seen, tz=UTC)) if i.last_seen else None,
    }
