"""What the plans list, a plan's header and a group's history show, as plain values for their
templates (``templates/plans/list.html``, ``plan.html``, ``history.html``).

Values are text (the templates escape them) except times, which are ``<time>`` HTML made by
``formats.when`` and marked as such.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from markupsafe import Markup

from ..core.catchup import duration_text
from ..core.outcome import Outcome, outcome_of
from . import dag_ids
from .formats import fmt_int, fmt_rate, ratio_text, when
from .group_view import cause_view, dash, move_texts
from .plan_facts import compute_moves, target_strategy
from .plan_texts import (
    airflow_run_href,
    catch_up_change_short,
    failed_step,
    lag_change_text,
    param_rows,
    reason_text,
    trigger_text,
)

#: The DAGs the pages' actions and promises depend on, and what stops while one is paused.
DAG_ROLES: dict[str, str] = {
    dag_ids.REVIEW: "publish and roll back from these pages wait in the queue",
    dag_ids.REBALANCE: "re-plan from these pages waits in the queue",
    dag_ids.FAILOVER: "failover is off: a dead instance's partitions are not given to the live ones",
    dag_ids.DAILY: "no scheduled plans are made",
}


def time_html(value: datetime | None) -> Markup:
    """A time as the ``<time>`` element the page's script shows in the Airflow UI's zone."""
    return Markup(when(value))


def paused_dags(paused: Mapping[str, bool] | None) -> list[dict[str, str]]:
    """Each lagassign DAG that is paused: its Airflow link and what that stops."""
    return [
        {"dag": dag, "href": f"/dags/{quote(dag)}", "role": role}
        for dag, role in DAG_ROLES.items()
        if (paused or {}).get(dag)
    ]


def notice_view(notice: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A run an action just triggered (only values the app checked: never text from the URL)."""
    if not notice:
        return None
    return {
        "href": notice["href"],
        "dag_id": notice["dag_id"],
        "run_id": notice["run_id"],
        "status": notice["status"],
        "text": notice.get("text") or "queued",
    }


# -- the list ------------------------------------------------------------------------------------


def list_plan_view(
    p: Mapping[str, Any], detail: Mapping[str, Any] | None, plan_href: str, catch_up: Mapping[Any, Any]
) -> dict[str, Any]:
    """One plan of the list: its cells, and a row per group (none: its counts or state)."""
    pid = int(p["id"])
    groups = (detail or {}).get("groups") or []
    plan = detail or p
    failed = outcome_of({**p, "groups": []}, {"group": "-"}) if p.get("status") == "failed" else None
    return {
        "id": pid,
        "href": f"{plan_href}{pid}",
        "span": max(1, len(groups)),
        "created": time_html(p.get("created_at")),
        "dag_id": dash(p.get("dag_id")),
        "run_href": airflow_run_href(p),
        "trigger": trigger_text(p),
        "outcome": None if groups else failed,
        "running": p.get("status") == "running",
        "count": dash(p.get("groups", 0)),
        "groups": [
            {
                "name": g["group"],
                "history": f"history?group={quote(g['group'])}",
                "outcome": outcome_of(plan, g),
                "reason": reason_text(g),
                "lag_change": lag_change_text(g),
                "catch_up": catch_up_change_short(catch_up, pid, g) or "-",
                "strategy": dash(target_strategy(g) if g.get("decision") else None),
            }
            for g in groups
        ],
    }


def page_links(
    group: str | None, since: str | None, until: str | None, offset: int, limit: int, more: bool
) -> list[tuple[str, str]]:
    """(label, href) of the newer and older pages that exist, keeping the filters."""
    keep = {"group": group, "since": since, "until": until, "limit": limit if limit != 50 else None}

    def href(at: int) -> str:
        query = urlencode({k: v for k, v in {**keep, "offset": at or None}.items() if v})
        return "plans" + ("?" + query if query else "")

    links = []
    if offset > 0:
        links.append(("← newer", href(max(0, offset - limit))))
    if more:
        links.append(("older →", href(offset + limit)))
    return links


# -- one plan ------------------------------------------------------------------------------------


