"""Airflow DAG: failover of assign()-mode groups, fired by the status topic's watcher (lagassign.workflow)."""

from lagassign.workflow.failover import make_failover_dag

dag = make_failover_dag()
