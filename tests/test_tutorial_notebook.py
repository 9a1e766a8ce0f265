"""The tutorial notebook runs from top to bottom in a Jupyter kernel (issues 15, 25).

It registers a priority in the notebook and runs a 2-worker sweep with it,
plots with o2ksim and then with plain pyplot (the backend must not change);
its own asserts check the hand-computed starts.  It is executed from a
directory that is not the repository (Jupyter started in docs/tutorial or
anywhere else), and it is stored with its outputs, small.

Executing it takes about 15-20 s on a loaded 2-core machine, so it stays in
the default test selection.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

REPO = Path(__file__).resolve().parents[1]


NOTEBOOK = REPO / "docs" / "tutorial" / "notebook.ipynb"


def test_tutorial_notebook_executes_end_to_end_from_another_directory(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 6  # the compare views, the timeline, the user's plot, the Gantt chart
    backend = nb.cells[1].outputs[0]["data"]["text/plain"]
    assert "inline" in backend
    html = [o for o in outputs if "text/html" in o.get("data", {})]
    assert any("o2ksim Result" in o["data"]["text/html"] for o in html)


def test_tutorial_notebook_is_stored_executed_and_small():
    """Readers see the outputs on GitHub without running it; the file stays small."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))  # top to bottom
    images = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 6
    assert not [o for c in code for o in c.outputs if o.get("output_type") == "error"]
    assert NOTEBOOK.stat().st_size < 400_000
    text = NOTEBOOK.read_text(encoding="utf-8")
    assert str(REPO) not in text and "/tmp/" not in text  # no machine's paths in the outputs
