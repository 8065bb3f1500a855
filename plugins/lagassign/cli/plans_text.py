"""The audit trail as text for ``lagassign plans``: the plans list and a group's history as
aligned tables, and one plan in full (header, then per group its decision, outcome,
publications, time figures and evaluation table).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..core.catchup import catch_up_change, duration_text
from ..core.clusters import cluster_label
from ..core.inflow import lag_time_text
from ..core.outcome import outcome_of, summary
from ..core.report import evaluation_table
from ..core.strategies import cluster_text, kafka_choice
from ..tables.snapshot import partition_lag_seconds


def with_outcomes(plans: list[dict[str, Any]], details: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each plan with ``outcome``: its groups' outcome badges in one line, as the pages say them."""
    out = []
    for p in plans:
        plan = details.get(p["id"], p)
        groups = plan.get("groups") or []
        text = summary((g["group"], outcome_of(plan, g)) for g in groups) if groups else p["status"]
        out.append({**p, "outcome": text})
    return out


def with_kafka_choice(plan: dict[str, Any]) -> dict[str, Any]:
    """``plan`` with each result row of a group whose type and assignor are known flagged
    ``kafka_choice`` (true on the row that is what Kafka itself would do: the broker's choice
    for a consumer-type group, the members' assignor for a classic one)."""
    groups = []
    for g in plan.get("groups") or ():
        kafka = kafka_choice(g.get("group_type"), g.get("assignor"))
        if kafka is not None:
            results = [{**r, "kafka_choice": r.get("strategy") == kafka[0]} for r in g.get("results") or ()]
            g = {**g, "results": results}
        groups.append(g)
    return {**plan, "groups": groups}


def history_table(rows: list[dict[str, Any]]) -> str:
    """A group's history as an aligned table, newest first: per plan the gate's verdict, max
    lag now and under the plan's chosen (or candidate) strategy, and, where the group was
    planned in time, max catch-up now and under the plan (the page's history table)."""
    timed = any("current_max_catch_up_s" in r for r in rows)

    cols: tuple[str, ...] = (
        "plan",
        "created (UTC)",
        "cluster",
        "trigger",
        "gate",
        "max lag now",
        "plan strategy",
        "max lag under plan",
    )
    if timed:
        cols += ("catch-up now", "catch-up under plan")
    cols += ("versions",)

    def num(value: Any) -> str:
        return f"{value:,}" if isinstance(value, int) else "-"

    def when(r: dict[str, Any], key: str) -> str:
        return duration_text(r[key]) if key in r else "-"

    table = []
    for r in rows:
        gate = "-" if r.get("go") is None else ("go" if r["go"] else "stop")
        row: tuple[str, ...] = (
            str(r["plan_id"]),
            _time(r.get("created_at")),
            cluster_label(r.get("cluster")),
            _trigger({"trigger": r.get("trigger"), "triggered_by": r.get("triggered_by")}),
            gate,
            num(r.get("current_max_lag")),
            str(r.get("strategy") or "-"),
            num(r.get("plan_max_lag")),
        )
        if timed:
            row += (when(r, "current_max_catch_up_s"), when(r, "plan_max_catch_up_s"))
        versions = ", ".join(f"v{v['version']} {v['state']}" for v in r.get("publications") or ())
        table.append((*row, versions or "-"))
    widths = [max(len(c), *(len(t[i]) for t in table)) for i, c in enumerate(cols)]
    right = {0, 5, 7, *((8, 9) if timed else ())}

    def line(row: tuple[str, ...]) -> str:
        pairs = enumerate(zip(row, widths, strict=True))
        return "  ".join(f"{v:>{w}}" if i in right else f"{v:<{w}}" for i, (v, w) in pairs).rstrip()

    return "\n".join([line(cols), *(line(t) for t in table)])


def _time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def _stamp(value: datetime | None) -> str:
    return f"{_time(value)} UTC" if value is not None else "-"


def _trigger(plan: dict[str, Any]) -> str:
    by = plan.get("triggered_by")
    return f"{plan['trigger']} by {by}" if by else plan["trigger"]


def plans_table(plans: list[dict[str, Any]], with_cluster: bool = False) -> str:
    """The list of plans as an aligned table (times in UTC); ``with_cluster`` (a list for one
    group) adds what the cluster ran for it: group type / assignor, "-" when unknown."""
    cols: tuple[str, ...] = (
        "id",
        "created (UTC)",
        "cluster",
        "status",
        "trigger",
        "groups",
        "go",
        "published",
        "dag run",
        "outcome",
    )
    rows: list[tuple[str, ...]] = [
        (
            str(p["id"]),
            _time(p["created_at"]),
            cluster_label(p.get("cluster")),
            p["status"],
            _trigger(p),
            str(p["groups"]),
            str(p["go"]),
            str(p["published"]),
            " / ".join(x for x in (p.get("dag_id"), p.get("run_id")) if x) or "-",
            str(p.get("outcome") or "-"),
        )
        for p in plans
    ]
    if with_cluster:
        cols += ("type / assignor",)
        rows = [
            (*r, " / ".join(x or "-" for x in (p.get("group_type"), p.get("assignor"))))
            for r, p in zip(rows, plans, strict=True)
        ]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    right = {0, 5, 6, 7}

    def line(row: tuple[str, ...]) -> str:
        pairs = enumerate(zip(row, widths, strict=True))
        cells = (f"{v:>{w}}" if i in right else f"{v:<{w}}" for i, (v, w) in pairs)
        return "  ".join(cells).rstrip()

    return "\n".join([line(cols), *(line(r) for r in rows)])


