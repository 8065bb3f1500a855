"""What one evaluation run does (``EvaluationParams``): the Spark job reads it from a JSON file,
its one argument, never from a command line built out of the values."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.strategies import applicable_options, get_strategy, strategy_names
from ..tables.evaluations import EvaluationError


@dataclass(frozen=True)
class EvaluationParams:
    """What one evaluation run does; the Spark job reads it from a JSON file (one argument).

    ``partitions``: how many tasks share the groups on Spark (default from the cluster's cores
    and the work, ``lagassign.spark.task_plan.default_tasks``). Each task writes its own Parquet
    part file, so ``output_files`` sets the same number (``partitions`` wins when both are given).
    """

    snapshot: str
    out: str
    strategies: tuple[str, ...] | None = None
    max_moves: int | None = None
    count_slack: int | None = None
    exact_budget: float | None = None
    partitions: int | None = None
    output_files: int | None = None

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], base: str | Path | None = None) -> EvaluationParams:
        """Validate a mapping (a params file's content); relative paths are taken from ``base``."""
        if not isinstance(values, Mapping):
            raise EvaluationError("evaluation parameters must be a JSON object")
        known = [f for f in cls.__dataclass_fields__]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise EvaluationError(f"unknown evaluation parameter {unknown[0]!r}; known: {', '.join(known)}")
        data = dict(values)
        for key in ("snapshot", "out"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise EvaluationError(f"evaluation parameter {key!r} must be a path")
            path = Path(data[key])
            data[key] = str(Path(base, path) if base is not None and not path.is_absolute() else path)
        strategies = data.get("strategies")
        if strategies is not None:
            if isinstance(strategies, str) or not isinstance(strategies, Sequence):
                raise EvaluationError("evaluation parameter 'strategies' must be a list of names or null")
            data["strategies"] = tuple(strategies)
        params = cls(**data)
        params.validate()
        return params

    def validate(self) -> None:
        """Refuse bad values once, up front, instead of as an error row in every group."""
        if self.strategies is not None:
            if not self.strategies:
                raise EvaluationError("evaluation parameter 'strategies' is empty: name some, or null")
            if not all(isinstance(s, str) for s in self.strategies):
                raise EvaluationError("evaluation parameter 'strategies' must hold strategy names")
        for key in ("max_moves", "count_slack", "partitions", "output_files"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise EvaluationError(f"evaluation parameter {key!r} must be a non-negative integer or null")
        budget = self.exact_budget
        if budget is not None and (
            not isinstance(budget, int | float) or isinstance(budget, bool) or budget < 0
        ):
            raise EvaluationError(
                "evaluation parameter 'exact_budget' must be seconds (a number >= 0) or null"
            )
        for key in ("partitions", "output_files"):
            if getattr(self, key) == 0:
                raise EvaluationError(f"evaluation parameter {key!r} must be at least 1")
        check_strategies(self.names(), self.options())

    def names(self) -> list[str]:
        """The strategies to run, in order (all registered ones when none were named)."""
        return list(self.strategies) if self.strategies is not None else strategy_names()

    def options(self) -> dict[str, Any]:
        """Strategy options (each strategy takes the ones it knows)."""
        return {
            "max_moves": self.max_moves,
            "count_slack": self.count_slack,
            "exact_budget": self.exact_budget,
        }

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["strategies"] = list(self.strategies) if self.strategies is not None else None
        return out


def check_strategies(names: Iterable[str], options: Mapping[str, Any]) -> None:
    """Raise now for an unknown strategy or an option value a strategy refuses."""
    for name in names:
        get_strategy(name, **applicable_options(name, dict(options)))


def load_params(path: str | Path) -> EvaluationParams:
    """Read and validate a params file; relative paths in it are relative to the file's folder."""
    path = Path(path)
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvaluationError(f"cannot read params file {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise EvaluationError(f"params file {path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    return EvaluationParams.from_mapping(values, base=path.parent)


def write_params(params: EvaluationParams, path: str | Path) -> Path:
    """Write a params file (absolute paths) for the Spark job."""
    path = Path(path)
    data = params.to_dict()
    data["snapshot"] = str(Path(params.snapshot).resolve())
    data["out"] = str(Path(params.out).resolve())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path
