"""One group's snapshot rows, built from what ``snapshot`` read (pure: no call to Kafka).

``build_group`` turns a group's description (confluent-kafka's, or for a ``consumer``-type
group its coordinator's ConsumerGroupDescribe answer, ``groupdescribe.Group``), its committed
offsets and, in assign() mode, its plan in force and its announced instances into its group
row and member rows (``snapshot``'s docstring says which facts come from where);
``GroupRows.partition_rows`` adds its partitions once begin and end offsets are read. A group
that cannot be read completely carries its errors in the row's ``error``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import CaseError
from ..core.lag import partition_lag
from ..core.liveness import InstanceStatus, Liveness
from ..core.plans import Plan
from .errors import reason
from .groupdescribe_wire import Group, Member
from .groupsfile import AssignGroup

# Kafka's own names for group states (kafka-consumer-groups.sh prints these).
_STATES = {
    "UNKNOWN": "Unknown",
    "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance",
    "STABLE": "Stable",
    "DEAD": "Dead",
    "EMPTY": "Empty",
}


def group_type(kind: Any) -> str | None:
    """``classic`` or ``consumer`` (KIP-848's protocol; then ``protocol`` names the server-side
    assignor, ``uniform`` or ``range``); None when the broker does not say."""
    name = str(getattr(kind, "name", kind or "")).lower()
    return name if name in ("classic", "consumer") else None


def state_name(state: Any) -> str | None:
    """A group state as Kafka's tools print it (``Stable``, ``PreparingRebalance``, ...)."""
    if state is None:
        return None
    name = getattr(state, "name", str(state))
    return _STATES.get(name, name.replace("_", " ").title().replace(" ", ""))


def replica_racks(replicas: Sequence[int], broker_racks: Mapping[int, str | None]) -> list[str] | None:
    """The racks of a partition's replicas (sorted, each once), from the brokers' racks; None
    when none of its replicas' brokers has a rack (then the partition carries no racks)."""
    found = {r for b in replicas if (r := broker_racks.get(b))}
    return sorted(found) or None


def racks_by_partition(md: Any, broker_racks: Mapping[int, str | None]) -> dict[tuple[str, int], list[str]]:
    """(topic, partition) -> its replicas' racks, for the partitions that have any (cluster
    metadata: ``TopicMetadata.partitions[p].replicas`` are broker ids)."""
    if not any(broker_racks.values()):
        return {}
    out: dict[tuple[str, int], list[str]] = {}
    for name, t in md.topics.items():
        if t.error is not None:
            continue
        for p, pm in t.partitions.items():
            found = replica_racks(pm.replicas or [], broker_racks)
            if found:
                out[(name, p)] = found
    return out


@dataclass
class GroupRows:
    """One group's snapshot rows as they are built: its row, members, topics, commits, errors."""

    row: dict[str, Any]
    members: list[dict[str, Any]] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    commits: dict[tuple[str, int], int | None] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def partition_rows(
        self,
        topic_parts: Mapping[str, list[int]],
        begins: Mapping[Any, Any],
        ends: Mapping[Any, Any],
        racks: Mapping[tuple[str, int], list[str]] | None = None,
    ) -> list[dict[str, Any]]:
        """Every partition of the group's topics with its offsets and lag (and its replicas'
        racks, when known); errors go to the row."""
        out = []
        for t in self.topics:
            for p in topic_parts[t]:
                row = self._partition_row(t, p, begins.get((t, p)), ends.get((t, p)))
                if racks and (t, p) in racks:
                    row["racks"] = list(racks[(t, p)])
                out.append(row)
        self.row["error"] = "; ".join(dict.fromkeys(self.errors)) or None
        return out

    def _partition_row(self, t: str, p: int, begin: Any, end: Any) -> dict[str, Any]:
        """One partition's row from its begin and end offsets (an offset or why it is missing)."""
        bad = [v for v in (begin, end) if isinstance(v, BaseException) or v is None]
        if bad:
            why = reason(bad[0]) if bad[0] is not None else "no answer"
            self.errors.append(f"offsets of {t}-{p}: {why}")
            begin = begin if isinstance(begin, int) else None
            end = end if isinstance(end, int) else None
        c = self.commits.get((t, p))
        lag = None
        if end is not None and not bad:
            try:
                lag = partition_lag(end, c, begin, self.row["auto_offset_reset"])
            except CaseError as exc:
                self.errors.append(f"{t}-{p}: {exc}")
        return {
            "group": self.row["group"],
            "topic": t,
            "partition": p,
            "begin": begin,
            "end": end,
            "committed": c,
            "lag": lag,
        }


