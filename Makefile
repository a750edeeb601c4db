# The two commands README starts with:  `make run`  and  `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DOMAINS := mcp search terminal swe android web os
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export WORLDTRACE_DATA ?= $(CURDIR)/data

.PHONY: setup run test ui lint clean

# Install into a local virtual environment (CPU torch; see README for the GPU install).
$(BIN)/worldtrace: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

setup: $(BIN)/worldtrace
	mkdir -p $(DAGSTER_HOME)
	touch $(DAGSTER_HOME)/dagster.yaml

# Materialize the whole asset graph (main_job) for every domain partition on the default data.
run: setup
	for domain in $(DOMAINS); do \
	  $(BIN)/dagster job execute -m assets.definitions -j main_job --tags "{\"dagster/partition\": \"$$domain\"}" || exit 1; \
	done

# Lint first (ruff, pyproject's rules), then the test suite; CI (.ci/run) runs exactly this.
test: setup
	$(BIN)/ruff check .
	$(BIN)/pytest -q

ui: setup
	$(BIN)/dagster dev

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) data .dagster_home
