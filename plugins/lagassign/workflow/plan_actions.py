"""The plans pages' actions: ``POST /actions/publish``, ``/actions/rollback`` and
``/actions/replan`` trigger an Airflow DAG run with parameters, ``/actions/unpause`` unpauses
one of lagassign's DAGs; all as the logged-in user through Airflow's own REST API (Airflow
decides whether they may) and only from this server's own pages (``web.same_origin``).

A triggered run brings the viewer back to the plan's page with the run's notice.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from ..pipeline.ports import PublishingStore
from . import dag_ids
from .guard import NONE, OVERRIDE, publish_guard
from .plan_sources import group_rows_of
from .web import (
    LoginRequired,
    airflow_api,
    base_url,
    caller_token,
    detail_text,
    error_response,
    form_fields,
    read_store,
    same_origin,
    start_run,
)

router = APIRouter()

#: (plan id, group, plan, form fields, the group's newest ledger entry) -> the run's parameters,
#: or the answer that refuses it
MakeConf = Callable[[int, str, dict[str, Any], dict[str, str], Any], "dict[str, Any] | Response"]


def replan_conf(group: str, parameters: dict[str, Any] | None) -> dict[str, Any]:
    """A re-plan of one group: the reviewed plan's settings, the group alone, apply off."""
    keep = ("strategies", "threshold", "min_improvement", "max_moves", "groups_file", "auto_offset_reset")
    conf = {k: v for k, v in (parameters or {}).items() if k in keep and v is not None}
    return {**conf, "groups": re.escape(group), "apply": False}


async def _action(request: Request, dag_id: str, make_conf: MakeConf) -> Response:
    """Check the post and its plan, make the run's parameters, trigger it, and go back to the
    plan's page with the run's notice."""
    if not same_origin(request):
        return error_response(request, 403, "actions are accepted only from the plans pages of this server")
    form = await form_fields(request)
    try:
        plan_id = int(form.get("plan_id", ""))
    except ValueError:
        return error_response(request, 400, "plan_id must be a plan number")
    group = form.get("group") or ""
    if not group:
        return error_response(request, 400, "group is required")

    def query(store: PublishingStore) -> tuple[dict[str, Any], dict[str, Any]]:
        plan = store.get_plan(plan_id)
        return plan, store.ledger_state([group], plan.get("cluster"))

    checked = read_store(request, query, plan_id)
    if isinstance(checked, Response):
        return checked
    plan, ledger = checked
    conf = make_conf(plan_id, group, plan, form, (ledger.get(group) or (None, 0))[0])
    if isinstance(conf, Response):
        return conf
    run_id = await start_run(request, dag_id, conf)
    if isinstance(run_id, Response):
        return run_id
    notice = urlencode({"dag": dag_id, "run": run_id}) if run_id else ""
    return RedirectResponse(f"../plans/{plan_id}" + (f"?{notice}" if notice else ""), status_code=303)


def publish_conf(
    request: Request, plan_id: int, group: str, plan: dict[str, Any], form: dict[str, str], newest: Any
) -> dict[str, Any] | Response:
    """The review run's parameters, once the publish guard allows it: refused when publishing
    could only fail or change nothing, and an override needs its confirmation ticked."""
    found = next((g for g in plan["groups"] if g["group"] == group), None)
    if found is None:
        return error_response(request, 404, f"plan {plan_id} has no group {group!r}")
    rows = group_rows_of(plan.get("snapshot_uri"), {group}).get(group) or {}
    guard = publish_guard(plan, found, rows.get("kind"), newest, rows.get("plan_version"))
    if guard.mode == NONE:
        return error_response(request, 409, f"group {group} of plan {plan_id} is not published: {guard.why}")
    if guard.mode == OVERRIDE and form.get("confirm") != "yes":
        return error_response(
            request, 409, f"{guard.why}; publishing it anyway needs the confirmation on the plan page ticked"
        )
    return {"action": "publish", "plan_id": plan_id, "group": group, "dry_run": form.get("dry_run") == "true"}


def rollback_conf(
    request: Request, group: str, form: dict[str, str], newest: Any
) -> dict[str, Any] | Response:
    """The review run's parameters for a rollback: a published version number, the confirmation
    ticked, and no version of the group being published now."""
    version = form.get("version", "")
    if not version.isdigit():
        return error_response(request, 400, "version must be a published version number")
    if form.get("confirm") != "yes":
        return error_response(request, 409, "rolling back needs the confirmation on the history page ticked")
    if newest is not None and newest.get("state") == "pending":
        return error_response(
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


@router.post("/actions/publish")
async def publish_action(request: Request) -> Response:
    """Publish one group of a reviewed plan: a ``lagassign_review`` run with its parameters."""
    return await _action(
        request,
        dag_ids.REVIEW,
        lambda plan_id, group, plan, form, newest: publish_conf(request, plan_id, group, plan, form, newest),
    )


@router.post("/actions/rollback")
async def rollback_action(request: Request) -> Response:
    """Roll a group back to a version published before: a ``lagassign_review`` run, once the
    confirmation (which shows the diff against the version in force) is ticked."""
    return await _action(
        request,
        dag_ids.REVIEW,
        lambda _plan_id, group, _plan, form, newest: rollback_conf(request, group, form, newest),
    )


@router.post("/actions/replan")
async def replan_action(request: Request) -> Response:
    """Re-plan one group now, apply off: a ``lagassign_rebalance`` run with the plan's settings."""
    return await _action(
        request,
        dag_ids.REBALANCE,
        lambda _id, group, plan, _form, _newest: replan_conf(group, plan.get("parameters")),
    )


@router.post("/actions/unpause")
async def unpause_action(request: Request) -> Response:
    """Unpause one of lagassign's DAGs (as the caller: Airflow decides whether they may), then
    back to the page the button was on."""
    if not same_origin(request):
        return error_response(request, 403, "actions are accepted only from the plans pages of this server")
    dag_id = (await form_fields(request)).get("dag_id", "")
    if dag_id not in dag_ids.PLANNING:
        return error_response(request, 400, "only lagassign's own DAGs are unpaused from these pages")
    token = caller_token(request)
    if not token:
        raise LoginRequired("no token")
    status, answer = await asyncio.to_thread(
        airflow_api, base_url(request), token, "PATCH", f"dags/{quote(dag_id, safe='')}", {"is_paused": False}
    )
    if status >= 300:
        return error_response(
            request, 409 if status < 500 else 502, f"Airflow did not unpause {dag_id}: {detail_text(answer)}"
        )
    back = request.headers.get("referer") or ""
    target = urlsplit(back)
    if target.netloc == request.url.netloc and target.path.startswith("/lagassign/"):
        return RedirectResponse(target.path + (f"?{target.query}" if target.query else ""), status_code=303)
    return RedirectResponse("../plans", status_code=303)
