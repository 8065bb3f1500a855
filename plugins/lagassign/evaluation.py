"""Evaluating a whole snapshot: every requested strategy for every group, and the evaluations on disk.

Two engines produce the same output: ``evaluate_snapshot`` in this process, and the Spark job
``spark_jobs/evaluate_groups.py`` (``lagassign.spark``). Both turn one group's snapshot rows into
an evaluation through ``evaluate_group_rows``, so they cannot drift apart; the Spark job only
decides which executor runs which group.

An evaluations folder (OUT) holds:

* ``evaluations.parquet/``: Parquet part files, one row per group x strategy (``FIELDS``);
  a group that could not be evaluated has one row with ``strategy`` null and ``error`` set.
* ``summary.json``: written last, so its presence means the evaluations are complete: engine
  ("local" | "spark"), groups, strategies, failures, rows, seconds.

``read_evaluations`` rebuilds exactly the dicts ``evaluate_group`` returns (plus
``{"group", "error"}`` for failed groups), whichever engine wrote them: the gate and the audit
store consume one shape.

The Spark job takes its parameters from a JSON file (``EvaluationParams``), never from a
command line built out of them.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .api import evaluate_group
from .case import parse_case
from .errors import LagassignError
from .snapshot import case_from_rows, snapshot_groups
from .strategies import applicable_options, get_strategy, strategy_names

EVALUATIONS = "evaluations.parquet"
SUMMARY = "summary.json"

# The one schema of evaluations, as Arrow type names; Spark's DDL is derived from it.
FIELDS: tuple[tuple[str, str], ...] = (
    ("group", "string"),
    ("strategy", "string"),  # null on a group's error row
    ("position", "int32"),  # the result's index in evaluate_group's results
    ("refused", "string"),
    ("error", "string"),  # why the group was not evaluated (snapshot failed, invalid case)
    ("best", "bool"),  # this strategy is the group's best
    ("members", "int32"),
    ("partitions", "int32"),
    ("lower_bound_max_lag", "int64"),
    ("max_lag", "int64"),
    ("mean_lag", "float64"),
    ("imbalance", "float64"),
    ("lag_spread", "int64"),
    ("count_spread", "int32"),
    ("moves", "int32"),
    ("metrics_json", "string"),  # the full metrics object, as the library returns it
    ("assignment_json", "string"),
    ("withheld_json", "string"),
    ("unassigned_json", "string"),
)
COLUMNS = tuple(name for name, _ in FIELDS)
_SPARK_TYPES = {"string": "string", "int32": "int", "int64": "bigint", "float64": "double", "bool": "boolean"}

Progress = Callable[[int, int, str], None]
"""Called after each group: (groups done, groups in all, group just evaluated)."""


class EvaluationError(LagassignError):
    """Evaluation parameters, a snapshot or an evaluations folder that cannot be used."""


# -- parameters ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvaluationParams:
    """What one evaluation run does; the Spark job reads it from a JSON file (one argument).

    ``partitions``: how many tasks share the groups on Spark (default from the cluster's
    parallelism); ``output_files``: Parquet part files written (default one per 2,000 groups).
    """

    snapshot: str
    out: str
    strategies: tuple[str, ...] | None = None
    max_moves: int | None = None
    count_slack: int | None = None
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
        for key in ("partitions", "output_files"):
            if getattr(self, key) == 0:
                raise EvaluationError(f"evaluation parameter {key!r} must be at least 1")
        check_strategies(self.names(), self.options())

    def names(self) -> list[str]:
        """The strategies to run, in order (all registered ones when none were named)."""
        return list(self.strategies) if self.strategies is not None else strategy_names()

    def options(self) -> dict[str, Any]:
        """Strategy options (each strategy takes the ones it knows)."""
        return {"max_moves": self.max_moves, "count_slack": self.count_slack}

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


# -- one group ------------------------------------------------------------------------------------


def _partition_key(row: Mapping[str, Any]) -> tuple[str, int]:
    part = row.get("partition")
    return (str(row.get("topic") or ""), part if isinstance(part, int) else -1)


def _member_key(row: Mapping[str, Any]) -> tuple[str, str]:
    return (str(row.get("instance_id") or row.get("member_id") or ""), str(row.get("member_id") or ""))


def evaluate_group_rows(
    group_row: Mapping[str, Any],
    partitions: Iterable[Mapping[str, Any]],
    members: Iterable[Mapping[str, Any]],
    strategies: Sequence[str],
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """One group's evaluation from its snapshot rows: ``evaluate_group``'s dict, or
    ``{"group", "error"}`` when the snapshot failed for it or its case is invalid.

    Rows are put in a canonical order first, so the result does not depend on the order in
    which a reader (pyarrow, a Spark shuffle) delivers them. Never raises for one group's data:
    a run over thousands of groups goes on.
    """
    name = group_row["group"]
    if group_row.get("error"):
        return {"group": name, "error": f"snapshot failed: {group_row['error']}"}
    try:
        case = case_from_rows(
            name, sorted(partitions, key=_partition_key), sorted(members, key=_member_key),
            group_row.get("auto_offset_reset"),
        )
        return evaluate_group(parse_case(case), strategies, **options)
    except LagassignError as exc:
        return {"group": name, "error": str(exc)}
    except Exception as exc:  # a bug for one group's data must not lose every other group
        return {"group": name, "error": f"internal error: {type(exc).__name__}: {exc}"}


# -- evaluation dicts <-> rows --------------------------------------------------------------------


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def evaluation_rows(evaluation: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows (``FIELDS``) of one group's evaluation."""
    group = evaluation["group"]
    if evaluation.get("error") is not None or "results" not in evaluation:
        row = dict.fromkeys(COLUMNS)
        row.update(group=group, error=str(evaluation.get("error") or "no results"))
        return [row]
    rows = []
    for position, result in enumerate(evaluation["results"]):
        m = result.get("metrics") or {}
        rows.append({
            "group": group,
            "strategy": result["strategy"],
            "position": position,
            "refused": result.get("refused"),
            "error": None,
            "best": result["strategy"] == evaluation.get("best"),
            "members": evaluation.get("members"),
            "partitions": evaluation.get("partitions"),
            "lower_bound_max_lag": evaluation.get("lower_bound_max_lag"),
            "max_lag": m.get("max_lag"),
            "mean_lag": _float(m.get("mean_lag")),
            "imbalance": _float(m.get("imbalance")),
            "lag_spread": m.get("lag_spread"),
            "count_spread": m.get("count_spread"),
            "moves": m.get("moves"),
            "metrics_json": _dumps(result.get("metrics")),
            "assignment_json": _dumps(result.get("assignment")),
            "withheld_json": _dumps(result.get("withheld")),
            "unassigned_json": _dumps(result.get("unassigned")),
        })
    return rows


