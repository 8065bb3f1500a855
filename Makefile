# Two commands for a fresh machine: `make demo` (set up, run the main job) and `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo ui test prereqs-demo prereqs-test unit lint harness kafka postgres spark-archive bench broker clean

setup: $(STAMP)

# Installs the project with every extra, pinned by requirements.lock; reruns when either changes.
$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c requirements.lock -e '.[kafka,pipeline,test,certify]'
	@touch $(STAMP)

# The demo's broker is noida-db's native one: no Maven, no JVM broker (Java only for Spark).
demo: prereqs-demo setup spark-archive
	scripts/demo

# Airflow's own UI (with the plans page) on 127.0.0.1:8080, same settings as the demo.
ui: setup spark-archive
	scripts/ui

# Every test, on Apache Kafka 4 (the broker fixture's default; LAGASSIGN_BROKER=noida|kafka3
# for another). First what the machine needs (scripts/prereqs: one line per missing thing,
# installs Chromium), lint (seconds), the harness (Kafka's own assignors, fetched once into var/
# and compiled), Kafka itself (fetched once by Maven into var/kafka/), the tests' PostgreSQL
# (127.0.0.1:54329) and a Spark standalone cluster (stopped afterwards unless it was running).
test: prereqs-test lint harness kafka postgres spark-archive
	@if scripts/spark-cluster status >/dev/null 2>&1; then ours=; else ours=1; scripts/spark-cluster start >/dev/null; fi; \
	trap '[[ -z $$ours ]] || scripts/spark-cluster stop >/dev/null' EXIT; \
	LAGASSIGN_SPARK_MASTER=spark://127.0.0.1:7077 $(BIN)/python -m pytest

prereqs-demo prereqs-test: prereqs-%:
	@scripts/prereqs $*

# Apache Kafka's jars for the tests' broker (Maven, once; checked against scripts/kafka-jars/).
kafka: setup
	@LAGASSIGN_BROKER=$${LAGASSIGN_BROKER:-kafka4} scripts/broker fetch

postgres:
	@scripts/postgres start >/dev/null

# The inner loop: the tests that need nothing but this process (no broker, Spark, browser,
# PostgreSQL, Airflow, JVM or pytest session of their own), in well under a minute.
unit: setup
	$(BIN)/python -m pytest tests --ignore=tests/kafka -q -m "not kafka and not spark and not browser \
		and not db and not airflow and not java and not session and not slow"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Kafka's own assignors for the `java` tests, at the tests' broker's release: Maven fetches the
# jars of tests/java/pom.xml once into var/kafka-jars/, checked; javac compiles tests/java.
# Without Maven or a JDK: one line saying so.
harness: setup
	$(BIN)/python scripts/kafka_harness.py >/dev/null

# The Spark driver JVM's class archive (var/spark-driver-*.jsa, ~65 MiB): every Spark run then
# starts about 2 s sooner. Recorded once (~15 s) per Java and Spark install; a failure only warns.
spark-archive: setup
	-$(BIN)/python -m lagassign.spark.archive

bench: setup
	$(BIN)/python bench/speed.py
	$(BIN)/python bench/quality.py
	$(BIN)/python bench/snapshot_speed.py

broker: setup
	scripts/broker start

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
