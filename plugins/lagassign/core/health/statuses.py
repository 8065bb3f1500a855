"""The health statuses, how bad each is, and the rules' settings (``Rules``)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

OK, WARN, SWITCHING, UNKNOWN = "OK", "WARN", "SWITCHING", "UNKNOWN"
OVERLOAD, STALL, UNCONSUMED = "OVERLOAD", "STALL", "UNCONSUMED"
DEAD, STOP = "DEAD", "STOP"

#: How bad each status is; a group takes its worst finding's status.
SEVERITY = {
    OK: 0,
    UNKNOWN: 1,
    WARN: 1,
    SWITCHING: 1,
    OVERLOAD: 2,
    STALL: 2,
    UNCONSUMED: 2,
    DEAD: 3,
    STOP: 3,
}
STATUSES = tuple(sorted(SEVERITY, key=lambda s: (SEVERITY[s], s)))
#: Statuses an operator is told about when a group enters them (and when it leaves them).
ALERTING = frozenset({STALL, STOP, DEAD, OVERLOAD, UNCONSUMED})

#: Group states of a group whose assignment is being changed (nothing to judge about owners).
REBALANCING = frozenset({"PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"})
#: A consumer whose outstanding messages take less than this at the rate it consumes keeps up
#: (that is the lag between commits): no warning for its lag's ups and downs, and its catch-up
#: time is that time, not lag / (consumed − inflow) (which the noise of two nearly equal rates
#: would blow up). ``Rules.steady_s``.
STEADY_S = 30.0


@dataclass(frozen=True)
class Rules:
    """The rules' settings: the window judged (seconds), the observations a trend needs, and
    the seconds of work under which a lag is the steady lag between commits (``STEADY_S``)."""

    window_s: float = 600.0
    min_points: int = 3
    steady_s: float = STEADY_S

    def __post_init__(self) -> None:
        if not (self.window_s > 0 and math.isfinite(self.window_s)):
            raise ValueError(f"the health window must be a positive number of seconds, got {self.window_s}")
        if self.min_points < 2:
            raise ValueError("a trend needs at least 2 observations")


def worst(statuses: Iterable[str]) -> str:
    """The most severe of ``statuses`` (OK when there are none)."""
    return max(statuses, key=lambda s: SEVERITY[s], default=OK)
