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
import logging
import re
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from lagassign.core.case import parse_case
from lagassign.core.outcome import outcome_of, run_succeeded, summary
from lagassign.kafka.status import read_status
from lagassign.tables.snapshot import group_rows, partition_lag_seconds, read_snapshot

from ..pipeline.ports import AuditTrailPort, PublishingStore
from . import plans_page
from .guard import NONE, OVERRIDE, publish_guard

MAX_LIMIT = 500
log = logging.getLogger("lagassign.ui")


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


@app.exception_handler(RequestValidationError)
async def _invalid(request: Request, exc: RequestValidationError) -> Response:
    """A missing or malformed path or query value: one sentence, never the validator's dump."""
    first = (exc.errors() or [{}])[0]
    where = ".".join(str(x) for x in first.get("loc", ())[1:]) or "the request"
    if first.get("type") == "missing":
        return _error(request, 400, f"{where} is required")
    return _error(request, 400, f"{where}: {first.get('input')!r} is not a usable value")


@app.exception_handler(Exception)
async def _unexpected(request: Request, exc: Exception) -> Response:
    """Anything unforeseen: logged with its traceback here, a short page for the viewer."""
    log.exception("lagassign plans page %s failed", request.url.path)
    return _error(request, 500, "the page could not be made; the Airflow API server's log says why")


def _error(request: Request, status: int, message: str) -> Response:
    if request.url.path.endswith(".json") or not _wants_html(request):
        return JSONResponse({"detail": message}, status_code=status)
    return HTMLResponse(
        plans_page.error_page(status, message, list_href(request.url.path)), status_code=status
    )


def list_href(path: str) -> str:
    """The list page relative to a page's path (pages live one or two levels under the mount)."""
    rest = path.split("/lagassign/", 1)[1] if "/lagassign/" in path else path.lstrip("/")
    return "../" * rest.count("/") + "plans"


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


def _read(request: Request, query: Any, plan_id: int | None = None) -> Any:
    """Run one store query; a missing store or unknown plan becomes a page, not a traceback
    (the store's own message, which names its database, goes to the log only)."""
    from lagassign.store import PlanNotFoundError, StoreError

    try:
        return query(_store())
    except PlanNotFoundError:
        what = f"plan {plan_id}" if plan_id is not None else "that plan"
        return _error(request, 404, f"there is no {what} in the audit store")
    except StoreError as exc:
        log.warning("lagassign audit store unreadable: %s", exc)
        return _error(
            request, 503, "the audit store cannot be read now; the Airflow API server's log says why"
        )


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
    out = _read(request, lambda store: store.list_plans(**filters))
    return out if isinstance(out, Response) else JSONResponse(plans_page.json_ready(out))


@app.get("/plans/{plan_id:int}.json")
def plan_json(request: Request, plan_id: int) -> Response:
    """One plan as ``get_plan`` returns it."""
    out = _read(request, lambda store: store.get_plan(plan_id), plan_id)
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

    out = _read(request, query, plan_id)
    if isinstance(out, Response):
        return out
    plan, previous, ledger = out
    names = {g["group"] for g in plan["groups"]}
    lags = partition_lags(plan.get("snapshot_uri"), names)
    rows = group_rows_of(plan.get("snapshot_uri"), names)
    kinds = {g: str(r["kind"]) for g, r in rows.items() if r.get("kind")}
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


RUN_ID = re.compile(r"[A-Za-z0-9_.:+\-]{1,250}")


def run_notice(dag_id: str | None, run_id: str | None, up: str = "") -> dict[str, Any] | None:
    """The notice of a run an action triggered, from checked values only: a DAG the pages
    trigger and a run id of Airflow's alphabet; anything else shows no notice."""
    if dag_id not in (REVIEW_DAG, REPLAN_DAG) or not run_id or not RUN_ID.fullmatch(run_id):
        return None
    return {
        "dag_id": dag_id,
        "run_id": run_id,
        "href": f"/dags/{quote(dag_id, safe='')}/runs/{quote(run_id, safe='')}",
        "status": f"{up}runs/{quote(dag_id, safe='')}/{quote(run_id, safe='')}",
    }


def group_rows_of(snapshot_uri: str | None, groups: set[str]) -> dict[str, dict[str, Any]]:
    """Per group, its snapshot row (kind assign | subscribe, the plan version in force when it
    was taken); empty when the snapshot is gone or unreadable from the API server."""
    if not snapshot_uri:
        return {}
    try:
        return {g: dict(r) for g, r in group_rows(snapshot_uri).items() if g in groups}
    except Exception:
        return {}


