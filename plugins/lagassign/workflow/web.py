"""What the plugin's pages share: the Airflow login, error answers, form posts, and Airflow runs
started and followed as the logged-in user.

Authentication: a mounted app is not covered by the API server's own security, so every route
depends on ``require_login``. It resolves the caller exactly as Airflow's REST API does
(``Authorization: Bearer`` JWT, else the ``_token`` cookie the UI login sets) through
``airflow.api_fastapi.core_api.security.get_user``, then asks the auth manager whether that
user may see the website. Without a valid login a browser (``Accept: text/html``) is
redirected to the auth manager's login page with ``next`` pointing back here; anything else
gets 401 (``add_error_handlers``).

Actions call Airflow's own REST API with the caller's token, so Airflow decides whether this
user may trigger or unpause that DAG, and the run names who started it. They accept only
same-origin form posts (``same_origin``), so no other site can make a logged-in browser act.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Collection
from typing import Any, TypeVar
from urllib.parse import parse_qs, quote, urlsplit

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ..core.outcome import outcome_of, run_succeeded, summary
from ..pipeline.ports import AuditTrailPort, PublishingStore
from ..store import AuditStore, PlanNotFoundError, StoreError, resolve_url
from . import dag_ids
from .hooks import LagassignStoreHook
from .templating import render

log = logging.getLogger("lagassign.ui")
T = TypeVar("T")

#: a run id of Airflow's alphabet: the only kind the pages put in a link or a notice
RUN_ID = re.compile(r"[A-Za-z0-9_.:+\-]{1,250}")
ERROR_TITLES = {400: "Cannot show that", 403: "Not allowed", 404: "Not found", 409: "Not done"}


class LoginRequired(Exception):
    """The request carries no valid Airflow login."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequest(Exception):
    """A filter or path value that cannot be used; answered with 400 and the reason."""


async def require_login(request: Request) -> Any:
    """The Airflow user of this request, or LoginRequired; then the website permission (403)."""
    # the API server's own modules: loaded by the first request, not in every process that loads the plugin
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import AccessView
    from airflow.api_fastapi.core_api.security import bearer_scheme, get_user

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


# -- error answers ------------------------------------------------------------------------------


def wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def list_href(path: str) -> str:
    """The list page relative to a page's path (pages live one or two levels under the mount)."""
    rest = path.split("/lagassign/", 1)[1] if "/lagassign/" in path else path.lstrip("/")
    return "../" * rest.count("/") + "plans"


def error_html(status: int, message: str, back: str = "plans") -> str:
    """A short error page (bad filter, unknown plan or group) with a link back to a list."""
    heading = ERROR_TITLES.get(status, "Something went wrong")
    title = f"lagassign: {heading}"
    return str(render("ui/error.html", title=title, back=back, heading=heading, message=message))


def error_response(request: Request, status: int, message: str) -> Response:
    """The error as a page for a browser, else as JSON ``{"detail": message}``."""
    if request.url.path.endswith(".json") or not wants_html(request):
        return JSONResponse({"detail": message}, status_code=status)
    return HTMLResponse(error_html(status, message, list_href(request.url.path)), status_code=status)


