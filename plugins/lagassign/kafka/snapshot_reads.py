"""The reads of a snapshot: which groups it covers, and what Kafka says about them.

Each read goes through the snapshot's ``AdminHook`` (or the status and plans topics' readers)
and leaves the rows to ``snapshot_rows``. A read that fails for one group is that group's
error; one that fails as a whole (statuses, plans, ConsumerGroupDescribe) is a warning for the
manifest, and the snapshot goes on with what it has. ``snapshot``'s docstring says what each
read contributes and how committed offsets are asked for (``committed_scope``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.liveness import Liveness
from .admin import AdminHook
from .errors import reason
from .fanout import Progress
from .groupdescribe import DescribeError, Group
from .groupsfile import AssignGroup
from .plans import PlanStore
from .snapshot_rows import GroupRows, group_type
from .status import read_status

#: ``committed_scope="auto"`` names every partition of a cluster with at most this many
NAMED_PARTITIONS_MAX = 2_000
#: a log line every this many groups while committed offsets are read
LOG_EVERY = 1_000


@dataclass(frozen=True)
class SnapshotGroups:
    """The groups a snapshot covers: discovered ones, and assign()-mode ones (declared in the
    groups file or announced on the status topic, with the liveness that announced them)."""

    discovered: list[str]
    assign_ids: list[str]
    declared: dict[str, AssignGroup]
    liveness: Liveness

    @property
    def all_ids(self) -> list[str]:
        """Discovered groups first, then assign()-mode ones: the snapshot's order of groups."""
        return self.discovered + self.assign_ids


def find_groups(
    hook: AdminHook,
    regex: re.Pattern[str] | None,
    assign_groups: Sequence[AssignGroup],
    status_topic: str,
    session_timeout_ms: int | None,
    warnings: list[str],
    say: Callable[[str], None],
) -> SnapshotGroups:
    """The groups to snapshot: declared and announced ones in assign() mode, then those the
    cluster lists; the groups regex narrows all three."""
    declared = {g.group: g for g in assign_groups if regex is None or regex.fullmatch(g.group)}
    liveness = read_liveness(hook, status_topic, session_timeout_ms, warnings)
    announced = {g for g in liveness.groups() if regex is None or regex.fullmatch(g)}
    assign_ids = sorted(set(declared) | announced)
    discovered = discovered_groups(hook, regex, assign_ids, warnings)
    say(
        f"{len(discovered)} discovered and {len(assign_ids)} assign()-mode groups "
        f"({len(declared)} declared, {len(announced)} announced on {status_topic})"
    )
    return SnapshotGroups(discovered, assign_ids, declared, liveness)


def read_liveness(
    hook: AdminHook, status_topic: str, session_timeout_ms: int | None, warnings: list[str]
) -> Liveness:
    """The instances announced on the status topic; none (with a warning) if it cannot be read,
    so declared groups keep their declared instances."""
    try:
        return read_status(hook.config, status_topic, hook.timeout, session_timeout_ms=session_timeout_ms)
    except Exception as exc:
        warnings.append(f"reading statuses from {status_topic}: {reason(exc)}")
        return Liveness(session_timeout_ms)


def discovered_groups(
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


def describe_consumer_protocol(
    hook: AdminHook, discovered: Sequence[str], descriptions: Mapping[str, Any], warnings: list[str]
) -> dict[str, Group]:
    """The ``consumer``-type groups among ``discovered`` as their coordinators describe them
    (``groupdescribe``: racks, subscriptions, epochs, member types); a group that cannot be read
    so keeps confluent-kafka's description, and the manifest says what was not read and why."""
    wanted = [
        gid for gid in discovered if group_type(getattr(descriptions.get(gid), "type", None)) == "consumer"
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


def committed_scope_of(asked: str, hook: AdminHook, topic_parts: Mapping[str, list[int]]) -> str:
    """``group`` or ``partitions``: ``auto`` names the partitions of a small cluster."""
    if asked != "auto":
        return asked
    n_parts = sum(len(ps) for ps in topic_parts.values())
    small = 0 < n_parts <= NAMED_PARTITIONS_MAX
    # Kafka 0.9's named OffsetFetch (v0) reads ZooKeeper's offsets, not the Kafka-stored
    # ones a whole-group read returns: its groups' commits would be missing
    return "partitions" if small and not hook.old_broker else "group"


def read_committed(
    hook: AdminHook,
    all_ids: Sequence[str],
    topic_parts: Mapping[str, list[int]],
    scope: str,
    progress: Progress | None,
    log: Callable[[str], None] | None,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """group -> its committed offsets (or the exception reading them), naming the cluster's
    partitions when ``scope`` is ``partitions``."""
    n_parts = sum(len(ps) for ps in topic_parts.values())
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
    return committed


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


def read_plans(
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


def read_partition_rows(
    hook: AdminHook,
    groups: Sequence[GroupRows],
    topic_parts: Mapping[str, list[int]],
    racks: Mapping[tuple[str, int], list[str]],
    say: Callable[[str], None],
) -> list[dict[str, Any]]:
    """Every group's partition rows, begin and end offsets read once per partition."""
    needed = {(t, p) for g in groups for t in g.topics for p in topic_parts[t]}
    say(f"reading offsets of {len(needed)} partitions")
    begins = hook.offsets(needed, "earliest") if needed else {}
    ends = hook.offsets(needed, "latest") if needed else {}
    return [row for g in groups for row in g.partition_rows(topic_parts, begins, ends, racks)]
