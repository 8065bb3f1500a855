"""Airflow DAG: manual rebalance planning with parameters from the trigger form (lagassign.workflow.dags)."""

from lagassign.workflow.dags import make_dag

dag = make_dag("lagassign_rebalance")
