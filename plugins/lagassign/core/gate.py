"""The imbalance gate: per group, is a rebalance worth it? Pure functions, no I/O.

A group goes on only when

1. its current assignment is measurably unbalanced: imbalance (max member lag / mean member
   lag) strictly exceeds ``threshold`` (default 1.10, Cruise Control's balance threshold), and
2. the best candidate strategy lowers the max member lag by at least ``min_improvement``
   (default 5%) of the current max member lag, and strictly lowers it.

Candidates are the evaluated strategies other than ``current`` that were not refused, leave
no partition unconsumed, use at most ``max_moves`` moves (when set) and are among
``strategies`` (when given). The best candidate is the best by ``results.best_of``, the same
rule that names the evaluation's best: lowest max member lag, then fewest moves, then smallest
spreads, then the evaluation's order.

Unconsumed partitions: when the current assignment leaves partitions without a consumer
(a new topic or partitions, an assign()-mode group that has no plan yet), its lag metrics
cover only what is consumed and cannot be compared; the lag of the rest grows without
bound. Such a group goes on whenever a complete candidate exists, whatever the imbalance
and improvement (``max_moves`` and ``strategies`` still apply).

Planning in time: when the group's metrics carry catch-up times (every member states its
capacity, see ``catchup``), the group also goes on when its slowest member needs longer than
``max_catch_up_s`` to catch up (when set), candidates are ranked by catch-up time first, and the
improvement is measured in time ("max catch-up 2 h 10 min → 18 min"). When one partition alone
needs longer than ``max_catch_up_s`` whoever reads it, the reason names it: no plan can meet
the target.

A missing or refused ``current`` result means there is no baseline: the group stops.

Every outcome carries one human line in ``reason``, so that the audit trail says why a
group did or did not move.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from .catchup import duration_text
from .errors import LagassignError
from .results import GroupEvaluation, Metrics, ResultShapeError, StrategyResult, best_of, catch_up_of

DEFAULT_THRESHOLD = 1.10
DEFAULT_MIN_IMPROVEMENT = 0.05
BASELINE = "current"

# Improvements are ratios of integers computed in floating point; 0.05 must pass for 100 -> 95.
_EPSILON = 1e-9


class GateConfigError(LagassignError):
    """A gate parameter (threshold, min_improvement, max_moves, strategies) is out of range."""


class EvaluationShapeError(LagassignError):
    """The evaluation handed to the gate does not have the shape of ``evaluate_group``'s output."""


@dataclass(frozen=True)
class GateDecision:
    """The gate's verdict for one group.

    ``candidate`` is the best candidate the gate measured (None when there was none);
    ``chosen`` is the same strategy when ``go`` is true, else None. ``chosen_max_lag``,
    ``improvement`` (fraction of the current max lag, 0.6 = 60% lower) and ``moves`` describe
    ``candidate``, so a stopped group still records how close it came.
    """

    group: str
    go: bool
    reason: str
    chosen: str | None = None
    candidate: str | None = None
    current_max_lag: int | None = None
    current_imbalance: float | None = None
    chosen_max_lag: int | None = None
    improvement: float | None = None
    moves: int | None = None
    unconsumed: int = 0
    threshold: float = DEFAULT_THRESHOLD
    min_improvement: float = DEFAULT_MIN_IMPROVEMENT
    max_moves: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for XCom, the audit store and ``--json`` output)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GateDecision:
        """Back from ``to_dict`` (keys the audit store adds, such as ``outcome``, are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def validate_parameters(
    threshold: float = DEFAULT_THRESHOLD,
    min_improvement: float = DEFAULT_MIN_IMPROVEMENT,
    max_moves: int | None = None,
    strategies: Iterable[str] | None = None,
    max_catch_up_s: float | None = None,
) -> tuple[float, float, int | None, frozenset[str] | None]:
    """Check the gate's parameters once (a bad trigger form must fail before any work)."""
    if max_catch_up_s is not None and (not _is_number(max_catch_up_s) or max_catch_up_s <= 0):
        raise GateConfigError(
            f"max_catch_up_s must be a number of seconds > 0 or unset, got {max_catch_up_s!r}"
        )
    if not _is_number(threshold) or not threshold >= 1.0:
        raise GateConfigError(f"threshold must be a number ≥ 1.0 (max/mean member lag), got {threshold!r}")
    if not _is_number(min_improvement) or not 0.0 <= min_improvement < 1.0:
        raise GateConfigError(
            f"min_improvement must be a fraction in [0, 1), e.g. 0.05 for 5%, got {min_improvement!r}"
        )
    if max_moves is not None and (
        isinstance(max_moves, bool) or not isinstance(max_moves, int) or max_moves < 0
    ):
        raise GateConfigError(f"max_moves must be a whole number ≥ 0 or unset, got {max_moves!r}")
    allowed: frozenset[str] | None = None
    if strategies is not None:
        if isinstance(strategies, str) or not all(isinstance(s, str) for s in strategies):
            raise GateConfigError(f"strategies must be a list of strategy names, got {strategies!r}")
        allowed = frozenset(strategies)
        if not allowed:
            raise GateConfigError("strategies must name at least one strategy (or be unset for all)")
    return float(threshold), float(min_improvement), max_moves, allowed


