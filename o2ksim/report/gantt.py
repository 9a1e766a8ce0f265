"""Gantt chart: processor allocation per host over a time range, as PNG.

One panel per host, one row per processor (:mod:`o2ksim.report.gantt_rows`
gives each allocation its rows), each job one colour.  With a
:class:`~o2ksim.report.gantt_teach.Teaching` the chart also marks arrivals
(labelled, in their host's panel), requested runtimes, backfilled jobs and
reservations as blocks with where they slid; suspended jobs get their own
lanes under the processors, requeued trials an "x"
(:mod:`o2ksim.report.gantt_marks`).  No label overlaps another
(:mod:`o2ksim.report.gantt_labels`), and what lies outside the drawn window is
said under the chart.

A real run's day holds hundreds of jobs: the allocations are drawn as one
collection per panel; those too short to see (under a pixel) in grey, counted
in the note; only the largest bars get their job's label; arrivals beyond 60
a panel are not labelled one by one and requested-runtime outlines are left
out past 150 bars (both said in the note).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from o2ksim.files import atomic_path, figure_format
from o2ksim.report.gantt_labels import Labels
from o2ksim.report.gantt_marks import (
    SUSPENDED,
    arrival_hosts,
    draw_arrivals,
    draw_requeued,
    draw_reservation,
    draw_resized,
    draw_suspended,
    interruptions,
    lanes_of,
    reservation_rows,
)
from o2ksim.report.gantt_rows import ROW_COLUMNS, assign_rows
from o2ksim.report.gantt_teach import GanttRecorder, Reservation, Teaching, teaching_from_jobs
from o2ksim.workloads.transforms import format_duration

DETAIL_BARS = 150
"""Bars in a column above which the chart aggregates (no outlines, labels on the largest)."""
JOB_LABELS = 80
"""Job labels at most per column (the largest bars)."""
RESERVATIONS_SHOWN = 12
"""Reservation blocks at most per column (the first made in the window)."""


class EmptyWindow(ValueError):
    """No job holds processors in the requested time range (nothing to draw)."""


def _day_clock(t: float) -> str:
    """``231d 06:00``: a tick far from the trace start, to the minute."""
    d, rest = divmod(round(t), 86400)
    return f"{d}d {rest // 3600:02d}:{rest % 3600 // 60:02d}"


def _unit(span: float) -> tuple[float, str]:
    if span <= 3 * 3600:
        return 60.0, "minutes"
    if span <= 3 * 86400:
        return 3600.0, "hours"
    return 86400.0, "days"


PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999999")
"""Okabe and Ito's colour-blind-safe colours without the yellow (too pale on white):
seven distinct hues, none a lighter shade of another (tab20's pairs are)."""

SHORT = "#c8c8c8"
"""Allocations too short to see at the chart's width (aggregated)."""


def job_colour(job_id: int) -> str:
    """A job's colour by its id alone; consecutive job ids never share one.  A chart
    colours its jobs by :func:`start_colours` instead."""
    return PALETTE[(int(job_id) * 3) % len(PALETTE)]


def start_colours(runs: Sequence[pd.DataFrame]) -> dict[int, str]:
    """Each job's colour in a chart of these runs: the palette in the order the jobs first
    start (in the first run, then the others), so jobs started one after the other never
    share a colour, and a job has the same colour in every column of a comparison."""
    order: dict[int, None] = {}
    for segs in runs:
        held = segs.loc[segs["procs"] > 0].sort_values(["start", "job_id"], kind="stable")
        order.update((int(j), None) for j in held["job_id"])
    return {j: PALETTE[k % len(PALETTE)] for k, j in enumerate(order)}


def gantt_figure(
    segments: pd.DataFrame,
    hosts: Mapping[str, int],
    *,
    start: float | None = None,
    end: float | None = None,
    host_names: Sequence[str] | None = None,
    title: str = "",
    label_jobs: bool = True,
    teaching: Teaching | None = None,
):
    """A Gantt chart (one panel per host, height proportional to its processors).

    ``start``/``end`` (seconds) crop the time range (default: all segments);
    ``host_names`` selects and orders hosts.  Each job has one colour; its id
    is written on bars large enough to hold it.  With ``teaching``: arrivals,
    requested-runtime outlines, backfilled jobs hatched, reservations as
    blocks with their history, and a legend.  Suspended intervals, requeued
    trials and resizes are drawn from the segments.  Raises
    :class:`EmptyWindow` when no job runs in the range.
    """
    return gantt_compare(
        [(segments, title, teaching)], hosts, start=start, end=end,
        host_names=host_names, label_jobs=label_jobs,
    )  # fmt: skip


def gantt_compare(
    runs: Sequence[tuple[pd.DataFrame, str, Teaching | None]],
    hosts: Mapping[str, int],
    *,
    start: float | None = None,
    end: float | None = None,
    host_names: Sequence[str] | None = None,
    label_jobs: bool = True,
    suptitle: str = "",
):
    """Several runs side by side (one column each, same time axis and job colours).

    ``runs``: ``(segments, title, teaching)`` per column, e.g. ``reservations=1``
    and ``reservations=2`` on the example of T§3.2.1 Fig. 1.
    """
    # matplotlib is heavy: imported only when a chart is drawn (recording a run needs none)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = list(host_names) if host_names else list(hosts)
    unknown = [h for h in names if h not in hosts]
    if unknown:
        # quoted: a host's name may hold a comma (a machine named after a trace's Computer line)
        raise ValueError(
            f"unknown host(s): {', '.join(map(repr, unknown))} (known: {', '.join(map(repr, hosts))})"
        )
    all_segs = pd.concat([r[0] for r in runs], ignore_index=True)
    t0 = float(all_segs["start"].min()) if start is None and len(all_segs) else (start or 0.0)
    t1 = float(all_segs["end"].max()) if end is None and len(all_segs) else (end or t0 + 1.0)
    if not t1 > t0:
        raise ValueError("the time range is empty (end must be after start)")
    drawn = all_segs.loc[(all_segs["end"] > t0) & (all_segs["start"] < t1) & (all_segs["procs"] > 0)]
    if drawn.empty or not drawn["host"].isin(names).any():
        raise EmptyWindow(
            f"no job holds processors between {format_duration(t0)} and {format_duration(t1)}"
            + (f" on {', '.join(names)}" if host_names else "")
        )
    scale, unit = _unit(t1 - t0)
    colours = start_colours([r[0] for r in runs])
    columns = [_Column(segs, title, teach, hosts, names, t0, t1) for segs, title, teach in runs]
    # each host's suspended lanes: as many as the most suspensions at once, in any column
    lanes = {h: max((c.lane_count.get(h, 0) for c in columns), default=0) for h in names}
    lane = {h: max(1.0, 0.1 * hosts[h]) for h in names}
    ratios = [max(hosts[h], 1) + lanes[h] * lane[h] for h in names]
    height = 1.6 + (3.0 if len(names) == 1 else 2.2 if len(names) <= 3 else 1.3) * len(names)
    width = 11 if len(runs) == 1 else 7.5 * len(runs)
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)  # a renderer, to measure the labels
    axes = fig.subplots(
        len(names), len(runs), sharex=True, sharey="row", squeeze=False,
        gridspec_kw={"height_ratios": ratios},
    )  # fmt: skip
    legend: dict[str, Any] = {}
    labels = Labels()
    px = (t1 - t0) / (width / len(runs) * fig.dpi * 0.85)  # seconds per pixel, about
    for col, c in enumerate(columns):
        c.draw(axes[:, col], scale, px, colours, lanes, lane, legend, labels, label_jobs)
        bottom = axes[-1, col]
        if t0 / scale > 50:  # far from the trace start: the simulated clock, not a count
            from matplotlib.ticker import MultipleLocator

            span = (t1 - t0) / scale
            hours = span * scale / 3600
            step = next((b for b in (1, 2, 3, 6, 12, 24, 48) if hours / b <= 5), 168)
            bottom.xaxis.set_major_locator(MultipleLocator(step * 3600 / scale))
            bottom.xaxis.set_major_formatter(lambda x, _pos: _day_clock(x * scale))
            unit = "since the trace start"
        bottom.set_xlabel(f"time ({unit})")
        if c.notes:  # below the time axis's label, in points: the last panel may be short
            bottom.annotate("Outside the drawn window or not drawn one by one: " + "; ".join(c.notes),
                            xy=(0, 0), xycoords="axes fraction", xytext=(0, -42),
                            textcoords="offset points", fontsize=8, va="top", ha="left",
                            wrap=True)  # fmt: skip
        wrap = 80 if len(runs) == 1 else 55  # the title is centred over the axes, right of the host names
        axes[0, col].set_title(textwrap.fill(c.title or "Processor allocation per host", wrap),
                               fontsize=11, fontweight="bold", pad=14)  # fmt: skip
    for row, host in enumerate(names):
        ax = axes[row, 0]
        # a long host name (a trace header's Computer line) on a few lines, not across the plot
        ax.set_ylabel(f"{textwrap.fill(host, 22)}\n({hosts[host]} procs)", rotation=0, ha="right",
                      va="center", fontsize=9)  # fmt: skip
        ticks, text = [0.0, float(hosts[host])], ["0", str(hosts[host])]
        if lanes[host]:
            ticks.append(-lanes[host] * lane[host] / 2)
            text.append("suspended")
        ax.set_yticks(ticks, text)
    if suptitle:
        fig.suptitle(suptitle, fontsize=12, fontweight="bold")
    if legend:
        fig.legend(list(legend.values()), list(legend), loc="outside lower center",
                   ncol=min(len(legend), 2 if len(runs) == 1 else 3), frameon=False, fontsize=9)  # fmt: skip
    labels.place(fig)
    return fig


