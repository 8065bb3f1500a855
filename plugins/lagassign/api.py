"""The Python face of the case contract: ``assign`` and ``evaluate`` on case objects."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .case import parse_case
from .errors import StrategyRefusedError
from .model import GroupSnapshot, TopicPartition
from .scoring import lower_bound_max_lag, score, unassigned
from .strategies import applicable_options, get_strategy, strategy_names


def _pairs(tps: Iterable[TopicPartition]) -> list[list[Any]]:
    return [list(tp) for tp in tps]  # TopicPartition is a (topic, partition) tuple


def run_strategy(
    group: GroupSnapshot, strategy: str, lower_bound: int | None = None, **options: Any
) -> dict[str, Any]:
    """Run one strategy on a parsed group and return the JSON-shaped result object."""
    assignment = get_strategy(strategy, **options).assign(group)
    result: dict[str, Any] = {
        "strategy": strategy,
        "assignment": {mid: _pairs(tps) for mid, tps in assignment.members.items()},
        "metrics": score(group, assignment, lower_bound),
    }
    if assignment.withheld is not None:
        result["withheld"] = _pairs(assignment.withheld)
    missing = unassigned(group, assignment)
    if missing:
        result["unassigned"] = _pairs(missing)
    return result


def assign(case: Mapping[str, Any], strategy: str, **options: Any) -> dict[str, Any]:
    """Assign the case's partitions with one strategy: the output object of DESIGN.md."""
    return run_strategy(parse_case(case), strategy, **options)


def _eligible(group: GroupSnapshot, result: dict[str, Any]) -> bool:
    """Can this result be the best: scored, every partition consumed, each by a subscriber?

    Only ``current`` can fail the last two: it keeps partitions as they are, also those of a
    topic their member no longer subscribes to, which the next rebalance takes away anyway.
    """
    if "metrics" not in result or "unassigned" in result:
        return False
    topics = {m.id: m.topics for m in group.members}
    return all(t in topics[mid] for mid, tps in result["assignment"].items() for t, _ in tps)


def _rank(result: dict[str, Any], order: int) -> tuple:
    m = result["metrics"]
    return (m["max_lag"], m["moves"], m["lag_spread"], m["count_spread"], order)


def evaluate_group(
    group: GroupSnapshot, strategies: Iterable[str] | None = None, **options: Any
) -> dict[str, Any]:
    """Every strategy on one group; refusals are reported, not raised; the best is named.

    Best = lowest max member lag, then fewest moves, then smallest lag and count spreads,
    then registry order, among assignments that leave no partition unconsumed. ``current``
    competes too: when nothing beats it, nothing should move. ``options`` (e.g. max_moves)
    go to the strategies that take them.
    """
    names = list(strategies) if strategies is not None else strategy_names()
    bound = lower_bound_max_lag(group)
    results = []
    for name in names:
        try:
            results.append(run_strategy(group, name, bound, **applicable_options(name, options)))
        except StrategyRefusedError as exc:
            results.append({"strategy": name, "refused": str(exc)})
    ranked = [(r, i) for i, r in enumerate(results) if _eligible(group, r)]
    best = min(ranked, key=lambda ri: _rank(*ri))[0]["strategy"] if ranked else None
    return {
        "group": group.group,
        "members": len(group.members),
        "partitions": len(group.assignable),
        "best": best,
        "lower_bound_max_lag": bound,
        "results": results,
    }


def evaluate(
    case: Mapping[str, Any], strategies: Iterable[str] | None = None, **options: Any
) -> dict[str, Any]:
    """Every strategy (or the given ones) on a case object."""
    return evaluate_group(parse_case(case), strategies, **options)