def plan_header_view(plan: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's header: status and outcomes (of six groups at most), trigger, times, DAG run,
    parameters, and why it failed with a link to the failed step's log."""
    run_href = airflow_run_href(plan)
    groups = plan.get("groups") or []
    params = plan.get("parameters")
    failure = None
    if plan.get("error"):
        step = failed_step(plan)
        failure = cause_view(str(plan["error"]), airflow_run_href(plan, step) if step else run_href)
    not_evaluated = [g for g in groups if g.get("error")]
    none_evaluated = None
    if groups and len(not_evaluated) == len(groups):
        none_evaluated = cause_view(f"{groups[0]['group']}: {groups[0]['error']}")
    return {
        "id": dash(plan.get("id")),
        "status": str(plan.get("status") or "-"),
        "outcomes": [(g["group"], outcome_of(plan, g)) for g in groups[:6]],
        "more": max(0, len(groups) - 6),
        "trigger": trigger_text(plan),
        "created": time_html(plan.get("created_at")),
        "finished": time_html(plan.get("finished_at")),
        "snapshot": time_html(plan.get("snapshot_at")),
        "run_href": run_href,
        "run_text": " / ".join(x for x in (plan.get("dag_id"), plan.get("run_id")) if x) or "-",
        "reviewed": (params or {}).get("reviewed_plan"),
        "parameters": None if params is None else param_rows(params),
        "failure": failure,
        "none_evaluated": none_evaluated,
    }


# -- a group's history ---------------------------------------------------------------------------


def history_row_view(group: str, r: Mapping[str, Any], outcome: Outcome) -> dict[str, Any]:
    """One plan in a group's history: outcome and reason, max lag, imbalance and catch-up now →
    under the plan, the strategy."""

    def pair(a: Any, b: Any, f: Any) -> str:
        return f"{f(a)} → {f(b)}" if b is not None else f(a)

    plan_catch_up = r.get("plan_max_catch_up_s") if "plan_max_catch_up_s" in r else None
    by = f" by {r['triggered_by']}" if r.get("triggered_by") else ""
    return {
        "plan_id": r["plan_id"],
        "href": f"plans/{r['plan_id']}#group-{group}",
        "created": time_html(r.get("created_at")),
        "trigger": dash(r.get("trigger")),
        "trigger_text": f"{r.get('trigger')}{by}",
        "failover": r.get("trigger") == "failover",  # an instance died or joined: it stands out
        "outcome": outcome,
        "reason": r.get("reason") or r.get("error"),
        "lag": pair(r.get("current_max_lag"), r.get("plan_max_lag"), fmt_int),
        "imbalance": pair(r.get("current_imbalance"), r.get("plan_imbalance"), ratio_text),
        "catch_up": pair(r.get("current_max_catch_up_s"), plan_catch_up, duration_text),
        "strategy": dash(r.get("strategy")),
    }


def row_outcome(group: str, row: Mapping[str, Any], plan: Mapping[str, Any] | None) -> Outcome:
    """A history row's outcome: from its plan's details when given, else from the row itself."""
    found = next((g for g in (plan or {}).get("groups") or () if g.get("group") == group), None)
    if plan is not None and found is not None:
        return outcome_of(plan, found)
    decision = None if row.get("go") is None else {"go": row["go"], "reason": row.get("reason")}
    bare = {
        "group": group,
        "error": row.get("error"),
        "decision": decision,
        "publications": row.get("publications"),
    }
    return outcome_of({"id": row.get("plan_id"), "status": row.get("status")}, bare)


def in_force(rows: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The group's version in force: the newest published one."""
    published = [v for r in rows for v in r.get("publications") or () if v.get("state") == "published"]
    return max(published, key=lambda v: v["version"], default=None)


def rollback_view(
    group: str, version: Mapping[str, Any], force: Mapping[str, Any] | None, plan_id: int, action: str
) -> dict[str, Any]:
    """Roll back to ``version``: its diff against the version in force (the partitions that
    would change consumer) for the confirmation."""
    moves = compute_moves((force or {}).get("assignment"), version.get("assignment"))
    made = (
        f" ({version.get('strategy')}, published by plan {version.get('plan_id')})"
        if version.get("plan_id")
        else ""
    )
    return {
        "version": dash(version.get("version")),
        "made": made,
        "action": action,
        "plan_id": plan_id,
        "group": group,
        "against": f"version {force.get('version')} in force" if force else "no version in force",
        "moves": move_texts(moves),
    }


def instance_view(i: Mapping[str, Any]) -> dict[str, Any]:
    """A live instance as its status record says: alive, version, lag, rate, last seen, host."""
    seen = i.get("last_seen")
    return {
        "instance": dash(i.get("instance")),
        "alive": bool(i.get("alive")),
        "version": dash(i.get("version")),
        "lag": fmt_int(i.get("lag")),
        "rate": fmt_rate(i.get("rate")),
        "seen": time_html(seen) if isinstance(seen, datetime) else dash(seen),
        "host": dash(i.get("host")),
    }
