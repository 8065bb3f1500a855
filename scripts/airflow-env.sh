# Source me: the environment of the local Airflow that runs lagassign's DAGs (demo, UI), and of
# lagassign commands that should read and write the demo's audit store (`source
# scripts/airflow-env.sh; lagassign plans list`). AIRFLOW_HOME lives under var/ in the
# repository, and with it the audit store; nothing outside it is touched.
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
# The audit store of the DAGs and of the CLI alike (both default to $AIRFLOW_HOME/lagassign.db).
export LAGASSIGN_DB_URL="${LAGASSIGN_DB_URL:-sqlite:///$AIRFLOW_HOME/lagassign.db}"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
export SPARK_LOCAL_IP=127.0.0.1
export PATH="$_repo/.venv/bin:$PATH"
unset _repo
