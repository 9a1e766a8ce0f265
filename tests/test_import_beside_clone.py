"""A script beside a folder named ``o2ksim`` (the clone) still imports the package (issue 27).

The tutorial (docs/tutorial/01-first-simulation.md, "A script beside the clone")
says why the clone's folder can shadow an editable install found by a
meta-path finder, and that a path entry (``PYTHONPATH``, ``pip install .``,
``editable_mode=compat``) cannot be shadowed: Python's path finder keeps
looking past a namespace portion (a folder without ``__init__.py``) and a
regular package found later wins (PEP 420).  These tests hold the tutorial to
that: the remedy it gives works, and the symptom it describes is real.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "import o2ksim\nprint(o2ksim.simulate.__module__)\n"


def _beside_a_clone(tmp_path: Path) -> Path:
    clone = tmp_path / "o2ksim"  # the clone's root: README, docs/ ..., no __init__.py
    (clone / "docs").mkdir(parents=True)
    (clone / "README.md").write_text("o2ksim\n")
    (tmp_path / "run.py").write_text(SCRIPT)
    return tmp_path / "run.py"


def test_a_path_entry_is_not_shadowed_by_the_clone_folder(tmp_path):
    script = _beside_a_clone(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "o2ksim.run.api"


def test_without_a_path_entry_the_clone_folder_is_what_imports(tmp_path):
    """The symptom the tutorial names, with nothing else on the path (as when the install's
    finder comes after the path finder): the empty namespace package, no ``simulate``."""
    script = _beside_a_clone(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-S", str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert res.returncode != 0
    assert "has no attribute 'simulate'" in res.stderr
