# Every target sets up .venv itself, so a fresh machine needs only Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

DEMO_BILL := fixtures/billing/demo/aws fixtures/billing/demo/azure fixtures/billing/demo/gcp

.PHONY: demo test quick lint pytest bench fuzz clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The quarterly audit: last quarter's snapshot is recorded into a history database (kept, made
# anew each run, for `gpu-audit history`), then this quarter's is judged against it.
DEMO_HISTORY := .gpu-audit-demo/audits.db
demo: $(STAMP)
	@history=.gpu-audit-demo && rm -rf "$$history" && mkdir -p "$$history" && \
	echo "gpu-audit demo: last quarter's fleet recorded, this quarter's judged against it (new, persisting, resolved); also in gpu-audit-demo.md; history: $(DEMO_HISTORY)" && \
	$(BIN)/gpu-audit scan --inventory fixtures/inventory/demo.yaml \
		--policy fixtures/inventory/demo-policy.yaml --history "$$history/audits.db" -q \
		--fail-on none >/dev/null && \
	$(BIN)/gpu-audit scan --inventory fixtures/inventory/demo-next.yaml \
		--policy fixtures/inventory/demo-policy.yaml --history "$$history/audits.db" \
		--format table --fail-on none --report markdown=gpu-audit-demo.md
	@echo && echo "The quarter from the bill (fixtures/billing/demo: a synthetic FOCUS export of three clouds):" && \
	$(BIN)/gpu-audit billing $(DEMO_BILL) --period 2026-Q3 --now 2026-10-05T08:00:00Z --format table && \
	$(BIN)/gpu-audit billing $(DEMO_BILL) --period 2026-Q3 --now 2026-10-05T08:00:00Z \
		--format markdown -o gpu-audit-demo-bill.md

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

# Tests run on every core (pytest-xdist): each worker starts its own loopback servers (session
# fixtures, ephemeral ports), and a file's tests stay on one worker, so a module's fixtures (a
# quarter of bills, the pre-commit hook's environment) are built once. `make test WORKERS=0`: one process.
WORKERS ?= auto
XDIST = $(if $(filter 0,$(WORKERS)),,-n $(WORKERS) --dist loadfile)
pytest: $(STAMP)
	$(BIN)/pytest -q $(XDIST)

test: lint pytest

# A long property-based campaign (the suite runs a small seeded one): findings go to fuzz-findings.jsonl.
FUZZ_EXAMPLES ?= 20000
fuzz: $(STAMP)
	rm -f fuzz-findings.jsonl
	GPU_AUDIT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) GPU_AUDIT_FUZZ_LOG=$(CURDIR)/fuzz-findings.jsonl \
		$(BIN)/pytest -q -p no:cacheprovider --hypothesis-show-statistics tests/fuzz
	@! grep -q '"finding"' fuzz-findings.jsonl 2>/dev/null || { echo "findings: fuzz-findings.jsonl"; exit 1; }

# The inner loop: no lint, no real servers, no wheel or pre-commit runs (about a third of the time).
quick: $(STAMP)
	$(BIN)/pytest -q -x $(XDIST) -m "not slow and not server"

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
