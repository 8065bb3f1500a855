"""What every part of the audit store shares: opening the database (migrated) and finding a plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

import sqlalchemy as sa

from .connection import first_line, make_engine, resolve_url, safe_url
from .errors import PlanNotFoundError, StoreError, StoreNotFoundError
from .migrations import migrate
from .schema import plans_t


class StoreBase:
    """An open audit store (``create=False`` opens an existing one only: read-only commands
    should not leave an empty database behind; an older schema is still migrated)."""

    def __init__(self, url: str | None = None, create: bool = True) -> None:
        self.url = resolve_url(url)
        try:
            parsed = sa.make_url(self.url)
        except sa.exc.ArgumentError:
            raise StoreError("the audit store URL is not a valid database URL") from None
        self.safe_url = safe_url(parsed)
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            path = Path(parsed.database).expanduser()
            if not path.exists():
                if not create:
                    raise StoreNotFoundError(
                        f"no lagassign audit store at {path} (set LAGASSIGN_DB_URL, or run a plan first)"
                    )
                path.parent.mkdir(parents=True, exist_ok=True)
        self._engine = make_engine(parsed)
        try:
            self.schema_version = migrate(self._engine, create=create)
        except sa.exc.DBAPIError as exc:
            self._engine.dispose()
            raise StoreError(f"cannot open audit store {self.safe_url}: {first_line(exc.orig)}") from None
        except BaseException:
            self._engine.dispose()
            raise

    @property
    def dialect(self) -> str:
        return self._engine.dialect.name

    def close(self) -> None:
        """Release the connection pool."""
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plans -------------------------------------------------------------------------------

    def _plan_by_run(self, conn: sa.Connection, dag_id: str, run_id: str) -> int | None:
        return conn.execute(
            sa.select(plans_t.c.id).where(plans_t.c.dag_id == dag_id, plans_t.c.run_id == run_id)
        ).scalar()

    def _plan_row(self, conn: sa.Connection, plan_id: int) -> dict[str, Any]:
        if isinstance(plan_id, bool) or not isinstance(plan_id, int):
            raise PlanNotFoundError(f"no plan {plan_id!r}: plan ids are whole numbers")
        row = conn.execute(sa.select(plans_t).where(plans_t.c.id == plan_id)).first()
        if row is None:
            raise PlanNotFoundError(f"no plan {plan_id} in the audit store {self.safe_url}")
        return dict(row._mapping)

    def _update_plan(self, plan_id: int, **values: Any) -> None:
        with self._engine.begin() as conn:
            self._plan_row(conn, plan_id)
            conn.execute(sa.update(plans_t).where(plans_t.c.id == plan_id).values(**values))
