"""The evaluate task of the planning DAGs: the provider's ``SparkSubmitOperator`` running the
evaluation job (``spark_jobs/evaluate_groups.py``), logging one line about its command instead
of the whole command line (dozens of --conf and --py-files entries before the job's own output).
"""

from __future__ import annotations

import os

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

from ..spark.submit import spark_submit_settings
from . import tasks


class _QuietSubmitHook(SparkSubmitHook):
    """The provider's hook, building the same command without logging all of it."""

    def _build_spark_submit_command(self, application: str) -> list[str]:
        command = self._get_spark_binary_path()
        command.extend(self._build_spark_common_args())
        command.append(application)
        command.extend(self._application_args or ())
        tasks.log.info(
            "spark-submit %s with %d arguments (its parameters: %s)",
            os.path.basename(application),
            len(command),
            (self._application_args or ["-"])[0],
        )
        return command


class EvaluateOperator(SparkSubmitOperator):
    """spark-submit of the evaluation job, logging one line about it instead of the whole
    command line (dozens of --conf and --py-files entries before the job's own output)."""

    def _get_hook(self) -> SparkSubmitHook:
        hook = super()._get_hook()
        hook.__class__ = _QuietSubmitHook  # same state, one method quieter
        return hook


def evaluate_operator() -> SparkSubmitOperator:
    """The ``evaluate`` task: spark-submit of the job, its parameters from the start task."""
    # The library zip is (re)built by the start task, not on every parse of the DAG file.
    settings = spark_submit_settings(build=False)
    return EvaluateOperator(
        task_id="evaluate",
        application=settings["application"],
        application_args=["{{ ti.xcom_pull(task_ids='start')['spark_params'] }}"],
        py_files=settings["py_files"],
        conf=settings["conf"],
        env_vars=settings["env"],
        spark_binary=settings["spark_binary"],
        conn_id=os.environ.get("LAGASSIGN_SPARK_CONN_ID", "spark_default"),
        name="lagassign-evaluate",
        verbose=False,
    )
