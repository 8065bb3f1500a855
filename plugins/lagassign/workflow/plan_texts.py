"""How the plans pages word a plan's facts: trigger, the gate's reason, max lag and catch-up
before → after, the Airflow links, the step a failed plan stopped at, its parameters, and what
changed since a group's previous plan.

Plain text out (templates escape it); numbers and times in the one format of ``formats``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any
from urllib.parse import quote

from ..core.catchup import catch_up_change, duration_text
from ..pipeline.params import PlanParams
from .formats import fmt_int
from .plan_facts import BASELINE, result_of, target_strategy


def trigger_text(plan: Mapping[str, Any]) -> str:
    """What started the plan, and who: 'manual by alice'."""
    by = plan.get("triggered_by")
    return f"{plan.get('trigger')} by {by}" if by else str(plan.get("trigger"))


def reason_text(group: Mapping[str, Any]) -> str:
    """The gate's reason for a group, else why it was not evaluated ('' for neither)."""
    d = group.get("decision") or {}
    return str(d.get("reason") or group.get("error") or "")


def lag_change_text(group: Mapping[str, Any]) -> str:
    """Max member lag now → under the chosen (or candidate) plan, from the gate's numbers."""
    d = group.get("decision") or {}
    before, after = d.get("current_max_lag"), d.get("chosen_max_lag")
    if before is None:
        return "-"
    if after is None or not (d.get("chosen") or d.get("candidate")):
        return fmt_int(before)
    return f"{fmt_int(before)} → {fmt_int(after)}" + ("" if d.get("go") else " (not applied)")


def lag_change_line(decision: Mapping[str, Any]) -> str | None:
    """'max lag 1,140 → 1,820 messages (60% worse)' for a confirmation; None when unknown."""
    before, after = decision.get("current_max_lag"), decision.get("chosen_max_lag")
    if before is None or after is None:
        return None
    if before:
        change = (after - before) / before
        how = (
            "no change" if abs(change) < 0.005 else f"{abs(change):.0%} {'worse' if change > 0 else 'better'}"
        )
    else:
        how = "no change" if after == before else "worse"
    return f"max lag {fmt_int(before)} → {fmt_int(after)} messages ({how})"


def catch_up_change_short(
    times: Mapping[tuple[int, str, str], Any], plan_id: int, group: Mapping[str, Any]
) -> str | None:
    """Max catch-up now → under the chosen (or candidate) plan, e.g. '2 h 10 min → 18 min',
    from ``AuditStore.max_catch_up``; None for a group planned without capacities."""
    name = str(group.get("group"))
    if (plan_id, name, "current") not in times:
        return None
    now = duration_text(times[(plan_id, name, "current")])
    d = group.get("decision") or {}
    strategy = str(d.get("chosen") or d.get("candidate") or "")
    if not strategy or (plan_id, name, strategy) not in times:
        return now
    return f"{now} → {duration_text(times[(plan_id, name, strategy)])}" + (
        "" if d.get("go") else " (not applied)"
    )


def catch_up_line(group: Mapping[str, Any]) -> str | None:
    """Max catch-up now → under the chosen (or candidate) plan, and the bound
    (``core.catchup.catch_up_change``); None for a group planned without capacities."""
    target = target_strategy(group)
    current = result_of(group, BASELINE) or {}
    tgt = (result_of(group, target) or {}).get("metrics") if target != BASELINE else None
    return catch_up_change(current.get("metrics") or {}, tgt, target, len(current.get("unassigned") or ()))


def airflow_run_href(plan: Mapping[str, Any], task: str | None = None, airflow: str = "") -> str | None:
    """The plan's DAG run in Airflow's UI (a task: its log), or None when not run by Airflow.
    A failover plan's run id carries ':group' after Airflow's own run id."""
    dag, run = plan.get("dag_id"), plan.get("run_id")
    if not dag or not run:
        return None
    group = (plan.get("parameters") or {}).get("group")
    if plan.get("trigger") == "failover" and group and str(run).endswith(f":{group}"):
        run = str(run)[: -len(group) - 1]  # one audit plan per group of the failover run
    href = f"{airflow}/dags/{quote(str(dag), safe='')}/runs/{quote(str(run), safe='')}"
    return f"{href}/tasks/{quote(task, safe='')}" if task else href


