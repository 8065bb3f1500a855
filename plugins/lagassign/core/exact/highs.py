"""HiGHS, the exact models' optional solver: a MILP from constraints given row by row, and a
solver that runs it quietly, on one thread and with one seed, so a run gives the same answer
every time. ``highspy`` is imported only here and only when a model is solved."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def rowwise_milp(
    cost: Sequence[float],
    col_bounds: tuple[Sequence[float], Sequence[float]],
    row_bounds: tuple[Sequence[float], Sequence[float]],
    rows: tuple[Sequence[int], Sequence[int], Sequence[float]],
    integer: Sequence[bool],
) -> Any:
    """A ``highspy.HighsLp``: minimise ``cost`` . x with ``col_bounds`` (lower, upper) on x and
    ``row_bounds`` on A x, A given row-wise as ``rows`` (starts, column indices, values);
    ``integer`` says which columns are integral. Infinite bounds are HiGHS's infinity."""
    import highspy
    import numpy as np

    n, n_rows = len(cost), len(row_bounds[0])
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = n_rows
    lp.col_cost_ = np.array(cost, dtype=float)
    lp.col_lower_ = np.array(col_bounds[0], dtype=float)
    lp.col_upper_ = np.array(col_bounds[1], dtype=float)
    lp.row_lower_ = np.array(row_bounds[0], dtype=float)
    lp.row_upper_ = np.array(row_bounds[1], dtype=float)
    starts, index, value = rows
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value, dtype=float)
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = n_rows
    kinds = highspy.HighsVarType
    lp.integrality_ = [kinds.kInteger if i else kinds.kContinuous for i in integer]
    return lp


def quiet_solver(lp: Any, time_limit: float, **options: float) -> Any:
    """A ``highspy.Highs`` holding ``lp``: no output, one thread, seed 0, ``time_limit``
    seconds (at least 10 ms), and any further HiGHS ``options``."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", 0)
    h.setOptionValue("time_limit", max(0.01, float(time_limit)))
    for name, value in options.items():
        h.setOptionValue(name, value)
    h.passModel(lp)
    return h
