"""Recording a plan run: its start, snapshot, failure and end (the ``plans`` table's writes).

``parameters``: callers pass them already redacted (Kafka settings live in an Airflow
connection, never in plan parameters); as a safety net, values under secret-looking keys are
masked before they are stored (``core.secrets``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from ..core.clock import utc_now
from ..core.secrets import redact_tree
from .base import StoreBase
from .clusters import checked_cluster
from .errors import StoreError
from .schema import FINAL_STATUSES, MAX_ERROR_CHARS, TRIGGERS, plans_t


class PlanRecords(StoreBase):
    """A plan's row from its start to its end."""

    def start_plan(
        self,
        trigger: str,
        triggered_by: str | None = None,
        dag_id: str | None = None,
        run_id: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        snapshot_uri: str | None = None,
        snapshot_at: datetime | None = None,
        created_at: datetime | None = None,
        cluster: str | None = None,
    ) -> int:
        """Record a new plan (status ``running``) and return its id.

        Idempotent per DAG run: with ``dag_id`` and ``run_id`` given, a retried task gets the
        plan already recorded for that run. ``parameters`` must be JSON-serialisable and
        redacted by the caller (see the module docstring). ``cluster``: the key of the Kafka
        cluster the plan is for (``core.clusters``), when known at start; else set later by
        ``set_snapshot`` or ``set_cluster`` (until then it is unknown, '').
        """
        if trigger not in TRIGGERS:
            raise StoreError(f"trigger must be one of {', '.join(TRIGGERS)}, got {trigger!r}")
        row = {
            "created_at": created_at or utc_now(),
            "status": "running",
            "trigger": trigger,
            "triggered_by": triggered_by,
            "dag_id": dag_id,
            "run_id": run_id,
            "parameters": _clean_parameters(parameters),
            "snapshot_uri": snapshot_uri,
            "snapshot_at": snapshot_at,
            "cluster": checked_cluster(cluster),
        }
        run = (dag_id, run_id) if dag_id is not None and run_id is not None else None
        with self._engine.begin() as conn:
            if run and (existing := self._plan_by_run(conn, *run)) is not None:
                return existing
            try:
                with conn.begin_nested():
                    key = conn.execute(sa.insert(plans_t).values(**row)).inserted_primary_key
                    assert key is not None
                    return int(key[0])
            except sa.exc.IntegrityError:
                if run and (existing := self._plan_by_run(conn, *run)) is not None:
                    return existing
                raise

    def set_snapshot(
        self,
        plan_id: int,
        snapshot_uri: str | None,
        snapshot_at: datetime | None,
        cluster: str | None = None,
    ) -> None:
        """Where the plan's snapshot lies and when it was taken (when known only after start),
        and, when given, the cluster it was taken from."""
        more = {} if cluster is None else {"cluster": checked_cluster(cluster)}
        self._update_plan(plan_id, snapshot_uri=snapshot_uri, snapshot_at=snapshot_at, **more)

    def finish_plan(
        self,
        plan_id: int,
        status: str,
        error: str | None = None,
        finished_at: datetime | None = None,
        failed_step: str | None = None,
    ) -> None:
        """Close the plan as ``succeeded`` or ``failed`` (with the error, one line or more, and
        the step it failed at, ``failed_step``, when known: None keeps what was noted before)."""
        if status not in FINAL_STATUSES:
            raise StoreError(f"status must be one of {', '.join(FINAL_STATUSES)}, got {status!r}")
        if failed_step is not None and status != "failed":
            raise StoreError(f"plan {plan_id}: only a failed plan has a failed step, not a {status} one")
        step = {} if failed_step is None else {"failed_step": _checked_step(failed_step)}
        self._update_plan(
            plan_id,
            status=status,
            finished_at=finished_at or utc_now(),
            error=None if error is None else str(error)[:MAX_ERROR_CHARS],
            **step,
        )

    def note_failure(self, plan_id: int, error: str, failed_step: str | None = None) -> None:
        """Why a step of a running plan failed, and which (``failed_step``): the finish step
        keeps them as the plan's error and failed step."""
        step = {} if failed_step is None else {"failed_step": _checked_step(failed_step)}
        self._update_plan(plan_id, error=str(error)[:MAX_ERROR_CHARS], **step)


def _checked_step(step: str) -> str:
    """A step name to store (the task that failed: ``snapshot``, ``publish``, ...)."""
    if not isinstance(step, str) or not step.strip():
        raise StoreError(f"a failed step is a step's name, got {step!r}")
    return step.strip()


def _clean_parameters(parameters: Mapping[str, Any] | None) -> Any:
    if parameters is None:
        return None
    try:
        plain = json.loads(json.dumps(parameters, default=str))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"plan parameters must be JSON-serialisable: {exc}") from None
    return redact_tree(plain)
