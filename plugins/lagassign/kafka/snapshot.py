"""Snapshot of a cluster's consumer groups into the tables of ``lagassign.tables.snapshot``.

Two kinds of groups:

* ``subscribe``: discovered (list groups, filtered by a regex). Members, their client ids,
  hosts and assignments come from describe groups; committed offsets from the group. For a
  ``classic`` group the AdminClient API exposes a member's assignment, not its subscription, so
  a member's topics are the topics of its assignment, or all the group's topics when it owns
  nothing. A ``consumer``-type group (KIP-848) is read from its coordinator's
  ConsumerGroupDescribe answer (``groupdescribe``): state, the broker's assignor (``protocol``:
  ``uniform`` or ``range``), the group's epochs, and per member its subscription (``topics``),
  rack, current (``assignment``) and target assignment (``target``), epoch and type (a
  ``classic`` member of a group being migrated, or ``consumer``), all from one answer; where
  that cannot be read (SASL, see ``groupdescribe``), confluent-kafka's description, as for
  classic groups, and a manifest warning.
* ``assign``: groups whose instances announce themselves on the status topic
  (``lagassign.client.PlanConsumer``), and groups declared in the groups file (their consumers
  never join, so the broker cannot tell who they are). Members are the live instances (those a
  groups file lists, when it pins instances); a declared group whose instances never announced
  has the declared instances as members. Their current assignment is the group's newest
  published plan, whose version the group row keeps (``plan_version``): publishing refuses a
  plan when a newer one appeared since.

A group's partitions are every partition of its topics (members' topics and topics with a
committed offset); begin and end offsets are read once per partition for all groups. A group
that cannot be read completely gets its ``error`` set and the run goes on; the manifest lists
the failures. Secrets in the settings never reach the manifest (``config.redact``).

Committed offsets (``committed_scope``): ``group`` asks each group for everything it committed;
``partitions`` asks each group for every partition of the cluster's topics by name (the same
rows, less the warning about commits on deleted topics, which it cannot see), which some
brokers answer far faster (noida-db: see ``admin``) and costs little on a small cluster;
``auto`` (the default) names the partitions when the cluster has at most
``NAMED_PARTITIONS_MAX`` of them and the broker is 0.10 or newer (Kafka 0.9's named OffsetFetch
v0 reads other offsets). The manifest says which was used.

Racks: each partition row carries ``racks``, the racks of its replicas' brokers (replicas from
the metadata, racks from DescribeCluster), when the cluster has racks; members of KIP-848
groups carry the rack their client reported (``client.rack``, from ConsumerGroupDescribe);
assign()-mode instances the rack of their status record. Members of classic groups have none:
their rack travels inside the protocol's subscription bytes, which confluent-kafka does not
expose.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.clock import now_text
from ..core.errors import CaseError
from ..core.lag import RESET_POLICIES, partition_lag
from ..core.liveness import Liveness
from ..core.topics import PLAN_TOPIC, STATUS_TOPIC
from ..tables.snapshot import Snapshot
from .admin import AdminHook, Progress
from .config import redact
from .errors import KafkaConfigError, reason
from .groupsfile import AssignGroup
from .plans import PlanStore
from .status import now_ms, read_status

#: ``committed_scope="auto"`` names every partition of a cluster with at most this many
NAMED_PARTITIONS_MAX = 2_000
#: a log line every this many groups while committed offsets are read
LOG_EVERY = 1_000
COMMITTED_SCOPES = ("auto", "group", "partitions")

# Kafka's own names for group states (kafka-consumer-groups.sh prints these).
_STATES = {
    "UNKNOWN": "Unknown",
    "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance",
    "STABLE": "Stable",
    "DEAD": "Dead",
    "EMPTY": "Empty",
}


def compile_regex(pattern: str | None) -> re.Pattern[str] | None:
    """The --groups regex (matched against the whole group id)."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise KafkaConfigError(f"--groups {pattern!r} is not a valid regex: {exc}") from None


def _group_type(kind: Any) -> str | None:
    """``classic`` or ``consumer`` (KIP-848's protocol; then ``protocol`` names the server-side
    assignor, ``uniform`` or ``range``); None when the broker does not say."""
    name = str(getattr(kind, "name", kind or "")).lower()
    return name if name in ("classic", "consumer") else None


def _state_name(state: Any) -> str | None:
    if state is None:
        return None
    name = getattr(state, "name", str(state))
    return _STATES.get(name, name.replace("_", " ").title().replace(" ", ""))


