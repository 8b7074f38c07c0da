# Two commands on a fresh machine: `make maps` builds every recipe, `make test` runs the suite.
# Each sets up the virtual environment it needs first (only Python 3.11+ and make are assumed).

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt
JOBS   ?=

.PHONY: maps test golden bench schema clean install dev

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -e .
	@touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) -e '.[test]'
	@touch $@

install: $(VENV)/.installed

# The package and the test tools (pytest, hypothesis...), without running anything: then
# `.venv/bin/python -m pytest tests/test_x.py` runs one file.
dev: $(VENV)/.installed-test

maps: $(VENV)/.installed
	$(BIN)/pcg build recipes/ $(if $(JOBS),-j $(JOBS))

# The suite on pytest-xdist's workers, one per core (at most 4: see tests/conftest.py), each
# taking the next test as it frees up; `python -m pytest tests/test_x.py` runs a file alone.
test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n auto --dist worksteal

# Rewrite tests/golden.json (every stage kind's output digest, checked by tests/test_golden.py)
# after bumping a stage's version, adding a kind or changing a fixture. It refuses to record an
# output that changed without a version bump; FORCE=1 records it anyway (a dependency upgrade).
golden: $(VENV)/.installed-test
	$(BIN)/python tests/golden.py $(if $(FORCE),--force)

bench: $(VENV)/.installed-test
	$(BIN)/python -m bench

schema: $(VENV)/.installed
	$(BIN)/pcg schema -r recipes/ -o recipe.schema.json

clean: $(VENV)/.installed
	$(BIN)/pcg clean --all
	rm -rf .pytest_cache .hypothesis
