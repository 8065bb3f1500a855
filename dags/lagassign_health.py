"""Airflow DAG: every consumer group's health once a minute, alerts once per change (lagassign.workflow).

Alerts go to the notifiers given here, e.g. ``make_health_dag(notifiers=[SlackNotifier(...)])``
(any Airflow ``BaseNotifier``), and to those ``LAGASSIGN_ALERT_WEBHOOK`` / ``LAGASSIGN_ALERT_NOTIFIER``
name (see docs/groups.md).
"""

from lagassign.workflow.health import make_health_dag

dag = make_health_dag()