def take_snapshot(
    hook: AdminHook,
    groups_regex: str | None = None,
    assign_groups: Sequence[AssignGroup] = (),
    auto_offset_reset: str = "latest",
    plan_topic: str = PLAN_TOPIC,
    progress: Progress | None = None,
    log: Callable[[str], None] | None = None,
    status_topic: str = STATUS_TOPIC,
    session_timeout_ms: int | None = None,
    plans: Mapping[str, Any] | None = None,
    committed_scope: str = "auto",
) -> Snapshot:
    """Read the cluster through ``hook`` and build the snapshot rows (nothing is written).

    The reads come first (metadata, statuses, group listing and descriptions, committed
    offsets, plans, then begin and end offsets once per partition); the rows are built from
    them by the pure functions below. ``plans`` (group -> plan in force): when the caller has
    read the plans topic already. ``committed_scope``: see the module's docstring."""
    if committed_scope not in COMMITTED_SCOPES:
        raise KafkaConfigError(f"committed_scope must be one of {', '.join(COMMITTED_SCOPES)}")
    if auto_offset_reset not in RESET_POLICIES:
        raise KafkaConfigError(f"--auto-offset-reset must be one of {', '.join(RESET_POLICIES)}")
    regex = compile_regex(groups_regex)
    say = log or (lambda _m: None)
    started = time.monotonic()
    snapshot_at = now_text()
    warnings: list[str] = []

    md = hook.metadata()
    topic_parts = {name: sorted(t.partitions) for name, t in md.topics.items() if t.error is None}
    racks = racks_by_partition(md, hook.broker_racks())
    # The groups regex narrows declared groups as it does discovered and announced ones.
    declared = {g.group: g for g in assign_groups if regex is None or regex.fullmatch(g.group)}
    liveness = _read_liveness(hook, status_topic, session_timeout_ms, warnings)
    announced = {g for g in liveness.groups() if regex is None or regex.fullmatch(g)}
    assign_ids = sorted(set(declared) | announced)
    discovered = _discovered_groups(hook, regex, assign_ids, warnings)
    say(
        f"{len(discovered)} discovered and {len(assign_ids)} assign()-mode groups "
        f"({len(declared)} declared, {len(announced)} announced on {status_topic})"
    )
    all_ids = discovered + assign_ids
    descriptions = hook.describe(all_ids) if all_ids else {}
    kip848 = _describe_consumer_protocol(hook, discovered, descriptions, warnings)
    n_parts = sum(len(ps) for ps in topic_parts.values())
    scope = committed_scope
    if scope == "auto":
        small = 0 < n_parts <= NAMED_PARTITIONS_MAX
        # Kafka 0.9's named OffsetFetch (v0) reads ZooKeeper's offsets, not the Kafka-stored
        # ones a whole-group read returns (seen in CI: commits missing)
        scope = "partitions" if small and not hook.old_broker else "group"
    say(
        f"reading committed offsets of {len(all_ids)} groups"
        + (f" (naming the cluster's {n_parts} partitions)" if scope == "partitions" else "")
    )
    named = topic_parts if scope == "partitions" else None
    committed = hook.committed(all_ids, _with_log(progress, log), named) if all_ids else {}
    if named is not None:  # a broker may refuse named partitions (old ones): ask those groups whole
        refused = [gid for gid, r in committed.items() if _refused(r)]
        if refused:
            committed.update(hook.committed(refused))
    if plans is None:
        plans = _read_plans(hook, plan_topic, assign_ids, warnings)

    now = now_ms()
    groups = [
        build_group(
            gid,
            declared.get(gid),
            gid in assign_ids,
            auto_offset_reset,
            descriptions.get(gid),
            committed.get(gid),
            plans.get(gid),
            liveness,
            now,
            topic_parts,
            kip848.get(gid),
        )
        for gid in all_ids
    ]
    for g in groups:
        warnings += g.warnings
    needed = {(t, p) for g in groups for t in g.topics for p in topic_parts[t]}
    say(f"reading offsets of {len(needed)} partitions")
    begins = hook.offsets(needed, "earliest") if needed else {}
    ends = hook.offsets(needed, "latest") if needed else {}
    partitions = [row for g in groups for row in g.partition_rows(topic_parts, begins, ends, racks)]
    rows = [g.row for g in groups]
    members = [m for g in groups for m in g.members]
    manifest = {
        "cluster_id": md.cluster_id,
        "bootstrap_servers": hook.config.get("bootstrap.servers"),
        "snapshot_at": snapshot_at,
        "finished_at": now_text(),
        "duration_s": round(time.monotonic() - started, 3),
        "groups_regex": groups_regex,
        "declared_groups": sorted(declared),
        "auto_offset_reset": auto_offset_reset,
        "plan_topic": plan_topic,
        "status_topic": status_topic,
        "committed_scope": scope,
        **_counts(groups, partitions, members),
        "warnings": warnings,
        "admin_calls": {**dict(sorted(hook.calls.items())), "total": hook.total_calls},
        "config": redact({k: v for k, v in hook.config.items() if k != "logger"}),
    }
    return Snapshot(rows, partitions, members, manifest)


