"""The groups overview in Prometheus's text format, written by ``prometheus_client``.

Every series carries ``cluster`` (the audit store's cluster key) and, per group, ``group``:

* ``lagassign_group_status{status}``: 1 for the group's status, 0 for the others (one series per
  status, so ``lagassign_group_status{status="STOP"} == 1`` selects stopped groups), and
  ``lagassign_group_severity`` (0 OK … 3 DEAD/STOP), ``lagassign_groups{status}`` (how many);
* ``lagassign_group_lag_messages``, ``lagassign_group_max_lag_messages`` (its largest
  partition), ``lagassign_group_lag_seconds`` (its partition furthest behind in time, when
  known), ``lagassign_group_catch_up_seconds`` (+Inf: never; absent: unknown);
* ``lagassign_group_consumers{state="alive"|"dead"}``: members, or instances of assign()-mode
  groups; ``lagassign_group_plan_version``: the plan in force;
* ``lagassign_partition_lag_messages`` and ``lagassign_partition_lag_seconds`` per ``topic``
  and ``partition``;
* ``lagassign_group_last_plan_outcome{outcome}`` (1 for the outcome kind of the group's last
  plan, ``core.outcome``) and ``lagassign_group_last_plan_timestamp_seconds``;
  ``lagassign_plan_outcome{plan_id, trigger, outcome}``: 1 per group of each of the last
  ``PLAN_RUNS`` plan runs (bounded, so the plan id label stays few);
* ``lagassign_observation_timestamp_seconds`` and ``lagassign_observation_fresh`` (1 when read
  from the cluster for this scrape, 0 when from the health job's last record).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.clock import parse_utc
from ..core.health import SEVERITY, STATUSES
from ..core.outcome import outcome_of
from .ports import AuditTrailPort

PLAN_RUNS = 50
OUTCOME_KINDS = (
    "published",
    "dry-run",
    "unchanged",
    "stale",
    "held",
    "skipped",
    "off",
    "stop",
    "failed",
    "running",
    "publishing",
)


def plan_runs(store: AuditTrailPort, cluster: str, limit: int = PLAN_RUNS) -> list[dict[str, Any]]:
    """The outcome of every group of the last ``limit`` plan runs on ``cluster``."""
    plans = store.list_plans(cluster=cluster, limit=limit)
    details = store.plan_details(p["id"] for p in plans)
    out = []
    for p in plans:
        plan = details.get(p["id"], {})
        for g in plan.get("groups", []):
            o = outcome_of(plan, g)
            out.append({"plan_id": p["id"], "group": g["group"], "trigger": p["trigger"], "outcome": o.kind})
    return out


class OverviewCollector:
    """A ``prometheus_client`` collector of one overview (``pipeline.overview.Overview``)."""

    def __init__(self, overview: Any, runs: Sequence[Mapping[str, Any]] = ()) -> None:
        self.ov = overview
        self.runs = list(runs)

    def collect(self) -> Iterable[Any]:
        from prometheus_client.core import GaugeMetricFamily

        c = self.ov.cluster
        groups = _GroupSeries(GaugeMetricFamily)
        for r in self.ov.groups:
            groups.add(c, r)
        counts = GaugeMetricFamily("lagassign_groups", "groups per status", labels=["cluster", "status"])
        for s in STATUSES:
            counts.add_metric([c, s], float(groups.per_status.get(s, 0)))
        yield from (groups.status, groups.severity, counts, groups.lag, groups.max_lag, groups.lag_s)
        yield from (groups.catch_up, groups.consumers, groups.version, groups.p_lag, groups.p_lag_s)
        yield from (groups.outcome, groups.planned, self._plan_runs(GaugeMetricFamily))
        yield from self._observation(GaugeMetricFamily)

    def _plan_runs(self, gauge: Any) -> Any:
        runs = gauge(
            "lagassign_plan_outcome",
            "1 per group of each recent plan run, by outcome",
            labels=["cluster", "plan_id", "group", "trigger", "outcome"],
        )
        for run in self.runs:
            labels = [
                self.ov.cluster,
                str(run["plan_id"]),
                run["group"],
                run["trigger"] or "",
                run["outcome"],
            ]
            runs.add_metric(labels, 1.0)
        return runs

    def _observation(self, gauge: Any) -> tuple[Any, Any]:
        """When the groups were observed, and whether read from the cluster for this scrape."""
        c = self.ov.cluster
        seen = gauge(
            "lagassign_observation_timestamp_seconds",
            "when the groups were observed",
            labels=["cluster", "source"],
        )
        seen.add_metric([c, self.ov.source], self.ov.observed_at.timestamp())
        fresh = gauge(
            "lagassign_observation_fresh", "1 when read from the cluster for this scrape", labels=["cluster"]
        )
        fresh.add_metric([c], 1.0 if self.ov.fresh else 0.0)
        return seen, fresh


class _GroupSeries:
    """The families with a series per group (and per partition), filled one group row at a
    time; ``per_status`` counts the groups of each status."""

    def __init__(self, family: Any) -> None:
        g_labels = ["cluster", "group"]
        p_labels = [*g_labels, "topic", "partition"]

        def gauge(name: str, doc: str, labels: list[str]) -> Any:
            return family(name, doc, labels=labels)

        self.status = gauge(
            "lagassign_group_status", "1 for the group's status, 0 for the others", [*g_labels, "status"]
        )
        self.severity = gauge(
            "lagassign_group_severity", "0 OK, 1 WARN/SWITCHING/UNKNOWN, 2 STALL/…, 3 DEAD/STOP", g_labels
        )
        self.lag = gauge("lagassign_group_lag_messages", "messages behind, all partitions", g_labels)
        self.max_lag = gauge(
            "lagassign_group_max_lag_messages", "messages behind, largest partition", g_labels
        )
        self.lag_s = gauge(
            "lagassign_group_lag_seconds", "seconds behind, partition furthest behind", g_labels
        )
        self.catch_up = gauge(
            "lagassign_group_catch_up_seconds", "predicted seconds to catch up (+Inf: never)", g_labels
        )
        self.consumers = gauge(
            "lagassign_group_consumers", "members or instances, alive or dead", [*g_labels, "state"]
        )
        self.version = gauge("lagassign_group_plan_version", "version of the plan in force", g_labels)
        self.p_lag = gauge("lagassign_partition_lag_messages", "messages behind", p_labels)
        self.p_lag_s = gauge("lagassign_partition_lag_seconds", "seconds behind", p_labels)
        self.outcome = gauge(
            "lagassign_group_last_plan_outcome",
            "1 for the outcome of the group's last plan",
            [*g_labels, "outcome"],
        )
        self.planned = gauge(
            "lagassign_group_last_plan_timestamp_seconds", "when the group was last planned", g_labels
        )
        self.per_status: dict[str, int] = {}

    def add(self, cluster: str, r: Mapping[str, Any]) -> None:
        """One group row's series: status, figures, consumers, partitions and last plan."""
        key = [cluster, r["group"]]
        self.per_status[r["status"]] = self.per_status.get(r["status"], 0) + 1
        for s in STATUSES:
            self.status.add_metric([*key, s], 1.0 if s == r["status"] else 0.0)
        self.severity.add_metric(key, float(SEVERITY.get(r["status"], 0)))
        _add(self.lag, key, r.get("total_lag"))
        _add(self.max_lag, key, r.get("max_lag"))
        _add(self.lag_s, key, r.get("max_lag_s"))
        _add(self.catch_up, key, math.inf if r.get("never_catches_up") else r.get("catch_up_s"))
        _add(self.consumers, [*key, "alive"], r.get("alive") or 0)
        _add(self.consumers, [*key, "dead"], r.get("dead") or 0)
        _add(self.version, key, r.get("plan_version"))
        for p in r.get("partitions") or ():
            pk = [*key, p["topic"], str(p["partition"])]
            _add(self.p_lag, pk, p.get("lag"))
            _add(self.p_lag_s, pk, p.get("lag_s"))
        last = r.get("last_plan")
        if last:
            for kind in OUTCOME_KINDS:
                self.outcome.add_metric([*key, kind], 1.0 if kind == last.get("outcome_kind") else 0.0)
            when = parse_utc(last.get("created_at"))
            _add(self.planned, key, when.timestamp() if when else None)


def _add(family: Any, labels: list[str], value: Any) -> None:
    if value is None:
        return
    family.add_metric(labels, float(value))


def exposition(overview: Any, runs: Sequence[Mapping[str, Any]] = ()) -> tuple[bytes, str]:
    """The overview as Prometheus's text format: (body, content type)."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(OverviewCollector(overview, runs))
    return generate_latest(registry), CONTENT_TYPE_LATEST
