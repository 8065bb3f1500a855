# Two commands for a fresh machine: `make demo` (set up, run the main job) and `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo ui test unit lint harness spark-archive bench broker clean

setup: $(STAMP)

# Installs the project with every extra, pinned by requirements.lock; reruns when either changes.
$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c requirements.lock -e '.[kafka,pipeline,test,certify]'
	@touch $(STAMP)

demo: setup spark-archive
	scripts/demo

# Airflow's own UI (with the plans page) on 127.0.0.1:8080, same settings as the demo.
ui: setup spark-archive
	scripts/ui

# Lint first (seconds), then every test. The harness (Kafka's own assignors, fetched once into
# var/ and compiled) lets the fidelity tests run instead of skipping.
test: lint harness spark-archive
	$(BIN)/python -m pytest

# The inner loop: the tests that need nothing but this process (no broker, Spark, browser,
# PostgreSQL or Airflow), in well under a minute.
unit: setup
	$(BIN)/python -m pytest tests --ignore=tests/kafka -q \
		-m "not kafka and not spark and not browser and not db and not airflow and not slow"

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