class _Column:
    """One run's column: its bars and marks in the window, and the notes under it."""

    def __init__(self, segments: pd.DataFrame, title: str, teach: Teaching | None,
                 hosts: Mapping[str, int], names: list[str], t0: float, t1: float) -> None:  # fmt: skip
        self.segments, self.title, self.teach = segments, title, teach
        self.hosts, self.names, self.t0, self.t1 = hosts, names, t0, t1
        self.notes: list[str] = []
        # rows for the allocations in the window only (which processor a job holds is not
        # recorded: the rows are the chart's choice), marks from its jobs' segments
        over = ((segments["end"] >= t0) & (segments["start"] <= t1)).to_numpy()
        mine = segments["job_id"].isin(segments.loc[over, "job_id"].unique())
        if teach is not None:  # and those of the jobs that arrive in the window
            came = [j for j, t in teach.submit.items() if t0 <= t <= t1]
            mine |= segments["job_id"].isin(came)
        self.segments = segments.loc[mine]
        bars = assign_rows(segments.loc[over], hosts)
        self.all_bars = bars
        self.bars = bars.loc[(bars["end"] > t0) & (bars["start"] < t1) & bars["host"].isin(names)]
        self.suspended, self.requeued, self.resized = interruptions(self.segments, teach)
        self.lane_of: dict[int, int] = {}
        self.lane_count: dict[str, int] = {}
        for host in names:
            idx = [i for i, s in enumerate(self.suspended)
                   if s[1] == host and s[3] > t0 and s[2] < t1]  # fmt: skip
            ks = lanes_of([(self.suspended[i][2], self.suspended[i][3]) for i in idx])
            self.lane_of.update(zip(idx, ks, strict=True))
            self.lane_count[host] = max(ks, default=-1) + 1

    def draw(self, axes: Any, scale: float, px: float, colours: Mapping[int, str],
             lanes: Mapping[str, int], lane: Mapping[str, float], legend: dict[str, Any],
             labels: Labels, label_jobs: bool) -> None:  # fmt: skip
        from matplotlib.patches import Patch  # matplotlib is heavy: only when drawing

        t0, t1, teach = self.t0, self.t1, self.teach

        def colour(job: int) -> str:
            return colours.get(int(job)) or job_colour(int(job))

        detail = len(self.bars) <= DETAIL_BARS
        short_jobs: set[int] = set()
        label_cands: list[tuple[float, Any, float, float, str]] = []
        for ax, host in zip(axes, self.names, strict=True):
            procs = self.hosts[host]
            part = self.bars.loc[self.bars["host"] == host]
            short = self._draw_bars(ax, part, scale, px, colour, legend, label_cands, procs)
            short_jobs |= short
            # requested runtime: outline on the job's own first rows, from its first start
            if teach is not None and teach.requested and detail:
                first = self.all_bars.sort_values(["start", "row"]).drop_duplicates("job_id")
                first = first.loc[(first["host"] == host) & (first["end"] > t0) & (first["start"] < t1)]
                self._draw_requested(ax, first, scale, colour, legend)
            sus = [(s[0], s[2], s[3], self.lane_of[i]) for i, s in enumerate(self.suspended)
                   if i in self.lane_of and s[1] == host]  # fmt: skip
            if sus:
                draw_suspended(ax, sus, lane[host], t0, t1, scale, colour, labels)
                legend[SUSPENDED] = Patch(facecolor="0.7", hatch="..", edgecolor="0.4")
            self._draw_requeues_and_resizes(ax, host, scale, colour, legend, labels)
            self._draw_reservations(ax, host, procs, scale, legend, labels)
            if teach is not None and teach.submit:
                self._draw_arrivals(ax, host, scale, legend, labels)
            if lanes[host]:
                ax.axhline(0, color="0.3", linewidth=0.8)
            ax.set_ylim(-lanes[host] * lane[host], procs)
            ax.set_xlim(t0 / scale, t1 / scale)
            ax.grid(axis="x", color="0.9")
            ax.set_axisbelow(True)
        if label_jobs:
            most = JOB_LABELS if detail else JOB_LABELS // 2
            for _area, ax, x, y, text in sorted(label_cands, key=lambda c: -c[0])[:most]:
                labels.add(ax, x, y, text, priority=4, ha="center",
                           bbox={"facecolor": "none", "linewidth": 0, "pad": 0.3})  # fmt: skip
        if short_jobs:
            self.notes.append(f"{len(short_jobs)} job(s) too short to see at this width "
                              f"(under {format_duration(max(round(px), 1))}) drawn in grey")  # fmt: skip
            legend["too short to see (grey)"] = Patch(facecolor=SHORT)
        if teach is not None and teach.requested and not detail:
            self.notes.append(f"requested runtimes not outlined ({len(self.bars)} bars)")
        before = int((self.bars.groupby("job_id")["start"].min() < t0).sum())
        after = int((self.bars.groupby("job_id")["end"].max() > t1).sum())
        cut = [f"{before} job(s) started before the window"] if before else []
        cut += [f"{after} run past its end"] if after else []
        if cut:
            self.notes.append(", ".join(cut) + " (bars cut at the edges)")
        if self.requeued and any(not t0 <= w <= t1 for _j, h, w in self.requeued if h in self.names):
            n = sum(1 for _j, h, w in self.requeued if h in self.names and not t0 <= w <= t1)
            self.notes.append(f"{n} requeued trial(s) outside the window")

    def _draw_bars(self, ax: Any, part: pd.DataFrame, scale: float, px: float, colour: Any,
                   legend: dict[str, Any], cands: list, procs: int) -> set[int]:  # fmt: skip
        """The allocations as collections (plain, hatched when backfilled, grey when too
        short to see); returns the jobs drawn grey."""
        from matplotlib.collections import PolyCollection
        from matplotlib.patches import Patch

        t0, t1, teach = self.t0, self.t1, self.teach
        plain: tuple[list, list] = ([], [])
        hatched: tuple[list, list] = ([], [])
        grey: list = []
        short: set[int] = set()
        many = len(self.bars) > DETAIL_BARS
        for job, s, e, row, rows in zip(part["job_id"].astype(int), part["start"], part["end"],
                                        part["row"], part["rows"], strict=True):  # fmt: skip
            a, b = max(float(s), t0), min(float(e), t1)
            x0, x1 = a / scale, b / scale
            verts = [(x0, row), (x0, row + rows), (x1, row + rows), (x1, row)]
            if b - a < px:
                grey.append(verts)
                short.add(job)
                continue
            back = teach is not None and job in teach.backfilled
            target = hatched if back else plain
            target[0].append(verts)
            target[1].append(colour(job))
            wide = (b - a) > 0.035 * (t1 - t0)
            tall = rows >= max(1, 0.07 * procs)
            if wide and tall:
                cands.append(((b - a) * rows, ax, (x0 + x1) / 2, row + rows / 2,
                              f"J{job}" + (" B" if back else "")))  # fmt: skip
        lw = 0.3 if many else 0.6
        if plain[0]:
            ax.add_collection(PolyCollection(plain[0], facecolors=plain[1], edgecolors="white",
                                             linewidths=lw))  # fmt: skip
        if hatched[0]:
            ax.add_collection(PolyCollection(hatched[0], facecolors=hatched[1], edgecolors="white",
                                             linewidths=lw, hatch="//"))  # fmt: skip
            legend["backfilled (hatched)"] = Patch(facecolor="0.85", hatch="//", edgecolor="0.4")
        if grey:
            ax.add_collection(PolyCollection(grey, facecolors=SHORT, edgecolors="none"))
        return short

    def _draw_requested(self, ax: Any, first: pd.DataFrame, scale: float, colour: Any,
                        legend: dict[str, Any]) -> None:  # fmt: skip
        from matplotlib.lines import Line2D  # matplotlib is heavy: only when drawing

        teach = self.teach
        assert teach is not None
        ends = self.segments.loc[self.segments["procs"] > 0].groupby("job_id")["end"].max()
        for b in first.itertuples(index=False):
            req = teach.requested.get(int(b.job_id))
            end = float(ends.get(b.job_id, b.end))
            if req is None or b.start + req <= end:
                continue
            # a whisker from its end to its requested end, on its top row: a line, not a box
            # over the jobs that use those processors after it
            y = b.row + b.rows - 0.5 * min(b.rows, 1)
            ax.plot([end / scale, (b.start + req) / scale], [y, y], color=colour(int(b.job_id)),
                    linestyle="--", linewidth=1.2, zorder=3)  # fmt: skip
            ax.plot([(b.start + req) / scale], [y], marker="|", markersize=8,
                    color=colour(int(b.job_id)), zorder=3)  # fmt: skip
            legend["requested runtime (dashed whisker)"] = Line2D([], [], color="0.3",
                                                                  linestyle="--", marker="|")  # fmt: skip

    def _draw_requeues_and_resizes(self, ax: Any, host: str, scale: float, colour: Any,
                                   legend: dict[str, Any], labels: Labels) -> None:  # fmt: skip
        from matplotlib.lines import Line2D

        t0, t1, bars = self.t0, self.t1, self.all_bars
        req = []
        for job, h, when in self.requeued:
            if h == host and t0 <= when <= t1:
                r = bars.loc[(bars["job_id"] == job) & (bars["host"] == h) & (bars["end"] == when)]
                row = float(r["row"].iloc[0] + r["rows"].iloc[0] / 2) if len(r) else 0.5
                req.append((job, when, row))
        if req:
            draw_requeued(ax, req, scale, labels)
            legend["trial requeued (x at its end)"] = Line2D([], [], marker="x", color="black",
                                                             linestyle="none")  # fmt: skip
        res = []
        for job, h, when, before, after in self.resized:
            if h == host and t0 <= when <= t1:
                r = bars.loc[(bars["job_id"] == job) & (bars["host"] == h) & (bars["start"] == when)]
                lo = float(r["row"].min()) if len(r) else 0.0
                hi = float((r["row"] + r["rows"]).max()) if len(r) else float(after)
                res.append((job, when, before, after, lo, hi - lo))
        if res:
            draw_resized(ax, res, scale, colour, labels)
            legend["resized (dotted line on its rows)"] = Line2D([], [], color="0.4", linestyle=":",
                                                                 linewidth=2)  # fmt: skip

    def _draw_reservations(self, ax: Any, host: str, procs: int, scale: float,
                           legend: dict[str, Any], labels: Labels) -> None:  # fmt: skip
        from matplotlib.patches import Patch

        teach = self.teach
        if teach is None:
            return
        t0, t1 = self.t0, self.t1
        history: list[Reservation] = [r for r in teach.history if r.host == host]
        if not history and teach.reservations:  # a Teaching built by hand: first positions only
            history = [Reservation(j, h, [(at, at)]) for j, h, at in teach.reservations if h == host]
        shown: list[Reservation] = []
        beyond: list[str] = []  # made in the window for a time outside it
        for res in sorted(history, key=lambda r: r.made):
            if res.made > t1 or (res.start if res.start is not None else res.at) < t0:
                continue  # made after the window, or over before it
            if len(res.positions) == 1 and res.start == res.at and t0 <= res.at < t1:
                continue  # started where and when it was reserved: its bar says it all
            req = teach.requested.get(res.job, 0.0)
            if any(at < t1 and at + req > t0 for _w, at in res.positions):
                shown.append(res)
            else:
                beyond.append(f"J{res.job}'s reservation at {format_duration(res.at)} on {host}")
        detail = len(self.bars) <= DETAIL_BARS
        if not detail:  # a real run: the reservations that slid the most
            shown.sort(key=lambda r: -(r.positions[0][1] - (r.start if r.start is not None else r.at)))
        most = RESERVATIONS_SHOWN if detail else RESERVATIONS_SHOWN // 2
        more = [f"J{r.job}" for r in shown[most:]]
        drawn = 0
        for res in shown[:most]:
            rows = reservation_rows(res, self.all_bars, procs, teach.procs.get(res.job, 1))
            req = teach.requested.get(res.job, 0.0)
            short = not detail or t0 >= 86400  # a real run's chart: the job and how far it slid
            drawn += draw_reservation(ax, res, rows, req, t0, t1, scale, labels, short=short)
        if beyond:
            extra = f" and {len(beyond) - 4} more" if len(beyond) > 4 else ""
            self.notes.append("; ".join(beyond[:4]) + extra)
        if more:
            self.notes.append(f"{len(more)} more reservation(s) on {host} in the window not "
                              f"drawn ({', '.join(more[:5])}{' ...' if len(more) > 5 else ''})")  # fmt: skip
        if drawn:
            legend["reservation: procs x requested time (dotted: where it was made)"] = Patch(
                facecolor="0.82", edgecolor="black", linestyle="--"
            )

    def _draw_arrivals(self, ax: Any, host: str, scale: float, legend: dict[str, Any],
                       labels: Labels) -> None:  # fmt: skip
        from matplotlib.lines import Line2D

        teach = self.teach
        assert teach is not None
        where = arrival_hosts(self.segments)
        last = self.names[-1]
        mine = [(j, t) for j, t in teach.submit.items() if self.t0 <= t <= self.t1
                and (where.get(j, last) == host or (where.get(j) not in self.names and host == last))]  # fmt: skip
        if not mine:
            return
        if not draw_arrivals(ax, mine, scale, labels):
            self.notes.append(f"{len(mine)} arrivals on {host}, not labelled one by one")
        legend["arrival (triangle)"] = Line2D([], [], marker="^",
                                                                    color="black", linestyle="none")  # fmt: skip


def write_gantt(
    segments: pd.DataFrame,
    hosts: Mapping[str, int],
    path: str,
    *,
    start: float | None = None,
    end: float | None = None,
    host_names: Sequence[str] | None = None,
    title: str = "",
    dpi: int = 120,
    teaching: Teaching | None = None,
) -> str:
    """Draw :func:`gantt_figure` and write it to ``path`` in the format its extension names
    (PNG, SVG or PDF: :func:`o2ksim.files.figure_format`; another is refused before drawing)."""
    fmt = figure_format(path, "write_gantt: path")
    fig = gantt_figure(segments, hosts, start=start, end=end, host_names=host_names,
                       title=title, teaching=teaching)  # fmt: skip
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format=fmt)
    return path


__all__ = [
    "PALETTE",
    "ROW_COLUMNS",
    "EmptyWindow",
    "GanttRecorder",
    "Reservation",
    "Teaching",
    "assign_rows",
    "gantt_compare",
    "gantt_figure",
    "job_colour",
    "start_colours",
    "teaching_from_jobs",
    "write_gantt",
]
