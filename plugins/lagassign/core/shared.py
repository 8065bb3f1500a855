"""Values computed once per group and shared by the strategies and scoring that evaluate it.

A ``Shared[T]`` names one such value and its type. The module that computes the value owns
the key; a module that reads it too imports the key, so who shares what shows in the imports
(and mypy checks the type). The values live on the group (``GroupSnapshot.shared``) for as
long as the group does: one evaluation.

    >>> from lagassign.core.strategies.examples import example
    >>> TOTAL: Shared[int] = Shared("total lag")
    >>> g = example({"C0": ["t"]}, {"t": [3, 4]})
    >>> TOTAL.get(g, lambda: sum(g.lags)), TOTAL.get(g, lambda: -1)  # computed once
    (7, 7)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Generic, TypeVar, cast

if TYPE_CHECKING:
    from .model import GroupSnapshot

T = TypeVar("T")


class Shared(Generic[T]):
    """The key of one shared value per group (and per ``variant``, e.g. an option's value)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Shared({self.name!r})"

    def get(self, group: GroupSnapshot, compute: Callable[[], T], variant: Hashable = None) -> T:
        """The value for ``group``: computed by ``compute`` the first time, then kept."""
        values = group.shared
        key = (self, variant)
        if key not in values:
            values[key] = compute()
        return cast(T, values[key])

    def peek(self, group: GroupSnapshot, variant: Hashable = None) -> T | None:
        """The value if some caller computed it already, else None."""
        return cast("T | None", group.shared.get((self, variant)))


__all__ = ["Shared"]
