"""The audit trail of lagassign plans: SQLAlchemy Core, a SQLite file by default, PostgreSQL by URL.

What a plan run leaves behind, so that anyone can later tell what was decided and why:

* ``plans``: one row per run: time, DAG run, trigger (scheduled | manual) and by whom, the
  parameters, where the snapshot lies and when it was taken, status and error.
* ``plan_groups``: per plan and group: the evaluation's summary (members, partitions, lower
  bound on max lag, best strategy) or why the group could not be evaluated.
* ``evaluations``: per plan, group and strategy: metrics and assignment, or the refusal.
* ``decisions``: per plan and group: the gate's decision (go or not), its reason and numbers.
* ``publications``: the ledger of published plans, per group: version (only grows), state
  pending -> published | failed, the assignment, the snapshot time and when it was published.
  A publication is recorded *pending* before anything is written to Kafka, so a run that died
  between publishing and marking can be found (``pending_publications``) and reconciled.

URL: the ``url`` argument, else ``$LAGASSIGN_DB_URL``, else ``sqlite:///$AIRFLOW_HOME/lagassign.db``
(``AIRFLOW_HOME`` defaults to ``~/airflow``). All SQL goes through SQLAlchemy Core with bound
parameters. Times are stored and returned as UTC (naive datetimes passed in are taken as UTC).

Secrets: callers pass parameters already redacted (Kafka settings live in an Airflow
connection, never in plan parameters). As a safety net, values under keys that look like
secrets (password, secret, token, credential, JAAS config, private/API key) are replaced by
``***`` before they are stored.

Migrations: ``schema_version`` records every applied migration; ``MIGRATIONS`` is an ordered
list of functions applied at open, in one transaction (serialised between processes by an
advisory lock on PostgreSQL and ``BEGIN IMMEDIATE`` on SQLite). Each migration holds its own
frozen DDL; the lean table objects below are only what queries need.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from .errors import LagassignError

TRIGGERS = ("scheduled", "manual")
FINAL_STATUSES = ("succeeded", "failed")
PUBLICATION_STATES = ("pending", "published", "failed")
ACTIVE_STATES = ("pending", "published")  # a failed publication never reached the topic
DEFAULT_LIST_LIMIT = 50

_SECRET_KEY = re.compile(r"pass(word|wd)?|secret|token|credential|jaas|private[._-]?key|api[._-]?key", re.I)
_REDACTED = "***"
_PG_LOCK_CLASS = 0x1A6A  # first key of PostgreSQL advisory locks taken by lagassign
_PG_MIGRATION_LOCK = 1
_MAX_ERROR_CHARS = 10_000


class StoreError(LagassignError):
    """The audit store cannot be opened, or a write would break one of its rules."""


class StoreNotFoundError(StoreError):
    """No audit store exists at the URL (and the caller asked not to create one)."""


class PlanNotFoundError(StoreError):
    """No plan with that id."""


class StalePlanError(StoreError):
    """The plan was computed from a snapshot older than the group's last publication."""


# --------------------------------------------------------------------------------------------
# Types


class UTCDateTime(sa.types.TypeDecorator):
    """Timezone-aware UTC datetimes on every back end (SQLite stores naive UTC text)."""

    impl = sa.DateTime
    cache_ok = True

    def __init__(self) -> None:
        super().__init__(timezone=True)

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        value = _utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _json() -> sa.JSON:
    return sa.JSON(none_as_null=True)


# --------------------------------------------------------------------------------------------
# Runtime tables: what queries need (types drive conversion); the DDL lives in the migrations.

metadata = sa.MetaData()

