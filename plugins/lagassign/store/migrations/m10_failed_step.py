"""Migration 10: the step a plan failed at (plans.failed_step).

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa


def apply(conn: sa.Connection) -> None:
    """The step a plan failed at as data of its own: ``plans.failed_step`` (null: none recorded).

    Plans recorded before said it only in their error text ("step snapshot failed: ..."); it is
    read from that text once, here, by the rule the plans page used (``step_of``)."""
    conn.execute(sa.text("ALTER TABLE plans ADD COLUMN failed_step VARCHAR"))
    rows = conn.execute(sa.text("SELECT id, error FROM plans WHERE error LIKE 'step %'")).all()
    for plan_id, error in rows:
        step = step_of(error)
        if step is not None:
            conn.execute(
                sa.text("UPDATE plans SET failed_step = :step WHERE id = :id"), {"step": step, "id": plan_id}
            )


def step_of(error: Any) -> str | None:
    """NAME when ``error`` begins "step NAME failed" (NAME: letters, digits, underscores), else None."""
    head, _, rest = str(error or "").partition(" ")
    name, space, tail = rest.partition(" ")
    named = bool(name) and all(c.isalnum() or c == "_" for c in name)
    return name if head == "step" and named and space and tail.startswith("failed") else None
