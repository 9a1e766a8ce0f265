"""The examples in the docs are run, and the CLI reference is up to date.

Convention (see docs/index.md, "Examples that run"): a page whose text contains
the marker ``<!-- o2ksim: run examples -->`` has its examples run, in order,
in a fresh directory holding links to the repository's ``traces/``,
``scenarios/``, ``hosts/`` and ``policies/``:

* a ``pycon`` block is a doctest (``>>>`` lines and their output; ``...``
  matches anything); all blocks of a page share one namespace;
* a ``console`` block holds ``$ o2ksim ...`` commands, each followed by its
  expected output (``...`` matches anything; no output lines = not checked);
  the command must exit 0, or N when the block's info string says ``exit=N``;
* a block whose info string has ``file=NAME`` (any language) is written to
  ``NAME`` before the blocks after it run.

Any other block (``toml``, ``text``, ``sh`` ...) is only shown.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib.util
import io
import os
import re
import shlex
import warnings
from pathlib import Path

import pytest

from o2ksim.cli import main

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
MARKER = "<!-- o2ksim: run examples -->"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
FENCE = re.compile(r"^```([\w-]*)([^\n]*)\n(.*?)^```\s*$", re.S | re.M)

MY_PAGES = [
    "index.md",
    "tutorial/01-first-simulation.md",
    "tutorial/02-first-comparison.md",
    "tutorial/03-first-report.md",
    "guides/scenarios.md",
    "guides/sweeps.md",
    "guides/dask.md",
    "reference/api.md",
]


def runnable_pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if MARKER in p.read_text())


def blocks(text: str) -> list[tuple[str, dict[str, str], str, int]]:
    """(language, options, body, line number) of every fenced block."""
    out = []
    for m in FENCE.finditer(text):
        opts = dict(re.findall(r"(\w+)=(\S+)", m.group(2)))
        line = text.count("\n", 0, m.start()) + 1
        out.append((m.group(1), opts, m.group(3), line))
    return out


def run_console(body: str, expect_exit: int, where: str) -> None:
    checker = doctest.OutputChecker()
    commands: list[tuple[str, list[str]]] = []
    for raw in body.splitlines():
        if raw.startswith("$ "):
            commands.append((raw[2:], []))
        elif commands:
            commands[-1][1].append(raw)
        elif raw.strip():
            raise AssertionError(f"{where}: output before any '$ ' command: {raw!r}")
    for command, expected in commands:
        argv = shlex.split(command)
        assert argv[0] == "o2ksim", (
            f"{where}: only o2ksim commands run in console blocks: {command}"
        )
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv[1:])
        assert code == expect_exit, f"{where}: `{command}` exited {code}\n{err.getvalue()}"
        want = "\n".join(expected).strip()
        if want:
            got = out.getvalue() + err.getvalue()
            assert checker.check_output(want + "\n", got, FLAGS), (
                f"{where}: `{command}` printed\n{got}\nexpected\n{want}"
            )


def run_page(page: Path, tmp_path: Path) -> int:
    """Run every example of ``page`` in ``tmp_path``; returns how many blocks ran."""
    for name in ("traces", "scenarios", "hosts", "policies"):
        (tmp_path / name).symlink_to(REPO / name)
    text = page.read_text()
    rel = page.relative_to(DOCS)
    globs: dict[str, object] = {"__name__": f"docs.{rel}"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    ran = 0
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        for lang, opts, body, line in blocks(text):
            where = f"docs/{rel}:{line}"
            if "file" in opts:
                target = tmp_path / opts["file"]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(body)
            if lang == "pycon":
                test = parser.get_doctest(body, globs, where, str(page), line)
                out = io.StringIO()
                result = runner.run(test, out=out.write, clear_globs=False)
                globs.update(test.globs)  # DocTest copies the namespace; share it
                assert result.failed == 0, out.getvalue()
                ran += 1
            elif lang == "console":
                run_console(body, int(opts.get("exit", 0)), where)
                ran += 1
    finally:
        os.chdir(old)
    return ran


def test_my_pages_opt_in():
    """The pages of the tutorial, the scenario/sweep/Dask guides and the API reference run."""
    pages = {str(p.relative_to(DOCS)) for p in runnable_pages()}
    missing = [p for p in MY_PAGES if p not in pages]
    assert not missing, f"pages without the marker {MARKER}: {missing}"


@pytest.mark.parametrize("page", runnable_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_page_examples_run(page, tmp_path):
    assert run_page(page, tmp_path) > 0, f"{page} has the marker but no pycon/console block"


def test_cli_reference_is_up_to_date():
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "reference" / "gen_cli.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    fresh = gen.render()
    committed = (DOCS / "reference" / "cli.md").read_text()
    assert committed == fresh, (
        "docs/reference/cli.md is stale: run python docs/reference/gen_cli.py"
    )


OTHERS_PAGES = {"guides/traces.md", "guides/workload-models.md", "guides/backfill-results.md"}
"""Pages other parts of the project own; a missing one is reported as a warning here."""


def test_links_between_my_pages_resolve():
    broken, pending = [], []
    for page in [DOCS / p for p in [*MY_PAGES, "background/papers.md"]]:
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", page.read_text()):
            path = (page.parent / target).resolve()
            if target.startswith("http") or path.exists():
                continue
            rel = (
                str(path.relative_to(DOCS.resolve()))
                if path.is_relative_to(DOCS.resolve())
                else target
            )
            (pending if rel in OTHERS_PAGES else broken).append(
                f"{page.relative_to(DOCS)} -> {target}"
            )
    if pending:
        warnings.warn("links to pages not written yet: " + ", ".join(pending), stacklevel=1)
    assert not broken, "broken links: " + ", ".join(broken)


@pytest.mark.parametrize("module", ["o2ksim.experiments.scenario", "o2ksim.explain"])
def test_module_docstring_examples(module, monkeypatch):
    import importlib

    monkeypatch.chdir(REPO)
    result = doctest.testmod(importlib.import_module(module), optionflags=FLAGS)
    assert result.attempted > 0 and result.failed == 0
