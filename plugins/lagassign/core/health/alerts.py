"""Which status changes are worth one notification."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .records import GroupHealth
from .statuses import ALERTING


def should_notify(previous: Sequence[str] | None, current: Sequence[str]) -> bool:
    """Whether a group whose last notified state was ``previous`` (a ``GroupHealth.key``; None:
    never seen) and is ``current`` now is worth one notification: a change into, out of or
    within the alerting statuses. A first sight notifies only a group already in trouble."""
    now = tuple(current)
    if previous is None:
        return now[0] in ALERTING
    before = tuple(previous)
    if before == now:
        return False
    return now[0] in ALERTING or before[0] in ALERTING


@dataclass(frozen=True)
class Change:
    """A group's status changed in a way worth one notification (``should_notify``)."""

    group: str
    before: tuple[str, ...] | None
    health: GroupHealth

    @property
    def after(self) -> tuple[str, ...]:
        return self.health.key

    def describe(self) -> str:
        """'orders: OK → STOP: events-0: no commit for 12 min with lag 4,200, …'."""
        was = self.before[0] if self.before else "new"
        return f"{self.group}: {was} → {self.health.status}: {self.health.reason}"


def changes(
    notified: Mapping[str, Sequence[str]], healths: Iterable[GroupHealth]
) -> tuple[list[Change], dict[str, tuple[str, ...]]]:
    """The notifications due, given each group's last notified state, and the state to keep
    next: every group present with its key now. Groups no longer present are forgotten, not
    reported (a deleted group is gone, not stopped)."""
    due = []
    kept: dict[str, tuple[str, ...]] = {}
    for h in healths:
        before = notified.get(h.group)
        previous = tuple(before) if before is not None else None
        if should_notify(previous, h.key):
            due.append(Change(h.group, previous, h))
        kept[h.group] = h.key
    return due, kept
