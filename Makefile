# Two commands do all set-up on a fresh machine (see README):
#   make demo   - create .venv, install o2ksim, run the default scenario
#   make test   - create .venv, install o2ksim with test tools, run lint (ruff, mypy) and the test suite
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
OUT    ?= reports/demo

.PHONY: demo test install install-test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# pip's and setuptools' messages go to $(VENV)/install.log; shown only if the install fails
install: $(BIN)/python
	@$(BIN)/python -m pip install --quiet -e . > $(VENV)/install.log 2>&1 \
	  || { cat $(VENV)/install.log; exit 1; }

install-test: $(BIN)/python
	@$(BIN)/python -m pip install --quiet -e ".[test]" > $(VENV)/install.log 2>&1 \
	  || { cat $(VENV)/install.log; exit 1; }

# a synthetic O2K month (+1 week warm-up) on the 8 O2K hosts, FCFS-backfill; ends with an HTML report
demo: install
	$(BIN)/o2ksim run --out $(OUT) --report

lint: install-test
	$(BIN)/ruff check o2ksim tests benchmarks
	$(BIN)/mypy o2ksim

test: install-test lint
	$(BIN)/python -m pytest -q

bench: install-test   # the long checks: large fuzz suites, whole-trace oracle comparisons (marker slow)
	$(BIN)/python -m pytest -q -s -m slow tests benchmarks; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make bench: no slow test selected"; fi; exit $$rc

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
