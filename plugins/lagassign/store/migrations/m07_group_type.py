"""Migration 7: group type and assignor per plan group (plan_groups.group_type, assignor).

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

import sqlalchemy as sa


def apply(conn: sa.Connection) -> None:
    """What the cluster runs per group, from the snapshot: its type (``classic`` | ``consumer``)
    and assignor; nullable, so groups recorded before (and groups from case files) say nothing."""
    conn.execute(sa.text("ALTER TABLE plan_groups ADD COLUMN group_type VARCHAR"))
    conn.execute(sa.text("ALTER TABLE plan_groups ADD COLUMN assignor VARCHAR"))
