"""What carrying out a publish decision asks of the audit store, as small protocols.

``kafka.applier`` may import the store but not the pipeline (``tests/test_architecture.py``), and
importing the store loads SQLAlchemy, so the applier's port is declared here, in its own layer;
``pipeline.ports.LedgerPort`` extends ``PublicationMarks`` for the pipeline's steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol


class PublicationMarks(Protocol):
    """Reserve a version, then mark it published or failed (``store.ledger``)."""

    def mark_publication_pending(
        self,
        plan_id: int,
        group: str,
        strategy: str | None = None,
        assignment: Mapping[str, Any] | None = None,
        snapshot_at: datetime | None = None,
        force: bool = False,
        min_version: int | None = None,
        expected_version: int | None = None,
        topic_version: int | None = None,
    ) -> dict[str, Any]: ...

    def mark_published(
        self, group: str, version: int, published_at: datetime | None = None, cluster: str | None = None
    ) -> dict[str, Any]: ...

    def mark_publication_failed(
        self, group: str, version: int, error: str, cluster: str | None = None
    ) -> dict[str, Any]: ...


class PublicationLedger(PublicationMarks, Protocol):
    """The marks of a publication, and the group's outcome line in the audit trail
    (``store.evaluations``)."""

    def record_outcome(self, plan_id: int, group: str, outcome: str) -> None: ...