def group_kinds(snapshot_uri: str | None, groups: set[str]) -> dict[str, str]:
    """Per group, ``assign`` or ``subscribe`` as its snapshot recorded it (empty when unreadable)."""
    if not snapshot_uri:
        return {}
    try:
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
        return {g: t for g, t in partition_lag_seconds(snapshot_uri).items() if g in groups}
    except Exception:
        return {}


@app.get("/history", response_class=HTMLResponse)
def group_history(request: Request, group: str | None = None) -> Response:
    """One group across plans, and its live instances when it announces itself."""
    if not group or not group.strip():
        raise BadRequest("name a group: /history?group=GROUP (the list links each group's history)")

    def query(store: PublishingStore) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
        rows = store.group_history(group)
        return rows, store.plan_details(r["plan_id"] for r in rows)

    out = _read(request, query)
    if isinstance(out, Response):
        return out
    rows, details = out
    return HTMLResponse(
        plans_page.history_html(group, rows, live_instances(group), paused_dags(request), details)
    )


def live_instances(group: str, timeout: float = 3.0) -> list[dict[str, Any]] | None:
    """The group's instances from the status topic (alive or not, newest record each), or None
    when the topic cannot be read from here (no Kafka connection in the API server)."""
    try:
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
                "last_seen": datetime.fromtimestamp(st.time_ms / 1000, UTC),
            }
        )
    return rows


# -- actions: Airflow runs with parameters, triggered as the logged-in user ----------------------

REVIEW_DAG = "lagassign_review"
REPLAN_DAG = "lagassign_rebalance"
FAILOVER_DAG = "lagassign_failover"
DAILY_DAG = "lagassign_daily"
PAGE_DAGS = (REVIEW_DAG, REPLAN_DAG, FAILOVER_DAG, DAILY_DAG)


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


def _base(request: Request) -> str:
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


def paused_dags(request: Request) -> dict[str, bool] | None:
    """Which of lagassign's DAGs are paused, as the caller may see them (None: unknown)."""
    token = _token(request)
    if not token:
        return None
    status, answer = airflow_api(
        _base(request), token, "GET", "dags?dag_id_pattern=lagassign&limit=50", timeout=5
    )
    if status != 200 or not isinstance(answer, dict):
        return None
    return {
        d["dag_id"]: bool(d.get("is_paused")) for d in answer.get("dags", ()) if d.get("dag_id") in PAGE_DAGS
    }


async def _form(request: Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}


async def _action(request: Request, dag_id: str, make_conf: Any) -> Response:
    if not same_origin(request):
        return _error(request, 403, "actions are accepted only from the plans pages of this server")
    form = await _form(request)
    try:
        plan_id = int(form.get("plan_id", ""))
    except ValueError:
        return _error(request, 400, "plan_id must be a plan number")
    group = form.get("group") or ""
    if not group:
        return _error(request, 400, "group is required")

    def query(store: PublishingStore) -> tuple[dict[str, Any], dict[str, Any]]:
        plan = store.get_plan(plan_id)
        return plan, store.ledger_state([group], plan.get("cluster"))

    checked = _read(request, query, plan_id)
    if isinstance(checked, Response):
        return checked
    plan, ledger = checked
    conf = make_conf(plan_id, group, plan, form, (ledger.get(group) or (None, 0))[0])
    if isinstance(conf, Response):
        return conf
    token = _token(request)
    if not token:
        raise LoginRequired("no token")
    status, answer = await asyncio.to_thread(trigger_run, _base(request), token, dag_id, conf)
    if status >= 300:
        return _error(
            request, 409 if status < 500 else 502, f"Airflow did not start {dag_id}: {detail_text(answer)}"
        )
    run_id = str(answer.get("dag_run_id") or "")
    notice = urlencode({"dag": dag_id, "run": run_id}) if RUN_ID.fullmatch(run_id) else ""
    return RedirectResponse(f"../plans/{plan_id}" + (f"?{notice}" if notice else ""), status_code=303)


