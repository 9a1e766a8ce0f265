"""The package's layering: dependencies point one way, no import cycle, almost no hidden imports.

The layers (docs/background/architecture.md, "Layers"), lowest first::

    0 core         units, errors, validation, registry, user code, jobs, machine, tables
    1 engine       the SimPy model, its monitor and observers
    2 policies     scheduling policies, their priorities and profiles
    3 workloads    traces, transformations, generators; runtime-prediction models
    4 run          one run: RunConfig, its workload, Result, simulate()
    5 experiments  scenarios, sweeps, the teaching log (explain)
    6 analysis     analyses of finished runs
    7 report       figures, HTML, the prediction study
    8 cli          the command line

Each module is parsed with :mod:`ast`; every import of an o2ksim module --
at the top, inside a function, or under ``if TYPE_CHECKING`` -- must point to
the same or a lower layer.  Importing ``a.b.c`` also runs the ``__init__`` of
the packages ``a.b`` on the way, so those count as imported too.  The graph
of module-level imports (package ``__init__`` edges included) has no cycle,
and neither has the graph with the imports inside functions added.

Imports inside functions hide cycles and layer breaks, so each one must be
listed in :data:`FUNCTION_LEVEL` with the reason it is there (an optional
heavy dependency, a lazy registry); so must every ``importlib.import_module``
call (:data:`DYNAMIC_IMPORTS`).  :data:`PENDING` lists what other branches of
issue 22 are fixing in files this branch does not own: they are reported, not
failed, until those branches merge (then delete the entries).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "o2ksim"

LAYERS = (
    "core",
    "engine",
    "policies",
    "workloads",
    "run",
    "experiments",
    "analysis",
    "report",
    "cli",
)

# Module (or package prefix, ending in ".") -> layer.  The longest matching entry wins.
LAYER_OF: dict[str, str] = {
    "o2ksim": "core",  # the package's __init__: __version__ and the lazy public names
    "o2ksim.errors": "core",
    "o2ksim.units": "core",
    "o2ksim.clock": "core",
    "o2ksim.paths": "core",
    "o2ksim.files": "core",
    "o2ksim.outfiles": "core",  # results folders: claimed, staged, committed whole
    "o2ksim.folder_lock": "core",  # the lock file that holds a results folder for one process
    "o2ksim.outread": "core",  # a folder read while another process may write it
    "o2ksim.outkinds": "core",  # each writing command's family of files; one kind per folder
    "o2ksim.validation": "core",
    "o2ksim.toml_lines": "core",  # the line of a TOML file's field, for refusals
    "o2ksim.registry": "core",
    "o2ksim.plugins": "core",
    "o2ksim.table": "core",
    "o2ksim.jobs": "core",
    "o2ksim.engine.errors": "core",  # the job state machine's exceptions, used by jobs.py
    "o2ksim.machine": "core",
    "o2ksim.availability": "core",  # availability files: processors down between times
    "o2ksim.o2k_classes": "core",  # the O2K's LSF job classes and Table 6 (policy, model, report)
    "o2ksim.metrics": "core",
    "o2ksim.partitioning": "core",
    "o2ksim.engine": "engine",
    "o2ksim.engine.": "engine",
    "o2ksim.progress": "engine",
    "o2ksim.policies": "policies",
    "o2ksim.policies.": "policies",
    "o2ksim.workloads": "workloads",
    "o2ksim.workloads.": "workloads",
    "o2ksim.prediction.model": "workloads",
    "o2ksim.prediction.predictors": "workloads",
    "o2ksim.run": "run",
    "o2ksim.run.": "run",
    "o2ksim.experiments": "experiments",
    "o2ksim.experiments.": "experiments",
    "o2ksim.explain": "experiments",
    "o2ksim.analysis": "analysis",
    "o2ksim.analysis.": "analysis",
    "o2ksim.goal_metrics": "analysis",
    "o2ksim.invariants": "analysis",
    "o2ksim.report": "report",
    "o2ksim.report.": "report",
    "o2ksim.prediction": "report",  # its __init__ re-exports the evaluation (predict)
    "o2ksim.prediction.evaluate": "report",
    "o2ksim.prediction.classes": "workloads",
    "o2ksim.prediction.replay": "report",
    "o2ksim.prediction.scoring": "report",
    "o2ksim.prediction.page": "report",
    "o2ksim.prediction.plot": "report",
    "o2ksim.cli": "cli",
    "o2ksim.cli.": "cli",
    "o2ksim.__main__": "cli",
}

FUNCTION_LEVEL: dict[tuple[str, str], str] = {
    ("o2ksim.run.workload", "o2ksim.workloads.reshape"): (
        "load scaling needs pandas (reshape), which a run without it never imports"
    ),
    ("o2ksim.cli.run", "o2ksim.report.html"): (
        "--report needs pandas, matplotlib and seaborn, which a run without it never loads"
    ),
    ("o2ksim.cli.run", "o2ksim.invariants"): (
        "--check reads the written tables with pandas, which a run without it never loads"
    ),
    ("o2ksim.cli.validate", "o2ksim.analysis.validate"): (
        "pandas loads once --out is claimed: a second writer is refused at once, not after it"
    ),
    ("o2ksim.cli.validate", "o2ksim.report.validation"): (
        "matplotlib and seaborn load once --out is claimed: a second writer is refused at once"
    ),
    ("o2ksim.cli.predict", "o2ksim.prediction.evaluate"): (
        "pandas and the simulator load once --out is claimed: a second writer is refused at once"
    ),
    ("o2ksim.cli.scenario", "o2ksim.experiments.sweep"): (
        "pandas and the engine load once the results directory is checked: a held one or "
        "another command's result is refused at once (scenario show and list never load them)"
    ),
    ("o2ksim.cli.scenario", "o2ksim.report.html"): (
        "the report's modules load once the results directory is checked, as the sweep's"
    ),
    ("o2ksim.cli.scenario", "o2ksim.experiments.claims"): (
        "pandas loads for `scenario claims` only, not for the other subcommands"
    ),
    ("o2ksim.cli.scenario", "o2ksim.experiments.expected"): (
        "pandas loads for `scenario check` only, not for the other subcommands"
    ),
    ("o2ksim.cli.report", "o2ksim.report.html"): (
        "pandas and matplotlib load once the report's folder is claimed: a second writer is "
        "refused at once"
    ),
    ("o2ksim.cli.characterize", "o2ksim.workloads.characterize"): (
        "pandas and scipy load once --out is claimed: a second writer is refused at once"
    ),
    ("o2ksim.cli.characterize", "o2ksim.report.workload_figures"): (
        "the figures need matplotlib and seaborn, loaded only when figures are drawn"
    ),
    ("o2ksim.report.compare", "o2ksim.report.figures"): (
        "matplotlib and seaborn load only when a comparison is plotted"
    ),
    ("o2ksim.report.html", "o2ksim.report.figures"): (
        "matplotlib and seaborn load only when a report draws its figures"
    ),
    ("o2ksim.report.html", "o2ksim.report.views"): (
        "matplotlib and seaborn load only when a report draws its figures"
    ),
    ("o2ksim.report.html", "o2ksim.report.gantt"): (
        "matplotlib loads only when a one-run report draws its Gantt chart"
    ),
    ("o2ksim.report.compare", "o2ksim.report.views"): (
        "matplotlib and seaborn load only when a comparison is plotted"
    ),
    ("o2ksim.policies.goal", "o2ksim.policies.goal.kernel"): (
        "numba (the optional extra [fast]) loads only when the compiled goal search runs"
    ),
    ("o2ksim.policies.goal", "o2ksim.policies.goal.kernel_local"): (
        "numba (the optional extra [fast]) loads only when the compiled hill climb runs"
    ),
}
"""(importing module, imported module) -> why the import sits inside a function."""

DYNAMIC_IMPORTS: dict[str, str] = {
    "o2ksim": "lazy registry of the public names (simulate, compare, ...)",
    "o2ksim.cli": "the command line imports the chosen command's module alone",
    "o2ksim.policies": "built-in policy modules load when a kind is first asked for",
    "o2ksim.workloads.models": "workload model modules load on first use (registry)",
    "o2ksim.plugins": "the user's own code named in a configuration",
    "o2ksim.prediction": "its public names load on first use (the CLM algebra without the simulator)",
}
"""Modules calling ``importlib.import_module`` -> why."""

PENDING: dict[tuple[str, str], str] = {}
"""(importing module, imported module) -> the helper branch of issue 22 owning the file.

