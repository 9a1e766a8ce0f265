"""Gantt charts that tell the truth (issue 25): requeued trials, stable rows, colours, notes.

Every expected value is set by hand from the hand-made segments or from the
scenario's definition (scenarios/explain-immediate.toml: J7's 60 s trial
starts at 0:22:10 and fails -- its peak memory exceeds the trial memory).
"""

from __future__ import annotations

import pandas as pd
import pytest

from o2ksim.explain import explain
from o2ksim.report.gantt import (
    PALETTE,
    GanttRecorder,
    Teaching,
    assign_rows,
    gantt_figure,
    job_colour,
)

COLUMNS = ["job_id", "host", "start", "end", "procs", "mem"]


def bars_of(bars: pd.DataFrame, job: int, start: float) -> set[int]:
    rows = bars.loc[(bars["job_id"] == job) & (bars["start"] == start)]
    return {r for b in rows.itertuples() for r in range(b.row, b.row + b.rows)}


def test_a_resized_job_keeps_its_rows():
    """J1 shrinks 8 -> 4 at 60 s while J2 takes 4; J3 ends at 60, J1 grows 2 -> 4."""
    segs = pd.DataFrame(
        [(1, "a", 0, 60, 8, 0), (1, "a", 60, 120, 4, 0), (2, "a", 60, 120, 4, 0),
         (3, "b", 0, 60, 2, 0), (4, "b", 0, 60, 2, 0), (4, "b", 60, 120, 4, 0)],
        columns=COLUMNS,
    )  # fmt: skip
    bars = assign_rows(segs, {"a": 8, "b": 4})
    assert bars_of(bars, 1, 60) <= bars_of(bars, 1, 0)  # shrinks on its own rows
    assert bars_of(bars, 2, 60) == {0, 1, 2, 3, 4, 5, 6, 7} - bars_of(bars, 1, 60)
    assert bars_of(bars, 4, 60) >= bars_of(bars, 4, 0)  # grows around its own rows


def test_a_requeued_trial_is_drawn_as_requeued_not_preempted():
    """J7's trial holds 4 of 10 processors from 600 to 660 s and is requeued; it runs
    again from 3000 to 3600 s.  J1 runs on other processors throughout."""
    segs = pd.DataFrame(
        [(1, "h", 0, 4000, 6, 0), (7, "h", 600, 660, 4, 0), (7, "h", 3000, 3600, 4, 0)],
        columns=COLUMNS,
    )  # fmt: skip

    def drawn(teach):
        ax = gantt_figure(segs, {"h": 10}, teaching=teach).axes[0]
        return {t.get_text().strip() for t in ax.texts}, suspended_boxes(ax)

    texts, lanes = drawn(Teaching(requeued={7: [660.0]}))
    assert "J7 requeued" in texts and "J7 suspended" not in texts and lanes == []
    texts, lanes = drawn(Teaching(requeued_only={7}))  # from a job table: restarted, never preempted
    assert "J7 requeued" in texts and lanes == []
    texts, lanes = drawn(None)  # no decision information: a gap is all the segments say
    assert "J7 suspended" in texts and [(a, b) for a, b, _y0, _y1 in lanes] == [(660.0, 3000.0)]
    assert lanes[0][3] <= 0  # in the suspended lane, under the processor rows


def suspended_boxes(ax) -> list[tuple[float, float, float, float]]:
    """``(from, to, y0, y1)`` of the suspended boxes (dotted hatch), seconds (minute axis)."""
    from matplotlib.patches import Rectangle

    return sorted(
        (round(p.get_x() * 60, 6), round((p.get_x() + p.get_width()) * 60, 6), p.get_y(),
         p.get_y() + p.get_height())
        for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch() == ".."
    )  # fmt: skip


def test_the_recorder_sees_the_failed_trial():
    rec = GanttRecorder()
    explain("explain-immediate", observers=(rec,))
    assert rec.teaching.requeued == {7: [22 * 60 + 10 + 60.0]}  # 0:22:10 + its 60 s trial


def test_palette_colour_blind_safe_and_neighbours_differ():
    assert len(set(PALETTE)) == len(PALETTE) == 7
    assert "#F0E442" not in PALETTE  # Okabe-Ito's yellow: invisible as an outline on white
    for j in range(1, 200):
        assert job_colour(j) != job_colour(j + 1)
        assert job_colour(j) in PALETTE


