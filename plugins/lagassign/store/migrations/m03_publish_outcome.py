"""Migration 3: what the publish step did per group (decisions.outcome).

Frozen: it says what the schema became then. Never edit it; append a new migration."""

from __future__ import annotations

import sqlalchemy as sa


def apply(conn: sa.Connection) -> None:
    """What the publish step did per group (published vN, unchanged, skipped and why, apply off)."""
    conn.execute(sa.text("ALTER TABLE decisions ADD COLUMN outcome TEXT"))
