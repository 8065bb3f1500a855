"""TRANSITIONAL: the Spark job's tasks, now in ``spark.layout`` (where each group's rows are),
``spark.task_plan`` (the driver's plan) and ``spark.task_run`` (one task on its executor)."""

from .layout import READ_BATCH_ROWS, FileLayout, Layout, file_layout, group_rows, snapshot_layout
from .task_plan import (
    Files,
    GroupWork,
    Plan,
    Task,
    cut_tasks,
    default_tasks,
    estimated_cost,
    group_costs,
    plan_tasks,
    task_shares,
)
from .task_run import freeze_survivors, part_name, run_task

__all__ = [
    "READ_BATCH_ROWS",
    "FileLayout",
    "Files",
    "GroupWork",
    "Layout",
    "Plan",
    "Task",
    "cut_tasks",
    "default_tasks",
    "estimated_cost",
    "file_layout",
    "freeze_survivors",
    "group_costs",
    "group_rows",
    "part_name",
    "plan_tasks",
    "run_task",
    "snapshot_layout",
    "task_shares",
]