Violations in files the layering branch does not own, left to their owners
(function-level imports to move to the top; ``policies -> workloads.transforms``
becomes ``policies -> o2ksim.units``; ``o2ksim.prediction``'s ``__init__``
must not import the evaluation, which needs the run API and the report).
Allowed until those branches merge; then delete the entries that are fixed."""


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported o2ksim module
    in_function: bool
    type_only: bool  # under `if TYPE_CHECKING:`
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def layer(module: str) -> int:
    best = ""
    for key in LAYER_OF:
        hit = module == key or (key.endswith(".") and module.startswith(key))
        if hit and len(key) > len(best):
            best = key
    if not best:
        raise KeyError(f"{module} has no layer: add it to LAYER_OF (and the architecture page)")
    return LAYERS.index(LAYER_OF[best])


def _resolve(name: str) -> str | None:
    """The o2ksim module ``name`` refers to (``a.b.attr`` -> ``a.b``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, tree: ast.AST | None = None) -> Iterator[Import]:
    """Every o2ksim import in ``module``'s source."""
    path = MODULES[module]
    tree = tree or ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            )
            typed = type_only or (
                isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            )
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*up, *([base] if base else [])])
                names = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                    for a in child.names
                ]
            for n in names:
                target = _resolve(n) if n.startswith("o2ksim") else None
                if target is not None and target != module:
                    yield Import(module, target, inner, typed, child.lineno)
            yield from visit(child, inner, typed)

    yield from visit(tree, False, False)


