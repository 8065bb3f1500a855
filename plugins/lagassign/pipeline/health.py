"""The health job: every group observed and judged (``pipeline.overview``), the observation
and the statuses recorded between planning runs, and the alerts due sent once each
(``pipeline.alerts``). It runs as the ``lagassign_health`` DAG, or ``lagassign groups --record``.

Cost of one health run on a cluster of G groups and P group partitions: one snapshot's Kafka
reads (``bench/snapshot_speed.py``) plus the status and plans topics; in the audit store, P
rows written and pruned (the rules' window keeps about P × window / interval of them) and G
status rows (thinned to about 550 per group over three days).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..kafka.overview import ClusterView
from .alerts import Log, Send, failover_alerts, send_alerts, status_alerts
from .overview import HealthSettings, Overview, build_overview, observe
from .ports import GroupsStore, HealthPort


def record(store: HealthPort, view: ClusterView, ov: Overview, settings: HealthSettings) -> dict[str, int]:
    """Keep this observation (the rules' window) and every group's status and figures."""
    rows = [
        (r["group"], r["topic"], int(r["partition"]), r.get("end"), r.get("committed"), r.get("lag"), owner)
        for r, owner in _owned_rows(view, ov)
    ]
    n = store.record_observation(view.cluster, view.observed_at, rows, settings.keep)
    store.record_statuses(view.cluster, view.observed_at, [status_figures(r) for r in ov.groups])
    return {"partitions": n, "groups": len(ov.groups)}


def _owned_rows(view: ClusterView, ov: Overview) -> Iterable[tuple[Mapping[str, Any], str | None]]:
    owners = {
        (row["group"], p["topic"], p["partition"]): p.get("owner")
        for row in ov.groups
        for p in row["partitions"]
    }
    for r in view.snapshot.partitions:
        if r.get("topic") is None:
            continue
        yield r, owners.get((r["group"], r["topic"], int(r["partition"])))


def status_figures(row: Mapping[str, Any]) -> dict[str, Any]:
    """A group row as the status series keeps it."""
    return {
        "group": row["group"],
        "status": row["status"],
        "reason": row.get("reason"),
        "total_lag": row.get("total_lag"),
        "max_lag": row.get("max_lag"),
        "max_lag_s": row.get("max_lag_s"),
        "catch_up_s": row.get("catch_up_s"),
        "never": bool(row.get("never_catches_up")),
        "inflow": row.get("inflow"),
        "consumed": row.get("consumed"),
        "alive": row.get("alive"),
        "dead": row.get("dead"),
        "plan_version": row.get("plan_version"),
        "kind": row.get("kind"),
        "group_type": row.get("group_type"),
    }


def health_run(
    store: GroupsStore,
    config: Mapping[str, Any],
    settings: HealthSettings,
    send: Send | None = None,
    log: Log | None = None,
    timeout: float = 30.0,
) -> tuple[Overview, dict[str, Any]]:
    """One run of the health job: observe, judge, record, alert. Returns the overview it
    recorded (what ``lagassign groups --record`` prints) and a summary (the Airflow task's)."""
    say = log or (lambda _m: None)
    view = observe(config, settings, timeout)
    ov = build_overview(view, store, settings)
    counts = record(store, view, ov, settings)
    alerts = status_alerts(store, ov, partial=settings.groups is not None)
    alerts += failover_alerts(store, ov.cluster, ov.observed_at)
    sent = send_alerts(store, alerts, send, say)
    by_status: dict[str, int] = {}
    for r in ov.groups:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items())) or "no groups"
    say(
        f"cluster {ov.cluster}: {len(ov.groups)} groups ({summary}); "
        f"{counts['partitions']} partitions recorded"
    )
    for w in ov.warnings:
        say(f"warning: {w}")
    return ov, {
        "cluster": ov.cluster,
        "groups": len(ov.groups),
        "statuses": by_status,
        **counts,
        "alerts": sent,
    }