def _result_of(row: Mapping[str, Any]) -> dict[str, Any]:
    if row["refused"] is not None:
        return {"strategy": row["strategy"], "refused": row["refused"]}
    result: dict[str, Any] = {
        "strategy": row["strategy"],
        "assignment": json.loads(row["assignment_json"]),
        "metrics": json.loads(row["metrics_json"]),
    }
    for key in ("withheld", "unassigned"):
        if row[f"{key}_json"] is not None:
            result[key] = json.loads(row[f"{key}_json"])
    return result


def evaluations_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Group rows back into evaluation dicts, sorted by group name (inverse of ``evaluation_rows``)."""
    by_group: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_group.setdefault(row["group"], []).append(row)
    out = []
    for group in sorted(by_group):
        grows = by_group[group]
        failed = [r for r in grows if r["error"] is not None]
        if failed:
            out.append({"group": group, "error": failed[0]["error"]})
            continue
        grows.sort(key=lambda r: r["position"])
        first = grows[0]
        out.append({
            "group": group,
            "members": first["members"],
            "partitions": first["partitions"],
            "best": next((r["strategy"] for r in grows if r["best"]), None),
            "lower_bound_max_lag": first["lower_bound_max_lag"],
            "results": [_result_of(r) for r in grows],
        })
    return out


def arrow_schema() -> Any:
    """The evaluations schema as a pyarrow schema."""
    import pyarrow as pa

    types = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "float64": pa.float64(),
             "bool": pa.bool_()}
    return pa.schema([(name, types[t]) for name, t in FIELDS])


def spark_ddl() -> str:
    """The evaluations schema as a Spark DDL string (for ``applyInPandas``)."""
    return ", ".join(f"`{name}` {_SPARK_TYPES[t]}" for name, t in FIELDS)


# -- the snapshot, in this process ----------------------------------------------------------------


def evaluate_snapshot(
    snapshot_dir: str | Path,
    strategies: Sequence[str] | None = None,
    max_moves: int | None = None,
    progress: Progress | None = None,
    count_slack: int | None = None,
) -> list[dict[str, Any]]:
    """Every strategy (or the given ones) on every group of a snapshot, in this process.

    Returns one dict per group, sorted by group: ``evaluate_group``'s output, or
    ``{"group", "error"}`` for a group that failed in the snapshot or whose case is invalid.
    """
    names = list(strategies) if strategies is not None else strategy_names()
    options = {"max_moves": max_moves, "count_slack": count_slack}
    check_strategies(names, options)
    work = list(snapshot_groups(snapshot_dir))
    out = []
    for done, (grow, parts, members) in enumerate(work, start=1):
        out.append(evaluate_group_rows(grow, parts, members, names, options))
        if progress is not None:
            progress(done, len(work), grow["group"])
    return out


# -- the evaluations folder -----------------------------------------------------------------------


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def make_summary(
    engine: str,
    groups: int,
    strategies: Sequence[str],
    failures: Sequence[Mapping[str, Any]],
    rows: int,
    seconds: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The content of ``summary.json`` (both engines write the same keys)."""
    return {
        "engine": engine,
        "groups": groups,
        "evaluated": groups - len(failures),
        "failed": len(failures),
        "strategies": list(strategies),
        "rows": rows,
        "seconds": None if seconds is None else round(seconds, 3),
        "finished_at": _utc_now(),
        "failures": sorted(({"group": f["group"], "error": f["error"]} for f in failures),
                           key=lambda f: f["group"]),
        **extra,
    }


