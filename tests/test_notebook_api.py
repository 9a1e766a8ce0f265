"""Notebook use (issue 15): no backend switch, compact Result display, compare(), the tutorial."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from o2ksim import compare, simulate, timeline

REPO = Path(__file__).resolve().parents[1]
KTH = str(REPO / "traces" / "kth-sp2-sample.swf")


def test_importing_and_using_the_report_keeps_the_users_matplotlib_backend():
    code = (
        f"""
import matplotlib
before = matplotlib.get_backend()
import o2ksim.report.figures, o2ksim.report.html, o2ksim.report.gantt, o2ksim.report.compare
import o2ksim.report.workload_figures
from o2ksim import simulate, compare
r = simulate("{KTH}", policy="fcfs-backfill", window=("8d", "10d"))
compare([r]).plot_runtime()
import matplotlib.pyplot as plt
print(before, matplotlib.get_backend(), plt.rcParams["axes.facecolor"])
"""
    )
    env = {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    before, after, face = out.stdout.split()
    assert before == after == "module://matplotlib_inline.backend_inline"
    assert face == "white"  # the report's seaborn style did not leak into the user's rcParams


@pytest.fixture(scope="module")
def two_results():
    a = simulate(KTH, policy="fcfs-backfill", window=("8d", "12d"))
    b = simulate(KTH, policy="lxf-backfill", window=("8d", "12d"))
    return a, b


def test_result_displays_as_a_compact_summary(two_results):
    a, _ = two_results
    text = repr(a)
    assert len(text) < 800 and text.startswith("<o2ksim Result: fcfs-backfill")
    assert "DataFrame" not in text and "job_id" not in text
    html = a._repr_html_()
    assert "<table>" in html and "fcfs-backfill" in html and len(html) < 3000


def test_compare_is_a_frame_of_the_summary_measures_with_the_thesis_views(two_results):
    a, b = two_results
    c = compare([a, b])
    assert list(c.index) == ["fcfs-backfill", "lxf-backfill"]
    assert c.loc["fcfs-backfill", "mean wait (h)"] == pytest.approx(a.summary["mean_wait"] / 3600)
    assert c.loc["lxf-backfill", "max wait (h)"] == pytest.approx(b.summary["max_wait"] / 3600)
    for fig in (c.plot_runtime("mean_wait"), c.plot_runtime("max_wait"),
                c.plot_runtime("mean_slowdown"), c.plot_runtime("max_slowdown"), c.plot_p95(),
                c.plot_top_waits()):  # fmt: skip
        labels = {t.get_text() for t in fig.legends[0].get_texts()}
        assert labels == {"fcfs-backfill", "lxf-backfill"}
    bars = c.plot_overall().axes[0]
    assert [t.get_text() for t in bars.get_xticklabels()] == ["fcfs-backfill", "lxf-backfill"]
    fig = timeline(a)
    util_ax, queue_ax = fig.axes[:2]
    ys = util_ax.lines[0].get_ydata()
    assert min(ys) >= 0 and max(ys) <= 1.0 + 1e-9
    assert queue_ax.get_ylabel() == "waiting jobs"


def test_comparison_conclusions_say_what_the_runtime_view_shows():
    """Two hand-made results: B's jobs wait ten times as long as A's, at every runtime."""
    from types import SimpleNamespace

    import pandas as pd

    from o2ksim.errors import O2KSimError

    def result(name, factor):
        runtimes = [30.0, 300.0, 3000.0, 30000.0]
        jobs = pd.DataFrame(
            {"job_id": [1, 2, 3, 4], "run_time": runtimes, "wait": [60.0 * factor] * 4,
             "slowdown": [1.0 + 60.0 * factor / r for r in runtimes], "status": "completed"}
        )  # fmt: skip
        return SimpleNamespace(
            jobs=jobs, segments=pd.DataFrame(), summary={"jobs": 4}, policy={"name": name},
            config={"label": name}, machine=None,
        )  # fmt: skip

    c = compare([result("A", 1), result("B", 10)], labels=["A", "B"])
    assert c.conclusions("mean_wait") == ["B waits about 10x longer than A at every runtime."]
    assert c.conclusions("max_wait") == [
        "B has a maximum wait about 10x longer than A at every runtime."
    ]
    with pytest.raises(O2KSimError, match="measure must be one of"):
        c.conclusions("p95_wait")