def publish_conf(
    request: Request, plan_id: int, group: str, plan: dict[str, Any], form: dict[str, str], newest: Any
) -> dict[str, Any] | Response:
    """The review run's parameters, once the publish guard allows it: refused when publishing
    could only fail or change nothing, and an override needs its confirmation ticked."""
    found = next((g for g in plan["groups"] if g["group"] == group), None)
    if found is None:
        return _error(request, 404, f"plan {plan_id} has no group {group!r}")
    rows = group_rows_of(plan.get("snapshot_uri"), {group}).get(group) or {}
    guard = publish_guard(plan, found, rows.get("kind"), newest, rows.get("plan_version"))
    if guard.mode == NONE:
        return _error(request, 409, f"group {group} of plan {plan_id} is not published: {guard.why}")
    if guard.mode == OVERRIDE and form.get("confirm") != "yes":
        return _error(
            request, 409, f"{guard.why}; publishing it anyway needs the confirmation on the plan page ticked"
        )
    return {"action": "publish", "plan_id": plan_id, "group": group, "dry_run": form.get("dry_run") == "true"}


@app.post("/actions/publish")
async def publish_action(request: Request) -> Response:
    """Publish one group of a reviewed plan: a ``lagassign_review`` run with its parameters."""
    return await _action(
        request,
        REVIEW_DAG,
        lambda plan_id, group, plan, form, newest: publish_conf(request, plan_id, group, plan, form, newest),
    )


@app.post("/actions/rollback")
async def rollback_action(request: Request) -> Response:
    """Roll a group back to a version published before: a ``lagassign_review`` run, once the
    confirmation (which shows the diff against the version in force) is ticked."""

    def conf(_plan_id: int, group: str, _plan: Any, form: dict[str, str], newest: Any) -> Any:
        version = form.get("version", "")
        if not version.isdigit():
            return _error(request, 400, "version must be a published version number")
        if form.get("confirm") != "yes":
            return _error(request, 409, "rolling back needs the confirmation on the history page ticked")
        if newest is not None and newest.get("state") == "pending":
            return _error(
                request,
                409,
                f"version {newest.get('version')} of group {group} is being published by plan "
                f"{newest.get('plan_id')}: roll back once it is settled",
            )
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
        request,
        REPLAN_DAG,
        lambda _id, group, plan, _form, _newest: replan_conf(group, plan.get("parameters")),
    )


@app.post("/actions/unpause")
async def unpause_action(request: Request) -> Response:
    """Unpause one of lagassign's DAGs (as the caller: Airflow decides whether they may), then
    back to the page the button was on."""
    if not same_origin(request):
        return _error(request, 403, "actions are accepted only from the plans pages of this server")
    dag_id = (await _form(request)).get("dag_id", "")
    if dag_id not in PAGE_DAGS:
        return _error(request, 400, "only lagassign's own DAGs are unpaused from these pages")
    token = _token(request)
    if not token:
        raise LoginRequired("no token")
    status, answer = await asyncio.to_thread(
        airflow_api, _base(request), token, "PATCH", f"dags/{quote(dag_id, safe='')}", {"is_paused": False}
    )
    if status >= 300:
        return _error(
            request, 409 if status < 500 else 502, f"Airflow did not unpause {dag_id}: {detail_text(answer)}"
        )
    back = request.headers.get("referer") or ""
    target = urlsplit(back)
    if target.netloc == request.url.netloc and target.path.startswith("/lagassign/"):
        return RedirectResponse(target.path + (f"?{target.query}" if target.query else ""), status_code=303)
    return RedirectResponse("../plans", status_code=303)


@app.get("/runs/{dag_id}/{run_id}")
def run_status(request: Request, dag_id: str, run_id: str) -> Response:
    """A run the pages triggered, for its notice: Airflow's state of it, the plan it recorded
    and that plan's outcome (JSON: text, done, ok, plan_href, plan_text)."""
    if dag_id not in (REVIEW_DAG, REPLAN_DAG) or not RUN_ID.fullmatch(run_id):
        return JSONResponse({"detail": "not a run of these pages"}, status_code=404)
    token = _token(request)
    if not token:
        raise LoginRequired("no token")
    status, answer = airflow_api(
        _base(request),
        token,
        "GET",
        f"dags/{quote(dag_id, safe='')}/dagRuns/{quote(run_id, safe='')}",
        timeout=5,
    )
    if status != 200 or not isinstance(answer, dict):
        return JSONResponse({"text": "state unknown", "done": False}, status_code=200)
    state = str(answer.get("state") or "queued")
    plans = _read(request, lambda store: plans_of_run(store, dag_id, run_id))
    if isinstance(plans, Response):
        plans = []
    return JSONResponse(run_state_text(state, plans, answer.get("note")))


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


@app.get("/plans/{rest:path}")
def not_a_plan(request: Request, rest: str) -> Response:
    """Anything else under /plans/ (e.g. a non-numeric id): 404 with a clear message."""
    return _error(request, 404, "no such plan: plan ids are whole numbers (see the list of plans)")
