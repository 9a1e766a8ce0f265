"""The optional compiled build (setup.py, ``make install-fast``): what it reports and that it
gives the same output as the plain-Python build, byte for byte.

The comparison runs when ``$O2KSIM_FAST_BIN`` names the compiled build's
``o2ksim`` (``make test-fast`` sets it after rebuilding ``.venv-fast``) and this
suite runs on the pure build; otherwise it skips.  ``tests/run_compiled.sh`` runs the whole suite on
the compiled build, with ``O2KSIM_EXPECT_COMPILED=1`` so that it cannot
silently test the pure one.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from o2ksim import build

ROOT = Path(__file__).resolve().parents[1]
FAST_BIN = Path(os.environ.get("O2KSIM_FAST_BIN", ""))
# the comparison runs only when asked for (make test-fast sets it right after rebuilding):
# a plain `make test` never depends on the optional build, nor on how old it is
COMPARE = "O2KSIM_FAST_BIN" in os.environ


def _is_extension(path: str | None) -> bool:
    return path is not None and path.endswith(tuple(EXTENSION_SUFFIXES))


def test_setup_compiles_the_modules_build_lists() -> None:
    tree = ast.parse((ROOT / "setup.py").read_text())
    listed = next(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "COMPILED_MODULES" for t in node.targets)
    )
    paths = ast.literal_eval(listed)
    assert [p.removesuffix(".py").replace("/", ".") for p in paths] == list(build.COMPILED_MODULES)
    for p in paths:
        assert (ROOT / p).is_file(), p


def test_build_name_says_what_python_imports() -> None:
    imported = [
        name for name in build.COMPILED_MODULES
        if _is_extension(importlib.import_module(name).__file__)
    ]  # fmt: skip
    assert build.compiled_modules() == imported
    expected = {0: "pure Python", len(build.COMPILED_MODULES): "compiled"}.get(
        len(imported), f"partly compiled ({len(imported)} of {len(build.COMPILED_MODULES)} modules)"
    )
    assert build.build_name() == expected
    if os.environ.get("O2KSIM_EXPECT_COMPILED") == "1":
        assert expected == "compiled", "the suite was asked to test the compiled build"


def test_version_names_the_build() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "o2ksim", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().endswith(f"({build.build_name()})")


# policies that take every compiled path: strict FCFS, EASY's shadow fast path, priority
# backfill with several reservations, the reference pass, immediate service with its
# stand-ins for preempted jobs, the profiles of "soon", fixed non-sliding reservations, LSF
SAMPLE_RUNS = [
    ("fcfs", []),
    ("fcfs-backfill", []),
    ("lxfw-backfill", ["--reservations", "4"]),
    ("priority-backfill", ["--set", "fast_path=false"]),
    ("sjf-backfill", ["--reservation-kind", "fixed", "--no-sliding", "--reservations", "2"]),
]
O2K_RUNS = ["lxfw-backfill-immediate", "lxfw-backfill-soon", "ncsa-lsf", "fcfs-backfill"]


def _run(binary: Path | str, out: Path, args: list[str]) -> bytes:
    subprocess.run([str(binary), "run", *args, "-q", "--out", str(out)], check=True, cwd=ROOT)
    return (out / "jobs.csv").read_bytes()


@pytest.mark.skipif(
    not COMPARE or build.compiled_modules() != [],
    reason="make test-fast runs it: O2KSIM_FAST_BIN names the compiled build's o2ksim, on a pure run",
)
def test_compiled_build_writes_the_same_jobs_csv(tmp_path: Path) -> None:
    pure = [sys.executable, "-m", "o2ksim"]
    version = subprocess.run([FAST_BIN, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip().endswith("(compiled)")
    cases = [
        (f"sample-{policy}", ["--trace", "traces/kth-sp2-sample.swf", "--policy", policy, *extra])
        for policy, extra in SAMPLE_RUNS
    ] + [
        (f"o2k-{policy}", ["--policy", policy, "--span", "7d", "--warmup", "2", "--seed", "3"])
        for policy in O2K_RUNS
    ]
    for name, args in cases:
        subprocess.run([*pure, "run", *args, "-q", "--out", str(tmp_path / "pure" / name)], check=True, cwd=ROOT)
        expected = (tmp_path / "pure" / name / "jobs.csv").read_bytes()
        assert _run(FAST_BIN, tmp_path / "fast" / name, args) == expected, (
            f"{name}: the compiled build's jobs.csv differs (built from older code? make install-fast)"
        )
