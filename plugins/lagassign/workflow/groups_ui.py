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

Fresh figures: the cluster is read through the ``lagassign_kafka`` connection when a page or
a scrape asks, at most every ``MAX_AGE_S`` seconds (one read at a time; others wait for it),
and judged with the audit store's window. A read that takes longer than ``READ_TIMEOUT_S``
(``LAGASSIGN_GROUPS_READ_TIMEOUT``) is not waited for: the page shows what the health job
recorded last, with its age, and the read's result serves the next request.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import logging
import os
import re
import threading
import time
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from lagassign.core.clock import utc_now
from lagassign.core.outcome import outcome_of
from lagassign.kafka.errors import reason
from lagassign.pipeline.health import build_overview, observe, sort_rows, stored_overview
from lagassign.pipeline.metrics import exposition, plan_runs

from . import groups_page
from .plans_page import notice_html
from .ui import (
    LoginRequired,
    _base,
    _error,
    _form,
    _read,
    _token,
    airflow_api,
    detail_text,
    plans_of_run,
    require_login,
    run_state_text,
    same_origin,
    trigger_run,
)

log = logging.getLogger(__name__)

router = APIRouter()
MAX_AGE_S = 5.0
READ_TIMEOUT_S = 8.0
#: the DAGs the groups page triggers
PLAN_DAG = "lagassign_rebalance"
FAILOVER_DAG = "lagassign_failover"
RUN_ID = re.compile(r"[A-Za-z0-9_.:+\-]{1,250}")


def _now() -> datetime:
    return utc_now()


def read_timeout() -> float:
    text = os.environ.get("LAGASSIGN_GROUPS_READ_TIMEOUT", "").strip()
    try:
        value = float(text) if text else READ_TIMEOUT_S
    except ValueError:
        return READ_TIMEOUT_S
    return value if value > 0 else READ_TIMEOUT_S


# -- the audit store and the Kafka connection -------------------------------------------------

_stores: dict[str, Any] = {}
_lock = threading.Lock()


def store() -> Any | None:
    """The audit store (read-only: never created), opened once per URL; None when there is none
    or it cannot be opened (the pages then judge what they see now, and say so)."""
    from lagassign.store import AuditStore, StoreError, resolve_url

    from .hooks import LagassignStoreHook

    try:
        url = resolve_url(LagassignStoreHook().url())
    except Exception:
        return None
    with _lock:
        if url not in _stores:
            try:
                _stores[url] = AuditStore(url, create=False)
            except StoreError as exc:
                log.warning("groups page: no audit store: %s", exc)
                return None
        return _stores[url]


def kafka_config() -> dict[str, Any] | None:
    from .hooks import LagassignKafkaHook

    try:
        config = LagassignKafkaHook().get_config()
    except Exception as exc:
        log.warning("groups page: no Kafka connection: %s", exc)
        return None
    # librdkafka's own lines (a line per retry while a broker is down) go nowhere: a failed read
    # is logged once, with its reason, by ``Overviews``
    quiet = logging.getLogger("lagassign.groups.librdkafka")
    if not quiet.handlers:
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
    config["logger"] = quiet
    return config


# -- the overview, fresh when the cluster answers in time ----------------------------------------


