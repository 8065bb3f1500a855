"""The groups pages and the metrics endpoint, served by the lagassign plugin.

Routes, added to the plans app (``ui.app``, mounted at ``/lagassign``: the same Airflow login
and website permission): ``GET /groups`` (filters ``q``, ``status``, ``sort``, ``order``),
``GET /groups.json``, ``GET /groups/show?group=G`` (``hours``: the chart's period),
``GET /groups/show.json?group=G``, ``POST /groups/actions/plan`` (a ``lagassign_rebalance``
run of the group, apply off), ``POST /groups/actions/failover`` (a ``lagassign_failover`` run
of the group), ``GET /groups/runs/{dag}/{run}`` (a triggered run's state, for its notice).

``metrics_app`` (mounted at ``/lagassign-metrics``): ``GET /metrics`` in Prometheus's format,
for a caller with an Airflow login (as the pages) or the bearer token in
``LAGASSIGN_METRICS_TOKEN`` (Prometheus's ``authorization`` setting; Airflow's own tokens
expire).

The figures come from ``group_overviews``: read from the cluster when it answers in time,
else what the health job recorded last, with its age.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from lagassign.core.clock import utc_now
from lagassign.core.outcome import outcome_of
from lagassign.pipeline.metrics import exposition, plan_runs
from lagassign.pipeline.overview import sort_rows

from . import dag_ids, group_overviews, groups_page
from .group_overviews import store
from .health import settings_from_env
from .plans_page import notice_html
from .web import (
    LoginRequired,
    error_html,
    error_response,
    form_fields,
    require_login,
    run_state_response,
    same_origin,
    start_run,
)
from .web import run_notice as checked_notice

log = logging.getLogger(__name__)

router = APIRouter()
#: the DAGs the groups page triggers
GROUP_DAGS = (dag_ids.REBALANCE, dag_ids.FAILOVER)


def _now() -> datetime:
    return utc_now()


def _note(ov: Any, why: str | None) -> str:
    """Why the figures are not read now, and whether the health job keeps the rules' window."""
    s = store()
    newest = (
        next((c["observed_at"] for c in s.health_clusters() if c["cluster"] == ov.cluster), None)
        if s is not None
        else None
    )
    return groups_page.note_html(why, settings_from_env().window_s, newest, _now())


def _unavailable(request: Request, why: str | None) -> Response:
    message = "no figures to show: the cluster cannot be read from here"
    if why:
        message += f" ({why})"
    return error_response(request, 503, message + ", and the health job has recorded nothing yet")


# -- pages ----------------------------------------------------------------------------------


@router.get("/groups", response_class=HTMLResponse)
async def groups_list(
    request: Request,
    q: str | None = None,
    status: list[str] = Query(default=[]),  # noqa: B008 (FastAPI's way)
    sort: str | None = None,
    order: str | None = None,
) -> Response:
    """Every group: status, lag in messages and time, catch-up, consumers, plans."""
    ov, why = await asyncio.to_thread(group_overviews.overviews.get)
    if ov is None:
        return _unavailable(request, why)
    query = groups_page.ListQuery.parse(q, status, sort, order)
    rows = sort_rows(groups_page.filter_rows(ov.groups, query), query.sort, query.desc)
    note = await asyncio.to_thread(_note, ov, why)
    return HTMLResponse(groups_page.groups_list_html(ov, rows, query, _now(), note))


@router.get("/groups.json")
async def groups_json(request: Request) -> Response:
    """The overview as ``lagassign groups --json`` prints it (with partitions)."""
    ov, why = await asyncio.to_thread(group_overviews.overviews.get)
    if ov is None:
        return error_response(request, 503, f"no figures: {why}")
    return JSONResponse({**ov.to_dict(), "not_fresh_because": why})


def _group_info(ov: Any, row: dict[str, Any], hours: float) -> groups_page.GroupPage:
    """The group's chart series, plans and failovers, alerts and plan in force, from the store."""
    info = groups_page.GroupPage(hours=hours)
    s = store()
    if s is None:
        return info
    start = _now() - timedelta(hours=hours)
    info.series = s.status_series(ov.cluster, row["group"], since=start - timedelta(minutes=10))
    plans = s.list_plans(group=row["group"], cluster=ov.cluster, since=start, limit=500)
    details = s.plan_details(p["id"] for p in plans)
    for p in plans:
        plan = details.get(p["id"])
        found = next((g for g in (plan or {}).get("groups", []) if g["group"] == row["group"]), None)
        if plan is None or found is None:
            continue
        o = outcome_of(plan, found)
        failover = p["trigger"] == "failover"
        label = f"failover: {o.label}" if failover else f"plan {p['id']}: {o.label}"
        info.marks.append(
            groups_page.Mark(
                p["created_at"],
                "failover" if failover else "plan",
                label,
                o,
                f"../plans/{int(p['id'])}",
                (found.get("decision") or {}).get("reason") or "",
            )
        )
    info.alerts = s.alerts(ov.cluster, row["group"], limit=50)
    if row.get("plan_version") is not None:
        try:
            pub = s.publication(row["group"], int(row["plan_version"]), ov.cluster)
        except Exception:
            pub = None
        info.plan_in_force = int(pub["plan_id"]) if pub else None
    return info


