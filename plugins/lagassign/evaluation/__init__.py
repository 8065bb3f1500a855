"""Evaluating a whole snapshot: every requested strategy for every group (``tables.evaluations``
is where the evaluations go).

Two engines produce the same output: ``local.evaluate_snapshot`` in this process, and the Spark
job ``spark_jobs/evaluate_groups.py`` (``lagassign.spark``). Both turn one group's snapshot rows
into an evaluation through ``group.evaluate_group_columns``, so they cannot drift apart; the
Spark job only decides which executor runs which groups (its tasks read their groups' rows
themselves). This layer sits below both: ``spark`` and ``pipeline`` import it, it imports only
``core`` and ``tables``.

* ``params``: ``EvaluationParams``, what one run does, and its JSON file for the Spark job.
* ``group``: one group's evaluation from its snapshot rows.
* ``local``: the in-process engine (``evaluate_snapshot``, ``run_local``).
"""

from .group import evaluate_group_columns, evaluate_group_rows
from .local import Progress, evaluate_snapshot, run_local
from .params import EvaluationParams, check_strategies, load_params, write_params

__all__ = [
    "EvaluationParams",
    "Progress",
    "check_strategies",
    "evaluate_group_columns",
    "evaluate_group_rows",
    "evaluate_snapshot",
    "load_params",
    "run_local",
    "write_params",
]
