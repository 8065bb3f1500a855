"""Snapshot of a cluster's consumer groups into the tables of ``lagassign.snapshot``.

Two kinds of groups:

* ``subscribe``: discovered (list groups, filtered by a regex). Members, their client ids,
  hosts and assignments come from describe groups; committed offsets from the group. The
  AdminClient API exposes a member's assignment, not its subscription, so a member's topics are
  the topics of its assignment, or all the group's topics when it owns nothing.
* ``assign``: declared in the groups file (their consumers never join, so the broker cannot list
  them). Members are the declared instances; their current assignment is the group's newest
  published plan.

A group's partitions are every partition of its topics (members' topics and topics with a
committed offset); begin and end offsets are read once per partition for all groups. A group
that cannot be read completely gets its ``error`` set and the run goes on; the manifest lists
the failures. Secrets in the settings never reach the manifest (``config.redact``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CaseError
from ..lag import partition_lag
from ..snapshot import GROUPS, MANIFEST, MEMBERS, PARTITIONS
from .admin import AdminHook, Progress, reason
from .config import redact
from .errors import KafkaConfigError
from .groupsfile import AssignGroup
from .plans import PLAN_TOPIC, PlanStore, utc_now

RESET_POLICIES = ("earliest", "latest", "none")

# Kafka's own names for group states (kafka-consumer-groups.sh prints these).
_STATES = {
    "UNKNOWN": "Unknown", "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance", "STABLE": "Stable", "DEAD": "Dead", "EMPTY": "Empty",
}


def _arrow_schemas() -> dict[str, Any]:
    import pyarrow as pa

    tp = pa.struct([("topic", pa.string()), ("partition", pa.int32())])
    return {
        GROUPS: pa.schema([("group", pa.string()), ("kind", pa.string()), ("state", pa.string()),
                           ("protocol", pa.string()), ("auto_offset_reset", pa.string()),
                           ("error", pa.string())]),
        PARTITIONS: pa.schema([("group", pa.string()), ("topic", pa.string()), ("partition", pa.int32()),
                               ("begin", pa.int64()), ("end", pa.int64()), ("committed", pa.int64()),
                               ("lag", pa.int64())]),
        MEMBERS: pa.schema([("group", pa.string()), ("member_id", pa.string()), ("instance_id", pa.string()),
                            ("client_id", pa.string()), ("host", pa.string()),
                            ("topics", pa.list_(pa.string())), ("assignment", pa.list_(tp))]),
    }


@dataclass
class Snapshot:
    """The rows of the three tables and the manifest, before they are written."""

    groups: list[dict[str, Any]] = field(default_factory=list)
    partitions: list[dict[str, Any]] = field(default_factory=list)
    members: list[dict[str, Any]] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)

    def cases(self) -> dict[str, dict[str, Any] | None]:
        """Each group's case (None for a group that failed), as the snapshot readers build it."""
        from ..snapshot import case_from_rows

        out: dict[str, dict[str, Any] | None] = {}
        for grow in self.groups:
            name = grow["group"]
            out[name] = None if grow.get("error") else case_from_rows(
                name, [r for r in self.partitions if r["group"] == name],
                [r for r in self.members if r["group"] == name], grow.get("auto_offset_reset"))
        return out

    def write(self, out: str | Path) -> Path:
        """Write groups/partitions/members Parquet and manifest.json into ``out`` (created)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        schemas = _arrow_schemas()
        for name, rows in ((GROUPS, self.groups), (PARTITIONS, self.partitions), (MEMBERS, self.members)):
            table = pa.Table.from_pylist(rows, schema=schemas[name])
            pq.write_table(table, folder / name)
        (folder / MANIFEST).write_text(json.dumps(self.manifest, indent=2, sort_keys=True) + "\n")
        return folder


def compile_regex(pattern: str | None) -> re.Pattern[str] | None:
    """The --groups regex (matched against the whole group id)."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise KafkaConfigError(f"--groups {pattern!r} is not a valid regex: {exc}") from None


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
) -> Snapshot:
    """Read the cluster through ``hook`` and build the snapshot rows (nothing is written)."""
    if auto_offset_reset not in RESET_POLICIES:
        raise KafkaConfigError(f"--auto-offset-reset must be one of {', '.join(RESET_POLICIES)}")
    regex = compile_regex(groups_regex)
    say = log or (lambda _m: None)
    started = time.monotonic()
    snapshot_at = utc_now()
    warnings: list[str] = []

    md = hook.metadata()
    topic_parts = {name: sorted(t.partitions) for name, t in md.topics.items() if t.error is None}
    declared = {g.group: g for g in assign_groups}

    listings, list_errors = hook.list_groups()
    warnings += [f"list groups: {e}" for e in list_errors]
    discovered = sorted({
        g.group_id for g in listings
        if g.group_id not in declared and (regex is None or regex.fullmatch(g.group_id))
    })
    all_ids = discovered + sorted(declared)
    say(f"{len(discovered)} discovered and {len(declared)} declared groups")

    descriptions = hook.describe(all_ids) if all_ids else {}
    committed = hook.committed(all_ids, progress) if all_ids else {}

    plans: dict[str, Any] = {}
    if declared:
        try:
            with PlanStore(hook.config, plan_topic, hook.timeout) as store:
                plans = store.read(declared)
        except Exception as exc:  # assignments stay empty; the manifest says why
            warnings.append(f"reading plans from {plan_topic}: {reason(exc)}")

    # Per group: its topics, its committed offsets, its members; errors as they appear.
    group_rows: dict[str, dict[str, Any]] = {}
    group_topics: dict[str, list[str]] = {}
    group_commits: dict[str, dict[tuple[str, int], int | None]] = {}
    members: list[dict[str, Any]] = []
    for gid in all_ids:
        spec = declared.get(gid)
        reset = spec.auto_offset_reset if spec and spec.auto_offset_reset else auto_offset_reset
        row: dict[str, Any] = {
            "group": gid, "kind": "assign" if spec else "subscribe", "state": None, "protocol": None,
            "auto_offset_reset": reset, "error": None,
        }
        group_rows[gid] = row
        errors: list[str] = []
        desc = descriptions.get(gid)
        if isinstance(desc, BaseException) or desc is None:
            if spec is None:  # a subscribe group without its description has no members
                errors.append(f"describe failed: {reason(desc) if desc is not None else 'no answer'}")
        else:
            row["state"] = _state_name(getattr(desc, "state", None))
            row["protocol"] = desc.partition_assignor or None
        commits: dict[tuple[str, int], int | None] = {}
        got = committed.get(gid)
        if isinstance(got, BaseException) or got is None:
            errors.append(f"committed offsets: {reason(got) if got is not None else 'no answer'}")
        else:
            for tp in got:
                if tp.error is not None:
                    why = reason(Exception(tp.error))
                    errors.append(f"committed offset of {tp.topic}-{tp.partition}: {why}")
                commits[(tp.topic, tp.partition)] = tp.offset if tp.offset >= 0 else None
        group_commits[gid] = commits

        topics: set[str] = {t for t, _ in commits}
        if spec is not None:
            topics |= set(spec.topics)
            plan = plans.get(gid)
            for iid, iid_topics in spec.instances.items():
                owned = plan.partitions_of(iid) if plan is not None else []
                members.append({
                    "group": gid, "member_id": iid, "instance_id": iid, "client_id": None, "host": None,
                    "topics": list(iid_topics),
                    "assignment": [{"topic": t, "partition": p} for t, p in owned],
                })
            missing = [t for t in spec.topics if t not in topic_parts]
            if missing:
                errors.append(f"declared topic(s) {', '.join(missing)} do not exist")
        elif not isinstance(desc, BaseException) and desc is not None:
            described = []
            for m in desc.members or []:
                tps = sorted({(tp.topic, tp.partition) for tp in (m.assignment.topic_partitions or [])})
                topics |= {t for t, _ in tps}
                described.append((m, tps))
            for m, tps in described:
                members.append({
                    "group": gid, "member_id": m.member_id, "instance_id": m.group_instance_id or None,
                    "client_id": m.client_id, "host": m.host,
                    "topics": sorted({t for t, _ in tps}) or None,  # filled in below
                    "assignment": [{"topic": t, "partition": p} for t, p in tps],
                })
        gone = sorted(t for t in topics if t not in topic_parts)
        if gone and spec is None:
            warnings.append(f"group {gid}: committed offsets for deleted topic(s) {', '.join(gone)} skipped")
        group_topics[gid] = sorted(t for t in topics if t in topic_parts)
        if errors:
            row["error"] = "; ".join(errors)
    for m in members:
        if m["topics"] is None:  # a member that owns nothing: assume the group's topics
            m["topics"] = group_topics[m["group"]]

    # Begin and end offsets, once per partition for every group.
    needed = {(t, p) for gid in all_ids for t in group_topics[gid] for p in topic_parts[t]}
    say(f"reading offsets of {len(needed)} partitions")
    begins = hook.offsets(needed, "earliest") if needed else {}
    ends = hook.offsets(needed, "latest") if needed else {}

    partitions: list[dict[str, Any]] = []
    for gid in all_ids:
        row = group_rows[gid]
        errors = [row["error"]] if row["error"] else []
        commits = group_commits[gid]
        for t in group_topics[gid]:
            for p in topic_parts[t]:
                begin, end = begins.get((t, p)), ends.get((t, p))
                bad = [v for v in (begin, end) if isinstance(v, BaseException) or v is None]
                if bad:
                    why = reason(bad[0]) if bad[0] is not None else "no answer"
                    errors.append(f"offsets of {t}-{p}: {why}")
                    begin = begin if isinstance(begin, int) else None
                    end = end if isinstance(end, int) else None
                c = commits.get((t, p))
                lag = None
                if end is not None and not bad:
                    try:
                        lag = partition_lag(end, c, begin, row["auto_offset_reset"])
                    except CaseError as exc:
                        errors.append(f"{t}-{p}: {exc}")
                partitions.append({"group": gid, "topic": t, "partition": p, "begin": begin, "end": end,
                                   "committed": c, "lag": lag})
        if errors:
            row["error"] = "; ".join(dict.fromkeys(errors))

    rows = [group_rows[g] for g in all_ids]
    failed = [{"group": r["group"], "error": r["error"]} for r in rows if r["error"]]
    manifest = {
        "cluster_id": md.cluster_id,
        "bootstrap_servers": hook.config.get("bootstrap.servers"),
        "snapshot_at": snapshot_at,
        "finished_at": utc_now(),
        "duration_s": round(time.monotonic() - started, 3),
        "groups_regex": groups_regex,
        "declared_groups": sorted(declared),
        "auto_offset_reset": auto_offset_reset,
        "plan_topic": plan_topic,
        "counts": {
            "groups": len(rows),
            "subscribe": sum(r["kind"] == "subscribe" for r in rows),
            "assign": sum(r["kind"] == "assign" for r in rows),
            "failed": len(failed),
            "partitions": len(partitions),
            "members": len(members),
            "topics": len({t for g in all_ids for t in group_topics[g]}),
        },
        "failed": failed,
        "warnings": warnings,
        "admin_calls": {**dict(sorted(hook.calls.items())), "total": hook.total_calls},
        "config": redact({k: v for k, v in hook.config.items() if k != "logger"}),
    }
    return Snapshot(rows, partitions, members, manifest)


def snapshot_to(out: str | Path, config: Mapping[str, Any], **kwargs: Any) -> Snapshot:
    """Take a snapshot with a fresh AdminHook and write it to ``out`` (for callers like Airflow)."""
    hook_opts = {k: kwargs.pop(k) for k in ("timeout", "retries", "concurrency") if k in kwargs}
    snap = take_snapshot(AdminHook(config, **hook_opts), **kwargs)
    snap.write(out)
    return snap