def build_group(
    gid: str,
    spec: AssignGroup | None,
    assign: bool,
    default_reset: str,
    desc: Any,
    got: Any,
    plan: Plan | None,
    liveness: Liveness,
    now: int,
    topic_parts: Mapping[str, list[int]],
    wire: Group | None = None,
) -> GroupRows:
    """One group's row and members from its description, committed offsets and plan.

    ``wire``: a ``consumer``-type group as its coordinator describes it (``groupdescribe.Group``);
    its one answer then gives the group's state, assignor and members, in place of ``desc``."""
    reset = spec.auto_offset_reset if spec and spec.auto_offset_reset else default_reset
    g = GroupRows(_group_row(gid, assign, reset, plan))
    described = not (isinstance(desc, BaseException) or desc is None)
    if wire is not None and not assign:
        g.row.update(
            state=wire.state or None,
            protocol=wire.assignor or None,
            group_type="consumer",
            group_epoch=wire.epoch,
            assignment_epoch=wire.assignment_epoch,
        )
    elif described:
        g.row["state"] = state_name(getattr(desc, "state", None))
        g.row["protocol"] = desc.partition_assignor or None
        # an assign() group has no group protocol: the broker's "classic" only means it commits
        g.row["group_type"] = None if assign else group_type(getattr(desc, "type", None))
    elif not assign:  # a subscribe group without its description has no members
        g.errors.append(f"describe failed: {reason(desc) if desc is not None else 'no answer'}")
    g.commits, commit_errors = _commits(got)
    g.errors += commit_errors
    topics = {t for t, _ in g.commits}
    if assign:
        joined = list(desc.members or []) if described else []
        topics |= _add_instances(g, spec, plan, liveness, now, topics, joined, topic_parts)
    elif wire is not None:
        topics |= _add_wire_members(g, wire, topic_parts)
    elif described:
        topics |= _add_described_members(g, desc)
    _settle_topics(g, topics, topic_parts, assign)
    return g


def _group_row(gid: str, assign: bool, reset: str, plan: Plan | None) -> dict[str, Any]:
    """A group's row before its description is read."""
    return {
        "group": gid,
        "kind": "assign" if assign else "subscribe",
        "state": None,
        "protocol": None,
        "auto_offset_reset": reset,
        "error": None,
        "plan_version": plan.version if assign and plan is not None else None,
        "group_type": None,
        "group_epoch": None,
        "assignment_epoch": None,
    }


def _settle_topics(
    g: GroupRows, topics: set[str], topic_parts: Mapping[str, list[int]], assign: bool
) -> None:
    """The group's topics are those of ``topics`` that exist (a subscribe group's commits on
    deleted topics are a warning); a member with no topics gets the group's; errors to the row."""
    gid = g.row["group"]
    gone = sorted(t for t in topics if t not in topic_parts)
    if gone and not assign:
        g.warnings.append(f"group {gid}: committed offsets for deleted topic(s) {', '.join(gone)} skipped")
    g.topics = sorted(t for t in topics if t in topic_parts)
    for m in g.members:
        if not m["topics"]:  # a member that owns nothing (nor subscribes): assume the group's topics
            m["topics"] = list(g.topics)
    g.row["error"] = "; ".join(g.errors) or None


