# syntax=docker/dockerfile:1
# Spark standalone master and workers for lagassign's evaluation job.
#
# Spark here is the pip pyspark of requirements.lock (4.2.0), the same jars and the same Python
# minor (3.11) as the spark-submit driver in the Airflow image: a standalone cluster refuses
# executors of another Spark version, and PySpark refuses a worker Python of another minor.
# Executors also need the library's dependencies (numpy, pandas, pyarrow); the library itself
# reaches them through --py-files.

FROM eclipse-temurin:17.0.16_8-jre AS java

FROM python:3.11-slim-bookworm

COPY --from=java /opt/java/openjdk /opt/java/openjdk
ENV JAVA_HOME=/opt/java/openjdk \
    PATH=/opt/java/openjdk/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1

COPY requirements.lock /tmp/requirements.lock
RUN pip install --no-cache-dir -c /tmp/requirements.lock pyspark numpy pandas pyarrow \
    && python -c "import pyspark, numpy, pandas, pyarrow; assert pyspark.__version__ == '4.2.0'"

# uid 50000, gid 0 like Airflow's user: files the executors write to the shared
# LAGASSIGN_BASE_DIR volume are the scheduler's to read and replace.
RUN useradd --uid 50000 --gid 0 --create-home --shell /bin/bash spark \
    && mkdir -p /opt/lagassign-data /opt/spark-work \
    && chown -R 50000:0 /opt/lagassign-data /opt/spark-work \
    && chmod -R g+rwX /opt/lagassign-data /opt/spark-work
USER 50000
WORKDIR /opt/spark-work

# spark-class comes with pyspark (on PATH); the compose file picks Master or Worker.
CMD ["spark-class", "org.apache.spark.deploy.master.Master"]
