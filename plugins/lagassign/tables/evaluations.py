"""The evaluations on disk: what both engines (in-process and Spark) write and the pipeline reads.

An evaluations folder (OUT) holds:

* ``evaluations.parquet/``: Parquet part files, one row per group x strategy (``FIELDS``): a
  few scalar columns for people and SQL, and the result in its one JSON form
  (``core.results.StrategyResult``); a group that could not be evaluated has one row with
  ``strategy`` null and ``error`` set.
* ``summary.json``: written last, so its presence means the evaluations are complete: engine
  ("local" | "spark"), groups, strategies, failures, rows, seconds.

``read_evaluations`` gives back exactly the ``GroupEvaluation`` objects that were written,
whichever engine wrote them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..core.clock import now_text
from ..core.errors import LagassignError
from ..core.results import GroupEvaluation, StrategyResult

EVALUATIONS = "evaluations.parquet"
SUMMARY = "summary.json"

# The one schema of evaluations, as Arrow type names.
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
    ("result_json", "string"),  # the whole result: ``StrategyResult.to_json`` (null on an error row)
    ("group_type", "string"),  # classic | consumer, from the snapshot (null when unknown)
    ("assignor", "string"),  # the assignor the cluster runs for the group (null when unknown)
)
COLUMNS = tuple(name for name, _ in FIELDS)
#: evaluations written before they were recorded lack these columns
OPTIONAL_COLUMNS = ("group_type", "assignor")


class EvaluationError(LagassignError):
    """Evaluation parameters, a snapshot or an evaluations folder that cannot be used."""


# -- evaluations <-> rows --------------------------------------------------------------------------


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def evaluation_rows(evaluation: GroupEvaluation) -> list[dict[str, Any]]:
    """The rows (``FIELDS``) of one group's evaluation: the scalar columns for people and SQL,
    and the result itself in its one JSON form."""
    group = evaluation.group
    kafka = {"group_type": evaluation.group_type, "assignor": evaluation.assignor}
    if evaluation.error is not None:
        row = dict.fromkeys(COLUMNS)
        row.update(group=group, error=evaluation.error, **kafka)
        return [row]
    rows = []
    for position, result in enumerate(evaluation.results):
        m = result.metrics or {}
        rows.append(
            {
                "group": group,
                "strategy": result.strategy,
                "position": position,
                "refused": result.refused,
                "error": None,
                "best": result.strategy == evaluation.best,
                "members": evaluation.members,
                "partitions": evaluation.partitions,
                "lower_bound_max_lag": evaluation.lower_bound_max_lag,
                "max_lag": m.get("max_lag"),
                "mean_lag": _float(m.get("mean_lag")),
                "imbalance": _float(m.get("imbalance")),
                "lag_spread": m.get("lag_spread"),
                "count_spread": m.get("count_spread"),
                "moves": m.get("moves"),
                "result_json": result.to_json(),
                **kafka,
            }
        )
    return rows


def row_columns(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """Rows (``evaluation_rows``) as columns, for pyarrow: ``from_pydict`` on them takes a third
    of the time ``from_pylist`` takes on the rows."""
    return {name: [row.get(name) for row in rows] for name in COLUMNS}


def evaluation_columns(evaluations: Sequence[GroupEvaluation]) -> dict[str, list[Any]]:
    """``row_columns`` of every evaluation's ``evaluation_rows``, made straight as columns
    (no dict per row): what the in-process engine writes."""
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    for evaluation in evaluations:
        if evaluation.error is not None or not evaluation.results:
            for name, values in row_columns(evaluation_rows(evaluation)).items():
                columns[name].extend(values)
            continue
        results = evaluation.results
        n = len(results)
        metrics = [r.metrics or {} for r in results]
        shared: tuple[tuple[str, Any], ...] = (
            ("group", evaluation.group),
            ("error", None),
            ("members", evaluation.members),
            ("partitions", evaluation.partitions),
            ("lower_bound_max_lag", evaluation.lower_bound_max_lag),
            ("group_type", evaluation.group_type),
            ("assignor", evaluation.assignor),
        )
        for name, value in shared:
            columns[name].extend([value] * n)
        columns["strategy"].extend([r.strategy for r in results])
        columns["position"].extend(range(n))
        columns["refused"].extend([r.refused for r in results])
        columns["best"].extend([r.strategy == evaluation.best for r in results])
        for name in ("max_lag", "lag_spread", "count_spread", "moves"):
            columns[name].extend([m.get(name) for m in metrics])
        for name in ("mean_lag", "imbalance"):
            columns[name].extend([_float(m.get(name)) for m in metrics])
        columns["result_json"].extend([r.to_json() for r in results])
    return columns


def evaluations_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[GroupEvaluation]:
    """Group rows back into evaluations, sorted by group name (inverse of ``evaluation_rows``)."""
    by_group: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_group.setdefault(row["group"], []).append(row)
    out = []
    for group in sorted(by_group):
        grows = by_group[group]
        kafka = (grows[0].get("group_type"), grows[0].get("assignor"))
        failed = [r for r in grows if r["error"] is not None]
        if failed:
            out.append(GroupEvaluation(group, error=failed[0]["error"]).on_cluster(*kafka))
            continue
        grows.sort(key=lambda r: r["position"])
        first = grows[0]
        out.append(
            GroupEvaluation(
                group,
                tuple(StrategyResult.from_json(r["result_json"]) for r in grows),
                first["members"],
                first["partitions"],
                next((r["strategy"] for r in grows if r["best"]), None),
                first["lower_bound_max_lag"],
            ).on_cluster(*kafka)
        )
    return out


def arrow_schema() -> Any:
    """The evaluations schema as a pyarrow schema."""
    import pyarrow as pa

    return pa.schema([(name, _arrow_type(kind)) for name, kind in FIELDS])


def _arrow_type(kind: str) -> Any:
    """The pyarrow type of an Arrow type name of ``FIELDS``."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int32": pa.int32(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
    }
    return types[kind]