def _parents(module: str) -> list[str]:
    """The packages whose ``__init__`` runs when ``module`` is imported and imports something
    of o2ksim (the root, whose names load lazily, left out)."""
    parts = module.split(".")
    return [
        ".".join(parts[:i]) for i in range(2, len(parts)) if ".".join(parts[:i]) in _INIT_IMPORTS
    ]


ALL_IMPORTS: list[Import] = [imp for m in MODULES for imp in imports_of(m)]
_INIT_IMPORTS = {
    imp.source
    for imp in ALL_IMPORTS
    if MODULES[imp.source].name == "__init__.py" and imp.source != "o2ksim"
}
"""Packages whose ``__init__`` imports o2ksim modules (importing anything inside them runs it)."""


def violations(imports: list[Import]) -> list[tuple[str, str, str]]:
    """``(importing, imported, what is wrong)`` for every upward or unlisted function-level import."""
    out = []
    for imp in imports:
        for target in dict.fromkeys([*_parents(imp.target), imp.target]):
            if target == imp.source or imp.source.startswith(target + "."):
                continue  # a module's own package
            if layer(target) > layer(imp.source):
                out.append((imp.source, target, f"line {imp.line}: {LAYERS[layer(imp.source)]} "
                            f"imports {LAYERS[layer(target)]}"))  # fmt: skip
        if imp.in_function and (imp.source, imp.target) not in FUNCTION_LEVEL:
            out.append((imp.source, imp.target, f"line {imp.line}: imported inside a function"))
    return out


def _graph(imports: list[Import]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for imp in imports:
        if imp.type_only:
            continue
        for target in [*_parents(imp.target), imp.target]:
            if target != imp.source and not imp.source.startswith(target + "."):
                graph[imp.source].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


# ------------------------------------------------------------------------------------ tests
def test_every_module_has_a_layer() -> None:
    for m in MODULES:
        layer(m)


def test_imports_point_to_the_same_or_a_lower_layer() -> None:
    real = [v for v in violations(ALL_IMPORTS) if v[:2] not in PENDING]
    assert not real, "\n".join(f"{a} -> {b}: {why}" for a, b, why in real)


def test_no_import_cycle_at_module_level() -> None:
    found = cycles(_graph([i for i in ALL_IMPORTS if not i.in_function]))
    assert found == [], "\n".join(" <-> ".join(c) for c in found)


def test_no_import_cycle_counting_imports_inside_functions() -> None:
    remaining = [c for c in cycles(_graph(ALL_IMPORTS)) if not _pending_cycle(c)]
    assert remaining == [], "\n".join(" <-> ".join(c) for c in remaining)


def _pending_cycle(component: list[str]) -> bool:
    """A cycle closed only by a PENDING function-level import (fixed on another branch)."""
    closing = [
        i for i in ALL_IMPORTS if i.in_function and i.source in component and i.target in component
    ]
    return bool(closing) and all((i.source, i.target) in PENDING for i in closing)


def test_the_listed_function_level_imports_exist() -> None:
    """A listed exception that is gone is deleted from the list (it must not hide a new one)."""
    present = {(i.source, i.target) for i in ALL_IMPORTS if i.in_function}
    assert set(FUNCTION_LEVEL) <= present


def test_dynamic_imports_are_the_listed_registries() -> None:
    calls = set()
    for m, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in (
                "importlib.import_module", "import_module", "__import__",
            ):  # fmt: skip
                calls.add(m)
    assert calls == set(DYNAMIC_IMPORTS)


def test_the_check_fails_on_an_upward_import() -> None:
    """The machinery itself: an engine module importing the run API is a violation and a cycle."""
    source = "from o2ksim.run.api import simulate\n\ndef f():\n    from o2ksim.experiments import sweep\n"
    added = list(imports_of("o2ksim.engine.monitor", ast.parse(source)))
    found = violations(added)
    assert ("o2ksim.engine.monitor", "o2ksim.run.api") in {v[:2] for v in found}
    assert ("o2ksim.engine.monitor", "o2ksim.experiments.sweep") in {v[:2] for v in found}
    assert any("o2ksim.engine.monitor" in c for c in cycles(_graph([*ALL_IMPORTS, *added])))


def test_the_cli_table_names_every_command_module() -> None:
    from o2ksim.cli import COMMANDS

    modules = {
        m for m in MODULES if m.startswith("o2ksim.cli.") and not m.split(".")[-1].startswith("_")
    }
    assert {f"o2ksim.cli.{module}" for module, _help in COMMANDS.values()} == modules
