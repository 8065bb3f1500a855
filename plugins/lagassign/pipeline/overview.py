"""The groups overview: every group's status now, its lag figures, instances and last plan.

``observe`` reads the cluster (``kafka.overview``); ``build_overview`` joins what it saw with
the observations the audit store keeps (the rules' window) and judges every group
(``core.health``), adding its plan in force, instances and the last plan's outcome.
``stored_overview`` is what the health job recorded last, for when the cluster cannot be read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..core.catchup import duration_text
from ..core.clock import iso_z
from ..core.health import SEVERITY, GroupHealth, GroupInput, Rules, group_health
from ..core.outcome import outcome_of
from ..core.topics import PLAN_TOPIC, STATUS_TOPIC
from ..kafka.groupsfile import load_groups_file
from ..kafka.overview import ClusterView, read_cluster
from .group_inputs import group_inputs
from .ports import GroupsStore

DEFAULT_WINDOW_S = 600.0


@dataclass(frozen=True)
class HealthSettings:
    """What the health job and the overview read, and the rules' window."""

    window_s: float = DEFAULT_WINDOW_S
    groups: str | None = None
    groups_file: str | None = None
    plan_topic: str = PLAN_TOPIC
    status_topic: str = STATUS_TOPIC
    session_timeout_ms: int | None = None

    @property
    def rules(self) -> Rules:
        return Rules(window_s=self.window_s)

    @property
    def keep(self) -> timedelta:
        """How long observations are kept: the window and a half (the rules need a value
        unchanged for a whole window, seen from before it started)."""
        return timedelta(seconds=self.window_s * 1.5 + 120)


@dataclass
class Overview:
    """Every group's row (``group_row``) and health, as of ``observed_at``; ``fresh`` when read
    from the cluster now, else from what the health job recorded last (``source`` says which)."""

    cluster: str
    observed_at: datetime
    fresh: bool
    source: str
    groups: list[dict[str, Any]]
    healths: dict[str, GroupHealth] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "observed_at": iso_z(self.observed_at),
            "fresh": self.fresh,
            "source": self.source,
            "warnings": list(self.warnings),
            "groups": self.groups,
        }


def observe(config: Mapping[str, Any], settings: HealthSettings, timeout: float = 30.0) -> ClusterView:
    """One read of the cluster."""
    declared = load_groups_file(settings.groups_file) if settings.groups_file else []
    return read_cluster(
        config,
        settings.groups,
        declared,
        settings.plan_topic,
        settings.status_topic,
        settings.session_timeout_ms,
        timeout,
    )


def build_overview(
    view: ClusterView, store: GroupsStore | None, settings: HealthSettings, last_plans: bool = True
) -> Overview:
    """Judge every group ``view`` saw, with the store's observations of the window (none without
    a store), and add each group's last plan and its outcome."""
    history = {}
    if store is not None:
        # the window and two minutes: enough to see a value unchanged for a whole window
        since = view.observed_at - timedelta(seconds=settings.window_s + 120)
        history = store.observations(view.cluster, since)
    inputs, shown = group_inputs(view, history)
    rules = settings.rules
    healths = {g.group: group_health(g, rules) for g in inputs}
    plans = plan_outcomes(store, view.cluster, healths) if store is not None and last_plans else {}
    rows = []
    for g in inputs:
        h = healths[g.group]
        rows.append(group_row(g, h, shown[g.group], plans.get(g.group), view.observed_at))
    rows.sort(key=lambda r: r["group"])
    return Overview(view.cluster, view.observed_at, True, "cluster", rows, healths, list(view.warnings))


def group_row(
    g: GroupInput,
    h: GroupHealth,
    shown: Mapping[str, Any],
    last_plan: Mapping[str, Any] | None,
    observed_at: datetime,
) -> dict[str, Any]:
    """One group as every surface shows it (the ``lagassign groups --json`` objects)."""
    data = h.to_dict()
    instances = list(shown.get("instances") or [])
    alive = sum(1 for i in instances if i["alive"]) if g.kind == "assign" else len(g.members)
    dead = sum(1 for i in instances if i["state"] == "dead")
    return {
        "group": g.group,
        "kind": g.kind,
        "group_type": g.group_type,
        "state": g.state,
        **{k: v for k, v in data.items() if k not in ("group", "partitions")},
        "alive": alive,
        "dead": dead,
        "members": list(shown.get("members") or []),
        "instances": instances,
        "plan_version": g.plan_version,
        "versions": {i["instance"]: i["version"] for i in instances if i["alive"]},
        "last_plan": dict(last_plan) if last_plan else None,
        "partitions": data["partitions"],
        "observed_at": iso_z(observed_at),
    }


