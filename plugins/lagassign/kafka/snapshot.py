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
``snapshot_reads.NAMED_PARTITIONS_MAX`` of them and the broker is 0.10 or newer (Kafka 0.9's
named OffsetFetch v0 reads other offsets). The manifest says which was used.

The module orders the reads (``snapshot_reads``) and assembles the rows built from them
(``snapshot_rows``, pure) with the manifest.

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
from pathlib import Path
from typing import Any

from ..core.clock import now_text
from ..core.lag import RESET_POLICIES
from ..core.topics import PLAN_TOPIC, STATUS_TOPIC
from ..tables.snapshot import Snapshot
from .admin import AdminHook
from .config import redact
from .errors import KafkaConfigError
from .fanout import Progress
from .groupdescribe import Group
from .groupsfile import AssignGroup
from .snapshot_reads import (
    SnapshotGroups,
    committed_scope_of,
    describe_consumer_protocol,
    find_groups,
    read_committed,
    read_partition_rows,
    read_plans,
)
from .snapshot_rows import GroupRows, build_group, racks_by_partition
from .status import now_ms

COMMITTED_SCOPES = ("auto", "group", "partitions")


def compile_regex(pattern: str | None) -> re.Pattern[str] | None:
    """The --groups regex (matched against the whole group id)."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise KafkaConfigError(f"--groups {pattern!r} is not a valid regex: {exc}") from None


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
    them by ``snapshot_rows``. ``plans`` (group -> plan in force): when the caller has read
    the plans topic already. ``committed_scope``: see the module's docstring."""
    if committed_scope not in COMMITTED_SCOPES:
        raise KafkaConfigError(f"committed_scope must be one of {', '.join(COMMITTED_SCOPES)}")
    if auto_offset_reset not in RESET_POLICIES:
        raise KafkaConfigError(f"--auto-offset-reset must be one of {', '.join(RESET_POLICIES)}")
    regex = compile_regex(groups_regex)
    say = log or (lambda _m: None)
    started, snapshot_at = time.monotonic(), now_text()
    warnings: list[str] = []

    md = hook.metadata()
    topic_parts = {name: sorted(t.partitions) for name, t in md.topics.items() if t.error is None}
    racks = racks_by_partition(md, hook.broker_racks())
    found = find_groups(hook, regex, assign_groups, status_topic, session_timeout_ms, warnings, say)
    all_ids = found.all_ids
    descriptions = hook.describe(all_ids) if all_ids else {}
    kip848 = describe_consumer_protocol(hook, found.discovered, descriptions, warnings)
    scope = committed_scope_of(committed_scope, hook, topic_parts)
    committed = read_committed(hook, all_ids, topic_parts, scope, progress, log, say)
    if plans is None:
        plans = read_plans(hook, plan_topic, found.assign_ids, warnings)

    groups = _build_groups(found, auto_offset_reset, descriptions, committed, plans, kip848, topic_parts)
    for g in groups:
        warnings += g.warnings
    partitions = read_partition_rows(hook, groups, topic_parts, racks, say)
    members = [m for g in groups for m in g.members]
    settings = {
        "groups_regex": groups_regex,
        "declared_groups": sorted(found.declared),
        "auto_offset_reset": auto_offset_reset,
        "plan_topic": plan_topic,
        "status_topic": status_topic,
        "committed_scope": scope,
    }
    manifest = _manifest(hook, md, started, snapshot_at, settings, groups, partitions, members, warnings)
    return Snapshot([g.row for g in groups], partitions, members, manifest)


# -- the rows ------------------------------------------------------------------------------------


def _build_groups(
    found: SnapshotGroups,
    auto_offset_reset: str,
    descriptions: Mapping[str, Any],
    committed: Mapping[str, Any],
    plans: Mapping[str, Any],
    kip848: Mapping[str, Group],
    topic_parts: Mapping[str, list[int]],
) -> list[GroupRows]:
    """Every group's rows from what was read (``snapshot_rows.build_group``), at one moment."""
    now = now_ms()
    return [
        build_group(
            gid,
            found.declared.get(gid),
            gid in found.assign_ids,
            auto_offset_reset,
            descriptions.get(gid),
            committed.get(gid),
            plans.get(gid),
            found.liveness,
            now,
            topic_parts,
            kip848.get(gid),
        )
        for gid in found.all_ids
    ]


# -- the manifest --------------------------------------------------------------------------------


def _manifest(
    hook: AdminHook,
    md: Any,
    started: float,
    snapshot_at: str,
    settings: Mapping[str, Any],
    groups: Sequence[GroupRows],
    partitions: Sequence[Any],
    members: Sequence[Any],
    warnings: list[str],
) -> dict[str, Any]:
    """What the snapshot read and how: the cluster, times, settings, counts, failures,
    warnings, the admin calls made and the client settings (secrets redacted)."""
    return {
        "cluster_id": md.cluster_id,
        "bootstrap_servers": hook.config.get("bootstrap.servers"),
        "snapshot_at": snapshot_at,
        "finished_at": now_text(),
        "duration_s": round(time.monotonic() - started, 3),
        **settings,
        **_counts(groups, partitions, members),
        "warnings": warnings,
        "admin_calls": {**dict(sorted(hook.calls.items())), "total": hook.total_calls},
        "config": redact({k: v for k, v in hook.config.items() if k != "logger"}),
    }


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


def snapshot_to(out: str | Path, config: Mapping[str, Any], **kwargs: Any) -> Snapshot:
    """Take a snapshot with a fresh AdminHook and write it to ``out`` (for callers like Airflow)."""
    hook_opts = {k: kwargs.pop(k) for k in ("timeout", "retries", "concurrency") if k in kwargs}
    snap = take_snapshot(AdminHook(config, **hook_opts), **kwargs)
    snap.write(out)
    return snap
