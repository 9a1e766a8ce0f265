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
                c.plot_runtime("mean_slowdown"), c.plot_p95()):  # fmt: skip
        labels = {t.get_text() for t in fig.legends[0].get_texts()}
        assert labels == {"fcfs-backfill", "lxf-backfill"}
    bars = c.plot_overall().axes[0]
    assert [t.get_text() for t in bars.get_xticklabels()] == ["fcfs-backfill", "lxf-backfill"]
    fig = timeline(a)
    util_ax, queue_ax = fig.axes[:2]
    ys = util_ax.lines[0].get_ydata()
    assert min(ys) >= 0 and max(ys) <= 1.0 + 1e-9
    assert queue_ax.get_ylabel() == "waiting jobs"
