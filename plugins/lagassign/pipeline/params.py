"""What a planning run is asked to do (``PlanParams``, validated once before any work starts) and
where its files go."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ..core.errors import LagassignError
from ..core.gate import DEFAULT_MIN_IMPROVEMENT, DEFAULT_THRESHOLD, validate_parameters
from ..core.lag import RESET_POLICIES
from ..core.strategies import strategy_names
from ..core.topics import PLAN_TOPIC


class ParamsError(LagassignError):
    """Planning parameters (CLI flags, DAG params) that cannot be used."""


@dataclass(frozen=True)
class PlanParams:
    """What one planning run is asked to do; validated once, before any work starts."""

    groups: str | None = None
    groups_file: str | None = None
    strategies: tuple[str, ...] | None = None
    threshold: float = DEFAULT_THRESHOLD
    min_improvement: float = DEFAULT_MIN_IMPROVEMENT
    max_moves: int | None = None
    exact_budget: float | None = None
    max_catch_up_s: float | None = None
    apply: bool = False
    dry_run: bool = False
    force: bool = False
    auto_offset_reset: str = "latest"
    plan_topic: str = PLAN_TOPIC

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> PlanParams:
        """Build from a mapping (DAG params, parsed flags); unknown keys and bad values refused."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ParamsError(f"unknown parameter {unknown[0]!r}; known: {', '.join(sorted(known))}")
        data = dict(values)
        if data.get("groups") in ("", ".*"):
            data["groups"] = None
        if data.get("groups_file") == "":
            data["groups_file"] = None
        strategies = data.get("strategies")
        if isinstance(strategies, str):  # "a,b" from a command line; "" means all
            strategies = [s.strip() for s in strategies.split(",") if s.strip()] or None
        if strategies is not None:
            if not isinstance(strategies, list | tuple) or not strategies:
                raise ParamsError(
                    f"strategies must be a non-empty list of names (or unset for all), got {strategies!r}"
                )
            data["strategies"] = tuple(strategies)
        params = cls(**data)
        params.validate()
        return params

    def validate(self) -> None:
        if self.groups is not None:
            if not isinstance(self.groups, str):
                raise ParamsError(f"groups must be a regular expression, got {self.groups!r}")
            try:
                re.compile(self.groups)
            except re.error as exc:
                raise ParamsError(
                    f"groups is not a valid regular expression ({exc}): {self.groups!r}"
                ) from None
        if self.strategies is not None:
            unknown = [s for s in self.strategies if s not in strategy_names()]
            if unknown:
                raise ParamsError(f"unknown strategy {unknown[0]!r}; known: {', '.join(strategy_names())}")
        validate_parameters(
            self.threshold, self.min_improvement, self.max_moves, self.strategies, self.max_catch_up_s
        )
        budget = self.exact_budget
        if budget is not None and (
            not isinstance(budget, int | float) or isinstance(budget, bool) or budget < 0
        ):
            raise ParamsError(f"exact_budget must be seconds (a number >= 0) or unset, got {budget!r}")
        for name in ("apply", "dry_run", "force"):
            if not isinstance(getattr(self, name), bool):
                raise ParamsError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.auto_offset_reset not in RESET_POLICIES:
            raise ParamsError(
                f"auto_offset_reset must be earliest, latest or none, got {self.auto_offset_reset!r}"
            )
        if not isinstance(self.plan_topic, str) or not self.plan_topic:
            raise ParamsError("plan_topic must be a topic name")

    def evaluated_strategies(self) -> list[str]:
        """The strategies to evaluate: the requested ones plus ``current``, the gate's baseline."""
        names = list(self.strategies) if self.strategies else strategy_names()
        return names if "current" in names else [*names, "current"]

    def record(self) -> dict[str, Any]:
        """JSON form for the audit trail and XCom (holds no secrets: Kafka settings are not here)."""
        out = asdict(self)
        out["strategies"] = list(self.strategies) if self.strategies else None
        return out


def base_dir(explicit: str | None = None) -> Path:
    """Where snapshots and evaluations go: argument > LAGASSIGN_BASE_DIR > $AIRFLOW_HOME/lagassign."""
    if explicit:
        return Path(explicit)
    if os.environ.get("LAGASSIGN_BASE_DIR"):
        return Path(os.environ["LAGASSIGN_BASE_DIR"])
    return Path(os.environ.get("AIRFLOW_HOME", Path.home() / "airflow")) / "lagassign"


def run_dir(base: str | Path, plan_id: int) -> Path:
    """The folder of one plan's snapshot and evaluations."""
    return Path(base) / f"plan-{plan_id:06d}"
