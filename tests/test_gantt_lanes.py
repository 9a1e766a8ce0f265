"""Gantt charts that tell the truth, part two (issue 25): suspended lanes, reservation
blocks with their history, labels that never overlap, arrivals under their host, a
day of a real run.

Expected values come from the scenarios' hand-worked definitions (the comments of
scenarios/explain-*.toml and T§3.2.1 Fig. 1), from the engine's own decision log
(:class:`o2ksim.explain.DecisionLog`, a different observer from the chart's
recorder) and from the run's job table -- never from the drawing itself.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.patches import Rectangle

from o2ksim import simulate
from o2ksim.explain import explain
from o2ksim.report.gantt import GanttRecorder, gantt_compare, gantt_figure

MIN = 60.0
SAMPLE = Path(__file__).resolve().parents[1] / "traces" / "kth-sp2-sample.swf"


def chart(scenario: str, **params):
    rec = GanttRecorder()
    result, log = explain(scenario, params=params, observers=(rec,))
    hosts = {h.name: h.procs for h in result.machine.hosts}
    return gantt_figure(result.segments, hosts, teaching=rec.teaching), result, log, rec


def suspended(ax) -> list[tuple[float, float, float, float]]:
    """``(from, to, y0, y1)`` of the suspended boxes, in seconds (the axis is in minutes)."""
    return sorted(
        (round(p.get_x() * MIN, 6), round((p.get_x() + p.get_width()) * MIN, 6), p.get_y(),
         p.get_y() + p.get_height())
        for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch() == ".."
    )  # fmt: skip


def test_suspended_jobs_have_their_own_lanes():
    """explain-immediate: J6's trial at 0:11:40 preempts J5 until it ends 30 s later; J7's
    60 s trial at 0:22:10 preempts J4 and J5 until it is requeued at 0:23:10."""
    fig, *_ = chart("explain-immediate")
    ax = fig.axes[0]
    boxes = suspended(ax)
    assert [(a, b) for a, b, *_ in boxes] == [(700.0, 730.0), (1330.0, 1390.0), (1330.0, 1390.0)]
    assert all(y1 <= 0 for *_, y1 in boxes)  # under the processor rows
    assert boxes[1][2] != boxes[2][2]  # two suspensions at once: two lanes
    bars = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert bars and all(v[:, 1].min() >= 0 for c in bars for v in (p.vertices for p in c.get_paths()))
    texts = {t.get_text() for t in ax.texts if t.get_visible()}
    assert {"J4 suspended", "J5 suspended", "J7 requeued"} <= texts


def test_a_reservation_is_a_block_with_where_it_slid():
    """T§3.2.1 Fig. 1-2: J3 (6 procs, requests 60 min) is reserved at J1's requested end,
    1:00:00; J1 ends at 0:50:00 and J3 starts then: the block covers 1:00-2:00 on 6
    processors, an arrow goes from 1:00 back to 0:50."""
    fig, *_ = chart("explain-backfill")
    ax = fig.axes[0]
    dashed = [p for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()
              and p.get_linestyle() != "solid"]  # fmt: skip
    assert [(p.get_x() * MIN, p.get_width() * MIN, p.get_height()) for p in dashed] == [
        (60 * MIN, 60 * MIN, 6)
    ]
    arrows = [(a.xyann[0] * MIN, a.xy[0] * MIN) for a in ax.texts
              if getattr(a, "arrow_patch", None) is not None and a.get_text() == ""]  # fmt: skip
    assert arrows == [(60 * MIN, 50 * MIN)]
    labels = [t.get_text() for t in ax.texts if t.get_text().startswith("J3 reserved")]
    assert labels == ["J3 reserved at 0:01:00 for 1:00:00, started 0:50:00"]


RESERVED = re.compile(r"^\S+ from (\S+) for")


@pytest.mark.parametrize(("scenario", "params"), [
    ("explain-backfill", {}), ("explain-backfill", {"reservations": 2}),
    ("explain-immediate", {}),
])  # fmt: skip
def test_reservation_history_is_the_decision_logs(scenario, params):
    """Every position the chart's recorder keeps is a ``reserved`` line of the engine's
    decision log (new or moved), in order, and the start it keeps is the job's start line
    (a trial that is requeued is no start at the reservation)."""
    _, _result, log, rec = chart(scenario, **params)

    def secs(text: str) -> float:
        h, m, s = (int(x) for x in text.split(":"))
        return h * 3600.0 + m * 60 + s

    logged: dict[int, list[tuple[float, float]]] = {}
    for e in log.entries:
        if e.event == "reserved":
            logged.setdefault(e.job, []).append((e.time, secs(RESERVED.match(e.text).group(1))))
    kept = {}
    for r in rec.teaching.history:
        kept.setdefault(r.job, []).extend(r.positions)
    assert kept == logged and kept
    starts = {e.job: e.time for e in log.entries if e.event in ("starts", "backfilled")
              and "requeue)" not in e.text}  # fmt: skip
    for r in rec.teaching.history:
        assert r.start == starts.get(r.job, r.start)


@pytest.mark.parametrize(("scenario", "params"), [
    ("explain-backfill", {}), ("explain-backfill", {"reservations": 2}),
    ("explain-immediate", {}), ("explain-eqspatial", {}),
])  # fmt: skip
def test_labels_never_overlap(scenario, params):
    fig, *_ = chart(scenario, **params)
    assert_no_overlap(fig)


def test_labels_never_overlap_side_by_side():
    cols = []
    for params in ({}, {"reservations": 2}):
        rec = GanttRecorder()
        result, _ = explain("explain-backfill", params=params, observers=(rec,))
        cols.append((result.segments, str(params), rec.teaching))
    assert_no_overlap(gantt_compare(cols, {"h": 8}))


def assert_no_overlap(fig) -> None:
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for ax in fig.axes for t in ax.texts
             if t.get_visible() and t.get_text()]  # fmt: skip
    assert len(boxes) > 5
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1 :]:
            assert not box_a.overlaps(box_b), f"{a!r} overlaps {b!r}"


def test_arrivals_are_labelled_under_their_host():
    """explain-eqspatial: each job's arrival in the panel of the host it ran on (the
    engine's segments say which)."""
    fig, result, *_ = chart("explain-eqspatial")
    seg = result.segments
    first = seg.loc[seg["procs"] > 0].sort_values("start").drop_duplicates("job_id")
    want = {h: sorted(f"J{j}" for j in first.loc[first["host"] == h, "job_id"]) for h in ("a", "b")}
    for ax, host in zip(fig.axes, ("a", "b"), strict=True):
        got = sorted(t.get_text() for t in ax.texts if t.xy[1] == 0 and t.get_visible()
                     and re.fullmatch(r"J\d+", t.get_text()))  # fmt: skip
        assert got == want[host]