# -- members -------------------------------------------------------------------------------------


def _add_instances(
    g: GroupRows,
    spec: AssignGroup | None,
    plan: Plan | None,
    liveness: Liveness,
    now: int,
    commit_topics: set[str],
    joined: Sequence[Any],
    topic_parts: Mapping[str, list[int]],
) -> set[str]:
    """An assign()-mode group's members (``_assign_members``), each owning what the plan in
    force gives it; the topics they consume. ``joined``: members of the group protocol that the
    broker describes, which make Kafka refuse the instances' commits (a warning)."""
    gid = g.row["group"]
    instances, why_empty = _assign_members(gid, spec, plan, liveness, now, commit_topics)
    alive = liveness.alive(gid, now)
    topics: set[str] = set()
    for iid, iid_topics in instances.items():
        topics |= set(iid_topics)
        owned = plan.partitions_of(iid) if plan is not None else []
        g.members.append(_instance_member(gid, iid, iid_topics, owned, alive.get(iid)))
    if why_empty:
        g.errors.append(why_empty)
    if joined:
        names = ", ".join(f"{m.member_id} ({m.client_id})" for m in joined)
        g.warnings.append(
            f"group {gid}: runs in assign() mode but has {len(joined)} live member(s) of the "
            f"group protocol: {names}; Kafka refuses its consumers' commits while they stay"
        )
    missing = sorted(topics - set(topic_parts))
    if missing:
        g.errors.append(f"declared topic(s) {', '.join(missing)} do not exist")
    return topics


def _instance_member(
    gid: str,
    iid: str,
    topics: Sequence[str],
    owned: Sequence[tuple[str, int]],
    status: InstanceStatus | None,
) -> dict[str, Any]:
    """An assign()-mode instance's member row (host, rack and capacity from its status record,
    when it is alive)."""
    return {
        "group": gid,
        "member_id": iid,
        "instance_id": iid,
        "client_id": None,
        "host": status.host if status is not None else None,
        "topics": list(topics),
        "assignment": [{"topic": t, "partition": p} for t, p in owned],
        "rack": status.rack if status is not None else None,
        "capacity": status.observed_capacity if status is not None else None,
    }


def _assign_members(
    gid: str,
    spec: AssignGroup | None,
    plan: Plan | None,
    liveness: Liveness,
    now: int,
    group_topics: set[str],
) -> tuple[dict[str, tuple[str, ...]], str | None]:
    """The members of an assign()-mode group (instance -> topics) and, when it has none, why.

    With status records, the live instances (those the groups file lists, if it lists any);
    otherwise the declared instances. Topics: the groups file's, else what the instance
    announced, else the topics of the group's plan, else of its committed offsets.
    """
    plan_topics = sorted({t for pairs in (plan.members.values() if plan else ()) for t, _ in pairs})
    fallback = tuple(plan_topics or sorted(group_topics))
    if not liveness.known(gid):
        return (dict(spec.instances) if spec else {}), None
    alive = liveness.alive(gid, now)
    out: dict[str, tuple[str, ...]] = {}
    for iid, status in sorted(alive.items()):
        if spec is not None and iid not in spec.instances:
            continue
        topics = spec.instances[iid] if spec is not None else (status.topics or fallback)
        if topics:
            out[iid] = tuple(topics)
    if out:
        return out, None
    gone = [liveness.departure(gid, i, now) for i in sorted(liveness.known(gid))]
    seen = "; ".join(f"{d.instance} {d.why}" for d in gone if d is not None) or "none announced topics"
    return out, f"no live instance ({seen})"


def _add_wire_members(g: GroupRows, wire: Group, topic_parts: Mapping[str, list[int]]) -> set[str]:
    """A consumer-type group's members from its coordinator's answer; the topics they
    subscribe to, own or will own."""
    topics: set[str] = set()
    for wm in wire.members:
        member = _wire_member(g.row["group"], wm, topic_parts)
        topics |= set(member["topics"]) | {a["topic"] for a in member["assignment"]}
        g.members.append(member)
    return topics


