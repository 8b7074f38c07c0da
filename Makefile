# Two commands on a fresh machine: `make maps` builds every recipe, `make test` runs the suite.
# Each sets up the virtual environment it needs first (only Python 3.11+ and make are assumed).

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt
JOBS   ?=

.PHONY: maps test bench schema clean install

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e .
	@touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) -e '.[test]'
	@touch $@

install: $(VENV)/.installed

maps: $(VENV)/.installed
	$(BIN)/pcg build recipes/ $(if $(JOBS),-j $(JOBS))

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest

bench: $(VENV)/.installed-test
	$(BIN)/python -m bench

schema: $(VENV)/.installed
	$(BIN)/pcg schema -o recipe.schema.json

clean: $(VENV)/.installed
	$(BIN)/pcg clean --all
	rm -rf .pytest_cache .hypothesis
