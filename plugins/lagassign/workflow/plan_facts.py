"""What a recorded plan says about a group, read for the pages: its moves, the strategy they are
shown for, each strategy's result and the lags to chart.

Plain plan dicts in (``AuditStore``'s ``get_plan`` shapes), plain values out: no HTML.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The strategy name under which a plan records the group's assignment as it was.
BASELINE = "current"

# (topic, partition, from member or None, to member or None)
Move = tuple[str, int, str | None, str | None]


def owners(assignment: Mapping[str, Any]) -> dict[tuple[str, int], str]:
    """Who consumes each partition of an assignment (``{member: [[topic, p], ...]}``)."""
    return {(str(tp[0]), int(tp[1])): str(member) for member, tps in assignment.items() for tp in tps or ()}


def compute_moves(current: Mapping[str, Any] | None, target: Mapping[str, Any] | None) -> list[Move]:
    """Partitions whose consumer differs between two assignments (``{member: [[topic, p], ...]}``).

    ``from`` is None for a partition nobody consumes now, ``to`` None for one the target leaves
    out. Sorted by topic, then partition.
    """
    before, after = owners(current or {}), owners(target or {})
    moves = [
        (t, p, before.get((t, p)), after.get((t, p)))
        for (t, p) in set(before) | set(after)
        if before.get((t, p)) != after.get((t, p))
    ]
    return sorted(moves, key=lambda m: (m[0], m[1]))


def target_strategy(group: Mapping[str, Any]) -> str | None:
    """The strategy a group's moves are shown for: the gate's choice, else its candidate, else the best."""
    decision = group.get("decision") or {}
    return decision.get("chosen") or decision.get("candidate") or group.get("best")


def result_of(group: Mapping[str, Any], strategy: str | None) -> Mapping[str, Any] | None:
    """The group's recorded result of one strategy, or None."""
    return next((r for r in group.get("results") or () if r.get("strategy") == strategy), None)


def chart_series(group: Mapping[str, Any], every: bool = False) -> list[tuple[str, dict[str, int]]]:
    """(strategy, lag per member) to draw: ``current`` and the chosen (or candidate) plan; with
    ``every``, then every other measured strategy in evaluation order. Refused strategies have
    no lag and are left out."""
    measured = [
        r for r in group.get("results") or () if isinstance((r.get("metrics") or {}).get("lag"), Mapping)
    ]
    first = [BASELINE, target_strategy(group)]
    ordered = [r for name in dict.fromkeys(first) for r in measured if r["strategy"] == name]
    if every:
        ordered += [r for r in measured if r not in ordered]
    return [
        (str(r["strategy"]), {str(k): int(v) for k, v in (r["metrics"].get("lag") or {}).items()})
        for r in ordered
    ]


def dead_instances(change: str | None) -> list[str]:
    """The instances a failover's recorded change says died ("w1 silent for 31 s; w3 joined")."""
    return [
        part.split()[0]
        for part in str(change or "").split(";")
        if part.strip() and not part.strip().endswith(" joined")
    ]


def timed(group: Mapping[str, Any]) -> bool:
    """Whether the group was planned in time (its members stated capacities): the current
    assignment's metrics carry catch-up times."""
    cur = result_of(group, BASELINE)
    return bool(cur) and "max_catch_up_s" in ((cur or {}).get("metrics") or {})
