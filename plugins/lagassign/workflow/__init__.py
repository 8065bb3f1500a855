"""The Airflow side of lagassign: a hook for the Kafka connection, thin task callables, the DAG
factory and the UI plugin. DAG files in ``dags/`` only call ``make_dag``."""
