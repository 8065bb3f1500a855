"""The planning run, shared by ``lagassign plan`` and the Airflow tasks, and the failover step.

``params`` (what a run is asked to do), ``steps`` (snapshot, evaluate, record, gate),
``publish`` (publish and reconcile), ``failover`` (one group's new plan after a membership
change), ``watch`` (``lagassign watch``'s loop). The evaluation engines live a layer below
(``lagassign.evaluation``), where Spark's tasks may import them.
"""

from .params import ParamsError, PlanParams, base_dir, run_dir
from .publish import RECONCILE_AFTER, changed_since_snapshot, publish_step, reconcile_step
from .steps import evaluate_step, evaluation_params, gate_step, record_step, snapshot_step

__all__ = [
    "RECONCILE_AFTER",
    "ParamsError",
    "PlanParams",
    "base_dir",
    "changed_since_snapshot",
    "evaluate_step",
    "evaluation_params",
    "gate_step",
    "publish_step",
    "reconcile_step",
    "record_step",
    "run_dir",
    "snapshot_step",
]