class Overviews:
    """The newest overview read from the cluster, one read at a time, and what to show meanwhile."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latest: Any = None
        self.read_at = 0.0
        self.reading: threading.Thread | None = None
        self.error: str | None = None

    def _read(self) -> None:
        from .health import settings_from_env

        try:
            config = kafka_config()
            if config is None:
                raise RuntimeError("no lagassign_kafka connection in the API server")
            settings = settings_from_env()
            view = observe(config, settings, min(read_timeout(), 10.0))
            ov = build_overview(view, store(), settings)
            with self.lock:
                self.latest, self.read_at, self.error = ov, time.monotonic(), None
        except Exception as exc:
            log.warning("groups page: reading the cluster failed: %s", exc)
            with self.lock:
                self.error = reason(exc)

    def get(self, wait: float | None = None) -> tuple[Any, str | None]:
        """(overview or None, why it is not fresh or None)."""
        with self.lock:
            if self.latest is not None and time.monotonic() - self.read_at < MAX_AGE_S:
                return self.latest, None
            if self.reading is None or not self.reading.is_alive():
                self.reading = threading.Thread(target=self._read, name="lagassign-groups-read", daemon=True)
                self.reading.start()
            reading = self.reading
        reading.join(read_timeout() if wait is None else wait)
        with self.lock:
            if self.latest is not None and time.monotonic() - self.read_at < MAX_AGE_S + read_timeout():
                return self.latest, None
            why = self.error or f"the cluster did not answer within {read_timeout():g} s"
        return self._stored(), why

    def _stored(self) -> Any:
        s = store()
        recorded = stored_overview(s) if s is not None else None
        with self.lock:
            cached = self.latest
        if cached is not None and (recorded is None or cached.observed_at >= recorded.observed_at):
            return dataclasses.replace(cached, fresh=False, source="last read")
        return recorded


overviews = Overviews()


def _note(ov: Any, why: str | None) -> str:
    from .health import settings_from_env

    note = ""
    if why:
        note += f'<p class="err">Not read now: {groups_page._e(why)}.</p>'
    s = store()
    if s is None:
        return note + groups_page.history_note(settings_from_env().window_s, None, _now())
    newest = next((c["observed_at"] for c in s.health_clusters() if c["cluster"] == ov.cluster), None)
    return note + groups_page.history_note(settings_from_env().window_s, newest, _now())


def _unavailable(request: Request, why: str | None) -> Response:
    message = "no figures to show: the cluster cannot be read from here"
    if why:
        message += f" ({why})"
    return _error(request, 503, message + ", and the health job has recorded nothing yet")


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
    ov, why = await asyncio.to_thread(overviews.get)
    if ov is None:
        return _unavailable(request, why)
    query = groups_page.ListQuery.parse(q, status, sort, order)
    rows = sort_rows(groups_page.filter_rows(ov.groups, query), query.sort, query.desc)
    note = await asyncio.to_thread(_note, ov, why)
    return HTMLResponse(groups_page.groups_list_html(ov, rows, query, _now(), note))


@router.get("/groups.json")
async def groups_json(request: Request) -> Response:
    """The overview as ``lagassign groups --json`` prints it (with partitions)."""
    ov, why = await asyncio.to_thread(overviews.get)
    if ov is None:
        return _error(request, 503, f"no figures: {why}")
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
    if dag not in (PLAN_DAG, FAILOVER_DAG) or not run or not RUN_ID.fullmatch(run):
        return ""
    return notice_html(
        {
            "dag_id": dag,
            "run_id": run,
            "href": f"/dags/{quote(dag, safe='')}/runs/{quote(run, safe='')}",
            "status": f"runs/{quote(dag, safe='')}/{quote(run, safe='')}",
        }
    )


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
    ov, why = await asyncio.to_thread(overviews.get)
    if ov is None:
        return _unavailable(request, why)
    row = next((r for r in ov.groups if r["group"] == group), None)
    if row is None:
        return HTMLResponse(groups_page.not_found_html(group, ov.cluster), status_code=404)
    info = await asyncio.to_thread(_group_info, ov, row, _hours(hours))
    note = await asyncio.to_thread(_note, ov, why)
    return HTMLResponse(groups_page.group_html(row, ov, info, _now(), run_notice(dag, run), note))


@router.get("/groups/show.json")
async def group_show_json(request: Request, group: str = Query(..., min_length=1)) -> Response:
    ov, why = await asyncio.to_thread(overviews.get)
    if ov is None:
        return _error(request, 503, f"no figures: {why}")
    row = next((r for r in ov.groups if r["group"] == group), None)
    if row is None:
        return _error(request, 404, f"no group {group!r} on cluster {ov.cluster or 'unknown'} now")
    return JSONResponse({**row, "cluster": ov.cluster, "fresh": ov.fresh})


# -- actions --------------------------------------------------------------------------------


async def _trigger(request: Request, dag_id: str, conf_of: Any) -> Response:
    if not same_origin(request):
        return _error(request, 403, "actions are accepted only from the groups pages of this server")
    group = (await _form(request)).get("group") or ""
    if not group:
        return _error(request, 400, "group is required")
    token = _token(request)
    if not token:
        raise LoginRequired("no token")
    base = f"{request.url.scheme}://{request.url.netloc}"
    status, answer = await asyncio.to_thread(trigger_run, base, token, dag_id, conf_of(group))
    if status >= 300:
        return _error(
            request, 409 if status < 500 else 502, f"Airflow did not start {dag_id}: {detail_text(answer)}"
        )
    run_id = str(answer.get("dag_run_id") or "")
    query = {"group": group}
    if RUN_ID.fullmatch(run_id):
        query.update(dag=dag_id, run=run_id)
    return RedirectResponse(f"../show?{urlencode(query)}", status_code=303)


@router.post("/groups/actions/plan")
async def plan_now(request: Request) -> Response:
    """Plan this group now (a ``lagassign_rebalance`` run of it alone, apply off: review it on
    its plan page, then publish from there)."""
    return await _trigger(request, PLAN_DAG, lambda group: {"groups": re.escape(group), "apply": False})


@router.post("/groups/actions/failover")
async def fail_over_now(request: Request) -> Response:
    """Fail this assign()-mode group over now (a ``lagassign_failover`` run naming it): a new
    plan for its live instances if its plan in force names a dead one or misses a live one."""
    return await _trigger(request, FAILOVER_DAG, lambda group: {"groups": [group]})


@router.get("/groups/runs/{dag_id}/{run_id}")
def run_state(request: Request, dag_id: str, run_id: str) -> Response:
    """A run this page triggered: Airflow's state and its plan's outcome (for the notice)."""
    if dag_id not in (PLAN_DAG, FAILOVER_DAG) or not RUN_ID.fullmatch(run_id):
        return JSONResponse({"detail": "not a run of these pages"}, status_code=404)
    token = _token(request)
    if not token:
        raise LoginRequired("no token")
    path = f"dags/{quote(dag_id, safe='')}/dagRuns/{quote(run_id, safe='')}"
    status, answer = airflow_api(_base(request), token, "GET", path, timeout=5)
    if status != 200 or not isinstance(answer, dict):
        return JSONResponse({"text": "state unknown", "done": False})
    plans = _read(request, lambda s: plans_of_run(s, dag_id, run_id))
    # its plan_href (../plans/N) is relative to the page that shows the notice: /lagassign/groups/show
    return JSONResponse(
        run_state_text(str(answer.get("state") or "queued"), [] if isinstance(plans, Response) else plans)
    )


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
    ov, why = await asyncio.to_thread(overviews.get)
    if ov is None:
        return JSONResponse({"detail": f"no figures: {why}"}, status_code=503)

    def runs() -> list[dict[str, Any]]:
        s = store()
        return plan_runs(s, ov.cluster) if s is not None else []

    body, content_type = exposition(ov, await asyncio.to_thread(runs))
    return Response(body, media_type=content_type)


async def _may_scrape(request: Request) -> bool:
    """The scrape token (constant-time compare), else an Airflow login with website access."""
    from fastapi import HTTPException

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
