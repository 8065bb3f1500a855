"""What the exact models share: their binary columns, their rows, and HiGHS, their optional
solver, run quietly, on one thread and with one seed, so a run gives the same answer every time.

Both models (``lag_milp``, ``drain_milp``) decide x[p, m] in {0, 1}, partition p to member m,
for the eligible pairs only (``PairColumns``), and write each constraint as one row
{column: coefficient} between two bounds (``Row``). ``highspy`` is imported only here and only
when a model is solved.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ..model import TopicPartition

#: one constraint: lower <= sum(coefficient * column) <= upper
Row = tuple[dict[int, float], float, float]
Layout = dict[str, list[TopicPartition]]


class PairColumns:
    """The columns x[p, m] of a model, one per (partition place, member place) pair in
    ``pairs``, and the columns of each partition and of each member (the rows every model has)."""

    def __init__(self, pairs: list[tuple[int, int]], tps: list[TopicPartition], members: list[str]) -> None:
        self.pairs, self.tps, self.members = pairs, tps, members
        self.by_part: list[list[int]] = [[] for _ in tps]
        self.by_member: list[list[int]] = [[] for _ in members]
        for c, (pi, mi) in enumerate(pairs):
            self.by_part[pi].append(c)
            self.by_member[mi].append(c)

    def layout(self, x: Sequence[float]) -> Layout | None:
        """The plan of a solution's column values; None if it misses a partition (never trust
        a broken answer)."""
        layout: Layout = {mid: [] for mid in self.members}
        for c, (pi, mi) in enumerate(self.pairs):
            if x[c] > 0.5:
                layout[self.members[mi]].append(self.tps[pi])
        return layout if sum(map(len, layout.values())) == len(self.tps) else None


def rowwise_milp(
    cost: Sequence[float],
    col_bounds: tuple[Sequence[float], Sequence[float]],
    rows: Sequence[Row],
    integer: Sequence[bool],
) -> Any:
    """A ``highspy.HighsLp``: minimise ``cost`` . x with ``col_bounds`` (lower, upper) on x and
    the constraints ``rows``; ``integer`` says which columns are integral. Infinite bounds are
    HiGHS's infinity."""
    import highspy
    import numpy as np

    n, n_rows = len(cost), len(rows)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = n_rows
    lp.col_cost_ = np.array(cost, dtype=float)
    lp.col_lower_ = np.array(col_bounds[0], dtype=float)
    lp.col_upper_ = np.array(col_bounds[1], dtype=float)
    lp.row_lower_ = np.array([lo for _, lo, _ in rows], dtype=float)
    lp.row_upper_ = np.array([hi for _, _, hi in rows], dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array([0, *itertools.accumulate(len(row) for row, _, _ in rows)], dtype=np.int32)
    lp.a_matrix_.index_ = np.array([c for row, _, _ in rows for c in row], dtype=np.int32)
    lp.a_matrix_.value_ = np.array([v for row, _, _ in rows for v in row.values()], dtype=float)
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