def _refused(answer: Any) -> bool:
    """A committed-offsets answer that failed, as a whole or for some partition."""
    if isinstance(answer, BaseException) or answer is None:
        return True
    return any(getattr(tp, "error", None) is not None for tp in answer)


def _with_log(progress: Progress | None, log: Callable[[str], None] | None) -> Progress | None:
    """``progress``, plus a log line every ``LOG_EVERY`` groups (and at the end) when logging."""
    if log is None:
        return progress
    last = [0]

    def both(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total)
        if done - last[0] >= LOG_EVERY or (done == total and done != last[0]):
            last[0] = done
            log(f"committed offsets: {done}/{total} groups")

    return both


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


def _read_liveness(
    hook: AdminHook, status_topic: str, session_timeout_ms: int | None, warnings: list[str]
) -> Liveness:
    """The instances announced on the status topic; none (with a warning) if it cannot be read,
    so declared groups keep their declared instances."""
    try:
        return read_status(hook.config, status_topic, hook.timeout, session_timeout_ms=session_timeout_ms)
    except Exception as exc:
        warnings.append(f"reading statuses from {status_topic}: {reason(exc)}")
        return Liveness(session_timeout_ms)


def _discovered_groups(
    hook: AdminHook, regex: re.Pattern[str] | None, assign_ids: Sequence[str], warnings: list[str]
) -> list[str]:
    """Groups the cluster lists that match ``regex`` and are not in assign() mode, sorted."""
    listings, list_errors = hook.list_groups()
    warnings += [f"list groups: {e}" for e in list_errors]
    taken = set(assign_ids)
    return sorted(
        {
            g.group_id
            for g in listings
            if g.group_id not in taken and (regex is None or regex.fullmatch(g.group_id))
        }
    )


def _describe_consumer_protocol(
    hook: AdminHook, discovered: Sequence[str], descriptions: Mapping[str, Any], warnings: list[str]
) -> dict[str, Any]:
    """The ``consumer``-type groups among ``discovered`` as their coordinators describe them
    (``groupdescribe``: racks, subscriptions, epochs, member types); a group that cannot be read
    so keeps confluent-kafka's description, and the manifest says what was not read and why."""
    from .groupdescribe import DescribeError, Group

    wanted = [
        gid for gid in discovered if _group_type(getattr(descriptions.get(gid), "type", None)) == "consumer"
    ]
    if not wanted:
        return {}
    missing = "members' racks, subscriptions and epochs"
    try:
        found = hook.describe_consumer_protocol(wanted)
    except DescribeError as exc:
        warnings.append(f"{missing} of {len(wanted)} consumer-type group(s) not read: {exc}")
        return {}
    failed = {gid: got for gid, got in found.items() if not isinstance(got, Group)}
    for gid, why in sorted(failed.items()):
        warnings.append(f"group {gid}: {missing} not read ({why}); members as confluent-kafka describes them")
    return {gid: got for gid, got in found.items() if isinstance(got, Group)}


def _read_plans(
    hook: AdminHook, plan_topic: str, assign_ids: Sequence[str], warnings: list[str]
) -> dict[str, Any]:
    """The plans in force of the assign()-mode groups; none (with a warning) if unreadable, so
    their assignments stay empty and the manifest says why."""
    if not assign_ids:
        return {}
    try:
        with PlanStore(hook.config, plan_topic, hook.timeout) as store:
            return store.read(assign_ids)
    except Exception as exc:
        warnings.append(f"reading plans from {plan_topic}: {reason(exc)}")
        return {}


def _counts(groups: Sequence[GroupRows], partitions: Sequence[Any], members: Sequence[Any]) -> dict[str, Any]:
    """The manifest's counts and its list of failed groups."""
    rows = [g.row for g in groups]
    failed = [{"group": r["group"], "error": r["error"]} for r in rows if r["error"]]
    return {
        "counts": {
            "groups": len(rows),
            "subscribe": sum(r["kind"] == "subscribe" for r in rows),
            "assign": sum(r["kind"] == "assign" for r in rows),
            "failed": len(failed),
            "partitions": len(partitions),
            "members": len(members),
            "topics": len({t for g in groups for t in g.topics}),
        },
        "failed": failed,
    }


# -- one group's rows, from what was read (pure) ------------------------------------------------


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
        gid, reset = self.row["group"], self.row["auto_offset_reset"]
        out = []
        for t in self.topics:
            for p in topic_parts[t]:
                begin, end = begins.get((t, p)), ends.get((t, p))
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
                        lag = partition_lag(end, c, begin, reset)
                    except CaseError as exc:
                        self.errors.append(f"{t}-{p}: {exc}")
                row = {
                    "group": gid,
                    "topic": t,
                    "partition": p,
                    "begin": begin,
                    "end": end,
                    "committed": c,
                    "lag": lag,
                }
                if racks and (t, p) in racks:
                    row["racks"] = list(racks[(t, p)])
                out.append(row)
        self.row["error"] = "; ".join(dict.fromkeys(self.errors)) or None
        return out


