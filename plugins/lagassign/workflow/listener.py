"""The note on each lagassign DAG run: its plan (a link to the plan's page) and what it did.

Airflow calls this listener in the scheduler when a run ends (success or failure); it writes the
note from a thread of its own, in its own session, a moment later (the run object it is handed
may be detached, and the scheduler's transaction must not wait on it). The note is
read in the grid and the run's details, in Markdown, e.g. ``[plan 12](/lagassign/plans/12):
published v3: orders``, so every run links to its plan and says the same outcome badges as
the pages. Tasks cannot set a run's note themselves in Airflow 3 (the task API has no such
call), which is why it is done here. A note someone wrote by hand is left alone; a failure
here is logged and never touches the run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from airflow.listeners import hookimpl

from ..core.outcome import outcome_of, summary
from ..pipeline.ports import AuditTrailPort
from . import dag_ids
from .hooks import open_store

log = logging.getLogger("lagassign")

MAX_NOTE = 1000  # Airflow's dag_run_note.content is String(1000)


def run_note(plans: Iterable[Mapping[str, Any]], prefix: str = "/lagassign/plans/") -> str | None:
    """The note of a run that recorded ``plans`` (one, or one per group for failover): per plan
    a link and its outcomes; None when the run recorded no plan."""
    lines = []
    for plan in plans:
        outcomes = [(g["group"], outcome_of(plan, g)) for g in plan.get("groups") or ()]
        text = summary(outcomes) if outcomes else f"{plan.get('status')}: {plan.get('error') or 'no group'}"
        lines.append(f"[plan {plan['id']}]({prefix}{plan['id']}): {text}")
    if not lines:
        return None
    note = "\n\n".join(lines)
    return note if len(note) <= MAX_NOTE else note[: MAX_NOTE - 1] + "…"


def plans_of(store: AuditTrailPort, dag_id: str, run_id: str) -> list[dict[str, Any]]:
    """The plans a run recorded: its own run id, or ``run_id:group`` (failover, one per group)."""
    recent = store.list_plans(limit=500)
    ids = [
        p["id"]
        for p in recent
        if p.get("dag_id") == dag_id
        and (p.get("run_id") == run_id or str(p.get("run_id")).startswith(f"{run_id}:"))
    ]
    details = store.plan_details(ids)
    return [details[i] for i in sorted(ids) if i in details]


def _identity(dag_run: Any) -> tuple[str, str] | None:
    """The run's (dag id, run id) from what the object already holds: the scheduler may hand a
    detached instance, on which loading any attribute raises."""
    loaded = getattr(dag_run, "__dict__", {})
    dag_id, run_id = loaded.get("dag_id"), loaded.get("run_id")
    return (str(dag_id), str(run_id)) if dag_id and run_id else None


def write_note(dag_id: str, run_id: str, delay: float = 2.0) -> None:
    """Set the run's note in a session of its own, once the scheduler has committed the run's
    new state (``delay``); a note someone wrote by hand is kept."""
    time.sleep(delay)
    try:
        from airflow.models.dagrun import DagRun
        from airflow.utils.session import create_session
        from sqlalchemy import select

        with open_store(create=False) as store:
            note = run_note(plans_of(store, dag_id, run_id))
        if not note:
            return
        with create_session() as session:
            run = session.scalar(select(DagRun).where(DagRun.dag_id == dag_id, DagRun.run_id == run_id))
            if run is None or (run.note and not str(run.note).startswith("[plan ")):
                return
            if run.note != note:
                run.note = note
    except Exception:
        log.warning("lagassign: could not write the note of run %s of %s", run_id, dag_id, exc_info=True)


def _note_later(dag_run: Any) -> None:
    """Write the note from a thread: never in the scheduler's own transaction (whose rows it
    would wait for) and never failing the caller."""
    try:
        found = _identity(dag_run)
        if found is None or found[0] not in dag_ids.PLANNING:
            return
        threading.Thread(target=write_note, args=found, name="lagassign-run-note", daemon=True).start()
    except Exception:
        log.warning("lagassign: could not start writing a run's note", exc_info=True)


@hookimpl
def on_dag_run_success(dag_run: Any, msg: str) -> None:
    _note_later(dag_run)


@hookimpl
def on_dag_run_failed(dag_run: Any, msg: str) -> None:
    _note_later(dag_run)