def decide(
    evaluation: GroupEvaluation | Mapping[str, Any],
    threshold: float = DEFAULT_THRESHOLD,
    min_improvement: float = DEFAULT_MIN_IMPROVEMENT,
    max_moves: int | None = None,
    strategies: Iterable[str] | None = None,
    max_catch_up_s: float | None = None,
) -> GateDecision:
    """The gate's decision for one group's evaluation (``evaluate_group``'s output), by the
    rules of the module doc in their order: a baseline, unconsumed partitions, then the
    improvement in catch-up time (a group planned in time) or in max lag."""
    threshold, min_improvement, max_moves, allowed = validate_parameters(
        threshold, min_improvement, max_moves, strategies, max_catch_up_s
    )
    try:
        ev = GroupEvaluation.of(evaluation)
    except ResultShapeError as exc:
        raise EvaluationShapeError(str(exc)) from None
    params: dict[str, Any] = {
        "threshold": threshold,
        "min_improvement": min_improvement,
        "max_moves": max_moves,
    }
    baseline = ev.result(BASELINE)
    if baseline is None or not baseline.scored or baseline.metrics is None:
        return GateDecision(ev.group, False, _no_baseline_reason(baseline), **params)
    gate = _Gate(ev.group, list(ev.results), allowed, baseline, params)
    if gate.unconsumed:
        return gate.decide_unconsumed()
    if "max_catch_up_s" in gate.current:
        return gate.decide_in_time(max_catch_up_s)
    return gate.decide_in_lag()


def _no_baseline_reason(baseline: StrategyResult | None) -> str:
    if baseline is None:
        return "no current assignment was evaluated: nothing to compare against"
    return f"current assignment could not be measured: {baseline.refused or 'no metrics'}"


