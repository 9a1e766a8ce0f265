#!/usr/bin/env bash
# Runs the unit suite on the compiled build (make install-fast; `make test-fast` calls this).
#   tests/run_compiled.sh [VENV] [pytest args...]     VENV defaults to .venv-fast
# PYTHONSAFEPATH=1 keeps the working directory off sys.path (here and in the subprocesses the
# tests start), so the repository's o2ksim/ cannot shadow the installed, compiled one; the
# suite's test_compiled_build.py fails if the build it runs is not the compiled one.
set -euo pipefail
cd "$(dirname "$0")/.."
FAST=${1:-.venv-fast}
shift || true
export PYTHONSAFEPATH=1 O2KSIM_EXPECT_COMPILED=1
# the install is a copy: refuse to test one built from other sources than o2ksim/ as it is now
installed=$("$FAST/bin/python" -c 'import o2ksim, os; print(os.path.dirname(o2ksim.__file__))')
if ! changed=$(diff -rq -x '*.so' -x __pycache__ o2ksim "$installed"); then
  echo "run_compiled.sh: $FAST was built from other sources than o2ksim/ (run make install-fast):" >&2
  echo "$changed" | head -n 5 >&2
  exit 1
fi
"$FAST/bin/python" -c 'import o2ksim.engine.core as c; print("testing", c.__file__)'
exec "$FAST/bin/python" -m pytest -q -p no:cacheprovider "$@"