def test_a_day_of_a_real_run_is_aggregated_and_quick(tmp_path):
    """Day 9 of the KTH-SP2 sample under FCFS-backfill: drawn and written in a few seconds;
    the notes count what the job table says lies across the window's edges and arrives in
    it (one allocation per job under FCFS-backfill)."""
    rec = GanttRecorder()
    result = simulate(str(SAMPLE), None, "fcfs-backfill", explain=True, observers=[rec])
    jobs = result.jobs
    t0, t1 = 9 * 86400.0, 10 * 86400.0
    began = time.perf_counter()
    fig = gantt_figure(result.segments, {"IBM-SP2": 100}, start=t0, end=t1, teaching=rec.teaching)
    fig.savefig(tmp_path / "day.png", dpi=120)
    seconds = time.perf_counter() - began
    assert seconds < 30  # about 3 s alone on the 2-core test machine
    note = next(t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("Outside"))
    before = int(((jobs["start"] < t0) & (jobs["end"] > t0)).sum())
    after = int(((jobs["start"] < t1) & (jobs["end"] > t1)).sum())
    arrived = int(((jobs["submit"] >= t0) & (jobs["submit"] <= t1)).sum())
    assert f"{before} job(s) started before the window, {after} run past its end" in note
    assert f"{arrived} arrivals on IBM-SP2, not labelled one by one" in note
    assert (tmp_path / "day.png").stat().st_size > 10_000
    assert_no_overlap(fig)


def test_cli_gantt_of_a_run_folder_simulates_it_again(tmp_path, capsys):
    """``o2ksim gantt DIR`` on a ``run --out`` folder without --report: the run is simulated
    again (checked against its jobs.csv) and a window given as dates is drawn."""
    from o2ksim.cli import main

    out = tmp_path / "run"
    assert main(["run", "--trace", str(SAMPLE), "--policy", "fcfs-backfill", "--out", str(out),
                 "-q"]) == 0  # fmt: skip
    png = tmp_path / "day.png"
    assert main(["gantt", str(out), "--start", "1996-10-02", "--end", "1996-10-03",
                 "-o", str(png)]) == 0  # fmt: skip
    assert png.read_bytes()[:4] == b"\x89PNG" and "Gantt chart" in capsys.readouterr().out
    jobs = (out / "jobs.csv").read_text().splitlines()
    head, first = jobs[0].split(","), jobs[1].split(",")
    first[head.index("end")] = str(float(first[head.index("end")]) + 5)  # a stored end changed
    (out / "jobs.csv").write_text("\n".join([jobs[0], ",".join(first), *jobs[2:]]) + "\n")
    assert main(["gantt", str(out), "-o", str(png)]) == 2
    assert "the replay differs from the stored run" in capsys.readouterr().err
