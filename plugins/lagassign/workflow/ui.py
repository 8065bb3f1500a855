"""The plans pages as a FastAPI app, mounted by the Airflow API server under ``/lagassign``.

Routes (relative to the mount): ``GET /plans`` (list; ``group``, ``since``, ``until``, ``limit``),
``GET /plans/{id}`` (one plan), and ``/plans.json``, ``/plans/{id}.json`` for machines.

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

import threading
from datetime import date, datetime
from typing import Any

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
) -> Response:
    """The list of plans with per-group gate decisions, chosen strategies and published versions."""
    filters = parse_filters(group, since, until, limit)

    def query(store: Any) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
        plans = store.list_plans(**filters)
        return plans, store.plan_details(p["id"] for p in plans)

    out = _read(request, query)
    if isinstance(out, Response):
        return out
    plans, details = out
    return HTMLResponse(plans_page.plans_list_html(plans, details, filters["group"], since, until))


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
    """One plan: per group the decision, chart, metrics and moves."""
    out = _read(request, lambda store: store.get_plan(plan_id))
    return out if isinstance(out, Response) else HTMLResponse(plans_page.plan_html(out))


@app.get("/plans/{rest:path}")
def not_a_plan(request: Request, rest: str) -> Response:
    """Anything else under /plans/ (e.g. a non-numeric id): 404 with a clear message."""
    return _error(request, 404, f"no plan {rest!r}: plan ids are whole numbers")