@pytest.mark.parametrize("end_min", [90])
def test_what_lies_outside_the_window_is_said(end_min):
    """Fig. 1's J4 is reserved from 1:50:00 (J3's requested end: 0:50 + 60 min), after 90 min."""
    rec = GanttRecorder()
    result, _ = explain("explain-backfill", observers=(rec,))
    fig = gantt_figure(result.segments, {"h": 8}, end=end_min * 60.0, teaching=rec.teaching)
    notes = [t.get_text() for ax in fig.axes for t in ax.texts if "Outside" in t.get_text()]
    assert len(notes) == 1 and "J4's reservation at" in notes[0]
    assert "J3's reservation" not in notes[0]  # J3's (1:00:00) is drawn


def test_long_titles_wrap():
    segs = pd.DataFrame([(1, "h", 0, 60, 1, 0)], columns=COLUMNS)
    title = "lxfw-backfill (reservations=2, immediate_service=on): " + "a long workload name " * 8
    ax = gantt_figure(segs, {"h": 2}, title=title).axes[0]
    lines = ax.get_title().splitlines()
    assert len(lines) > 1 and max(map(len, lines)) <= 100


@pytest.mark.parametrize("hosts", [1, 8])
def test_the_note_of_what_is_not_drawn_lies_below_the_time_axis_label(hosts):
    """Found in the demo report's Gantt chart (eight hosts, the last one short): the note
    was placed a fraction of the last panel's height below it, so on a short panel it was
    written over the time axis's label.  Its extent, measured by the renderer, lies below
    the label's and inside the figure."""
    names = [f"h{i}" for i in range(hosts)]
    rows = [(j, names[j % hosts], -600.0, 1800.0 + 60 * j, 2, 0) for j in range(1, 3 * hosts + 1)]
    fig = gantt_figure(pd.DataFrame(rows, columns=COLUMNS), dict.fromkeys(names, 16), start=0.0, end=3600.0)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bottom = fig.axes[hosts - 1]
    notes = [t for ax in fig.axes for t in ax.texts if "Outside the drawn window" in t.get_text()]
    assert len(notes) == 1 and "started before the window" in notes[0].get_text()
    note, label = notes[0].get_window_extent(renderer), bottom.xaxis.label.get_window_extent(renderer)
    assert note.y1 <= label.y0 and note.y0 >= 0, (note, label)


@pytest.mark.parametrize("columns", [1, 2])
def test_the_title_and_a_long_host_name_stay_inside_the_figure(columns):
    """Found drawing the shipped ``traces/tiny.swf``: its host is named from the header's
    Computer line (55 characters), which pushed the axes right, and the title, centred over
    them and wrapped at 100 characters, ran past the figure's right edge (cut off in the
    PNG).  Every text's extent, measured by the renderer, lies inside the figure."""
    from o2ksim.report.gantt import gantt_compare

    host = "hand-made-example,-one-16-processor-shared-memory-host"
    segs = pd.DataFrame([(1, host, 0, 3600, 8, 0), (2, host, 0, 7200, 4, 0)], columns=COLUMNS)
    title = ("fcfs-backfill (priority=fcfs, reservations=1, reservation_kind=dynamic, sliding=True, "
             "release_ties=smallest-first, backfill_host=delays-none, immediate_service=off, "
             "quantum=1m, initial_memory=1GB): /work/o2ksim/traces/tiny.swf")
    fig = gantt_compare([(segs, title, None)] * columns, {host: 16})
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height
    for ax in fig.axes:
        for text in (ax.title, ax.yaxis.label):
            box = text.get_window_extent(renderer)
            assert box.x0 >= 0 and box.x1 <= width + 0.5, (text.get_text()[:40], box, width)
            assert box.y0 >= 0 and box.y1 <= height + 0.5


def test_fig1_jobs_get_distinct_colours_and_labelled_arrivals():
    """Fig. 1's six jobs: six different colours (J3/J10 and J4/J11 shared one by id), the
    same in both columns; each arrival labelled, no two labels overlapping (J1 and J2
    arrive together at 0, J3 at 1 min, J4 at 2, J10 at 3, J11 at 5)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Annotation

    from o2ksim.report.gantt import gantt_compare, start_colours

    cols = []
    for params in ({}, {"reservations": 2}):
        rec = GanttRecorder()
        result, _ = explain("explain-backfill", params=params, observers=(rec,))
        cols.append((result.segments, "", rec.teaching))
    colours = start_colours([c[0] for c in cols])
    assert sorted(colours) == [1, 2, 3, 4, 10, 11] and len(set(colours.values())) == 6
    fig = gantt_compare(cols, {"h": 8})
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in fig.axes:
        labels = [t for t in ax.texts if isinstance(t, Annotation) and t.xy[1] == 0]
        assert sorted(t.get_text() for t in labels) == ["J1", "J10", "J11", "J2", "J3", "J4"]
        boxes = [t.get_window_extent(renderer) for t in labels]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert not a.overlaps(b)