def plan_outcomes(store: GroupsStore, cluster: str, groups: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each group's last plan on ``cluster``: id, time, trigger, outcome badge and reason."""
    newest = store.last_plans(cluster, groups)
    if not newest:
        return {}
    details = store.plan_details(set(newest.values()))
    out = {}
    for group, plan_id in newest.items():
        plan = details.get(plan_id)
        if plan is None:
            continue
        found = next((x for x in plan["groups"] if x["group"] == group), None)
        if found is None:
            continue
        o = outcome_of(plan, found)
        decision = found.get("decision") or {}
        out[group] = {
            "plan_id": plan_id,
            "created_at": iso_z(plan.get("created_at")),
            "trigger": plan.get("trigger"),
            "outcome": o.label,
            "outcome_kind": o.kind,
            "reason": decision.get("reason") or o.detail or None,
        }
    return out


SORTS = ("status", "name", "lag", "lag-s", "catch-up")


def seconds_text(value: Any) -> str:
    """A duration in seconds as people read it ('18 min'), '-' when unknown."""
    return "-" if value is None else duration_text(float(value))


def catch_up_text(row: Mapping[str, Any]) -> str:
    """A group row's catch-up time: 'never' when it consumes no faster than messages arrive."""
    if row.get("never_catches_up"):
        return "never"
    return seconds_text(row.get("catch_up_s"))


def sort_rows(rows: list[dict[str, Any]], by: str, reverse: bool = False) -> list[dict[str, Any]]:
    """Rows sorted worst first (``status``), by name, or by a figure, largest first (``SORTS``);
    ``reverse`` turns the order around."""

    def figure(key: str) -> Any:
        return lambda r: (-(r.get(key) or 0), r["group"])

    keys = {
        "status": lambda r: (-SEVERITY.get(r["status"], 0), -(r.get("total_lag") or 0), r["group"]),
        "name": lambda r: r["group"],
        "lag": figure("total_lag"),
        "lag-s": figure("max_lag_s"),
        "catch-up": lambda r: (
            -(float("inf") if r.get("never_catches_up") else (r.get("catch_up_s") or 0)),
            r["group"],
        ),
    }
    return sorted(rows, key=keys[by], reverse=reverse)


def stored_overview(store: GroupsStore, cluster: str | None = None) -> Overview | None:
    """What the health job recorded last (newest cluster when none is named), for when the
    cluster cannot be read now; None when nothing was recorded."""
    if cluster is None:
        known = store.health_clusters()
        if not known:
            return None
        cluster = known[0]["cluster"]
    latest = store.latest_statuses(cluster)
    if not latest:
        return None
    at = max(r["observed_at"] for r in latest.values())
    plans = plan_outcomes(store, cluster, latest)
    rows = [stored_row(name, r, plans.get(name)) for name, r in sorted(latest.items())]
    return Overview(cluster, at, False, "health job", rows)


def stored_row(name: str, r: Mapping[str, Any], last_plan: dict[str, Any] | None) -> dict[str, Any]:
    """A group row (``group_row``'s keys) from its recorded status: the figures the status
    series keeps, nothing of its members, instances or partitions."""
    return {
        "group": name,
        "kind": r.get("kind"),
        "group_type": r.get("group_type"),
        "state": None,
        "status": r["status"],
        "reason": r.get("reason"),
        "findings": [],
        "total_lag": r.get("total_lag"),
        "max_lag": r.get("max_lag"),
        "max_lag_s": r.get("max_lag_s"),
        "catch_up_s": r.get("catch_up_s"),
        "never_catches_up": bool(r.get("never")),
        "inflow": r.get("inflow"),
        "consumed": r.get("consumed"),
        "not_read": [],
        "alive": r.get("alive"),
        "dead": r.get("dead"),
        "members": [],
        "instances": [],
        "plan_version": r.get("plan_version"),
        "versions": {},
        "last_plan": last_plan,
        "partitions": [],
        "observed_at": iso_z(r["observed_at"]),
    }
