"""Airflow DAG: daily rebalance planning; publishing is off unless the Variable lagassign_apply is true."""

from lagassign.workflow.dags import make_dag

dag = make_dag("lagassign_daily")
