"""The plans pages as a FastAPI app, mounted by the Airflow API server under ``/lagassign``.

Routes (relative to the mount): ``GET /plans`` (list; ``group``, ``since``, ``until``, ``limit``,
``offset``), ``GET /plans/{id}`` (one plan), ``GET /history?group=`` (a group across plans, its
live instances), ``/plans.json``, ``/plans/{id}.json`` for machines, and three actions,
``POST /actions/publish``, ``/actions/rollback`` and ``/actions/replan``, which trigger an
Airflow DAG run through Airflow's own REST API with the caller's token: Airflow decides
whether this user may trigger that DAG, and the run (and the plan it records) names who did
it. Actions accept only same-origin form posts (the Origin header must be this server), so no
other site can make a logged-in browser trigger a run.

Authentication: a mounted app is not covered by the API server's own security, so every route
depends on ``require_login``. It resolves the caller exactly as Airflow's REST API does
(``Authorization: Bearer`` JWT, else the ``_token`` cookie the UI login sets) through
``airflow.api_fastapi.core_api.security.get_user``, then asks the auth manager whether that
user may see the website. Without a valid login a browser (``Accept: text/html``) is
redirected to the auth manager's login page with ``next`` pointing back here; anything else
gets 401. No store access happens before that check.

The store is opened read-only (never created) from the default URL ($LAGASSIGN_DB_URL, else
AIRFLOW_HOME/lagassign.db), once per URL and kept for the process.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from . import plans_page

MAX_LIMIT = 500


class LoginRequired(Exception):
    """The request carries no valid Airflow login."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequest(Exception):
    """A filter or path value that cannot be used; answered with 400 and the reason."""


async def require_login(request: Request) -> Any:
    """The Airflow user of this request, or LoginRequired; then the website permission (403)."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
    from airflow.api_fastapi.core_api.security import bearer_scheme, get_user
    from fastapi import HTTPException

    credentials = await bearer_scheme(request)
    try:
        user = await get_user(request, None, credentials)
    except HTTPException as exc:
        if exc.status_code in (401, 403):  # missing, expired or invalid token
            raise LoginRequired(str(exc.detail)) from None
        raise
    if not get_auth_manager().is_authorized_view(access_view=AccessView.WEBSITE, user=user):
        raise HTTPException(status_code=403, detail="Forbidden")
    return user


app = FastAPI(
    title="lagassign plans",
    dependencies=[Depends(require_login)],
    docs_url=None,
    redoc_url=None,
    openapi_url=None,
)


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


@app.exception_handler(LoginRequired)
async def _login_required(request: Request, exc: LoginRequired) -> Response:
    """Browsers go to Airflow's login page (and come back here); other clients get 401."""
    if _wants_html(request):
        from airflow.api_fastapi.app import get_auth_manager

        back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(get_auth_manager().get_url_login(next_url=back), status_code=303)
    return JSONResponse({"detail": exc.detail}, status_code=401, headers={"WWW-Authenticate": "Bearer"})


@app.exception_handler(BadRequest)
async def _bad_request(request: Request, exc: BadRequest) -> Response:
    return _error(request, 400, str(exc))


def _error(request: Request, status: int, message: str) -> Response:
    if request.url.path.endswith(".json") or not _wants_html(request):
        return JSONResponse({"detail": message}, status_code=status)
    back = "../plans" if "/plans/" in request.url.path else "plans"
    return HTMLResponse(plans_page.error_page(status, message, back), status_code=status)


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


_stores: dict[str, Any] = {}
_stores_lock = threading.Lock()


def _store() -> Any:
    """The audit store at the default URL, opened once per URL (read-only: never created)."""
    from lagassign.store import AuditStore, resolve_url

    from .hooks import LagassignStoreHook

    url = resolve_url(LagassignStoreHook().url())
    with _stores_lock:
        if url not in _stores:
            _stores[url] = AuditStore(url, create=False)
        return _stores[url]


def _read(request: Request, query: Any) -> Any:
    """Run one store query; a missing store or unknown plan becomes a page, not a traceback."""
    from lagassign.store import PlanNotFoundError, StoreError

    try:
        return query(_store())
    except PlanNotFoundError as exc:
        return _error(request, 404, str(exc))
    except StoreError as exc:
        return _error(request, 503, str(exc))


@app.get("/plans", response_class=HTMLResponse)
def plans_list(
    request: Request,
    group: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = Query(50),
    offset: int = Query(0, ge=0),
) -> Response:
    """The list of plans with per-group gate decisions, reasons, max lag (and max catch-up time)
    before → after, chosen strategies and published versions; paged by ``offset``."""
    filters = parse_filters(group, since, until, limit)

    def query(store: Any) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]], dict[Any, Any]]:
        plans = store.list_plans(**{**filters, "limit": filters["limit"] + 1}, offset=offset)
        ids = [p["id"] for p in plans]
        return plans, store.plan_details(ids), store.max_catch_up(ids)

    out = _read(request, query)
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
            offset=offset,
            limit=filters["limit"],
            more=more,
            catch_up=catch_up,
        )
    )


