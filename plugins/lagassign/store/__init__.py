"""The audit trail of lagassign plans and the ledger of what reached the plans topic.

SQLAlchemy Core with bound parameters; a SQLite file by default, PostgreSQL by URL. The URL:
the ``url`` argument, else the Airflow connection ``lagassign_db`` (inside Airflow, see
``workflow.hooks``), else ``$LAGASSIGN_DB_URL``, else ``sqlite:///$AIRFLOW_HOME/lagassign.db``.
Times are stored and returned as UTC (naive datetimes passed in are taken as UTC).

Rooms: ``columns`` (UTC datetimes, JSON), ``schema`` (the tables queries use), ``migrations``
(the frozen migrations, one module each, and their runner), ``connection`` (URL and engine),
``base`` (opening, finding a plan); ``audit`` (the audit trail: ``plans`` and ``clusters`` write
plans, ``plan_reads`` and ``group_history`` read them, ``evaluations`` records evaluations,
decisions and outcomes), ``ledger`` (publications), ``offsets`` (end offsets over time),
``health`` (groups' observations, statuses and alerts between runs); ``AuditStore`` is all of
them.
"""

from __future__ import annotations

from .audit import DEFAULT_LIST_LIMIT, AuditTrail
from .connection import resolve_url
from .errors import (
    PlanNotFoundError,
    StalePlanError,
    StoreError,
    StoreNotFoundError,
    VersionConflictError,
)
from .health import HealthStore
from .ledger import Ledger
from .migrations import LATEST_VERSION, MIGRATIONS, migrate
from .offsets import OffsetHistory
from .schema import ACTIVE_STATES, FINAL_STATUSES, PUBLICATION_STATES, TRIGGERS, metadata


class AuditStore(AuditTrail, Ledger, OffsetHistory, HealthStore):
    """The audit store: the trail of plans, the ledger of publications and the history of end
    offsets (inflow, lag in seconds), and groups' health between runs, on one database.

    Every method returns plain dicts (datetimes in UTC). Use it as a context manager (``close()``
    releases the connection pool).
    """


__all__ = [
    "ACTIVE_STATES",
    "DEFAULT_LIST_LIMIT",
    "FINAL_STATUSES",
    "LATEST_VERSION",
    "MIGRATIONS",
    "PUBLICATION_STATES",
    "TRIGGERS",
    "AuditStore",
    "PlanNotFoundError",
    "StalePlanError",
    "StoreError",
    "StoreNotFoundError",
    "VersionConflictError",
    "metadata",
    "migrate",
    "resolve_url",
]