class _Gate:
    """One group's gate once its baseline is measured: the candidates, the best of them, and
    the figures every decision records (``measured``)."""

    def __init__(
        self,
        group: str,
        results: list[StrategyResult],
        allowed: frozenset[str] | None,
        baseline: StrategyResult,
        params: dict[str, Any],
    ) -> None:
        self.group, self.results, self.allowed = group, results, allowed
        self.current = _metrics(baseline)
        self.max_moves: int | None = params["max_moves"]
        self.unconsumed = len(baseline.unassigned or ())
        self.cur_max, cur_imbalance = int(self.current["max_lag"]), float(self.current["imbalance"])
        self.complete = [
            r
            for r in results
            if r.strategy != BASELINE and r.complete and (allowed is None or r.strategy in allowed)
        ]
        self.best = best_of(
            self.complete, lambda r: self.max_moves is None or _metrics(r)["moves"] <= self.max_moves
        )
        self.measured: dict[str, Any] = {
            "current_max_lag": self.cur_max,
            "current_imbalance": cur_imbalance,
            "unconsumed": self.unconsumed,
            **params,
        }
        if self.best is not None:
            best = _metrics(self.best)
            self.best_max, self.moves = int(best["max_lag"]), int(best["moves"])
            self.measured.update(
                candidate=self.best.strategy,
                chosen_max_lag=self.best_max,
                improvement=(self.cur_max - self.best_max) / self.cur_max if self.cur_max > 0 else None,
                moves=self.moves,
            )

    def stop(self, reason: str, **changed: Any) -> GateDecision:
        return GateDecision(self.group, False, reason, **{**self.measured, **changed})

    def go(self, reason: str, **changed: Any) -> GateDecision:
        assert self.best is not None
        return GateDecision(
            self.group, True, reason, chosen=self.best.strategy, **{**self.measured, **changed}
        )

    def decide_unconsumed(self) -> GateDecision:
        """The current assignment leaves partitions unconsumed: go with any complete candidate."""
        leaves = f"current assignment leaves {_n(self.unconsumed, 'partition')} unconsumed"
        if self.best is None:
            return self.stop(f"{leaves}, but {self.no_candidate_reason()}")
        figures = f"max lag {_int(self.best_max)} and {_n(self.moves, 'move')}"
        return self.go(f"{leaves}; {self.best.strategy} consumes all with {figures}")

    def decide_in_lag(self) -> GateDecision:
        """Imbalance over the threshold, and the best candidate lowers max lag enough."""
        imbalance, threshold = self.measured["current_imbalance"], self.measured["threshold"]
        if not imbalance > threshold:
            return self.stop(f"current imbalance {_ratio(imbalance)} ≤ threshold {_ratio(threshold)}")
        if self.best is None:
            return self.stop(self.no_candidate_reason())
        change = f"max lag {_int(self.cur_max)} → {_int(self.best_max)}"
        best = f"best: {self.best.strategy}, {_int(self.best_max)}"
        fails = f"no candidate lowers max lag below {_int(self.cur_max)} ({best})"
        return self.judge_gain(self.cur_max, self.best_max, change, fails)

    def decide_in_time(self, target: float | None) -> GateDecision:
        """A group planned in time: late or unbalanced, and the best candidate catches up
        sooner by enough (every reason says when one partition alone misses the target)."""
        cur_time, alone = catch_up_of(self.current), self.slowest_partition_note(target)
        imbalance, threshold = self.measured["current_imbalance"], self.measured["threshold"]
        if not (target is not None and cur_time > target) and not imbalance > threshold:
            why = f"current max catch-up {duration_text(cur_time)}"
            why += f" ≤ target {duration_text(target)}" if target is not None else ""
            return self.stop(
                f"{why} and imbalance {_ratio(imbalance)} ≤ threshold {_ratio(threshold)}{alone}"
            )
        if self.best is None:
            return self.stop(self.no_candidate_reason() + alone)
        best_time = catch_up_of(_metrics(self.best))
        change = f"max catch-up {duration_text(cur_time)} → {duration_text(best_time)}"
        best = f"best: {self.best.strategy}, {change}"
        fails = f"no candidate catches up sooner than {duration_text(cur_time)} ({best})"
        return self.judge_gain(cur_time, best_time, change, fails, alone)

    def judge_gain(
        self, current: float, best: float, change: str, fails: str, note: str = ""
    ) -> GateDecision:
        """Go when the best candidate lowers the ``current`` figure to ``best`` by at least the
        minimum improvement; ``fails`` is the reason when it does not lower it at all. The
        improvement recorded is this gain (in time for a group planned in time)."""
        assert self.best is not None
        if not best < current:
            return self.stop(fails + note)
        gain = 1.0 if current == math.inf else (current - best) / current
        shown, minimum = _pct(gain, self.measured["min_improvement"])
        lowers = f"{self.best.strategy} lowers {change} (−{shown}) with {_n(self.moves, 'move')}"
        if gain + _EPSILON < self.measured["min_improvement"]:
            return self.stop(f"{lowers}, below the minimum improvement {minimum}{note}", improvement=gain)
        return self.go(lowers + note, improvement=gain)

    def slowest_partition_note(self, target: float | None) -> str:
        """'; partition t-3 alone needs 3 h whoever reads it, ...' when no plan can meet ``target``."""
        slow, slow_s = self.current.get("slowest_partition"), self.current.get("slowest_partition_s")
        slow_s = None if slow_s is None else float(slow_s)
        if target is None or slow is None or not (slow_s is None or slow_s > target):
            return ""
        return (
            f"; partition {slow} alone needs {duration_text(slow_s)} whoever reads it, "
            f"so no plan meets the target {duration_text(target)}"
        )

    def no_candidate_reason(self) -> str:
        if self.complete and self.max_moves is not None:
            fewest = min(self.complete, key=lambda r: (_metrics(r)["moves"], _metrics(r)["max_lag"]))
            return (
                f"no candidate within max_moves {self.max_moves} "
                f"(fewest: {fewest.strategy} with {_n(_metrics(fewest)['moves'], 'move')})"
            )
        if self.allowed is not None and not any(r.strategy in self.allowed for r in self.results):
            return f"none of the allowed strategies ({', '.join(sorted(self.allowed))}) was evaluated"
        return "no strategy produced a complete assignment"


def decide_all(
    evaluations: Iterable[GroupEvaluation | Mapping[str, Any]],
    threshold: float = DEFAULT_THRESHOLD,
    min_improvement: float = DEFAULT_MIN_IMPROVEMENT,
    max_moves: int | None = None,
    strategies: Iterable[str] | None = None,
    max_catch_up_s: float | None = None,
) -> list[GateDecision]:
    """``decide`` for every group, parameters validated once, in the evaluations' order."""
    threshold, min_improvement, max_moves, allowed = validate_parameters(
        threshold, min_improvement, max_moves, strategies, max_catch_up_s
    )
    return [decide(e, threshold, min_improvement, max_moves, allowed, max_catch_up_s) for e in evaluations]


def _metrics(result: StrategyResult) -> Metrics:
    assert result.metrics is not None
    return result.metrics


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _int(value: int) -> str:
    return f"{value:,}"


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _ratio(value: float) -> str:
    """1.1 -> '1.10', 1.1049 -> '1.1049': two decimals at least, no rounding that hides a difference."""
    text = f"{value:.4f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{whole}.{frac.ljust(2, '0')}"


def _pct(value: float, other: float) -> tuple[str, str]:
    """Both fractions as percentages, with as many decimals (1 to 4) as it takes to tell them apart."""
    for digits in range(1, 5):
        a, b = f"{value * 100:.{digits}f}%", f"{other * 100:.{digits}f}%"
        if a != b or abs(value - other) <= _EPSILON:
            return a, b
    return a, b
