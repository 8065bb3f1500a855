"""HTML pages of the plans audit trail for the Airflow UI: pure functions, no I/O, no web framework.

The FastAPI wiring lives in ``ui.py``; everything here takes plain plan dicts (``AuditStore``'s
``list_plans`` / ``get_plan`` shapes) and returns strings, so it is tested without a server.
Each page is a Jinja2 template (``templates/plans/``, autoescaped: group, member and strategy
names come from Kafka clusters and parameters from people) filled with what ``plans_views`` and
``group_view`` say it shows. Charts are inline SVG (``charts``); the pages load nothing from
anywhere (no script, stylesheet, font or image URL): ``page.html`` inlines ``plans.css`` and
``plans.js``.

What a plan did for a group is one badge (``core.outcome``), the same on the list, the plan
page and the history. Numbers have one format (1,120) and lag its unit (messages). Times are
written in UTC and shown in the timezone the Airflow UI uses (its own setting, else the
browser's) by the inline script, which also opens links to Airflow in the top window from
inside Airflow's sandboxed frame.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from jinja2.runtime import Macro
from markupsafe import Markup

from .charts import STRATEGY_COLOURS, history_chart_svg, lag_chart_svg
from .group_view import actions_view, group_view, metrics_view, moves_view
from .guard import Guard
from .plan_facts import chart_series, compute_moves, dead_instances, target_strategy
from .plan_texts import catch_up_line, changes_since, param_rows
from .plans_views import (
    history_row_view,
    in_force,
    instance_view,
    list_plan_view,
    notice_view,
    page_links,
    paused_dags,
    plan_header_view,
    rollback_view,
    row_outcome,
)
from .templating import environment, render

#: What the UI routes, the groups pages and the tests use from here (some of it made elsewhere).
__all__ = [
    "STRATEGY_COLOURS",
    "actions_html",
    "catch_up_line",
    "changes_since",
    "chart_series",
    "compute_moves",
    "dead_instances",
    "group_html",
    "history_chart_svg",
    "history_html",
    "json_ready",
    "lag_chart_svg",
    "live_instances_html",
    "metrics_table_html",
    "moves_table_html",
    "notice_html",
    "params_table",
    "paused_html",
    "plan_html",
    "plans_list_html",
    "target_strategy",
]


def _macro(template: str, name: str) -> Macro:
    """A macro of a template file, to render one part of a page on its own."""
    macro: Macro = getattr(environment.get_template(template).module, name)
    return macro


def paused_html(paused: Mapping[str, bool] | None, action: str = "actions/unpause") -> str:
    """A banner naming each lagassign DAG that is paused, what that stops, and a button that
    unpauses it (an Airflow API call as the logged-in user: Airflow decides whether they may)."""
    return str(_macro("plans/common.html", "paused")(paused_dags(paused), action))


def notice_html(notice: Mapping[str, Any] | None) -> str:
    """A run an action just triggered: linked to Airflow, its state brought up to date by the
    page's script (``status``: this app's route for it), and its plan once it has one. Only
    values the app checked go in here (never text from the URL)."""
    return str(_macro("plans/common.html", "notice")(notice_view(notice)))


def params_table(parameters: Mapping[str, Any] | None) -> str:
    """The run's parameters as a key/value table; values equal to the default are marked."""
    return str(_macro("plans/common.html", "params")(param_rows(parameters) if parameters else []))


def plans_list_html(
    plans: Iterable[Mapping[str, Any]],
    details: Mapping[int, Mapping[str, Any]],
    group: str | None = None,
    since: str | None = None,
    until: str | None = None,
    plan_href: str = "plans/",
    offset: int = 0,
    limit: int = 50,
    more: bool = False,
    catch_up: Mapping[tuple[int, str, str], Any] | None = None,
    paused: Mapping[str, bool] | None = None,
) -> str:
    """The list of plans, newest first, one row per group per plan: the plan (time, DAG run,
    trigger and who, on the plan's first row), the group, its outcome badge with the gate's
    reason, max lag before → after (and max catch-up time, for groups planned in time) and
    the strategy; the filter form on top and paging links below.

    ``details`` maps plan id to ``get_plan`` output (for per-group rows); a plan missing from
    it shows one row with its counts. ``catch_up``: ``AuditStore.max_catch_up`` of these plans.
    ``more``: a next page exists. ``paused``: DAG id -> paused, for the banner.
    """
    catch_up = catch_up or {}
    return str(
        render(
            "plans/list.html",
            title="lagassign: rebalance plans",
            paused_dags=paused_dags(paused),
            group=group or "",
            filters={"since": since or "", "until": until or ""},
            in_time=bool(catch_up),
            plans=[list_plan_view(p, details.get(int(p["id"])), plan_href, catch_up) for p in plans],
            pages=page_links(group, since, until, offset, limit, more),
        )
    )


def metrics_table_html(group: Mapping[str, Any]) -> str:
    """Per strategy: max lag, ratio to the lower bound, imbalance, spreads, moves; chosen and
    best marked; refusals and unconsumed partitions said in words. Results recorded without
    metrics (a roll back: assignments only) are left out."""
    return str(_macro("plans/group.html", "metrics")(metrics_view(group)))


