# syntax=docker/dockerfile:1
# Airflow 3 with lagassign installed, and a Java 17 runtime for spark-submit.
# Built by docker-compose.yml with the repository as context (docker/airflow.Dockerfile.dockerignore
# keeps .venv and var/ out of it).
#
# The project is installed editable from /opt/lagassign, where the compose file mounts ./dags,
# ./plugins and ./spark_jobs: the code that runs is the checkout's, without a rebuild.
# Rebuild after pyproject.toml or requirements.lock changes.

# Java from Temurin rather than apt: the same JRE as the Spark image, whatever Debian the
# Airflow image is based on.
FROM eclipse-temurin:17.0.16_8-jre AS java

FROM apache/airflow:3.3.2-python3.11

COPY --from=java /opt/java/openjdk /opt/java/openjdk
ENV JAVA_HOME=/opt/java/openjdk \
    LAGASSIGN_JAVA_HOME=/opt/java/openjdk

USER root
RUN mkdir -p /opt/lagassign /opt/lagassign-data /opt/airflow/auth \
    && chown -R airflow:0 /opt/lagassign /opt/lagassign-data /opt/airflow/auth \
    && chmod -R g+rwX /opt/lagassign-data /opt/airflow/auth
USER airflow

COPY --chown=airflow:0 pyproject.toml requirements.lock README.md /opt/lagassign/
COPY --chown=airflow:0 plugins /opt/lagassign/plugins
COPY --chown=airflow:0 dags /opt/lagassign/dags
COPY --chown=airflow:0 spark_jobs /opt/lagassign/spark_jobs

# requirements.lock pins apache-airflow 3.3.2 like the base image, so nothing of Airflow moves.
# asyncpg: Airflow 3 opens an async engine on its PostgreSQL metadata database too.
RUN pip install --no-cache-dir -c /opt/lagassign/requirements.lock \
        -e "/opt/lagassign[kafka,pipeline]" "asyncpg>=0.30.0" \
    && python -c "import lagassign, pyspark, confluent_kafka, asyncpg, psycopg2"