def failed_step(plan: Mapping[str, Any]) -> str | None:
    """The step a failed plan stopped at, as the store recorded it (``plans.failed_step``)."""
    return plan.get("failed_step") or None


def changes_since(group: Mapping[str, Any], previous: Mapping[str, Any] | None) -> list[str]:
    """What changed for a group since its previous plan: members, partitions, max lag now,
    the best strategy, the gate's verdict (values one of the two plans did not record are left
    out). Empty when there is no previous plan."""
    if previous is None:
        return []
    out = []
    for key, label in (("members", "members"), ("partitions", "partitions"), ("best", "best strategy")):
        was, now = previous.get(key), group.get(key)
        if was is not None and now is not None and was != now:
            out.append(f"{label} {was} → {now}")
    was_d, now_d = previous.get("decision") or {}, group.get("decision") or {}
    before, after = was_d.get("current_max_lag"), now_d.get("current_max_lag")
    if before is not None and after is not None and before != after:
        out.append(f"max lag now {fmt_int(before)} → {fmt_int(after)} messages")
    if bool(was_d.get("go")) != bool(now_d.get("go")) and was_d and now_d:
        out.append(f"gate {'go' if was_d.get('go') else 'stop'} → {'go' if now_d.get('go') else 'stop'}")
    return out or ["nothing that the gate looks at"]


# -- parameters --------------------------------------------------------------------------------

#: Parameter -> its label on the page, in the order the page lists them.
PARAM_LABELS = {
    "action": "action",
    "reviewed_plan": "reviewed plan",
    "group": "group",
    "version": "version",
    "groups": "groups (regular expression)",
    "groups_file": "groups file",
    "strategies": "strategies",
    "threshold": "imbalance threshold",
    "min_improvement": "minimum improvement",
    "max_moves": "max moves",
    "exact_budget": "exact budget",
    "max_catch_up_s": "max catch-up",
    "apply": "apply",
    "dry_run": "dry run",
    "force": "force",
    "auto_offset_reset": "auto.offset.reset",
    "plan_topic": "plans topic",
    "change": "change seen",
    "status_topic": "status topic",
    "session_timeout_ms": "session timeout",
}
_NONE_MEANS = {
    "groups": "every group",
    "strategies": "every strategy",
    "max_moves": "no limit",
    "exact_budget": "off",
    "max_catch_up_s": "off",
    "groups_file": "none",
}


def param_value(key: str, value: Any) -> str:
    """A parameter's value for people: on/off, lists joined, units, 'every' for none."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None or value == "":
        return _NONE_MEANS.get(key, "none")
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    if key in ("exact_budget", "max_catch_up_s"):
        return f"{value} s"
    if key == "session_timeout_ms" and isinstance(value, int | float):
        return f"{value / 1000:g} s"
    if key == "min_improvement" and isinstance(value, int | float):
        return f"{value:g} ({value:.0%})"
    return str(value)


def param_rows(parameters: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The run's parameters in the page's order: label, value for people, and whether it is the
    default (a planning run's only: a review or roll back has no defaults)."""
    defaults = {f.name: f.default for f in fields(PlanParams)} if not parameters.get("action") else {}
    order = list(PARAM_LABELS)
    rows = []
    for key in sorted(parameters, key=lambda k: (order.index(k) if k in PARAM_LABELS else 99, k)):
        value = parameters[key]
        same = key in defaults and (defaults[key] == value or (key == "groups" and value in (None, "", ".*")))
        label = PARAM_LABELS.get(key, key.replace("_", " "))
        rows.append({"label": label, "value": param_value(key, value), "default": same})
    return rows