def moves_table_html(
    group: Mapping[str, Any],
    lags: Mapping[tuple[str, int], int] | None = None,
    times: Mapping[tuple[str, int], float] | None = None,
    gone: Sequence[str] = (),
    current_label: str = "current",
) -> str:
    """Moves from the current assignment to the chosen strategy, with each partition's lag
    (``lags``, from the plan's snapshot, when it can be read) and lag in seconds (``times``,
    when the snapshot knows it). Partitions nobody consumes now and the plan gives someone are
    counted apart from those that change consumer; ``gone``: the dead instances they were
    left by (a failover). A group the gate stopped moves nothing: its candidate's moves are
    shown folded, as what would have moved."""
    return str(_macro("plans/group.html", "moves")(moves_view(group, lags, times, gone, current_label)))


def actions_html(
    plan: Mapping[str, Any],
    group: Mapping[str, Any],
    guard: Guard,
    action_base: str = "../actions",
) -> str:
    """The buttons that trigger Airflow runs (authorised and recorded by Airflow): publish
    as ``guard`` allows (primary, an override behind a confirmation, or a line saying why
    not), re-plan the group now, its history."""
    return str(_macro("plans/group.html", "actions")(actions_view(plan, group, guard, action_base)))


def group_html(
    group: Mapping[str, Any],
    plan: Mapping[str, Any] | None = None,
    previous: tuple[int, Mapping[str, Any]] | None = None,
    lags: Mapping[tuple[str, int], int] | None = None,
    kind: str | None = None,
    times: Mapping[tuple[str, int], float] | None = None,
    guard: Guard | None = None,
) -> str:
    """One group of a plan (``kind``: assign or subscribe, from its snapshot, when known):
    its outcome badge, the gate's decision and reason, actions (``guard``: as decided by
    ``guard.publish_guard`` when the page renders), what changed since the previous plan,
    publications, chart (current, chosen, lower bound; every strategy folded), catch-up times
    and lag in seconds (``times``: per partition, from the snapshot) when known, metrics,
    members and moves."""
    view = group_view(group, plan or {}, previous, lags, kind, times, guard)
    return str(_macro("plans/group.html", "section")(view))


def plan_html(
    plan: Mapping[str, Any],
    list_href: str = "../plans",
    previous: Mapping[str, tuple[int, Mapping[str, Any]]] | None = None,
    lags: Mapping[str, Mapping[tuple[str, int], int]] | None = None,
    notice: Mapping[str, Any] | None = None,
    kinds: Mapping[str, str] | None = None,
    times: Mapping[str, Mapping[tuple[str, int], float]] | None = None,
    guards: Mapping[str, Guard] | None = None,
    paused: Mapping[str, bool] | None = None,
) -> str:
    """One plan: header (outcome per group, trigger and who, times, DAG run linked to Airflow,
    parameters as a table), the root cause of a failure with a link to the failed step's log,
    then every group (``previous``: group -> its previous plan; ``lags``: group -> per-partition
    lag; ``times``: group -> per-partition lag in seconds; ``guards``: group -> the publish
    action decided at render time; ``notice``: a run an action just triggered)."""
    groups = [
        group_view(
            g,
            plan,
            (previous or {}).get(g["group"]),
            (lags or {}).get(g["group"]),
            (kinds or {}).get(g["group"]),
            (times or {}).get(g["group"]),
            (guards or {}).get(g["group"]),
        )
        for g in plan.get("groups") or []
    ]
    return str(
        render(
            "plans/plan.html",
            title=f"lagassign: plan {plan.get('id')}",
            list_href=list_href,
            notice=notice_view(notice),
            paused_dags=paused_dags(paused),
            groups=groups,
            **plan_header_view(plan),
        )
    )


def history_html(
    group: str,
    rows: list[dict[str, Any]],
    status: list[dict[str, Any]] | None = None,
    paused: Mapping[str, bool] | None = None,
    details: Mapping[int, Mapping[str, Any]] | None = None,
) -> str:
    """A group across plans (newest first): per plan its outcome badge and the gate's reason,
    max lag and imbalance now → under the plan (and max catch-up, where the group was planned
    in time), the strategy; a lag-over-time chart; roll back (with its diff against the version
    in force) for versions published before; the group's live instances (``status``).
    ``details``: ``plan_details`` of the rows' plans, for their outcomes."""
    force = in_force(rows)
    rollbacks = [
        rollback_view(group, v, force, r["plan_id"], "actions/rollback")
        for r in rows
        for v in r.get("publications") or ()
        if v.get("state") == "published" and force is not None and v["version"] != force["version"]
    ]
    return str(
        render(
            "plans/history.html",
            title=f"lagassign: group {group}",
            group=group,
            paused_dags=paused_dags(paused),
            instances=None if status is None else [instance_view(i) for i in status],
            chart=Markup(history_chart_svg(rows)),
            in_time=any("current_max_catch_up_s" in r for r in rows),
            rows=[
                history_row_view(group, r, row_outcome(group, r, (details or {}).get(r["plan_id"])))
                for r in rows
            ],
            rollbacks=rollbacks,
            in_force_text=f"version {force['version']} is in force" if force else "",
        )
    )


def live_instances_html(instances: list[dict[str, Any]]) -> str:
    """The group's instances as their status records say (``liveness`` view): alive or dead,
    plan version, lag, rate, last seen."""
    return str(_macro("plans/history_parts.html", "live_instances")([instance_view(i) for i in instances]))


def json_ready(value: Any) -> Any:
    """Plan dicts with datetimes as ISO strings (for the ``.json`` routes)."""
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value