schema_version_t = sa.Table(
    "schema_version", metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.String, nullable=False),
    sa.Column("applied_at", UTCDateTime, nullable=False),
)
plans_t = sa.Table(
    "plans", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("created_at", UTCDateTime),
    sa.Column("finished_at", UTCDateTime),
    sa.Column("status", sa.String),
    sa.Column("error", sa.Text),
    sa.Column("trigger", sa.String),
    sa.Column("triggered_by", sa.String),
    sa.Column("dag_id", sa.String),
    sa.Column("run_id", sa.String),
    sa.Column("parameters", _json()),
    sa.Column("snapshot_uri", sa.Text),
    sa.Column("snapshot_at", UTCDateTime),
)
plan_groups_t = sa.Table(
    "plan_groups", metadata,
    sa.Column("plan_id", sa.Integer, primary_key=True),
    sa.Column("group_name", sa.String, primary_key=True),
    sa.Column("members", sa.Integer),
    sa.Column("partitions", sa.Integer),
    sa.Column("lower_bound_max_lag", sa.BigInteger),
    sa.Column("best", sa.String),
    sa.Column("error", sa.Text),
)
evaluations_t = sa.Table(
    "evaluations", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("plan_id", sa.Integer),
    sa.Column("group_name", sa.String),
    sa.Column("position", sa.Integer),
    sa.Column("strategy", sa.String),
    sa.Column("refused", sa.Text),
    sa.Column("max_lag", sa.BigInteger),
    sa.Column("imbalance", sa.Float),
    sa.Column("moves", sa.Integer),
    sa.Column("metrics", _json()),
    sa.Column("assignment", _json()),
    sa.Column("withheld", _json()),
    sa.Column("unassigned", _json()),
)
decisions_t = sa.Table(
    "decisions", metadata,
    sa.Column("plan_id", sa.Integer, primary_key=True),
    sa.Column("group_name", sa.String, primary_key=True),
    sa.Column("go", sa.Boolean),
    sa.Column("reason", sa.Text),
    sa.Column("chosen", sa.String),
    sa.Column("candidate", sa.String),
    sa.Column("current_max_lag", sa.BigInteger),
    sa.Column("current_imbalance", sa.Float),
    sa.Column("chosen_max_lag", sa.BigInteger),
    sa.Column("improvement", sa.Float),
    sa.Column("moves", sa.Integer),
    sa.Column("unconsumed", sa.Integer),
    sa.Column("threshold", sa.Float),
    sa.Column("min_improvement", sa.Float),
    sa.Column("max_moves", sa.Integer),
    sa.Column("decided_at", UTCDateTime),
    sa.Column("outcome", sa.Text),
)
publications_t = sa.Table(
    "publications", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("plan_id", sa.Integer),
    sa.Column("group_name", sa.String),
    sa.Column("version", sa.Integer),
    sa.Column("strategy", sa.String),
    sa.Column("state", sa.String),
    sa.Column("forced", sa.Boolean),
    sa.Column("assignment", _json()),
    sa.Column("snapshot_at", UTCDateTime),
    sa.Column("created_at", UTCDateTime),
    sa.Column("published_at", UTCDateTime),
    sa.Column("error", sa.Text),
)

_DECISION_FIELDS = (
    "go", "reason", "chosen", "candidate", "current_max_lag", "current_imbalance", "chosen_max_lag",
    "improvement", "moves", "unconsumed", "threshold", "min_improvement", "max_moves",
)


# --------------------------------------------------------------------------------------------
# Migrations: frozen DDL, in order. Never edit one that has shipped; append a new one.


