"""The workloads package is acyclic: every module imports alone, and none hides an import in a function.

The package's layers (docs/background/architecture.md, o2ksim.workloads.models):
trace data model and clock; distributions; parameter files and the
synthetic-trace helper; one module per model; the registry and the
characterisation on top; the run protocol's cool-down tail above them.  A function-local import of a sibling module is the
usual way a cycle is hidden, so the test forbids them and checks the layer
order directly.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "o2ksim" / "workloads"
MODULES = sorted(p.stem for p in PKG.glob("*.py") if p.stem != "__init__")

# a module may import only modules of a lower layer (or of its own layer when listed in ALLOWED)
LAYER = {

    "swf_fields": 0,
    "clock": 0,
    "transforms": 0,
    "convert": 0,
    "distributions": 1,
    "params": 1,
    # the SWF reader's pieces, below the swf module that ties them together
    "swf_header": 1,
    "swf_lines": 1,
    "swf_values": 1,
    "swf_trace": 2,
    "swf_write": 3,
    "swf": 4,
    # a model's components, below the model
    "cirne_berman_arrivals": 1,
    "cirne_berman_sizes": 2,
    "characterize_arrivals": 2,
    "o2k_params": 2,
    "reshape": 5,
    "synthetic": 5,
    "o2k": 6,
    "cirne_berman": 6,
    "downey": 6,
    "models": 7,
    "characterize": 7,
    "cooldown": 8,
}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """``(sibling module, imported inside a function)`` for every o2ksim.workloads import in *path*."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.ImportFrom) and child.module:
                if child.module == "o2ksim.workloads":
                    found.extend((a.name, inner) for a in child.names)
                elif child.module.startswith("o2ksim.workloads."):
                    found.append((child.module.split(".")[2], inner))
            elif isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.startswith("o2ksim.workloads."):
                        found.append((a.name.split(".")[2], inner))
            visit(child, inner)

    visit(tree, False)
    return found


def test_every_module_has_a_layer():
    assert set(MODULES) == set(LAYER)


@pytest.mark.parametrize("module", MODULES)
def test_no_function_local_sibling_imports_and_layers_point_down(module):
    for name, in_function in _imports(PKG / f"{module}.py"):
        assert not in_function, f"{module} imports {name} inside a function"
        assert LAYER[name] < LAYER[module], f"{module} (layer {LAYER[module]}) imports {name}"


def test_each_module_imports_alone_in_a_fresh_interpreter():
    for m in MODULES:
        proc = subprocess.run(
            [sys.executable, "-c", f"import o2ksim.workloads.{m}"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, f"{m}: {proc.stderr.strip().splitlines()[-1:]}"


def test_generators_are_typed_to_return_a_trace():
    for m in ("o2k", "cirne_berman", "downey", "models"):
        tree = ast.parse((PKG / f"{m}.py").read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "generate":
                assert ast.unparse(node.returns) == "Trace", (
                    f"{m}.generate -> {ast.unparse(node.returns)}"
                )
