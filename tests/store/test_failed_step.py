"""The step a plan failed at, recorded as data (``plans.failed_step``) on SQLite and PostgreSQL,
and read once from the error text of plans recorded before migration 10."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st
from lagassign.store import LATEST_VERSION, AuditStore, StoreError, migrate
from lagassign.store.migrations.m10_failed_step import step_of

#: Errors as plans recorded them before migration 10, and the step the plans page read from each.
OLD_ERRORS = {
    "step snapshot failed: cannot read groups file /etc/groups.yaml: No such file or directory": "snapshot",
    "step evaluate failed: the Spark job ended with an error (its task log says why)": "evaluate",
    "step gate failed (its task log says why); nothing published after it": "gate",
    "step publish failed: version 3 of orders is pending": "publish",
    "step start failed: threshold must be a number ≥ 1.0 (max/mean member lag), got 0.5": "start",
    "broker down": None,  # a failover plan's error names no step
    "Step gate failed: capitalised, as no writer ever wrote it": None,
    "step two words failed: not a step name": None,
}


def test_a_failed_plan_keeps_its_error_text_and_its_step(store: AuditStore) -> None:
    failed = store.start_plan("manual", "alice")
    error = "step snapshot failed: cannot read groups file x.yaml: No such file or directory"
    store.finish_plan(failed, "failed", error=error, failed_step="snapshot")
    ok = store.start_plan("scheduled")
    store.finish_plan(ok, "succeeded")
    plan = store.get_plan(failed)
    assert (plan["status"], plan["error"], plan["failed_step"]) == ("failed", error, "snapshot")
    assert store.get_plan(ok)["failed_step"] is None
    assert {p["id"]: p["failed_step"] for p in store.list_plans()} == {failed: "snapshot", ok: None}
    assert store.plan_details([failed])[failed]["failed_step"] == "snapshot"


def test_a_step_noted_while_running_is_kept_when_the_plan_finishes(store: AuditStore) -> None:
    plan_id = store.start_plan("manual")
    store.note_failure(plan_id, "step record failed: no evaluations", failed_step="record")
    assert store.get_plan(plan_id)["failed_step"] == "record"
    store.finish_plan(plan_id, "failed", error="step record failed: no evaluations")
    plan = store.get_plan(plan_id)
    assert (plan["status"], plan["failed_step"]) == ("failed", "record")


def test_a_failed_step_belongs_to_a_failed_plan_and_is_a_name(store: AuditStore) -> None:
    plan_id = store.start_plan("manual")
    with pytest.raises(StoreError, match="only a failed plan has a failed step"):
        store.finish_plan(plan_id, "succeeded", failed_step="publish")
    with pytest.raises(StoreError, match="a failed step is a step's name"):
        store.finish_plan(plan_id, "failed", error="x", failed_step=" ")
    assert store.get_plan(plan_id)["status"] == "running"


def test_plans_recorded_before_migration_10_get_their_step_from_their_error(db_url: str) -> None:
    engine = sa.create_engine(db_url)
    try:
        assert migrate(engine, target=9) == 9
        with engine.begin() as conn:
            for plan_id, error in enumerate([*OLD_ERRORS, None], start=1):
                conn.execute(
                    sa.text(
                        'INSERT INTO plans (id, created_at, status, "trigger", error) '
                        "VALUES (:id, :t, :status, 'scheduled', :error)"
                    ),
                    {
                        "id": plan_id,
                        "t": datetime(2026, 1, 2, 3, 4, plan_id),
                        "status": "succeeded" if error is None else "failed",
                        "error": error,
                    },
                )
    finally:
        engine.dispose()
    with AuditStore(db_url) as store:
        assert store.schema_version == LATEST_VERSION >= 10
        found = {p["error"]: p["failed_step"] for p in store.list_plans()}
    assert found == {**OLD_ERRORS, None: None}  # the error texts themselves unchanged


@given(
    st.text(alphabet="step failed:_xé²- ", max_size=30)
    | st.builds(lambda name, rest: f"step {name} failed{rest}", st.text(max_size=8), st.text(max_size=8))
)
def test_migration_10_reads_a_step_as_the_plans_page_did(error: str) -> None:
    """The regular expression here is the plans page's old reading, kept as this test's oracle."""
    old = re.match(r"step (\w+) failed", error)
    assert step_of(error) == (old.group(1) if old else None)
