# Two commands do all set-up on a fresh machine (see README):
#   make demo   - create .venv, install o2ksim, run the default scenario
#   make test   - create .venv, install o2ksim with test tools, run lint (ruff, mypy) and the test suite
# Optional: make install-fast - the compiled build (mypyc) in .venv-fast; make test-fast checks it
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
OUT    ?= reports/demo

FAST   ?= .venv-fast

.PHONY: demo test install install-test lint bench clean install-fast test-fast

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
	$(BIN)/mypy o2ksim/engine o2ksim/policies

test: install-test lint
	$(BIN)/python -m pytest -q

bench: install-test   # the long checks: large fuzz suites, whole-trace oracle comparisons (marker slow)
	$(BIN)/python -m pytest -q -s -m slow tests benchmarks; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make bench: no slow test selected"; fi; exit $$rc

# The optional compiled build (setup.py; docs/guides/performance.md, "Compiled core"): the hot
# modules compiled with mypyc (needs gcc and the Python headers), installed non-editable into
# $(FAST) so that an edited .py file is never silently shadowed by an older compiled module.
# Re-run it after changing the code.  o2ksim --version says which build runs.
install-fast:
	@test -x $(FAST)/bin/python || $(PYTHON) -m venv $(FAST)
	@$(FAST)/bin/python -m pip install --quiet --upgrade pip setuptools wheel "mypy>=1.10" ".[test]" \
	  > $(FAST)/install.log 2>&1 || { cat $(FAST)/install.log; exit 1; }
	@rm -rf build  # setuptools' build tree: no stale objects in either build
	@O2KSIM_COMPILE=1 $(FAST)/bin/python -m pip install --quiet --no-build-isolation \
	  --force-reinstall --no-deps . >> $(FAST)/install.log 2>&1 \
	  || { cat $(FAST)/install.log; exit 1; }
	@rm -rf build
	@$(FAST)/bin/o2ksim --version

# the unit suite on the compiled build, then (on the pure build) its jobs.csv against the pure one's
test-fast: install-test install-fast
	tests/run_compiled.sh $(FAST)
	O2KSIM_FAST_BIN=$(FAST)/bin/o2ksim $(BIN)/python -m pytest -q -rs tests/test_compiled_build.py

clean:
	rm -rf $(VENV) $(FAST) build *.egg-info .pytest_cache .ruff_cache
