"""The note on each lagassign DAG run: its plan (a link to the plan's page) and what it did.

Airflow runs this listener in the scheduler when a run ends (success or failure): the note is
read in the grid and the run's details, in Markdown, e.g. ``[plan 12](/lagassign/plans/12):
published v3: orders``, so every run links to its plan and says the same outcome badges as
the pages. Tasks cannot set a run's note themselves in Airflow 3 (the task API has no such
call), which is why it is done here. A note someone wrote by hand is left alone; a failure
here is logged and never touches the run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from airflow.listeners import hookimpl

log = logging.getLogger("lagassign")

DAG_IDS = ("lagassign_rebalance", "lagassign_daily", "lagassign_review", "lagassign_failover")
MAX_NOTE = 1000  # Airflow's dag_run_note.content is String(1000)


def run_note(plans: Iterable[Mapping[str, Any]], prefix: str = "/lagassign/plans/") -> str | None:
    """The note of a run that recorded ``plans`` (one, or one per group for failover): per plan
    a link and its outcomes; None when the run recorded no plan."""
    from ..core.outcome import outcome_of, summary

    lines = []
    for plan in plans:
        outcomes = [(g["group"], outcome_of(plan, g)) for g in plan.get("groups") or ()]
        text = summary(outcomes) if outcomes else f"{plan.get('status')}: {plan.get('error') or 'no group'}"
        lines.append(f"[plan {plan['id']}]({prefix}{plan['id']}): {text}")
    if not lines:
        return None
    note = "\n\n".join(lines)
    return note if len(note) <= MAX_NOTE else note[: MAX_NOTE - 1] + "…"


def plans_of(store: Any, dag_id: str, run_id: str) -> list[dict[str, Any]]:
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


def _write_note(dag_run: Any) -> None:
    if getattr(dag_run, "dag_id", None) not in DAG_IDS:
        return
    try:
        current = dag_run.note
        if current and not str(current).startswith("[plan "):
            return  # someone's own note
        from .hooks import open_store

        with open_store(create=False) as store:
            note = run_note(plans_of(store, dag_run.dag_id, dag_run.run_id))
        if note and note != current:
            dag_run.note = note
    except Exception:
        log.warning(
            "lagassign: could not write the note of run %s", getattr(dag_run, "run_id", "?"), exc_info=True
        )


@hookimpl
def on_dag_run_success(dag_run: Any, msg: str) -> None:
    _write_note(dag_run)


@hookimpl
def on_dag_run_failed(dag_run: Any, msg: str) -> None:
    _write_note(dag_run)
