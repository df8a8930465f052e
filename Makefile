# Every target sets up .venv itself, so a fresh machine needs only Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test quick lint pytest bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/gpu-audit scan --inventory fixtures/inventory/demo.yaml \
		--policy fixtures/inventory/demo-policy.yaml --format table --fail-on none

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint pytest

# The inner loop: no lint, no real servers, no wheel or pre-commit runs (about a third of the time).
quick: $(STAMP)
	$(BIN)/pytest -q -x -m "not slow and not server"

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
