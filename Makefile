# Two commands for a fresh machine: `make demo` (set up, run the main job) and `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo ui test lint bench broker clean

setup: $(STAMP)

# Installs the project with every extra, pinned by requirements.lock; reruns when either changes.
$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c requirements.lock -e '.[kafka,pipeline,test]'
	@touch $(STAMP)

demo: setup
	scripts/demo

# Airflow's own UI (with the plans page) on 127.0.0.1:8080, same settings as the demo.
ui: setup
	scripts/ui

test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: setup
	$(BIN)/python bench/speed.py
	$(BIN)/python bench/quality.py
	$(BIN)/python bench/snapshot_speed.py

broker: setup
	scripts/broker start

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