def _m1_audit_trail(conn: sa.Connection) -> None:
    """Plans, their groups' evaluations and the gate's decisions."""
    md = sa.MetaData()
    sa.Table(
        "plans", md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("triggered_by", sa.String),
        sa.Column("dag_id", sa.String),
        sa.Column("run_id", sa.String),
        sa.Column("parameters", _json()),
        sa.Column("snapshot_uri", sa.Text),
        sa.Column("snapshot_at", UTCDateTime),
        sa.UniqueConstraint("dag_id", "run_id", name="uq_plans_dag_run"),
        sa.CheckConstraint("status IN ('running', 'succeeded', 'failed')", name="ck_plans_status"),
        sa.CheckConstraint("\"trigger\" IN ('scheduled', 'manual')", name="ck_plans_trigger"),
        sa.Index("ix_plans_created_at", "created_at"),
    )
    sa.Table(
        "plan_groups", md,
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("group_name", sa.String, primary_key=True),
        sa.Column("members", sa.Integer),
        sa.Column("partitions", sa.Integer),
        sa.Column("lower_bound_max_lag", sa.BigInteger),
        sa.Column("best", sa.String),
        sa.Column("error", sa.Text),
        sa.Index("ix_plan_groups_group", "group_name"),
    )
    sa.Table(
        "evaluations", md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id", ondelete="CASCADE"), nullable=False),
        sa.Column("group_name", sa.String, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("strategy", sa.String, nullable=False),
        sa.Column("refused", sa.Text),
        sa.Column("max_lag", sa.BigInteger),
        sa.Column("imbalance", sa.Float),
        sa.Column("moves", sa.Integer),
        sa.Column("metrics", _json()),
        sa.Column("assignment", _json()),
        sa.Column("withheld", _json()),
        sa.Column("unassigned", _json()),
        sa.UniqueConstraint("plan_id", "group_name", "strategy", name="uq_evaluations_plan_group_strategy"),
    )
    sa.Table(
        "decisions", md,
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("group_name", sa.String, primary_key=True),
        sa.Column("go", sa.Boolean, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("chosen", sa.String),
        sa.Column("candidate", sa.String),
        sa.Column("current_max_lag", sa.BigInteger),
        sa.Column("current_imbalance", sa.Float),
        sa.Column("chosen_max_lag", sa.BigInteger),
        sa.Column("improvement", sa.Float),
        sa.Column("moves", sa.Integer),
        sa.Column("unconsumed", sa.Integer),
        sa.Column("threshold", sa.Float),
        sa.Column("min_improvement", sa.Float),
        sa.Column("max_moves", sa.Integer),
        sa.Column("decided_at", UTCDateTime, nullable=False),
        sa.Index("ix_decisions_group", "group_name"),
    )
    md.create_all(conn)


def _m2_publication_ledger(conn: sa.Connection) -> None:
    """Publications per group: monotonic versions, pending -> published | failed, snapshot time."""
    md = sa.MetaData()
    sa.Table("plans", md, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table(
        "publications", md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), nullable=False),
        sa.Column("group_name", sa.String, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("strategy", sa.String, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("forced", sa.Boolean, nullable=False),
        sa.Column("assignment", _json(), nullable=False),
        sa.Column("snapshot_at", UTCDateTime, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("published_at", UTCDateTime),
        sa.Column("error", sa.Text),
        sa.UniqueConstraint("group_name", "version", name="uq_publications_group_version"),
        sa.CheckConstraint("state IN ('pending', 'published', 'failed')", name="ck_publications_state"),
        sa.CheckConstraint("version > 0", name="ck_publications_version"),
        sa.Index("ix_publications_state", "state", "group_name"),
        sa.Index("ix_publications_plan", "plan_id"),
    )
    md.tables["publications"].create(conn)


def _m3_publish_outcome(conn: sa.Connection) -> None:
    """What the publish step did per group (published vN, unchanged, skipped and why, apply off)."""
    conn.execute(sa.text("ALTER TABLE decisions ADD COLUMN outcome TEXT"))


Migration = tuple[int, str, Callable[[sa.Connection], None]]
MIGRATIONS: list[Migration] = [
    (1, "audit trail: plans, plan_groups, evaluations, decisions", _m1_audit_trail),
    (2, "publication ledger: publications", _m2_publication_ledger),
    (3, "publish outcome per group: decisions.outcome", _m3_publish_outcome),
]
LATEST_VERSION = MIGRATIONS[-1][0]


def migrate(engine: sa.Engine, create: bool = True, target: int | None = None) -> int:
    """Bring the database to ``target`` (default: the latest) schema version; return the version.

    Idempotent; one transaction; refuses a database newer than this code knows. With
    ``create=False`` a database without lagassign's tables raises StoreNotFoundError.
    """
    target = LATEST_VERSION if target is None else target
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:cls, :key)"),
                         {"cls": _PG_LOCK_CLASS, "key": _PG_MIGRATION_LOCK})
        if not sa.inspect(conn).has_table("schema_version"):
            if not create:
                raise StoreNotFoundError(f"no lagassign audit store at {_safe_url(engine.url)}")
            schema_version_t.create(conn)
        current = conn.execute(sa.select(sa.func.max(schema_version_t.c.version))).scalar() or 0
        if current > LATEST_VERSION:
            raise StoreError(
                f"audit store schema is version {current}, newer than this lagassign knows "
                f"({LATEST_VERSION}): upgrade lagassign"
            )
        for version, description, apply in MIGRATIONS:
            if current < version <= target:
                apply(conn)
                conn.execute(sa.insert(schema_version_t).values(
                    version=version, description=description, applied_at=_now()))
                current = version
    return current


# --------------------------------------------------------------------------------------------
# The store


def resolve_url(url: str | None = None) -> str:
    """The database URL: explicit argument > $LAGASSIGN_DB_URL > SQLite file under AIRFLOW_HOME."""
    if url:
        return url
    env = os.environ.get("LAGASSIGN_DB_URL")
    if env:
        return env
    home = Path(os.environ.get("AIRFLOW_HOME") or "~/airflow").expanduser().absolute()
    return f"sqlite:///{home / 'lagassign.db'}"


class AuditStore:
    """Reads and writes the audit trail. Every method returns plain dicts (datetimes in UTC).

    ``create=False`` opens an existing store only (read-only commands should not leave an
    empty database behind); an older schema is still migrated.
    """

    def __init__(self, url: str | None = None, create: bool = True) -> None:
        self.url = resolve_url(url)
        try:
            parsed = sa.make_url(self.url)
        except sa.exc.ArgumentError:
            raise StoreError("the audit store URL is not a valid database URL") from None
        self.safe_url = _safe_url(parsed)
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            path = Path(parsed.database).expanduser()
            if not path.exists():
                if not create:
                    raise StoreNotFoundError(
                        f"no lagassign audit store at {path} (set LAGASSIGN_DB_URL, or run a plan first)"
                    )
                path.parent.mkdir(parents=True, exist_ok=True)
        self._engine = _make_engine(parsed)
        try:
            self.schema_version = migrate(self._engine, create=create)
        except sa.exc.DBAPIError as exc:
            self._engine.dispose()
            raise StoreError(f"cannot open audit store {self.safe_url}: {_first_line(exc.orig)}") from None
        except BaseException:
            self._engine.dispose()
            raise

    @property
    def dialect(self) -> str:
        return self._engine.dialect.name

    def close(self) -> None:
        """Release the connection pool."""
        self._engine.dispose()

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plans -------------------------------------------------------------------------------

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
    ) -> int:
        """Record a new plan (status ``running``) and return its id.

        Idempotent per DAG run: with ``dag_id`` and ``run_id`` given, a retried task gets the
        plan already recorded for that run. ``parameters`` must be JSON-serialisable and
        redacted by the caller (see the module docstring).
        """
        if trigger not in TRIGGERS:
            raise StoreError(f"trigger must be one of {', '.join(TRIGGERS)}, got {trigger!r}")
        row = {
            "created_at": created_at or _now(), "status": "running", "trigger": trigger,
            "triggered_by": triggered_by, "dag_id": dag_id, "run_id": run_id,
            "parameters": _clean_parameters(parameters), "snapshot_uri": snapshot_uri,
            "snapshot_at": snapshot_at,
        }
        by_run = dag_id is not None and run_id is not None
        with self._engine.begin() as conn:
            if by_run and (existing := self._plan_by_run(conn, dag_id, run_id)) is not None:
                return existing
            try:
                with conn.begin_nested():
                    return int(conn.execute(sa.insert(plans_t).values(**row)).inserted_primary_key[0])
            except sa.exc.IntegrityError:
                if by_run and (existing := self._plan_by_run(conn, dag_id, run_id)) is not None:
                    return existing
                raise

    def set_snapshot(self, plan_id: int, snapshot_uri: str | None, snapshot_at: datetime | None) -> None:
        """Where the plan's snapshot lies and when it was taken (when known only after start)."""
        self._update_plan(plan_id, snapshot_uri=snapshot_uri, snapshot_at=snapshot_at)

    def finish_plan(
        self, plan_id: int, status: str, error: str | None = None, finished_at: datetime | None = None
    ) -> None:
        """Close the plan as ``succeeded`` or ``failed`` (with the error, one line or more)."""
        if status not in FINAL_STATUSES:
            raise StoreError(f"status must be one of {', '.join(FINAL_STATUSES)}, got {status!r}")
        self._update_plan(plan_id, status=status, finished_at=finished_at or _now(),
                          error=None if error is None else str(error)[:_MAX_ERROR_CHARS])

    def list_plans(
        self,
        group: str | None = None,
        since: datetime | date | None = None,
        until: datetime | date | None = None,
        limit: int | None = DEFAULT_LIST_LIMIT,
    ) -> list[dict[str, Any]]:
        """Plans, newest first, with counts of groups, go decisions and publications.

        ``group``: plans that evaluated or decided that group. ``since`` is inclusive; ``until``
        is inclusive of a datetime, and of the whole day for a date.
        """
        p = plans_t
        groups = sa.select(sa.func.count()).where(plan_groups_t.c.plan_id == p.c.id).scalar_subquery()
        goes = (sa.select(sa.func.count())
                .where(decisions_t.c.plan_id == p.c.id, decisions_t.c.go.is_(True)).scalar_subquery())
        published = (sa.select(sa.func.count())
                     .where(publications_t.c.plan_id == p.c.id, publications_t.c.state == "published")
                     .scalar_subquery())
        q = sa.select(p, groups.label("groups"), goes.label("go"), published.label("published"))
        if group is not None:
            q = q.where(p.c.id.in_(sa.union(
                sa.select(plan_groups_t.c.plan_id).where(plan_groups_t.c.group_name == group),
                sa.select(decisions_t.c.plan_id).where(decisions_t.c.group_name == group),
            )))
        if since is not None:
            q = q.where(p.c.created_at >= _start_of(since))
        if isinstance(until, datetime):
            q = q.where(p.c.created_at <= _utc(until))
        elif until is not None:
            q = q.where(p.c.created_at < _end_of(until))
        q = q.order_by(p.c.created_at.desc(), p.c.id.desc())
        if limit is not None:
            q = q.limit(limit)
        with self._engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    def get_plan(self, plan_id: int, evaluations: bool = True) -> dict[str, Any]:
        """One plan with, per group, its evaluation (``evaluate_group``'s shape), decision and
        publications. Unknown id raises PlanNotFoundError. ``evaluations=False`` leaves every
        group's ``results`` empty: a daily plan holds an assignment per group and strategy,
        which a list of plans does not show."""
        with self._engine.connect() as conn:
            plan = self._plan_row(conn, plan_id)
            summaries = {r.group_name: r for r in conn.execute(
                sa.select(plan_groups_t).where(plan_groups_t.c.plan_id == plan_id))}
            results: dict[str, list[dict[str, Any]]] = {}
            rows = conn.execute(sa.select(evaluations_t).where(evaluations_t.c.plan_id == plan_id)
                                .order_by(evaluations_t.c.group_name, evaluations_t.c.position)
                                ) if evaluations else ()
            for r in rows:
                results.setdefault(r.group_name, []).append(_result_of(r))
            decisions = {r.group_name: _decision_of(r) for r in conn.execute(
                sa.select(decisions_t).where(decisions_t.c.plan_id == plan_id))}
            pubs: dict[str, list[dict[str, Any]]] = {}
            for r in conn.execute(sa.select(publications_t).where(publications_t.c.plan_id == plan_id)
                                  .order_by(publications_t.c.version)):
                pubs.setdefault(r.group_name, []).append(_publication_of(r))
        groups = []
        for name in sorted(set(summaries) | set(results) | set(decisions) | set(pubs)):
            s = summaries.get(name)
            groups.append({
                "group": name,
                "members": s.members if s else None,
                "partitions": s.partitions if s else None,
                "best": s.best if s else None,
                "lower_bound_max_lag": s.lower_bound_max_lag if s else None,
                "error": s.error if s else None,
                "results": results.get(name, []),
                "decision": decisions.get(name),
                "publications": pubs.get(name, []),
            })
        return {**plan, "groups": groups}

    # -- evaluations and decisions -----------------------------------------------------------

    def record_evaluations(self, plan_id: int, evaluations: Iterable[Mapping[str, Any]]) -> int:
        """Record groups' evaluations (``evaluate_group``'s output); return how many groups.

        A group that could not be evaluated is passed as ``{"group": name, "error": why}``.
        Re-recording a group for the same plan replaces it (task retries are harmless).
        """
        count = 0
        with self._engine.begin() as conn:
            self._plan_row(conn, plan_id)
            for ev in evaluations:
                name = ev.get("group")
                if not isinstance(name, str):
                    raise StoreError(f"plan {plan_id}: an evaluation lacks its group name")
                results = ev.get("results", [])
                if not isinstance(results, list):
                    raise StoreError(f"plan {plan_id}, group {name}: 'results' must be a list")
                for t in (evaluations_t, plan_groups_t):
                    conn.execute(sa.delete(t).where(t.c.plan_id == plan_id, t.c.group_name == name))
                conn.execute(sa.insert(plan_groups_t).values(
                    plan_id=plan_id, group_name=name, members=ev.get("members"),
                    partitions=ev.get("partitions"), lower_bound_max_lag=ev.get("lower_bound_max_lag"),
                    best=ev.get("best"), error=ev.get("error")))
                rows = [_evaluation_row(plan_id, name, i, r) for i, r in enumerate(results)]
                if rows:
                    conn.execute(sa.insert(evaluations_t), rows)
                count += 1
        return count

    def record_decision(self, plan_id: int, decision: Any) -> None:
        """Record the gate's decision for one group (a GateDecision or its ``to_dict()``)."""
        self.record_decisions(plan_id, [decision])

    def record_decisions(self, plan_id: int, decisions: Iterable[Any]) -> int:
        """Record the gate's decisions, also the ones that stop; re-recording replaces."""
        count = 0
        with self._engine.begin() as conn:
            self._plan_row(conn, plan_id)
            for d in decisions:
                d = d.to_dict() if hasattr(d, "to_dict") else dict(d)
                name, reason = d.get("group"), d.get("reason")
                if not isinstance(name, str) or not isinstance(reason, str) or "go" not in d:
                    raise StoreError(f"plan {plan_id}: a decision needs group, go and reason")
                conn.execute(sa.delete(decisions_t).where(
                    decisions_t.c.plan_id == plan_id, decisions_t.c.group_name == name))
                conn.execute(sa.insert(decisions_t).values(
                    plan_id=plan_id, group_name=name, decided_at=d.get("decided_at") or _now(),
                    **{k: d.get(k) for k in _DECISION_FIELDS}))
                count += 1
        return count

    def record_outcome(self, plan_id: int, group: str, outcome: str) -> None:
        """What publishing did for a group that passed the gate: one line for people."""
        where = (decisions_t.c.plan_id == plan_id, decisions_t.c.group_name == group)
        with self._engine.begin() as conn:
            done = conn.execute(sa.update(decisions_t).where(*where).values(
                outcome=str(outcome)[:_MAX_ERROR_CHARS])).rowcount
        if not done:
            raise StoreError(f"plan {plan_id}, group {group}: no gate decision to attach an outcome to")

    # -- publications ------------------------------------------------------------------------

    def mark_publication_pending(
        self,
        plan_id: int,
        group: str,
        strategy: str | None = None,
        assignment: Mapping[str, Any] | None = None,
        snapshot_at: datetime | None = None,
        force: bool = False,
        min_version: int | None = None,
    ) -> dict[str, Any]:
        """Record, before publishing, that this plan is about to be published for ``group``.

        Returns the publication (with its ``version``). Defaults come from the audit record:
        the decision's chosen strategy, that strategy's evaluated assignment, the plan's
        snapshot time. Refused unless ``force``: a group whose recorded decision is not go,
        and a snapshot older than that of the group's newest pending or published plan
        (StalePlanError). Versions only grow: max recorded + 1, at least ``min_version``
        (e.g. the version last seen on the plans topic + 1). Idempotent: a pending or published
        publication of the same plan and group is returned as it is.
        """
        with self._engine.begin() as conn:
            self._lock_group(conn, group)
            plan = self._plan_row(conn, plan_id)
            mine = conn.execute(sa.select(publications_t).where(
                publications_t.c.plan_id == plan_id, publications_t.c.group_name == group,
                publications_t.c.state.in_(ACTIVE_STATES))).first()
            if mine is not None:
                return _publication_of(mine)
            decision = conn.execute(sa.select(decisions_t).where(
                decisions_t.c.plan_id == plan_id, decisions_t.c.group_name == group)).first()
            if not force and (decision is None or not decision.go):
                why = "no gate decision is recorded" if decision is None else "the gate said stop"
                raise StoreError(f"plan {plan_id}, group {group}: {why}; not publishing without force")
            strategy = strategy or (decision.chosen if decision is not None else None)
            if not strategy:
                raise StoreError(f"plan {plan_id}, group {group}: no strategy to publish")
            if assignment is None:
                assignment = conn.execute(sa.select(evaluations_t.c.assignment).where(
                    evaluations_t.c.plan_id == plan_id, evaluations_t.c.group_name == group,
                    evaluations_t.c.strategy == strategy)).scalar()
                if assignment is None:
                    raise StoreError(
                        f"plan {plan_id}, group {group}: no evaluated assignment of {strategy} to publish")
            snapshot_at = snapshot_at or plan["snapshot_at"]
            if snapshot_at is None:
                raise StoreError(f"plan {plan_id}: snapshot time unknown; cannot check it is not stale")
            newest = conn.execute(
                sa.select(publications_t.c.version, publications_t.c.snapshot_at, publications_t.c.plan_id)
                .where(publications_t.c.group_name == group, publications_t.c.state.in_(ACTIVE_STATES))
                .order_by(publications_t.c.snapshot_at.desc()).limit(1)).first()
            if newest is not None and newest.snapshot_at > _utc(snapshot_at) and not force:
                raise StalePlanError(
                    f"plan {plan_id}, group {group}: snapshot of {_iso(snapshot_at)} is older than that "
                    f"of version {newest.version} (plan {newest.plan_id}, {_iso(newest.snapshot_at)}); "
                    "not publishing without force")
            top = conn.execute(sa.select(sa.func.max(publications_t.c.version))
                               .where(publications_t.c.group_name == group)).scalar() or 0
            version = max(top + 1, min_version or 1)
            try:
                with conn.begin_nested():
                    new_id = conn.execute(sa.insert(publications_t).values(
                        plan_id=plan_id, group_name=group, version=version, strategy=strategy,
                        state="pending", forced=bool(force), assignment=dict(assignment),
                        snapshot_at=snapshot_at, created_at=_now())).inserted_primary_key[0]
            except sa.exc.IntegrityError:
                raise StoreError(
                    f"group {group}: version {version} was recorded concurrently; retry") from None
            row = conn.execute(sa.select(publications_t).where(publications_t.c.id == new_id)).one()
            return _publication_of(row)

    def mark_published(
        self, group: str, version: int, published_at: datetime | None = None
    ) -> dict[str, Any]:
        """The plan ``version`` of ``group`` is on the plans topic (also after it was marked failed:
        what the topic holds is the truth). Idempotent."""
        return self._set_state(group, version, "published", published_at=published_at or _now())

    def mark_publication_failed(self, group: str, version: int, error: str) -> dict[str, Any]:
        """The plan ``version`` of ``group`` definitely did not reach the topic. When that is not
        certain (a timeout), leave it pending for reconciliation instead."""
        return self._set_state(group, version, "failed", error=str(error)[:_MAX_ERROR_CHARS])

    def pending_publications(self, group: str | None = None) -> list[dict[str, Any]]:
        """Publications recorded as pending: published or not, the plans topic will tell."""
        q = sa.select(publications_t).where(publications_t.c.state == "pending")
        if group is not None:
            q = q.where(publications_t.c.group_name == group)
        with self._engine.connect() as conn:
            rows = conn.execute(q.order_by(publications_t.c.group_name, publications_t.c.version))
            return [_publication_of(r) for r in rows]

    def last_published(self, group: str) -> dict[str, Any] | None:
        """The group's published plan with the highest version, or None."""
        q = (sa.select(publications_t)
             .where(publications_t.c.group_name == group, publications_t.c.state == "published")
             .order_by(publications_t.c.version.desc()).limit(1))
        with self._engine.connect() as conn:
            row = conn.execute(q).first()
        return _publication_of(row) if row is not None else None

    # -- internals ---------------------------------------------------------------------------

    def _plan_by_run(self, conn: sa.Connection, dag_id: str, run_id: str) -> int | None:
        return conn.execute(sa.select(plans_t.c.id).where(
            plans_t.c.dag_id == dag_id, plans_t.c.run_id == run_id)).scalar()

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

    def _lock_group(self, conn: sa.Connection, group: str) -> None:
        """Serialise publications of one group (SQLite transactions are already exclusive)."""
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:cls, hashtext(:g))"),
                         {"cls": _PG_LOCK_CLASS, "g": group})

    def _set_state(self, group: str, version: int, state: str, **values: Any) -> dict[str, Any]:
        where = (publications_t.c.group_name == group, publications_t.c.version == version)
        with self._engine.begin() as conn:
            row = conn.execute(sa.select(publications_t).where(*where)).first()
            if row is None:
                raise StoreError(f"no publication of version {version} for group {group}")
            if row.state == state:
                return _publication_of(row)
            if row.state == "published":
                raise StoreError(f"group {group} version {version} is published; it cannot become {state}")
            conn.execute(sa.update(publications_t).where(*where).values(state=state, **values))
            return _publication_of(conn.execute(sa.select(publications_t).where(*where)).one())