@app.get("/plans.json")
def plans_list_json(
    request: Request,
    group: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = Query(50),
) -> Response:
    """The list of plans as ``list_plans`` returns it."""
    filters = parse_filters(group, since, until, limit)
    out = _read(request, lambda store: store.list_plans(**filters))
    return out if isinstance(out, Response) else JSONResponse(plans_page.json_ready(out))


@app.get("/plans/{plan_id:int}.json")
def plan_json(request: Request, plan_id: int) -> Response:
    """One plan as ``get_plan`` returns it."""
    out = _read(request, lambda store: store.get_plan(plan_id))
    return out if isinstance(out, Response) else JSONResponse(plans_page.json_ready(out))


@app.get("/plans/{plan_id:int}", response_class=HTMLResponse)
def plan_view(request: Request, plan_id: int) -> Response:
    """One plan: per group the decision, actions, what changed, chart, metrics, members and moves."""

    def query(store: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        plan = store.get_plan(plan_id)
        return plan, store.previous_groups(plan_id, [g["group"] for g in plan["groups"]])

    out = _read(request, query)
    if isinstance(out, Response):
        return out
    plan, previous = out
    notice = request.query_params.get("notice")
    names = {g["group"] for g in plan["groups"]}
    lags = partition_lags(plan.get("snapshot_uri"), names)
    kinds = group_kinds(plan.get("snapshot_uri"), names)
    times = partition_times(plan.get("snapshot_uri"), names)
    return HTMLResponse(
        plans_page.plan_html(plan, previous=previous, lags=lags, notice=notice, kinds=kinds, times=times)
    )


def group_kinds(snapshot_uri: str | None, groups: set[str]) -> dict[str, str]:
    """Per group, ``assign`` or ``subscribe`` as its snapshot recorded it (empty when unreadable)."""
    if not snapshot_uri:
        return {}
    try:
        from lagassign.tables.snapshot import group_rows

        return {
            g: str(r.get("kind"))
            for g, r in group_rows(snapshot_uri).items()
            if g in groups and r.get("kind")
        }
    except Exception:
        return {}


def partition_lags(snapshot_uri: str | None, groups: set[str]) -> dict[str, dict[tuple[str, int], int]]:
    """Per group, the lag of each partition in the plan's snapshot (for the moves table); empty
    when the snapshot is gone or unreadable from the API server (a page, not an error)."""
    if not snapshot_uri:
        return {}
    try:
        from lagassign.core.case import parse_case
        from lagassign.tables.snapshot import read_snapshot

        out = {}
        for row, case in read_snapshot(snapshot_uri):
            if case is not None and row["group"] in groups:
                parsed = parse_case(case)
                out[row["group"]] = {(tp.topic, tp.partition): st.lag for tp, st in parsed.partitions.items()}
        return out
    except Exception:
        return {}


def partition_times(snapshot_uri: str | None, groups: set[str]) -> dict[str, dict[tuple[str, int], float]]:
    """Per group, each partition's lag in seconds in the plan's snapshot (from the offset
    history); empty when unknown or unreadable."""
    if not snapshot_uri:
        return {}
    try:
        from lagassign.tables.snapshot import partition_lag_seconds

        return {g: t for g, t in partition_lag_seconds(snapshot_uri).items() if g in groups}
    except Exception:
        return {}


@app.get("/history", response_class=HTMLResponse)
def group_history(request: Request, group: str = Query(..., min_length=1)) -> Response:
    """One group across plans, and its live instances when it announces itself."""
    out = _read(request, lambda store: store.group_history(group))
    if isinstance(out, Response):
        return out
    return HTMLResponse(plans_page.history_html(group, out, live_instances(group)))


def live_instances(group: str, timeout: float = 3.0) -> list[dict[str, Any]] | None:
    """The group's instances from the status topic (alive or not, newest record each), or None
    when the topic cannot be read from here (no Kafka connection in the API server)."""
    try:
        from lagassign.kafka.status import read_status

        from .hooks import LagassignKafkaHook

        liveness = read_status(LagassignKafkaHook().get_config(), timeout=timeout, groups=[group])
    except Exception:
        return None
    return instance_rows(liveness, group, int(time.time() * 1000))


def instance_rows(liveness: Any, group: str, now_ms: int) -> list[dict[str, Any]]:
    """The group's instances in a ``core.liveness.Liveness`` table, for the page: alive or dead
    (silent longer than its session timeout), plan version, lag, rate, host, last seen (UTC)."""
    rows = []
    for instance in sorted(liveness.known(group)):
        st = liveness.status(group, instance)
        if st is None:
            continue
        rows.append(
            {
                "instance": instance,
                "alive": liveness.is_alive(group, instance, now_ms),
                "version": st.version,
                "lag": st.lag,
                "rate": st.rate,
                "host": st.host,
                "last_seen": datetime.fromtimestamp(st.time_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S"),
            }
        )
    return rows


# -- actions: Airflow runs with parameters, triggered as the logged-in user ----------------------

REVIEW_DAG = "lagassign_review"
REPLAN_DAG = "lagassign_rebalance"


def same_origin(request: Request) -> bool:
    """A form post from this server's own pages (Origin, else Referer, names this host)."""
    source = request.headers.get("origin") or request.headers.get("referer") or ""
    return bool(source) and urlsplit(source).netloc == request.url.netloc


def replan_conf(group: str, parameters: dict[str, Any] | None) -> dict[str, Any]:
    """A re-plan of one group: the reviewed plan's settings, the group alone, apply off."""
    keep = ("strategies", "threshold", "min_improvement", "max_moves", "groups_file", "auto_offset_reset")
    conf = {k: v for k, v in (parameters or {}).items() if k in keep and v is not None}
    return {**conf, "groups": re.escape(group), "apply": False}


def _token(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:]
    return request.cookies.get("_token")


def trigger_run(base: str, token: str, dag_id: str, conf: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """POST a DAG run to Airflow's REST API as the caller; (status, answer)."""
    body = json.dumps({"logical_date": None, "conf": conf}).encode()
    req = urllib.request.Request(
        f"{base}/api/v2/dags/{quote(dag_id, safe='')}/dagRuns",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            detail = json.loads(e.read() or b"{}")
        except ValueError:
            detail = {"detail": e.reason}
        return e.code, detail


async def _action(request: Request, dag_id: str, make_conf: Any) -> Response:
    if not same_origin(request):
        return _error(request, 403, "actions are accepted only from the plans pages of this server")
    form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
    try:
        plan_id = int(form.get("plan_id", ""))
    except ValueError:
        return _error(request, 400, "plan_id must be a plan number")
    group = form.get("group") or ""
    if not group:
        return _error(request, 400, "group is required")
    plan = _read(request, lambda store: store.get_plan(plan_id, evaluations=False))
    if isinstance(plan, Response):
        return plan
    token = _token(request)
    if not token:
        raise LoginRequired("no token")
    base = f"{request.url.scheme}://{request.url.netloc}"
    status, answer = await asyncio.to_thread(
        trigger_run, base, token, dag_id, make_conf(plan_id, group, plan, form)
    )
    if status >= 300:
        detail = answer.get("detail") if isinstance(answer, dict) else answer
        return _error(request, status, f"Airflow refused to trigger {dag_id}: {detail}")
    run_id = answer.get("dag_run_id", "?")
    notice = f"triggered {dag_id} run {run_id} for group {group} (state {answer.get('state', '?')})"
    return RedirectResponse(f"../plans/{plan_id}?notice={quote(notice)}", status_code=303)


@app.post("/actions/publish")
async def publish_action(request: Request) -> Response:
    """Publish one group of a reviewed plan: a ``lagassign_review`` run with its parameters."""
    return await _action(
        request,
        REVIEW_DAG,
        lambda plan_id, group, _plan, form: {
            "action": "publish",
            "plan_id": plan_id,
            "group": group,
            "dry_run": form.get("dry_run") == "true",
        },
    )


@app.post("/actions/rollback")
async def rollback_action(request: Request) -> Response:
    """Roll a group back to a version published before: a ``lagassign_review`` run."""

    def conf(_plan_id: int, group: str, _plan: Any, form: dict[str, str]) -> dict[str, Any]:
        version = form.get("version", "")
        if not version.isdigit():
            raise BadRequest("version must be a published version number")
        return {
            "action": "rollback",
            "group": group,
            "version": int(version),
            "dry_run": form.get("dry_run") == "true",
        }

    return await _action(request, REVIEW_DAG, conf)


@app.post("/actions/replan")
async def replan_action(request: Request) -> Response:
    """Re-plan one group now, apply off: a ``lagassign_rebalance`` run with the plan's settings."""
    return await _action(
        request, REPLAN_DAG, lambda _id, group, plan, _form: replan_conf(group, plan.get("parameters"))
    )


@app.get("/plans/{rest:path}")
def not_a_plan(request: Request, rest: str) -> Response:
    """Anything else under /plans/ (e.g. a non-numeric id): 404 with a clear message."""
    return _error(request, 404, f"no plan {rest!r}: plan ids are whole numbers")