def build_group(
    gid: str,
    spec: AssignGroup | None,
    assign: bool,
    default_reset: str,
    desc: Any,
    got: Any,
    plan: Any,
    liveness: Liveness,
    now: int,
    topic_parts: Mapping[str, list[int]],
    wire: Any = None,
) -> GroupRows:
    """One group's row and members from its description, committed offsets and plan.

    ``wire``: a ``consumer``-type group as its coordinator describes it (``groupdescribe.Group``);
    its one answer then gives the group's state, assignor and members, in place of ``desc``."""
    reset = spec.auto_offset_reset if spec and spec.auto_offset_reset else default_reset
    g = GroupRows(
        {
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
    )
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
        g.row["state"] = _state_name(getattr(desc, "state", None))
        g.row["protocol"] = desc.partition_assignor or None
        # an assign() group has no group protocol: the broker's "classic" only means it commits
        g.row["group_type"] = None if assign else _group_type(getattr(desc, "type", None))
    elif not assign:  # a subscribe group without its description has no members
        g.errors.append(f"describe failed: {reason(desc) if desc is not None else 'no answer'}")
    g.commits, commit_errors = _commits(got)
    g.errors += commit_errors
    topics = {t for t, _ in g.commits}
    if assign:
        instances, why_empty = _assign_members(gid, spec, plan, liveness, now, topics)
        alive = liveness.alive(gid, now)
        for iid, iid_topics in instances.items():
            topics |= set(iid_topics)
            owned = plan.partitions_of(iid) if plan is not None else []
            g.members.append(
                {
                    "group": gid,
                    "member_id": iid,
                    "instance_id": iid,
                    "client_id": None,
                    "host": alive[iid].host if iid in alive else None,
                    "topics": list(iid_topics),
                    "assignment": [{"topic": t, "partition": p} for t, p in owned],
                    "rack": alive[iid].rack if iid in alive else None,
                    "capacity": alive[iid].observed_capacity if iid in alive else None,
                }
            )
        if why_empty:
            g.errors.append(why_empty)
        joined = list(desc.members or []) if described else []
        if joined:
            names = ", ".join(f"{m.member_id} ({m.client_id})" for m in joined)
            g.warnings.append(
                f"group {gid}: runs in assign() mode but has {len(joined)} live member(s) of the "
                f"group protocol: {names}; Kafka refuses its consumers' commits while they stay"
            )
        missing = sorted({t for ts in instances.values() for t in ts} - set(topic_parts))
        if missing:
            g.errors.append(f"declared topic(s) {', '.join(missing)} do not exist")
    elif wire is not None:
        for wm in wire.members:
            member = _wire_member(gid, wm, topic_parts)
            topics |= set(member["topics"]) | {a["topic"] for a in member["assignment"]}
            g.members.append(member)
    elif described:
        for m in desc.members or []:
            tps = sorted({(tp.topic, tp.partition) for tp in (m.assignment.topic_partitions or [])})
            topics |= {t for t, _ in tps}
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
            if target is not None and g.row["group_type"] == "consumer":
                pairs = sorted({(tp.topic, tp.partition) for tp in target.topic_partitions or []})
                member["target"] = [{"topic": t, "partition": p} for t, p in pairs]
            g.members.append(member)
    gone = sorted(t for t in topics if t not in topic_parts)
    if gone and not assign:
        g.warnings.append(f"group {gid}: committed offsets for deleted topic(s) {', '.join(gone)} skipped")
    g.topics = sorted(t for t in topics if t in topic_parts)
    for m in g.members:
        if not m["topics"]:  # a member that owns nothing (nor subscribes): assume the group's topics
            m["topics"] = list(g.topics)
    g.row["error"] = "; ".join(g.errors) or None
    return g


def _wire_member(gid: str, m: Any, topic_parts: Mapping[str, list[int]]) -> dict[str, Any]:
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


def _assign_members(
    gid: str,
    spec: AssignGroup | None,
    plan: Any,
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


def snapshot_to(out: str | Path, config: Mapping[str, Any], **kwargs: Any) -> Snapshot:
    """Take a snapshot with a fresh AdminHook and write it to ``out`` (for callers like Airflow)."""
    hook_opts = {k: kwargs.pop(k) for k in ("timeout", "retries", "concurrency") if k in kwargs}
    snap = take_snapshot(AdminHook(config, **hook_opts), **kwargs)
    snap.write(out)
    return snap