def add_error_handlers(app: FastAPI) -> None:
    """Answer a missing login, a bad value and anything unforeseen in one sentence each."""

    @app.exception_handler(LoginRequired)
    async def login_required(request: Request, exc: LoginRequired) -> Response:
        """Browsers go to Airflow's login page (and come back here); other clients get 401."""
        if wants_html(request):
            from airflow.api_fastapi.app import get_auth_manager

            back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(get_auth_manager().get_url_login(next_url=back), status_code=303)
        return JSONResponse({"detail": exc.detail}, status_code=401, headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(BadRequest)
    async def bad_request(request: Request, exc: BadRequest) -> Response:
        return error_response(request, 400, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        """A missing or malformed path or query value: one sentence, never the validator's dump."""
        first = (exc.errors() or [{}])[0]
        where = ".".join(str(x) for x in first.get("loc", ())[1:]) or "the request"
        if first.get("type") == "missing":
            return error_response(request, 400, f"{where} is required")
        return error_response(request, 400, f"{where}: {first.get('input')!r} is not a usable value")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        """Anything unforeseen: logged with its traceback here, a short page for the viewer."""
        log.exception("lagassign plans page %s failed", request.url.path)
        return error_response(
            request, 500, "the page could not be made; the Airflow API server's log says why"
        )


# -- the audit store ----------------------------------------------------------------------------

_stores: dict[str, AuditStore] = {}
_stores_lock = threading.Lock()


def audit_store() -> AuditStore:
    """The audit store at the default URL, opened once per URL (read-only: never created)."""
    url = resolve_url(LagassignStoreHook().url())
    with _stores_lock:
        if url not in _stores:
            _stores[url] = AuditStore(url, create=False)
        return _stores[url]


def read_store(
    request: Request, query: Callable[[PublishingStore], T], plan_id: int | None = None
) -> T | Response:
    """Run one store query; a missing store or unknown plan becomes a page, not a traceback
    (the store's own message, which names its database, goes to the log only)."""
    try:
        return query(audit_store())
    except PlanNotFoundError:
        what = f"plan {plan_id}" if plan_id is not None else "that plan"
        return error_response(request, 404, f"there is no {what} in the audit store")
    except StoreError as exc:
        log.warning("lagassign audit store unreadable: %s", exc)
        return error_response(
            request, 503, "the audit store cannot be read now; the Airflow API server's log says why"
        )


# -- forms and Airflow's REST API as the caller ------------------------------------------------


def same_origin(request: Request) -> bool:
    """A form post from this server's own pages (Origin, else Referer, names this host)."""
    source = request.headers.get("origin") or request.headers.get("referer") or ""
    return bool(source) and urlsplit(source).netloc == request.url.netloc


async def form_fields(request: Request) -> dict[str, str]:
    """A posted form's fields (the first value of each)."""
    return {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}


def caller_token(request: Request) -> str | None:
    """The caller's Airflow token: the bearer header, else the UI login's cookie."""
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:]
    return request.cookies.get("_token")


def base_url(request: Request) -> str:
    """This API server as the caller reached it (Airflow's REST API is served beside the pages)."""
    return f"{request.url.scheme}://{request.url.netloc}"


def airflow_api(
    base: str, token: str, method: str, path: str, body: dict[str, Any] | None = None, timeout: float = 30
) -> tuple[int, Any]:
    """One call to Airflow's REST API as the caller (their token: Airflow authorises it);
    (status, answer as JSON, or {"detail": reason})."""
    req = urllib.request.Request(
        f"{base}/api/v2/{path}",
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            detail = json.loads(e.read() or b"{}")
        except ValueError:
            detail = {"detail": e.reason}
        return e.code, detail
    except OSError as e:
        return 503, {"detail": f"Airflow's API did not answer ({type(e).__name__})"}


def trigger_run(base: str, token: str, dag_id: str, conf: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """POST a DAG run to Airflow's REST API as the caller; (status, answer)."""
    return airflow_api(
        base, token, "POST", f"dags/{quote(dag_id, safe='')}/dagRuns", {"logical_date": None, "conf": conf}
    )


def detail_text(answer: Any) -> str:
    """Airflow's error answer in one sentence (its ``detail`` is a string, a dict or a list)."""
    detail = answer.get("detail", answer) if isinstance(answer, dict) else answer
    if isinstance(detail, list):
        detail = "; ".join(str(d.get("msg", d)) if isinstance(d, dict) else str(d) for d in detail)
    elif isinstance(detail, dict):
        detail = str(detail.get("reason") or detail.get("message") or detail.get("title") or "refused")
    return " ".join(str(detail).split())[:300] or "no reason given"


async def start_run(request: Request, dag_id: str, conf: dict[str, Any]) -> str | Response:
    """Trigger ``dag_id`` as the caller: its run id ('' when Airflow's is not of the alphabet
    the pages link), or the error answer when Airflow refused."""
    token = caller_token(request)
    if not token:
        raise LoginRequired("no token")
    status, answer = await asyncio.to_thread(trigger_run, base_url(request), token, dag_id, conf)
    if status >= 300:
        return error_response(
            request, 409 if status < 500 else 502, f"Airflow did not start {dag_id}: {detail_text(answer)}"
        )
    run_id = str(answer.get("dag_run_id") or "")
    return run_id if RUN_ID.fullmatch(run_id) else ""


def paused_dags(request: Request) -> dict[str, bool] | None:
    """Which of lagassign's DAGs are paused, as the caller may see them (None: unknown)."""
    token = caller_token(request)
    if not token:
        return None
    status, answer = airflow_api(
        base_url(request), token, "GET", "dags?dag_id_pattern=lagassign&limit=50", timeout=5
    )
    if status != 200 or not isinstance(answer, dict):
        return None
    return {
        d["dag_id"]: bool(d.get("is_paused"))
        for d in answer.get("dags", ())
        if d.get("dag_id") in dag_ids.PLANNING
    }


# -- a triggered run, followed by its notice ----------------------------------------------------


def run_notice(
    dag_id: str | None, run_id: str | None, dags: Collection[str], up: str = ""
) -> dict[str, Any] | None:
    """The notice of a run an action triggered, from checked values only: one of ``dags`` and a
    run id of Airflow's alphabet; anything else shows no notice."""
    if dag_id is None or dag_id not in dags or not run_id or not RUN_ID.fullmatch(run_id):
        return None
    return {
        "dag_id": dag_id,
        "run_id": run_id,
        "href": f"/dags/{quote(dag_id, safe='')}/runs/{quote(run_id, safe='')}",
        "status": f"{up}runs/{quote(dag_id, safe='')}/{quote(run_id, safe='')}",
    }


def run_state_response(
    request: Request, dag_id: str, run_id: str, dags: Collection[str], with_note: bool = True
) -> Response:
    """A run the pages triggered, for its notice: Airflow's state of it, the plan it recorded
    and that plan's outcome (JSON: text, done, ok, plan_href, plan_text); ``with_note``: a
    finished run without a plan says Airflow's note of it."""
    if dag_id not in dags or not RUN_ID.fullmatch(run_id):
        return JSONResponse({"detail": "not a run of these pages"}, status_code=404)
    token = caller_token(request)
    if not token:
        raise LoginRequired("no token")
    path = f"dags/{quote(dag_id, safe='')}/dagRuns/{quote(run_id, safe='')}"
    status, answer = airflow_api(base_url(request), token, "GET", path, timeout=5)
    if status != 200 or not isinstance(answer, dict):
        return JSONResponse({"text": "state unknown", "done": False})
    plans = read_store(request, lambda store: plans_of_run(store, dag_id, run_id))
    found = [] if isinstance(plans, Response) else plans
    note = answer.get("note") if with_note else None
    return JSONResponse(run_state_text(str(answer.get("state") or "queued"), found, note))


def plans_of_run(store: AuditTrailPort, dag_id: str, run_id: str) -> list[dict[str, Any]]:
    """The plans a run recorded (newest plans first; a run records one, a few at most)."""
    recent = store.list_plans(limit=200)
    ids = [p["id"] for p in recent if p.get("dag_id") == dag_id and p.get("run_id") == run_id]
    details = store.plan_details(ids)
    return [details[i] for i in ids if i in details]


def run_state_text(state: str, plans: list[dict[str, Any]], note: str | None = None) -> dict[str, Any]:
    """What a run's notice says: its Airflow state, then its plan's outcome per group."""
    done = state in ("success", "failed")
    out: dict[str, Any] = {"state": state, "done": done, "ok": state == "success", "text": state}
    if plans:
        plan = plans[0]
        outcomes = [(g["group"], outcome_of(plan, g)) for g in plan.get("groups") or ()]
        text = summary(outcomes) if outcomes else (plan.get("error") or plan.get("status") or state)
        out.update(
            text=f"{state}: {text}",
            ok=done and state == "success" and run_succeeded(o for _, o in outcomes),
            plan_href=f"../plans/{plan['id']}",
            plan_text=f"plan {plan['id']}",
        )
    elif done and note:
        out["text"] = f"{state}: {note}"
    return out
