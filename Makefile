# Rewind — one entry point for set-up, the demo, tests, lint and benchmarks.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Delta Lake's Spark connector (io.delta jars), pinned in deploy/delta/pom.xml, from Maven Central.
JARS   := .jars
JSTAMP := $(JARS)/.fetched
# s3a (hadoop-aws + the AWS SDK modules it needs, deploy/s3/pom.xml) and Rewind's LogStore
# for S3 (deploy/logstore/, built here with Maven): SPEC R44, R46.
LOGSTORE_SRC := $(wildcard deploy/logstore/src/main/java/rewind/delta/*.java)
export PYSPARK_PYTHON := $(abspath $(BIN)/python)
# `make run` and `make airflow`: a project-local Airflow (SQLite metadata) with this repo's
# DAGs and plugin, Spark on local[2], the demo's Rewind home.
DEMO_HOME   ?= $(CURDIR)/.rewind-demo
DEMO_LAKE   ?= $(CURDIR)/.lake-demo
AIRFLOW_ENV := AIRFLOW_HOME=$(CURDIR)/.airflow AIRFLOW__CORE__DAGS_FOLDER=$(CURDIR)/dags \
	AIRFLOW__CORE__PLUGINS_FOLDER=$(CURDIR)/plugins AIRFLOW__CORE__LOAD_EXAMPLES=False \
	AIRFLOW_CONN_SPARK_DEFAULT='{"conn_type": "spark", "host": "local[2]"}' \
	REWIND_HOME=$(DEMO_HOME) PATH="$(abspath $(BIN)):$$PATH" \
	REWIND_AIRFLOW_USERS='{"dag_test": "ADMIN", "*": "*"}'
# `airflow dags test` records its runs as triggered by "dag_test": the demo maps it to
# ADMIN; every other Airflow user acts as the Rewind user of its own name (README,
# "Security model").

.PHONY: help setup ui ui-test ui-check run run-s3 airflow airflow-db test test-prereqs test-fast browser postgres compose-check lint bench bench-s3 clean

help:  ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): requirements.txt requirements-s3.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	$(BIN)/pip install --quiet --no-deps --require-hashes -r requirements-s3.txt
	touch $(STAMP)

# Spark needs a JVM (17) and the jars come through Maven: Debian's packages when missing.
$(JSTAMP): deploy/jars.sh deploy/delta/pom.xml deploy/s3/pom.xml deploy/logstore/pom.xml $(LOGSTORE_SRC)
	@command -v java >/dev/null && command -v javac >/dev/null && command -v mvn >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq openjdk-17-jdk-headless maven; }
	rm -rf $(JARS)
	sh deploy/jars.sh $(JARS)
	touch $(JSTAMP)

# The suite's Spark JVMs map the classes a Spark + Delta job loads from one archive (JDK
# class data sharing), which a training job writes once per JDK and jars (tests/jvm_classes.py).
CLASSES := $(JARS)/spark-classes.jsa
$(CLASSES): tests/jvm_classes.py $(STAMP) $(JSTAMP)
	$(BIN)/python tests/jvm_classes.py $(CLASSES)

setup: $(STAMP) $(JSTAMP) ui  ## create .venv, install requirements.txt + the rewind package, fetch the Delta jars, build the UI bundles (with Node)

# The Rewind views in the Airflow UI (issue 29): ui/ (npm, package-lock.json) builds three
# UMD bundles into include/rewind/ui_static/, committed, so installing needs no Node.
UI_SRC   := ui/package.json ui/vite.config.ts ui/build.mjs ui/tsconfig.json $(shell find ui/src -type f 2>/dev/null)
UI_DEPS  := ui/node_modules/.rewind-installed
UI_STAMP := ui/node_modules/.rewind-built
ui:  ## build the UI bundles when Node is present (else keep the committed ones)
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory $(UI_STAMP); \
	else echo "npm not found: keeping the committed bundles of include/rewind/ui_static/"; fi
# A test that needs a tool fails without it, naming what to install (it never skips).
NEED_NPM = @command -v npm >/dev/null || { echo "npm not found: install Node.js 20+ and npm \
(Debian: apt-get install nodejs npm; or https://nodejs.org) for the UI's tests and build"; exit 1; }
$(UI_DEPS): ui/package-lock.json
	$(NEED_NPM)
	cd ui && npm ci --no-audit --no-fund
	touch $@
$(UI_STAMP): $(UI_DEPS) $(UI_SRC)
	cd ui && npm run build
	touch $@
ui-test: $(UI_DEPS)  ## the UI's Vitest tests (needs npm)
	$(NEED_NPM)
	cd ui && npm test
ui-check: $(UI_DEPS)  ## Vitest, then fail if the committed bundles are not what ui/ builds
	cd ui && npm test && npm run build
	git diff --exit-code --stat include/rewind/ui_static/

run: setup  ## demo: 3 weeks of history, the analyst's time travel, rewind_nightly through Airflow, metrics, what next
	$(BIN)/python -m rewind.demo build --home $(DEMO_HOME) --lake $(DEMO_LAKE)
	@$(MAKE) --no-print-directory airflow-db
	@echo "airflow dags test rewind_nightly (log: .airflow/rewind_nightly.log) ..."
	@$(AIRFLOW_ENV) $(BIN)/airflow dags test rewind_nightly $$($(BIN)/python -m rewind.demo night) \
	  >.airflow/rewind_nightly.log 2>&1 || { tail -n 40 .airflow/rewind_nightly.log; exit 1; }
	$(BIN)/python -m rewind.demo metrics --home $(DEMO_HOME)
	@$(BIN)/python -m rewind.demo next --home $(DEMO_HOME)

# `make run-s3`: `make run` with Rewind's warehouse, the team's table and the fail-safe store
# on S3 (SPEC R44): rewind.demo starts a SeaweedFS server on loopback (data in S3_DEMO,
# new random keys each time), runs `make run` with the AWS variables, the Airflow connection
# aws_default and REWIND_WAREHOUSE_URI / REWIND_FAILSAFE_URI / DEMO_LAKE in its environment
# (no secret on a command line, R45), and stops the server when it ends, failed or not.
S3_DEMO ?= $(CURDIR)/.s3-demo
run-s3: setup  ## the same demo on S3: warehouse, the team's table and fail-safe on a SeaweedFS it starts and stops
	$(BIN)/python -m rewind.demo s3 --dir $(S3_DEMO) -- \
	  $(MAKE) --no-print-directory run DEMO_HOME=$(S3_DEMO)/home

airflow: setup airflow-db  ## Airflow UI on http://localhost:8080 (airflow standalone): the Rewind DAGs and page
	$(AIRFLOW_ENV) $(BIN)/airflow standalone

airflow-db:  # the project-local Airflow's metadata and the pool the Rewind DAGs share
	@echo "airflow db migrate; airflow pools set rewind_lifecycle 1 (AIRFLOW_HOME=.airflow)"
	@$(AIRFLOW_ENV) $(BIN)/airflow db migrate >/dev/null
	@$(AIRFLOW_ENV) $(BIN)/airflow pools set rewind_lifecycle 1 \
	  "Rewind: lifecycle steps, restores and recoveries, one at a time" >/dev/null

test:  ## run the whole test suite (what CI runs): Vitest beside the set-up, then pytest
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-prereqs
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q --durations=25

# Two at a time (issue 26): the UI's npm install and Vitest run beside the venv's install
# and the class archive's training job (~20 s of a fresh clone's ~2 min set-up).
test-prereqs: ui-test setup $(CLASSES) browser postgres compose-check

# The e2e browser test drives Debian's Chromium through chromedriver (no browser download).
browser:  ## install Debian's chromium + chromium-driver for the e2e browser test, if missing
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver; }

# The catalog's integration test starts a throw-away PostgreSQL server (initdb + pg_ctl).
postgres:  ## install Debian's PostgreSQL server for the catalog's integration test, if missing
	@ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql; }

# No Compose plugin here: docker-compose.yaml is loaded and validated by compose-go, the
# loader `docker compose config` runs (tools/compose-check, pinned in its go.mod/go.sum).
compose-check: $(BIN)/compose-check  ## build the compose file's validator (Go, from the module proxy)
$(BIN)/compose-check: tools/compose-check/main.go tools/compose-check/go.mod tools/compose-check/go.sum | $(STAMP)
	@command -v go >/dev/null || { echo "compose-check needs Go (https://go.dev/dl, or the module proxy's toolchain)"; exit 1; }
	cd tools/compose-check && go build -o $(abspath $(BIN))/compose-check .

test-fast: setup  ## unit tests only
	REWIND_FUZZ_STATEMENTS=600 $(BIN)/python -m pytest -m unit -n 2 -q

lint: setup  ## ruff + mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check include spark_jobs
	$(BIN)/mypy

bench: setup  ## benchmarks, results as JSON under benchmarks/results/
	$(BIN)/python benchmarks/cli_latency.py
	$(BIN)/python benchmarks/clone_zero_copy.py
	$(BIN)/python benchmarks/external_registration.py --tables 1000
	$(BIN)/python benchmarks/lifecycle_incremental.py
	$(BIN)/python benchmarks/checkpoint_read.py

bench-s3: setup  ## the lifecycle benchmark on S3 (SeaweedFS): time and requests by type against VACUUM
	$(BIN)/python benchmarks/lifecycle_s3.py --driver-memory 4g --spark-tables-first-night 30
	$(BIN)/python benchmarks/failsafe_versioning.py

clean:  ## remove the venv and caches
	rm -rf $(VENV) $(JARS) .pytest_cache .mypy_cache .ruff_cache
