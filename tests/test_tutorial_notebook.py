"""The tutorial notebook runs from top to bottom in a Jupyter kernel (issue 15).

It registers a priority in the notebook and runs a 2-worker sweep with it,
plots with o2ksim and then with plain pyplot (the backend must not change);
its own asserts check the hand-computed starts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

REPO = Path(__file__).resolve().parents[1]


def test_tutorial_notebook_executes_end_to_end():
    nb = nbformat.read(REPO / "docs" / "tutorial" / "notebook.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}
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