def _wire_member(gid: str, m: Member, topic_parts: Mapping[str, list[int]]) -> dict[str, Any]:
    """A member row from ConsumerGroupDescribe (``groupdescribe.Member``): its subscription is
    its topics (the names it subscribed to, and the cluster's topics its regex matches, as the
    broker resolves it; internal topics never; those that exist), its rack, epoch and type are
    kept."""
    topics = set(m.subscribed_topics)
    if m.subscribed_regex:
        try:
            pattern = re.compile(m.subscribed_regex)
        except re.error:  # RE2/J syntax Python does not read: the assignment still tells
            pattern = None
        if pattern is not None:
            topics |= {t for t in topic_parts if not t.startswith("__") and pattern.fullmatch(t)}
    topics &= set(topic_parts)  # a topic subscribed to before it exists has no partitions yet
    if not topics:  # no subscription the cluster can serve: what it owns or will own
        topics = {t for t, _ in (*m.assignment, *m.target) if t in topic_parts}
    return {
        "group": gid,
        "member_id": m.member_id,
        "instance_id": m.instance_id or None,
        "client_id": m.client_id,
        "host": m.host,
        "topics": sorted(topics),
        "assignment": [{"topic": t, "partition": p} for t, p in m.assignment],
        "rack": m.rack or None,
        "target": [{"topic": t, "partition": p} for t, p in m.target],
        "member_epoch": m.epoch,
        "member_type": m.member_type,
    }


def _add_described_members(g: GroupRows, desc: Any) -> set[str]:
    """A group's members as confluent-kafka describes them; the topics of their assignments."""
    topics: set[str] = set()
    consumer_type = g.row["group_type"] == "consumer"
    for m in desc.members or []:
        member = _described_member(g.row["group"], m, consumer_type)
        topics |= set(member["topics"])
        g.members.append(member)
    return topics


def _described_member(gid: str, m: Any, consumer_type: bool) -> dict[str, Any]:
    """A member row from confluent-kafka's ``MemberDescription``: its topics are those of its
    assignment (a classic member's subscription is not exposed)."""
    tps = sorted({(tp.topic, tp.partition) for tp in (m.assignment.topic_partitions or [])})
    member = {
        "group": gid,
        "member_id": m.member_id,
        "instance_id": m.group_instance_id or None,
        "client_id": m.client_id,
        "host": m.host,
        "topics": sorted({t for t, _ in tps}),
        "assignment": [{"topic": t, "partition": p} for t, p in tps],
    }
    # confluent-kafka 2.16's MemberDescription has no rack (KIP-848 members get theirs
    # from ``groupdescribe``); read it as soon as a version does.
    rack = getattr(m, "rack", None)
    if rack:
        member["rack"] = rack
    target = getattr(m, "target_assignment", None)  # consumer-type groups only
    if target is not None and consumer_type:
        pairs = sorted({(tp.topic, tp.partition) for tp in target.topic_partitions or []})
        member["target"] = [{"topic": t, "partition": p} for t, p in pairs]
    return member


def _commits(got: Any) -> tuple[dict[tuple[str, int], int | None], list[str]]:
    """Committed offsets by partition (None: no commit), and the errors reading them."""
    if isinstance(got, BaseException) or got is None:
        return {}, [f"committed offsets: {reason(got) if got is not None else 'no answer'}"]
    commits: dict[tuple[str, int], int | None] = {}
    errors = []
    for tp in got:
        if tp.error is not None:
            errors.append(f"committed offset of {tp.topic}-{tp.partition}: {reason(Exception(tp.error))}")
        commits[(tp.topic, tp.partition)] = tp.offset if tp.offset >= 0 else None
    return commits, errors
