"""The command line asks numpy's BLAS for one thread unless the user chose a number."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = (
    "import os, sys\n"
    "{pre}"
    "from o2ksim.cli import main\n"
    "main(['--version'])\n"
    "print(os.environ.get('OPENBLAS_NUM_THREADS'), os.environ.get('MKL_NUM_THREADS'))\n"
)


def _run(pre: str = "", **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    clean.update(env)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(pre=pre)], env=clean, capture_output=True, text=True, check=True
    )
    return out.stdout.strip().splitlines()[-1]


def test_cli_sets_one_blas_thread_before_numpy_is_imported() -> None:
    assert _run() == "1 1"


def test_the_users_choice_is_kept() -> None:
    assert _run(OPENBLAS_NUM_THREADS="4") == "4 1"


def test_nothing_changes_once_numpy_is_loaded() -> None:
    # too late to matter: a library user's process (numpy already imported) is left alone
    assert _run("import numpy\n") == "None None"
