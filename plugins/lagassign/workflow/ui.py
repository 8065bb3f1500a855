"""The plans pages as a FastAPI app, mounted by the Airflow API server under ``/lagassign``.

Routes (relative to the mount): ``GET /plans`` (list; ``group``, ``since``, ``until``, ``limit``,
``offset``), ``GET /plans/{id}`` (one plan), ``GET /history?group=`` (a group across plans, its
live instances), ``/plans.json``, ``/plans/{id}.json`` for machines, ``GET /runs/{dag}/{run}``
(a triggered run's state, for its notice), and the actions of ``plan_actions``, which trigger
Airflow DAG runs as the caller.

Every route depends on ``web.require_login`` (a mounted app is not covered by the API server's
own security): without a valid Airflow login a browser goes to Airflow's login page, anything
else gets 401. No store access happens before that check.

The store is opened read-only (never created) from the default URL ($LAGASSIGN_DB_URL, else
AIRFLOW_HOME/lagassign.db), once per URL and kept for the process.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from ..pipeline.ports import PublishingStore
from . import dag_ids, plans_page
from .guard import publish_guard
from .plan_actions import router as actions_router
from .plan_sources import group_rows_of, kinds_of, live_instances, partition_lags, partition_times
from .web import (
    BadRequest,
    add_error_handlers,
    error_response,
    paused_dags,
    read_store,
    require_login,
    run_state_response,
)
from .web import run_notice as checked_notice

MAX_LIMIT = 500

app = FastAPI(
    title="lagassign plans",
    dependencies=[Depends(require_login)],
    docs_url=None,
    redoc_url=None,
    openapi_url=None,
)
add_error_handlers(app)
app.include_router(actions_router)


def parse_page(limit: str | None, offset: str | None) -> tuple[int, int]:
    """``limit`` and ``offset`` query values; BadRequest says what is wrong."""

    def whole(name: str, text: str | None, default: int) -> int:
        if text is None or not text.strip():
            return default
        if not re.fullmatch(r"\d{1,9}", text.strip()):
            raise BadRequest(f"{name} must be a whole number (0 or more), got {text!r}")
        return int(text)

    return whole("limit", limit, 50), whole("offset", offset, 0)


def parse_when(name: str, text: str | None) -> date | datetime | None:
    """A ``since``/``until`` filter: an ISO date (2026-05-01) or time (2026-05-01T06:00), or None."""
    if text is None or not text.strip():
        return None
    text = text.strip()
    try:
        return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
    except ValueError:
        raise BadRequest(
            f"{name}: {text!r} is not an ISO date (2026-05-01) or time (2026-05-01T06:00)"
        ) from None


def parse_filters(group: str | None, since: str | None, until: str | None, limit: int) -> dict[str, Any]:
    """Validated ``list_plans`` keyword arguments; BadRequest says what is wrong."""
    start, end = parse_when("since", since), parse_when("until", until)
    if start is not None and end is not None and _as_dt(start) > _as_dt(end):
        raise BadRequest(f"since ({since}) is after until ({until})")
    if not 1 <= limit <= MAX_LIMIT:
        raise BadRequest(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    return {
        "group": group.strip() if group and group.strip() else None,
        "since": start,
        "until": end,
        "limit": limit,
    }


def _as_dt(value: date | datetime) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None) if value.tzinfo is None else value.astimezone().replace(tzinfo=None)
    return datetime(value.year, value.month, value.day)


@app.get("/plans", response_class=HTMLResponse)
def plans_list(
    request: Request,
    group: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: str | None = None,
    offset: str | None = None,
) -> Response:
    """The list of plans, one row per group per plan: outcome, reason, max lag (and max
    catch-up time) before → after, strategy; paged by ``offset``."""
    size, start = parse_page(limit, offset)
    filters = parse_filters(group, since, until, size)

    def query(
        store: PublishingStore,
    ) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]], dict[Any, Any]]:
        plans = store.list_plans(**{**filters, "limit": filters["limit"] + 1}, offset=start)
        ids = [p["id"] for p in plans]
        return plans, store.plan_details(ids), store.max_catch_up(ids)

    out = read_store(request, query)
    if isinstance(out, Response):
        return out
    plans, details, catch_up = out
    more = len(plans) > filters["limit"]
    return HTMLResponse(
        plans_page.plans_list_html(
            plans[: filters["limit"]],
            details,
            filters["group"],
            since,
            until,
            offset=start,
            limit=filters["limit"],
            more=more,
            catch_up=catch_up,
            paused=paused_dags(request),
        )
    )


@app.get("/plans.json")
def plans_list_json(
    request: Request,
    group: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: str | None = None,
) -> Response:
    """The list of plans as ``list_plans`` returns it."""
    size, _ = parse_page(limit, None)
    filters = parse_filters(group, since, until, size)
    out = read_store(request, lambda store: store.list_plans(**filters))
    return out if isinstance(out, Response) else JSONResponse(plans_page.json_ready(out))


@app.get("/plans/{plan_id:int}.json")
def plan_json(request: Request, plan_id: int) -> Response:
    """One plan as ``get_plan`` returns it."""
    out = read_store(request, lambda store: store.get_plan(plan_id), plan_id)
    return out if isinstance(out, Response) else JSONResponse(plans_page.json_ready(out))


@app.get("/plans/{plan_id:int}", response_class=HTMLResponse)
def plan_view(request: Request, plan_id: int, dag: str | None = None, run: str | None = None) -> Response:
    """One plan: per group its outcome, the gate's decision, the publish action the audit store
    allows now (stale and held checked at render time), what changed, chart, metrics, members
    and moves. ``dag`` and ``run``: a run an action just triggered (its notice)."""

    def query(store: PublishingStore) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        plan = store.get_plan(plan_id)
        names = [g["group"] for g in plan["groups"]]
        return plan, store.previous_groups(plan_id, names), store.ledger_state(names, plan.get("cluster"))

    out = read_store(request, query, plan_id)
    if isinstance(out, Response):
        return out
    plan, previous, ledger = out
    names = {g["group"] for g in plan["groups"]}
    lags = partition_lags(plan.get("snapshot_uri"), names)
    rows = group_rows_of(plan.get("snapshot_uri"), names)
    kinds = kinds_of(rows)
    times = partition_times(plan.get("snapshot_uri"), names)
    guards = {
        g["group"]: publish_guard(
            plan,
            g,
            kinds.get(g["group"]),
            (ledger.get(g["group"]) or (None, 0))[0],
            (rows.get(g["group"]) or {}).get("plan_version"),
        )
        for g in plan["groups"]
    }
    return HTMLResponse(
        plans_page.plan_html(
            plan,
            previous=previous,
            lags=lags,
            notice=run_notice(dag, run, "../"),
            kinds=kinds,
            times=times,
            guards=guards,
            paused=paused_dags(request),
        )
    )


def run_notice(dag_id: str | None, run_id: str | None, up: str = "") -> dict[str, Any] | None:
    """The notice of a run a plans page's action triggered (checked values only)."""
    return checked_notice(dag_id, run_id, (dag_ids.REVIEW, dag_ids.REBALANCE), up)


