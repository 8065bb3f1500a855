# Source me: the environment of the local Airflow that runs lagassign's DAGs (demo, tests, UI).
# AIRFLOW_HOME lives under var/ in the repository; nothing outside it is touched.
_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export AIRFLOW_HOME="${AIRFLOW_HOME:-$_repo/var/airflow}"
export AIRFLOW__CORE__DAGS_FOLDER="$_repo/dags"
export AIRFLOW__CORE__PLUGINS_FOLDER="$_repo/plugins"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__CORE__PARALLELISM="${AIRFLOW__CORE__PARALLELISM:-4}"
export AIRFLOW__API__HOST="${AIRFLOW__API__HOST:-127.0.0.1}"
export AIRFLOW__API__PORT="${AIRFLOW__API__PORT:-8080}"
export AIRFLOW_CONN_SPARK_DEFAULT="${AIRFLOW_CONN_SPARK_DEFAULT:-{\"conn_type\": \"spark\", \"host\": \"local[2]\"\}}"
export AIRFLOW_CONN_LAGASSIGN_KAFKA="${AIRFLOW_CONN_LAGASSIGN_KAFKA:-{\"conn_type\": \"generic\", \"extra\": {\"bootstrap.servers\": \"127.0.0.1:19092\"\}\}}"
export LAGASSIGN_BASE_DIR="${LAGASSIGN_BASE_DIR:-$AIRFLOW_HOME/lagassign}"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
export SPARK_LOCAL_IP=127.0.0.1
export PATH="$_repo/.venv/bin:$PATH"
unset _repo
