"""Read every group of a cluster for the groups overview: the snapshot's rows, every instance's
newest status (alive or not: the snapshot keeps only the live ones) and every plan in force.

One read costs what a planning run's snapshot costs (metadata, list and describe groups,
committed offsets, begin and end offsets: ``kafka.snapshot``), plus one more read of the
status and plans topics (the snapshot keeps only live instances and assign()-mode groups'
plans; the overview shows dead instances and every plan). ``bench/groups_page.py`` measures it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..core.clock import parse_utc, utc_now
from ..core.clusters import manifest_cluster
from ..core.liveness import Liveness
from ..core.plans import Plan
from ..core.topics import PLAN_TOPIC, STATUS_TOPIC
from ..tables.snapshot import Snapshot
from .admin import AdminHook
from .errors import reason
from .groupsfile import AssignGroup
from .plans import PlanStore
from .snapshot import take_snapshot
from .status import read_status


@dataclass
class ClusterView:
    """What one read of a cluster saw: its key, when, the snapshot rows, every instance's newest
    status, every group's plan in force, and what could not be read."""

    cluster: str
    observed_at: datetime
    snapshot: Snapshot
    liveness: Liveness
    plans: dict[str, Plan] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: assign()-mode groups of the groups file: group -> the instance ids it pins
    declared: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def cluster_id(self) -> str | None:
        """The id the brokers announce (the offset history's key), as the snapshot read it."""
        value = self.snapshot.manifest.get("cluster_id")
        return str(value) if value else None


def read_cluster(
    config: Mapping[str, Any],
    groups_regex: str | None = None,
    assign_groups: Sequence[AssignGroup] = (),
    plan_topic: str = PLAN_TOPIC,
    status_topic: str = STATUS_TOPIC,
    session_timeout_ms: int | None = None,
    timeout: float = 30.0,
    concurrency: int = 64,
) -> ClusterView:
    """Read the cluster's groups (``groups_regex`` narrows them), statuses and plans."""
    warnings: list[str] = []
    try:
        liveness = read_status(config, status_topic, timeout, session_timeout_ms=session_timeout_ms)
    except Exception as exc:
        warnings.append(f"reading statuses from {status_topic}: {reason(exc)}")
        liveness = Liveness(session_timeout_ms)
    try:
        with PlanStore(config, plan_topic, timeout) as topic:
            plans = topic.read()
    except Exception as exc:
        warnings.append(f"reading plans from {plan_topic}: {reason(exc)}")
        plans = {}
    hook = AdminHook(config, timeout=timeout, concurrency=concurrency)
    snap = take_snapshot(
        hook,
        groups_regex=groups_regex,
        assign_groups=assign_groups,
        plan_topic=plan_topic,
        status_topic=status_topic,
        session_timeout_ms=session_timeout_ms,
        plans=plans,
    )
    warnings += [w for w in snap.manifest.get("warnings", []) if w not in warnings]
    at = parse_utc(snap.manifest.get("finished_at")) or utc_now()
    declared = {g.group: tuple(sorted(g.instances)) for g in assign_groups}
    return ClusterView(manifest_cluster(snap.manifest), at, snap, liveness, plans, warnings, declared)