# --------------------------------------------------------------------------------------------
# Helpers


def _make_engine(url: sa.URL) -> sa.Engine:
    if url.drivername == "postgresql" and importlib.util.find_spec("psycopg") is None:
        # SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3; lagassign ships psycopg2.
        url = url.set(drivername="postgresql+psycopg2")
    try:
        if url.get_backend_name() != "sqlite":
            return sa.create_engine(url, pool_pre_ping=True)
        engine = sa.create_engine(url, connect_args={"timeout": 30})
    except sa.exc.NoSuchModuleError:
        raise StoreError(f"unsupported database URL scheme {url.drivername!r}") from None
    except ImportError as exc:
        raise StoreError(f"database driver for {url.drivername!r} is not installed: {exc}") from None

    # pysqlite opens transactions lazily and not for DDL; take control so that every
    # transaction (migrations included) is real, and writers queue instead of deadlocking.
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None
        dbapi_conn.execute("PRAGMA foreign_keys = ON")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _safe_url(url: sa.URL) -> str:
    return url.render_as_string(hide_password=True)


def _first_line(exc: BaseException | None) -> str:
    text = str(exc or "").strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _now() -> datetime:
    return datetime.now(UTC)


def _utc(value: datetime) -> datetime:
    if not isinstance(value, datetime):
        raise StoreError(f"expected a datetime, got {value!r}")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _iso(value: datetime) -> str:
    return _utc(value).isoformat(timespec="seconds")