def run_notice(dag: str | None, run: str | None) -> str:
    """The notice of a run an action of this page triggered (checked values only)."""
    return notice_html(checked_notice(dag, run, GROUP_DAGS))


def _hours(text: str | None) -> float:
    try:
        value = float(text) if text else 24.0
    except ValueError:
        return 24.0
    return min(max(value, 0.25), 72.0)


@router.get("/groups/show", response_class=HTMLResponse)
async def group_show(
    request: Request,
    group: str = Query(..., min_length=1),
    hours: str | None = None,
    dag: str | None = None,
    run: str | None = None,
) -> Response:
    """One group: findings, figures, actions, its lag over time with plans and failovers, its
    consumers and partitions, its alerts."""
    ov, why = await asyncio.to_thread(group_overviews.overviews.get)
    if ov is None:
        return _unavailable(request, why)
    row = next((r for r in ov.groups if r["group"] == group), None)
    if row is None:
        message = f"no group {group!r} on cluster {ov.cluster or 'unknown'} now"
        return HTMLResponse(error_html(404, message, "../groups"), status_code=404)
    info = await asyncio.to_thread(_group_info, ov, row, _hours(hours))
    note = await asyncio.to_thread(_note, ov, why)
    return HTMLResponse(groups_page.group_html(row, ov, info, _now(), run_notice(dag, run), note))


@router.get("/groups/show.json")
async def group_show_json(request: Request, group: str = Query(..., min_length=1)) -> Response:
    ov, why = await asyncio.to_thread(group_overviews.overviews.get)
    if ov is None:
        return error_response(request, 503, f"no figures: {why}")
    row = next((r for r in ov.groups if r["group"] == group), None)
    if row is None:
        return error_response(request, 404, f"no group {group!r} on cluster {ov.cluster or 'unknown'} now")
    return JSONResponse({**row, "cluster": ov.cluster, "fresh": ov.fresh})


# -- actions --------------------------------------------------------------------------------


async def _trigger(request: Request, dag_id: str, conf_of: Callable[[str], dict[str, Any]]) -> Response:
    """Trigger ``dag_id`` for the posted group, then back to the group's page with the run's notice."""
    if not same_origin(request):
        return error_response(request, 403, "actions are accepted only from the groups pages of this server")
    group = (await form_fields(request)).get("group") or ""
    if not group:
        return error_response(request, 400, "group is required")
    run_id = await start_run(request, dag_id, conf_of(group))
    if isinstance(run_id, Response):
        return run_id
    query = {"group": group}
    if run_id:
        query.update(dag=dag_id, run=run_id)
    return RedirectResponse(f"../show?{urlencode(query)}", status_code=303)


@router.post("/groups/actions/plan")
async def plan_now(request: Request) -> Response:
    """Plan this group now (a ``lagassign_rebalance`` run of it alone, apply off: review it on
    its plan page, then publish from there)."""
    return await _trigger(
        request, dag_ids.REBALANCE, lambda group: {"groups": re.escape(group), "apply": False}
    )


@router.post("/groups/actions/failover")
async def fail_over_now(request: Request) -> Response:
    """Fail this assign()-mode group over now (a ``lagassign_failover`` run naming it): a new
    plan for its live instances if its plan in force names a dead one or misses a live one."""
    return await _trigger(request, dag_ids.FAILOVER, lambda group: {"groups": [group]})


@router.get("/groups/runs/{dag_id}/{run_id}")
def run_state(request: Request, dag_id: str, run_id: str) -> Response:
    """A run this page triggered: Airflow's state and its plan's outcome (for the notice; its
    plan_href, ../plans/N, is relative to the page that shows it: /lagassign/groups/show)."""
    return run_state_response(request, dag_id, run_id, GROUP_DAGS, with_note=False)


# -- metrics ---------------------------------------------------------------------------------

metrics_app = FastAPI(title="lagassign metrics", docs_url=None, redoc_url=None, openapi_url=None)


@metrics_app.get("/metrics")
async def metrics(request: Request) -> Response:
    """The groups' metrics in Prometheus's format (``pipeline.metrics``)."""
    if not await _may_scrape(request):
        return JSONResponse(
            {"detail": "an Airflow login or LAGASSIGN_METRICS_TOKEN is required"},
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
    ov, why = await asyncio.to_thread(group_overviews.overviews.get)
    if ov is None:
        return JSONResponse({"detail": f"no figures: {why}"}, status_code=503)

    def runs() -> list[dict[str, Any]]:
        s = store()
        return plan_runs(s, ov.cluster) if s is not None else []

    body, content_type = exposition(ov, await asyncio.to_thread(runs))
    return Response(body, media_type=content_type)


async def _may_scrape(request: Request) -> bool:
    """The scrape token (constant-time compare), else an Airflow login with website access."""
    secret = os.environ.get("LAGASSIGN_METRICS_TOKEN", "")
    auth = request.headers.get("authorization", "")
    if (
        secret
        and auth.lower().startswith("bearer ")
        and hmac.compare_digest(auth[7:].encode(), secret.encode())
    ):
        return True
    try:
        await require_login(request)
    except (LoginRequired, HTTPException):
        return False
    except Exception:  # whatever else went wrong checking a login, no figures leave
        log.exception("lagassign metrics: checking the caller's login failed")
        return False
    return True
