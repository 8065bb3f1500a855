"""Airflow DAG: publish a reviewed plan, triggered from the plans page (lagassign.workflow.dags)."""

from lagassign.workflow.dags import make_review_dag

dag = make_review_dag()