def _is_day(value: datetime | date) -> bool:
    return isinstance(value, date) and not isinstance(value, datetime)


def _start_of(value: datetime | date) -> datetime:
    return datetime(value.year, value.month, value.day, tzinfo=UTC) if _is_day(value) else _utc(value)


def _end_of(day: date) -> datetime:
    return _start_of(day) + timedelta(days=1)


def _clean_parameters(parameters: Mapping[str, Any] | None) -> Any:
    if parameters is None:
        return None
    try:
        plain = json.loads(json.dumps(parameters, default=str))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"plan parameters must be JSON-serialisable: {exc}") from None
    return _redact(plain)


def _redact(value: Any) -> Any:
    """Replace values under secret-looking keys, at any depth."""
    if isinstance(value, dict):
        return {k: _REDACTED if _SECRET_KEY.search(str(k)) and v is not None else _redact(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v) for v in value]
    return value


def _evaluation_row(plan_id: int, group: str, position: int, result: Mapping[str, Any]) -> dict[str, Any]:
    metrics = result.get("metrics")
    if not isinstance(result.get("strategy"), str) or (metrics is None and "refused" not in result):
        raise StoreError(f"plan {plan_id}, group {group}: a result needs a strategy and metrics or refused")
    return {
        "plan_id": plan_id, "group_name": group, "position": position, "strategy": result["strategy"],
        "refused": result.get("refused"),
        "max_lag": metrics.get("max_lag") if metrics else None,
        "imbalance": metrics.get("imbalance") if metrics else None,
        "moves": metrics.get("moves") if metrics else None,
        "metrics": metrics, "assignment": result.get("assignment"),
        "withheld": result.get("withheld"), "unassigned": result.get("unassigned"),
    }


def _result_of(row: sa.Row) -> dict[str, Any]:
    if row.refused is not None:
        return {"strategy": row.strategy, "refused": row.refused}
    out: dict[str, Any] = {"strategy": row.strategy, "assignment": row.assignment, "metrics": row.metrics}
    if row.withheld is not None:
        out["withheld"] = row.withheld
    if row.unassigned is not None:
        out["unassigned"] = row.unassigned
    return out


def _decision_of(row: sa.Row) -> dict[str, Any]:
    m = row._mapping
    return {"group": row.group_name, **{k: m[k] for k in _DECISION_FIELDS}, "decided_at": row.decided_at,
            "outcome": m["outcome"]}


def _publication_of(row: sa.Row) -> dict[str, Any]:
    m = dict(row._mapping)
    m["group"] = m.pop("group_name")
    return m
