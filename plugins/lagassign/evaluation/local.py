"""The in-process engine: every requested strategy for every group of a snapshot, in this
process, written as the Spark job writes them (``tables.evaluations``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core.model import gc_paused
from ..core.results import GroupEvaluation
from ..core.strategies import strategy_names
from ..tables.evaluations import write_evaluations
from ..tables.snapshot import snapshot_group_columns
from .group import evaluate_group_columns
from .params import EvaluationParams, check_strategies

Progress = Callable[[int, int, str], None]
"""Called after each group: (groups done, groups in all, group just evaluated)."""


@gc_paused  # it holds the whole snapshot's rows and every result; cycles made meanwhile go after it
def evaluate_snapshot(
    snapshot_dir: str | Path,
    strategies: Sequence[str] | None = None,
    max_moves: int | None = None,
    progress: Progress | None = None,
    count_slack: int | None = None,
    exact_budget: float | None = None,
) -> list[GroupEvaluation]:
    """Every strategy (or the given ones) on every group of a snapshot, in this process; one
    evaluation per group, sorted by group (failed ones carry their error)."""
    names = list(strategies) if strategies is not None else strategy_names()
    options = {"max_moves": max_moves, "count_slack": count_slack, "exact_budget": exact_budget}
    check_strategies(names, options)
    work = list(snapshot_group_columns(snapshot_dir))
    out = []
    for done, (grow, parts, members) in enumerate(work, start=1):
        out.append(evaluate_group_columns(grow, parts, members, names, options))
        if progress is not None:
            progress(done, len(work), grow["group"])
    return out


@gc_paused  # writing walks every result too: see evaluate_snapshot
def run_local(params: EvaluationParams, progress: Progress | None = None) -> dict[str, Any]:
    """The in-process engine end to end: evaluate the snapshot, write OUT; returns the summary."""
    started = time.monotonic()
    evaluations = evaluate_snapshot(
        params.snapshot, params.names(), params.max_moves, progress, params.count_slack, params.exact_budget
    )
    return write_evaluations(
        evaluations,
        params.out,
        time.monotonic() - started,
        snapshot=params.snapshot,
        options=_options_record(params),
    )


def _options_record(params: EvaluationParams) -> dict[str, Any]:
    return {k: v for k, v in params.options().items() if v is not None}
