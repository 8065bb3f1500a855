"""What the pipeline and Airflow's tasks ask of the audit store, as small protocols.

``store.AuditStore`` is all of them; a step names only the part it uses (the audit trail, the
ledger of publications, the history of end offsets, the groups' health), so its signature says
what it reads and writes, and this layer imports no SQLAlchemy to say it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from ..core.results import GroupEvaluation
from ..kafka.ledger_port import PublicationMarks

if TYPE_CHECKING:
    from ..store.health import Observed, PartitionRow
    from ..store.offsets import TP, GroupPosition


class AuditTrailPort(Protocol):
    """Plans, their evaluations and the gate's decisions (``store.audit``)."""

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
    ) -> int: ...

    def set_snapshot(
        self, plan_id: int, snapshot_uri: str | None, snapshot_at: datetime | None, cluster: str | None = None
    ) -> None: ...

    def set_cluster(self, plan_id: int, cluster: str) -> None: ...

    def finish_plan(
        self,
        plan_id: int,
        status: str,
        error: str | None = None,
        finished_at: datetime | None = None,
        failed_step: str | None = None,
    ) -> None: ...

    def note_failure(self, plan_id: int, error: str, failed_step: str | None = None) -> None: ...

    def list_plans(
        self,
        group: str | None = None,
        since: datetime | date | None = None,
        until: datetime | date | None = None,
        limit: int | None = ...,
        offset: int = 0,
        cluster: str | None = None,
    ) -> list[dict[str, Any]]: ...

    def group_history(
        self, group: str, limit: int = 200, cluster: str | None = None
    ) -> list[dict[str, Any]]: ...

    def max_catch_up(
        self, plan_ids: Iterable[int], group: str | None = None
    ) -> dict[tuple[int, str, str], Any]: ...

    def previous_groups(
        self, plan_id: int, groups: Iterable[str]
    ) -> dict[str, tuple[int, dict[str, Any]]]: ...

    def get_plan(self, plan_id: int, evaluations: bool = True) -> dict[str, Any]: ...

    def plan_details(self, plan_ids: Iterable[int]) -> dict[int, dict[str, Any]]: ...

    def record_evaluations(
        self, plan_id: int, evaluations: Iterable[GroupEvaluation | Mapping[str, Any]]
    ) -> int: ...

    def evaluations(self, plan_id: int) -> list[GroupEvaluation]: ...

    def record_decisions(self, plan_id: int, decisions: Iterable[Any]) -> int: ...

    def record_outcome(self, plan_id: int, group: str, outcome: str) -> None: ...


class LedgerPort(PublicationMarks, Protocol):
    """What reached the plans topic, per group and version (``store.ledger``).

    Its marks are ``kafka.ledger_port``'s, which ``kafka.applier`` publishes through (declared
    there: the kafka layer may not import this one)."""

    def pending_publications(
        self, group: str | None = None, settled_after: timedelta | None = None, cluster: str | None = None
    ) -> list[dict[str, Any]]: ...

    def ledger_state(
        self, groups: Iterable[str], cluster: str | None = None
    ) -> dict[str, tuple[dict[str, Any] | None, int]]: ...

    def publication(self, group: str, version: int, cluster: str | None = None) -> dict[str, Any] | None: ...

    def last_published(self, group: str, cluster: str | None = None) -> dict[str, Any] | None: ...


class OffsetHistoryPort(Protocol):
    """End offsets and groups' positions over time, for inflow and capacity (``store.offsets``)."""

    def record_offsets(
        self, cluster: str | None, observed_at: datetime, ends: Mapping[TP, int], plan_id: int | None = None
    ) -> int: ...

    def offset_history(
        self, cluster: str | None, partitions: Iterable[TP], before: datetime | None = None
    ) -> dict[TP, list[tuple[datetime, int]]]: ...

    def record_positions(
        self,
        cluster: str | None,
        observed_at: datetime,
        positions: Iterable[GroupPosition],
        plan_id: int | None = None,
    ) -> int: ...

    def previous_positions(
        self, cluster: str | None, groups: Iterable[str], before: datetime
    ) -> dict[str, tuple[datetime, dict[TP, tuple[int | None, int | None, str | None]]]]: ...


class HealthPort(Protocol):
    """Groups' observations, statuses and alerts between runs (``store.health``)."""

    def record_observation(
        self, cluster: str, observed_at: datetime, rows: Iterable[PartitionRow], keep: timedelta
    ) -> int: ...

    def observations(
        self, cluster: str, since: datetime, groups: Iterable[str] | None = None
    ) -> dict[str, dict[tuple[str, int], list[Observed]]]: ...

    def record_statuses(
        self, cluster: str, observed_at: datetime, groups: Iterable[Mapping[str, Any]]
    ) -> bool: ...

    def latest_statuses(self, cluster: str) -> dict[str, dict[str, Any]]: ...

    def health_clusters(self) -> list[dict[str, Any]]: ...

    def last_plans(self, cluster: str, groups: Iterable[str] | None = None) -> dict[str, int]: ...

    def last_states(self, cluster: str) -> dict[str, tuple[str, ...]]: ...

    def save_states(
        self, cluster: str, states: Mapping[str, Sequence[str]], at: datetime, forget_others: bool = True
    ) -> None: ...

    def claim_alert(
        self,
        cluster: str,
        group: str,
        kind: str,
        subject: str,
        text: str,
        at: datetime,
        state: Sequence[str] | None = None,
    ) -> int | None: ...

    def alert_sent(self, alert_id: int, at: datetime, error: str | None = None) -> None: ...


class PublishingStore(AuditTrailPort, LedgerPort, Protocol):
    """A store a plan is recorded in and published through."""


class PlanningStore(PublishingStore, OffsetHistoryPort, Protocol):
    """A planning run's store: it also keeps the end offsets its inflow is read from."""


class GroupsStore(AuditTrailPort, HealthPort, Protocol):
    """The groups overview's store: health between runs, and the plans each group had."""