def _lag_times(snapshot_uri: str | None) -> dict[str, dict[tuple[str, int], float]]:
    """Per group, lag in seconds per partition from the plan's snapshot; empty when the snapshot
    is gone, unreadable or older than lag in seconds."""
    if not snapshot_uri:
        return {}
    try:
        return partition_lag_seconds(snapshot_uri)
    except Exception:
        return {}


def in_time(group: dict[str, Any], times: dict[tuple[str, int], float] | None = None) -> list[str]:
    """A group's time lines: max catch-up now → under the plan, per member, and lag in seconds;
    none for a group planned without capacities and without offset history."""
    results = {r.get("strategy"): r for r in group.get("results") or ()}
    d = group.get("decision") or {}
    name = d.get("chosen") or d.get("candidate") or group.get("best")
    current = (results.get("current") or {}).get("metrics") or {}
    target = (results.get(name) or {}).get("metrics") if name != "current" else None
    out = []
    unconsumed = len((results.get("current") or {}).get("unassigned") or ())
    change = catch_up_change(current, target, name, unconsumed)
    if change:
        out.append(change)
        now, then = current.get("catch_up_s") or {}, (target or {}).get("catch_up_s") or {}
        members = sorted(set(now) | set(then))
        if members and target is not None:
            shown = ", ".join(
                f"{m} {duration_text(now.get(m)) if m in now else '-'} → "
                f"{duration_text(then.get(m)) if m in then else '-'}"
                for m in members
            )
            out.append(f"catch-up per member now → {name}: {shown}")
    lag_time = lag_time_text(times)
    if lag_time:
        out.append(lag_time)
    return out


def plan_text(plan: dict[str, Any]) -> str:
    """One plan for people: header, then per group the decision, publications and evaluation."""
    out = plan_header(plan)
    if not plan["groups"]:
        out.append("\nno groups recorded")
    times = _lag_times(plan.get("snapshot_uri"))
    for g in plan["groups"]:
        out.append("")
        out.extend(group_text(plan, g, times.get(g["group"])))
    return "\n".join(out)


def plan_header(plan: dict[str, Any]) -> list[str]:
    """A plan's first lines: status and trigger, cluster, times, DAG run, snapshot, parameters
    and its error."""
    out = [f"plan {plan['id']}: {plan['status']}, {_trigger(plan)}"]
    out.append(f"  cluster   {cluster_label(plan.get('cluster'))}")
    out.append(f"  created   {_stamp(plan['created_at'])}, finished {_stamp(plan['finished_at'])}")
    if plan.get("dag_id") or plan.get("run_id"):
        out.append(f"  dag run   {plan.get('dag_id') or '-'} / {plan.get('run_id') or '-'}")
    if plan.get("snapshot_uri") or plan.get("snapshot_at"):
        taken = _stamp(plan.get("snapshot_at"))
        out.append(f"  snapshot  {plan.get('snapshot_uri') or '-'} (taken {taken})")
    if plan.get("parameters") is not None:
        out.append(f"  parameters {json.dumps(plan['parameters'], sort_keys=True)}")
    if plan.get("error"):
        out.append(f"  error     {plan['error']}")
    return out


def group_text(
    plan: dict[str, Any], g: dict[str, Any], times: dict[tuple[str, int], float] | None
) -> list[str]:
    """One group of a plan: the gate's decision, what the cluster ran, the outcome, the
    publications, the time figures and the evaluation (or why it was not evaluated)."""
    d = g["decision"]
    if d is None:
        out = [f"group {g['group']}: no gate decision recorded"]
    else:
        out = [f"group {g['group']}: {'go' if d['go'] else 'stop'}: {d['reason']}"]
    cluster = cluster_text(g.get("group_type"), g.get("assignor"))
    if cluster:
        out.append(f"  {cluster}")
    out.append(f"  outcome   {outcome_of(plan, g).line()}")
    out.extend(_publication_line(pub) for pub in g["publications"])
    if g["error"]:
        out.append(f"  not evaluated: {g['error']}")
        return out
    out.extend(f"  {line}" for line in in_time(g, times))
    measured = [r for r in g["results"] if "refused" in r or _measured(r)]
    if measured and g["members"] is not None:
        shown = {**g, "results": measured, "lower_bound_max_lag": g["lower_bound_max_lag"] or 0}
        table = evaluation_table(shown)
        out.extend("  " + row if row else row for row in table.splitlines())
    out.extend(f"  {_unmeasured_line(r)}" for r in g["results"] if r not in measured)
    return out


def _publication_line(pub: dict[str, Any]) -> str:
    line = f"  plan version {pub['version']} ({pub['strategy']}): {pub['state']}"
    if pub["published_at"] is not None:
        line += f" at {_stamp(pub['published_at'])}"
    if pub.get("forced"):
        line += " (forced)"
    if pub.get("error"):
        line += f": {pub['error']}"
    return line


#: What a result's metrics hold when lagassign measured it (``lagassign publish`` records an
#: assignment from a plan file with no metrics: nothing to compare)
_MEASURES = ("max_lag", "imbalance", "lag_spread", "count_spread", "moves")


def _measured(result: dict[str, Any]) -> bool:
    metrics = result.get("metrics")
    return isinstance(metrics, dict) and all(metrics.get(k) is not None for k in _MEASURES)


def _unmeasured_line(result: dict[str, Any]) -> str:
    """A result recorded without metrics: its assignment in brief."""
    assignment = result.get("assignment") or {}
    parts = sum(len(v or ()) for v in assignment.values())
    each = ", ".join(f"{m} {len(v or ())}" for m, v in sorted(assignment.items()))
    return (
        f"{result.get('strategy')}: assignment recorded without lag figures: {len(assignment)} "
        f"members, {parts} partitions ({each or 'none'})"
    )