# -- the evaluations folder -----------------------------------------------------------------------


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
        "finished_at": now_text("seconds"),
        "failures": sorted(
            ({"group": f["group"], "error": f["error"]} for f in failures), key=lambda f: f["group"]
        ),
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


def evaluation_table(evaluations: Sequence[GroupEvaluation]) -> Any:
    """The evaluations as an Arrow table of ``arrow_schema()`` (``evaluation_columns``): what
    both engines write, the in-process one in one file, each Spark task in its own."""
    import pyarrow as pa

    columns = evaluation_columns(evaluations)
    kinds = dict(FIELDS)
    arrays = [_column_array(values, kinds[name]) for name, values in columns.items()]
    return pa.Table.from_arrays(arrays, schema=arrow_schema())


def write_evaluations(
    evaluations: Iterable[GroupEvaluation],
    out_dir: str | Path,
    seconds: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Write evaluations (``evaluate_snapshot``'s output) as OUT/evaluations.parquet and
    OUT/summary.json (engine "local"), replacing what was there; returns the summary."""
    import pyarrow.parquet as pq

    evaluations = list(evaluations)
    out = clear_output(out_dir)
    table = evaluation_table(evaluations)
    (out / EVALUATIONS).mkdir()
    pq.write_table(table, out / EVALUATIONS / "part-00000.parquet")
    # the strategies in the order of their first row (without pyarrow.compute, slow to import)
    names = list(dict.fromkeys(r.strategy for ev in evaluations for r in ev.results))
    failures = [{"group": ev.group, "error": ev.error} for ev in evaluations if ev.error is not None]
    rows = table.num_rows
    summary = make_summary("local", len(evaluations), names, failures, rows, seconds, **extra)
    write_summary(out, summary)
    return summary


#: a string column's offsets are int32: larger texts are left to pyarrow (which splits them)
_MAX_STRING_BYTES = 2**31 - 1


def _column_array(values: list[Any], kind: str) -> Any:
    """One column of ``FIELDS`` (``kind`` its Arrow type name) as a pyarrow array, made from
    buffers (``_text_array``, ``_number_array``). ``pa.array`` would give the same array, but its
    first call in a process imports pandas (to ask whether the values are a pandas object),
    in every in-process run and in every Spark worker, for nothing."""
    if kind == "string":
        return _text_array(values)
    return _number_array(values, kind)


def _validity(values: list[Any], nulls: int) -> Any:
    """The validity bitmap of ``values`` (None is null), or None when nothing is null."""
    import pyarrow as pa

    if not nulls:
        return None
    present = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    return pa.py_buffer(np.packbits(present, bitorder="little"))


def _number_array(values: list[Any], kind: str) -> Any:
    """A pyarrow array of Arrow type ``kind`` (int32, int64, float64 or bool) from Python
    values and None (null); numpy's type of the same name holds the values. A value out of
    the type's range raises, as ``pa.array`` would."""
    import pyarrow as pa

    nulls = values.count(None)
    plain = [0 if v is None else v for v in values] if nulls else values
    data = np.array(plain, dtype=kind)
    if kind == "bool":
        data = np.packbits(data, bitorder="little")
    return pa.Array.from_buffers(
        _arrow_type(kind), len(values), [_validity(values, nulls), pa.py_buffer(data)], null_count=nulls
    )


def _text_array(values: list[str | None]) -> Any:
    """A pyarrow string array of texts (and nulls), made from one buffer of them all:
    ``pa.array`` checks and copies each text on its own (results' JSON, 30 KB a group, is
    ASCII: the encoder escapes everything else; names may be any UTF-8)."""
    import pyarrow as pa

    texts = [v for v in values if v is not None]
    joined = "".join(texts)
    if joined.isascii():
        data = joined.encode("ascii")
        sizes = [0 if v is None else len(v) for v in values]
    else:
        # a lone surrogate raises UnicodeEncodeError here, as it does in pa.array
        encoded = [b"" if v is None else v.encode("utf-8") for v in values]
        data = b"".join(encoded)
        sizes = list(map(len, encoded))
    if len(data) > _MAX_STRING_BYTES:
        return pa.array(values, type=pa.string())
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(sizes, out=offsets[1:])
    nulls = len(values) - len(texts)
    return pa.StringArray.from_buffers(
        len(values), pa.py_buffer(offsets), pa.py_buffer(data), _validity(values, nulls), nulls
    )


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
    missing = [c for c in COLUMNS if c not in table.column_names and c not in OPTIONAL_COLUMNS]
    if missing:
        raise EvaluationError(f"evaluations {out_dir}: lacks column(s) {', '.join(missing)}")
    return table.select([c for c in COLUMNS if c in table.column_names]).to_pylist()


def read_evaluations(out_dir: str | Path) -> list[GroupEvaluation]:
    """The evaluations, sorted by group, exactly as ``evaluate_snapshot`` returned them."""
    return evaluations_from_rows(read_evaluation_rows(out_dir))


#: The evaluate log names at most this many groups (a daily run may hold thousands).
LOG_GROUPS = 50


def group_lines(rows: Sequence[Mapping[str, Any]], total: int, limit: int = LOG_GROUPS) -> list[str]:
    """One log line per group (at most ``limit``, then how many more) from per-group rows
    ``{group, current, best, best_lag, error}``: what the evaluation found, so the evaluate
    task's log says more than Spark's start-up."""
    lines = []
    for r in list(rows)[:limit]:
        if r.get("error"):
            lines.append(f"group {r['group']}: not evaluated: {r['error']}")
        elif r.get("best") is None or r.get("current") is None:
            lines.append(f"group {r['group']}: no strategy could serve it")
        else:
            lines.append(
                f"group {r['group']}: best {r['best']}, max lag {int(r['current']):,} now -> "
                f"{int(r['best_lag']):,}"
            )
    if total > limit:
        lines.append(f"... and {total - limit} more groups (the plans page has them all)")
    return lines
