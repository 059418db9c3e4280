# Rewind — one entry point for set-up, the demo, tests, lint and benchmarks.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export PYSPARK_PYTHON := $(abspath $(BIN)/python)

.PHONY: help setup run test test-fast browser lint bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)  ## create .venv and install requirements.txt + the rewind package

run: setup  ## demo: a warehouse with simulated history, time travel, DROP/UNDROP, SHOW HISTORY
	$(BIN)/python -m rewind.demo

test: setup browser  ## run the whole test suite (what CI runs)
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q

# The e2e browser test drives Debian's Chromium through chromedriver (no browser download).
browser:  ## install Debian's chromium + chromium-driver for the e2e browser test, if missing
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver; }

test-fast: setup  ## unit tests only
	$(BIN)/python -m pytest -m unit -q

lint: setup  ## ruff + mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check include spark_jobs
	$(BIN)/mypy

bench: setup  ## benchmarks, results as JSON under benchmarks/results/
	$(BIN)/python benchmarks/cli_latency.py
	$(BIN)/python benchmarks/clone_zero_copy.py
	$(BIN)/python benchmarks/lifecycle_incremental.py

clean:  ## remove the venv and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