@app.get("/history", response_class=HTMLResponse)
def group_history(request: Request, group: str | None = None) -> Response:
    """One group across plans, and its live instances when it announces itself."""
    if not group or not group.strip():
        raise BadRequest("name a group: /history?group=GROUP (the list links each group's history)")

    def query(store: PublishingStore) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
        rows = store.group_history(group)
        return rows, store.plan_details(r["plan_id"] for r in rows)

    out = read_store(request, query)
    if isinstance(out, Response):
        return out
    rows, details = out
    return HTMLResponse(
        plans_page.history_html(group, rows, live_instances(group), paused_dags(request), details)
    )


@app.get("/runs/{dag_id}/{run_id}")
def run_status(request: Request, dag_id: str, run_id: str) -> Response:
    """A run the pages triggered, for its notice: Airflow's state of it, the plan it recorded
    and that plan's outcome (JSON: text, done, ok, plan_href, plan_text)."""
    return run_state_response(request, dag_id, run_id, (dag_ids.REVIEW, dag_ids.REBALANCE))


@app.get("/plans/{rest:path}")
def not_a_plan(request: Request, rest: str) -> Response:
    """Anything else under /plans/ (e.g. a non-numeric id): 404 with a clear message."""
    return error_response(request, 404, "no such plan: plan ids are whole numbers (see the list of plans)")