def clear_output(out_dir: str | Path) -> Path:
    """Remove a previous summary (first: it marks completeness) and evaluations from ``out_dir``."""
    out = Path(out_dir)
    (out / SUMMARY).unlink(missing_ok=True)
    if (out / EVALUATIONS).exists():
        shutil.rmtree(out / EVALUATIONS)
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_summary(out_dir: str | Path, summary: Mapping[str, Any]) -> Path:
    """Write ``summary.json`` atomically (it is the completion marker)."""
    path = Path(out_dir) / SUMMARY
    tmp = path.with_name(f".{SUMMARY}.tmp")
    tmp.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def write_evaluations(
    evaluations: Iterable[Mapping[str, Any]],
    out_dir: str | Path,
    seconds: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Write evaluation dicts (``evaluate_snapshot``'s output) as OUT/evaluations.parquet and
    OUT/summary.json (engine "local"), replacing what was there; returns the summary."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    evaluations = list(evaluations)
    out = clear_output(out_dir)
    rows = [row for ev in evaluations for row in evaluation_rows(ev)]
    (out / EVALUATIONS).mkdir()
    table = pa.Table.from_pylist(rows, schema=arrow_schema())
    pq.write_table(table, out / EVALUATIONS / "part-00000.parquet")
    names = list(dict.fromkeys(r["strategy"] for r in rows if r["strategy"] is not None))
    failures = [ev for ev in evaluations if ev.get("error") is not None]
    summary = make_summary("local", len(evaluations), names, failures, len(rows), seconds, **extra)
    write_summary(out, summary)
    return summary


def read_summary(out_dir: str | Path) -> dict[str, Any]:
    """``summary.json`` of an evaluations folder; missing means the run did not complete."""
    path = Path(out_dir) / SUMMARY
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvaluationError(
            f"evaluations {out_dir}: {SUMMARY} is missing: the evaluation did not complete"
        ) from None


def read_evaluation_rows(out_dir: str | Path) -> list[dict[str, Any]]:
    """The raw rows of OUT/evaluations.parquet (any engine), after checking the run completed."""
    import pyarrow.parquet as pq

    read_summary(out_dir)
    table = pq.read_table(Path(out_dir) / EVALUATIONS)
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise EvaluationError(f"evaluations {out_dir}: lacks column(s) {', '.join(missing)}")
    return table.select(list(COLUMNS)).to_pylist()


def read_evaluations(out_dir: str | Path) -> list[dict[str, Any]]:
    """Evaluation dicts, sorted by group, exactly as ``evaluate_snapshot`` returned them."""
    return evaluations_from_rows(read_evaluation_rows(out_dir))


def run_local(params: EvaluationParams, progress: Progress | None = None) -> dict[str, Any]:
    """The in-process engine end to end: evaluate the snapshot, write OUT; returns the summary."""
    started = time.monotonic()
    evaluations = evaluate_snapshot(params.snapshot, params.names(), params.max_moves, progress,
                                    params.count_slack)
    return write_evaluations(evaluations, params.out, time.monotonic() - started,
                             snapshot=params.snapshot, options=_options_record(params))


def _options_record(params: EvaluationParams) -> dict[str, Any]:
    return {k: v for k, v in params.options().items() if v is not None}


__all__ = [
    "COLUMNS", "EVALUATIONS", "FIELDS", "SUMMARY", "EvaluationError", "EvaluationParams", "arrow_schema",
    "evaluate_group_rows", "evaluate_snapshot", "evaluation_rows", "evaluations_from_rows", "load_params",
    "make_summary", "read_evaluations", "read_summary", "run_local", "spark_ddl", "write_evaluations",
    "write_params",
]
