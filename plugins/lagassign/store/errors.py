"""Errors of the audit store that people can cause and fix; each is one line on stderr."""

from __future__ import annotations

from ..core.errors import LagassignError


class StoreError(LagassignError):
    """The audit store cannot be opened, or a write would break one of its rules."""


class StoreNotFoundError(StoreError):
    """No audit store exists at the URL (and the caller asked not to create one)."""


class PlanNotFoundError(StoreError):
    """No plan with that id."""


class StalePlanError(StoreError):
    """The plan was computed from a snapshot older than the group's last publication."""


class VersionConflictError(StalePlanError):
    """Another run reserved or published a newer version of the group since this run looked:
    the rival's ``version``, ``state`` (pending or published), ``plan_id`` and ``cluster``."""

    def __init__(
        self,
        message: str,
        version: int | None = None,
        state: str | None = None,
        plan_id: int | None = None,
        cluster: str | None = None,
    ) -> None:
        super().__init__(message)
        self.version, self.state, self.plan_id, self.cluster = version, state, plan_id, cluster
