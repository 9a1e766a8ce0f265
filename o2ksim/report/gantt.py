"""Gantt chart: processor allocation per host over a time range, as PNG.

The engine records *how many* processors of which host each job holds and
when (``Result.segments``), not which processors.  To draw the chart, each
allocation is given concrete processor rows (:func:`assign_rows`): at its
start it takes the lowest contiguous block of free rows on its host, or, when
the free rows are scattered, the lowest free rows (then it is drawn as
several bars); a job whose allocation changes at an instant (a resize) keeps
the rows it held, so it stays on its rows.  Ends are handled before starts at
the same instant, as in the engine.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.engine.decisions import Reserve, Start
from o2ksim.engine.monitor import Observer
from o2ksim.files import atomic_path
from o2ksim.jobs import Job, JobState
from o2ksim.workloads.transforms import format_duration

ROW_COLUMNS = ["job_id", "host", "start", "end", "row", "rows"]


def assign_rows(segments: pd.DataFrame, hosts: Mapping[str, int]) -> pd.DataFrame:
    """Concrete processor rows for each allocation segment.

    ``segments``: ``job_id, host, start, end, procs`` (``Result.segments``);
    ``hosts``: processors per host.  Returns one row per drawn bar:
    ``job_id, host, start, end, row`` (first processor index) and ``rows``
    (how many).  Segments with no processors (a preempted job keeping its
    memory) are not drawn.
    """
    segs = segments.loc[segments["procs"] > 0].sort_values(["start", "job_id"], kind="stable")
    events: list[tuple[float, int, int]] = []  # (time, 0=end/1=start, segment index)
    for i, (s, e) in enumerate(
        zip(segs["start"].to_numpy(float), segs["end"].to_numpy(float), strict=True)
    ):
        if e > s:
            events.append((s, 1, i))
            events.append((e, 0, i))
    events.sort()
    busy = {h: np.zeros(int(p), dtype=bool) for h, p in hosts.items()}
    taken: dict[int, np.ndarray] = {}
    given_back: dict[tuple[int, str], tuple[float, np.ndarray]] = {}  # (job, host) -> (when, rows)
    out: list[tuple[int, str, float, float, int, int]] = []
    job_ids = segs["job_id"].to_numpy()
    host_of = segs["host"].to_numpy()
    procs = segs["procs"].to_numpy(int)
    starts = segs["start"].to_numpy(float)
    ends = segs["end"].to_numpy(float)
    for t, kind, i in events:
        host = host_of[i]
        if host not in busy:
            raise ValueError(f"segment on unknown host {host!r}")
        rows_free = busy[host]
        if kind == 0:
            rows = taken.pop(i)
            rows_free[rows] = False
            given_back[(int(job_ids[i]), host)] = (t, rows)
            continue
        # a job resized (or resumed) at this instant keeps the rows it just gave back
        back = given_back.pop((int(job_ids[i]), host), None)
        keep = back[1][~rows_free[back[1]]][: int(procs[i])] if back is not None and back[0] == t else None
        if keep is not None and len(keep):
            rows_free[keep] = True
            extra = _pick(rows_free, int(procs[i]) - len(keep)) if procs[i] > len(keep) else keep[:0]
            rows_free[keep] = False
            idx = np.sort(np.concatenate([keep, extra]))
        else:
            idx = _pick(rows_free, int(procs[i]))
        rows_free[idx] = True
        taken[i] = idx
        for first, count in _runs(idx):
            out.append((int(job_ids[i]), host, starts[i], ends[i], first, count))
    return pd.DataFrame(out, columns=ROW_COLUMNS)


def _pick(busy: np.ndarray, n: int) -> np.ndarray:
    """Lowest contiguous block of ``n`` free rows, else the ``n`` lowest free rows."""
    free = ~busy
    if n == 0:
        return np.zeros(0, dtype=int)
    if n > free.sum():
        raise ValueError(f"{n} processors requested but only {int(free.sum())} free")
    window = np.convolve(free.astype(int), np.ones(n, dtype=int), mode="valid")
    hits = np.flatnonzero(window == n)
    if len(hits):
        return np.arange(hits[0], hits[0] + n)
    return np.flatnonzero(free)[:n]


def _runs(idx: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous runs in sorted indices as (first, count)."""
    out = []
    start = prev = int(idx[0])
    for k in idx[1:]:
        k = int(k)
        if k != prev + 1:
            out.append((start, prev - start + 1))
            start = k
        prev = k
    out.append((start, prev - start + 1))
    return out


class EmptyWindow(ValueError):
    """No job holds processors in the requested time range (nothing to draw)."""


@dataclass
class Teaching:
    """What a teaching Gantt chart marks beyond the allocations (all optional).

    ``submit``/``requested``: per job id, arrival time and requested runtime
    (from ``Result.jobs``); ``backfilled``: ids of jobs started by
    backfilling; ``reservations``: ``(job, host, at)`` -- the first reserved
    start (shadow time) of each job that got a reservation.  Filled by
    :class:`GanttRecorder` during a run, or by :func:`teaching_from_jobs`.
    """

    submit: dict[int, float] = field(default_factory=dict)
    requested: dict[int, float] = field(default_factory=dict)
    backfilled: set[int] = field(default_factory=set)
    reservations: list[tuple[int, str, float]] = field(default_factory=list)
    requeued: dict[int, list[float]] = field(default_factory=dict)
    """Per job, when a trial run of it ended and it went back to the queue (T§3.2.2)."""
    requeued_only: set[int] = field(default_factory=set)
    """Jobs (from a job table) restarted but never preempted: every gap is a requeue."""


def teaching_from_jobs(jobs: pd.DataFrame) -> Teaching:
    """Arrivals and requested runtimes from a per-job table (no decision information)."""
    ids = jobs["job_id"].astype(int).tolist()
    requeued_only: set[int] = set()
    if "restarts" in jobs and "preemptions" in jobs:
        only = (jobs["restarts"] > 0) & (jobs["preemptions"] == 0)
        requeued_only = set(jobs.loc[only, "job_id"].astype(int))
    return Teaching(
        submit=dict(zip(ids, jobs["submit"].astype(float), strict=True)),
        requested=dict(zip(ids, jobs["req_time"].astype(float), strict=True)),
        requeued_only=requeued_only,
    )


class GanttRecorder(Observer):
    """Collects a :class:`Teaching` during a run (attach it with ``observers=[...]``).

    Reservations are reported only when the run is made with ``explain=True``.
    """

    def __init__(self) -> None:
        self.teaching = Teaching()
        self._reserved: set[int] = set()

    def on_arrival(self, job: Job, now: float) -> None:
        self.teaching.submit[job.id] = job.spec.submit
        self.teaching.requested[job.id] = job.spec.req_time

    def on_release(self, job: Job, now: float) -> None:
        if job.state is JobState.QUEUED:  # a trial run over without finishing: requeued
            self.teaching.requeued.setdefault(job.id, []).append(now)

    def on_decision(self, now: float, decision: Any) -> None:
        if isinstance(decision, Start) and decision.note.startswith("backfilled"):
            self.teaching.backfilled.add(decision.job.id)
        elif isinstance(decision, Reserve) and decision.job.id not in self._reserved:
            self._reserved.add(decision.job.id)  # the first reservation: the shadow time
            self.teaching.reservations.append((decision.job.id, decision.host, decision.at))


def _unit(span: float) -> tuple[float, str]:
    if span <= 3 * 3600:
        return 60.0, "minutes"
    if span <= 3 * 86400:
        return 3600.0, "hours"
    return 86400.0, "days"


PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999999")
"""Okabe and Ito's colour-blind-safe colours without the yellow (too pale on white):
seven distinct hues, none a lighter shade of another (tab20's pairs are)."""


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
    ``host_names`` selects and orders hosts.  Each job has one colour (the
    same in every chart); its id is written on bars large enough to hold it.
    With ``teaching``: arrivals (triangles under the axis), requested-runtime
    outlines beside the actual runtime, backfilled jobs hatched, each
    reservation's shadow time (dashed line), and a legend.  Preempted intervals
    (a job's gap between two allocations) and resizes (a change in its
    processors) are drawn from the segments alone.  Raises :class:`EmptyWindow`
    when no job runs in the range.
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
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    names = list(host_names) if host_names else list(hosts)
    unknown = [h for h in names if h not in hosts]
    if unknown:
        raise ValueError(f"unknown host(s): {', '.join(unknown)} (known: {', '.join(hosts)})")
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
    ratios = [max(hosts[h], 1) for h in names]
    height = 1.4 + (3.0 if len(names) == 1 else 2.2 if len(names) <= 3 else 1.3) * len(names)
    fig = Figure(figsize=(11 if len(runs) == 1 else 7.5 * len(runs), height), layout="constrained")
    axes = fig.subplots(
        len(names), len(runs), sharex=True, sharey="row", squeeze=False,
        gridspec_kw={"height_ratios": ratios},
    )  # fmt: skip
    legend: dict[str, Any] = {}
    colours = start_colours([r[0] for r in runs])
    for col, (segments, title, teach) in enumerate(runs):
        outside: list[str] = []  # what lies outside the drawn window, said under the chart
        bars = assign_rows(segments, hosts)
        bars = bars.loc[(bars["end"] > t0) & (bars["start"] < t1) & bars["host"].isin(names)]
        first_bar = bars.sort_values(["start", "row"]).drop_duplicates("job_id")
        for ax, host in zip(axes[:, col], names, strict=True):
            part = bars.loc[bars["host"] == host]
            procs = hosts[host]
            for b in part.itertuples(index=False):
                x0, x1 = max(b.start, t0) / scale, min(b.end, t1) / scale
                back = teach is not None and b.job_id in teach.backfilled
                ax.add_patch(Rectangle(
                    (x0, b.row), x1 - x0, b.rows, facecolor=colours[int(b.job_id)],
                    edgecolor="white", linewidth=0.6, hatch="//" if back else None,
                ))  # fmt: skip
                if back:
                    legend["backfilled (hatched)"] = Patch(facecolor="0.85", hatch="//",
                                                           edgecolor="0.4")  # fmt: skip
                wide = (x1 - x0) > 0.035 * (t1 - t0) / scale
                tall = b.rows >= max(1, 0.07 * procs)
                if label_jobs and wide and tall:
                    ax.text((x0 + x1) / 2, b.row + b.rows / 2, f"J{b.job_id}" + (" B" if back else ""),
                            ha="center", va="center", fontsize=8, color="black")  # fmt: skip
            # requested runtime: outline from the first start to start + requested
            if teach is not None and teach.requested:
                for b in first_bar.loc[first_bar["host"] == host].itertuples(index=False):
                    req = teach.requested.get(int(b.job_id))
                    if req is None:
                        continue
                    # on the job's own first bar's rows: an outline never crosses other jobs' rows
                    ax.add_patch(Rectangle(
                        (b.start / scale, b.row), req / scale, b.rows, fill=False,
                        edgecolor=colours[int(b.job_id)], linestyle="--", linewidth=1.1, zorder=3,
                    ))  # fmt: skip
                    legend["requested runtime (dashed outline)"] = Patch(
                        fill=False, edgecolor="0.3", linestyle="--"
                    )
            _draw_interruptions(ax, segments, bars, host, scale, legend, teach, colours)
            if teach is not None:
                shown = [(j, a) for j, h, a in teach.reservations if h == host and t0 <= a <= t1]
                outside += [f"J{j}'s reservation at {format_duration(a)} on {host}"
                            for j, h, a in teach.reservations if h == host and not t0 <= a <= t1]  # fmt: skip
                for k, (job, at) in enumerate(shown):
                    ax.axvline(at / scale, color="black", linestyle=(0, (4, 3)), linewidth=1.2)
                    ax.text(at / scale, procs * (0.97 - 0.09 * (k % 4)), f" J{job} reserved",
                            fontsize=8, va="top", ha="left",
                            bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0})  # fmt: skip
                    if shown:
                        legend["reservation: shadow time (dashed line)"] = Line2D(
                            [], [], color="black", linestyle=(0, (4, 3))
                        )
            ax.set_ylim(0, procs)
            ax.set_xlim(t0 / scale, t1 / scale)
            if col == 0:
                ax.set_ylabel(f"{host}\n({procs} procs)", rotation=0, ha="right", va="center",
                              fontsize=9)  # fmt: skip
            ax.set_yticks([0, procs])
            ax.grid(axis="x", color="0.9")
            ax.set_axisbelow(True)
        bottom = axes[-1, col]
        if teach is not None and teach.submit:
            arrivals = [(j, t) for j, t in teach.submit.items() if t0 <= t <= t1]
            if arrivals:
                bottom.plot([t / scale for _j, t in arrivals], [0] * len(arrivals), marker="^",
                            linestyle="none", color="black", markersize=7, clip_on=False,
                            zorder=5)  # fmt: skip
                legend["arrival (triangle)"] = Line2D([], [], marker="^", color="black",
                                                      linestyle="none")  # fmt: skip
                _label_arrivals(bottom, arrivals, scale, (t1 - t0) / scale)
        bottom.set_xlabel(f"time ({unit})")
        if outside:
            more = f" and {len(outside) - 4} more" if len(outside) > 4 else ""
            bottom.text(0, -0.32, "Outside the drawn window (not drawn): " + "; ".join(outside[:4])
                        + more, transform=bottom.transAxes, fontsize=8, va="top", ha="left",
                        wrap=True)  # fmt: skip
        width = 100 if len(runs) == 1 else 65
        axes[0, col].set_title(textwrap.fill(title or "Processor allocation per host", width),
                               fontsize=11, fontweight="bold", pad=14)  # fmt: skip
    if suptitle:
        fig.suptitle(suptitle, fontsize=12, fontweight="bold")
    if legend:
        fig.legend(list(legend.values()), list(legend), loc="outside lower center",
                   ncol=min(len(legend), 3), frameon=False, fontsize=9)  # fmt: skip
    return fig


def _label_arrivals(ax: Any, arrivals: list[tuple[int, float]], scale: float, span: float) -> None:
    """The job id above each arrival's triangle; arrivals close together are stacked
    (up to four levels), so their labels never print on top of each other."""
    if len(arrivals) > 60:  # a real run: too many to label one by one
        return
    gap = 0.045 * span  # about one label's width
    last: list[float] = []  # per level, where the last label there was put
    for job, t in sorted(arrivals, key=lambda a: (a[1], a[0])):
        x = t / scale
        level = next((k for k, at in enumerate(last) if x - at >= gap), len(last))
        if level >= 4:
            level = min(range(4), key=lambda k: last[k])
        if level == len(last):
            last.append(x)
        else:
            last[level] = x
        ax.annotate(f"J{job}", xy=(x, 0), xycoords=("data", "axes fraction"),
                    xytext=(0, 8 + 10 * level), textcoords="offset points", ha="center",
                    va="bottom", fontsize=7, zorder=7,
                    bbox={"facecolor": "white", "alpha": 0.8, "linewidth": 0, "pad": 0.5})  # fmt: skip


def _draw_interruptions(ax: Any, segments: pd.DataFrame, bars: pd.DataFrame, host: str,
                        scale: float, legend: dict[str, Any],
                        teach: Teaching | None = None,
                        colours: Mapping[int, str] | None = None) -> None:  # fmt: skip
    """Preempted intervals, requeued trials and resizes, from the segments.

    A gap between two of a job's allocations is a preemption (a dotted box on
    the rows it held), unless the job went back to the queue then -- a trial
    run of immediate service that did not finish (``teach.requeued``, or a job
    the job table says was restarted and never preempted): then the trial's
    bar ends with "requeued" and nothing is drawn over the gap, where other
    jobs run.  A resize is a dotted line with its label on the job's own rows.
    """
    # matplotlib is heavy: imported only when a chart is drawn (recording a run needs none)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    def colour(job: Any) -> str:
        return (colours or {}).get(int(job)) or job_colour(int(job))

    segs = segments.sort_values(["job_id", "start"], kind="stable")
    for job_id, js in segs.groupby("job_id", sort=False):
        held = js.loc[js["procs"] > 0]
        if len(held) < 2 and len(js) < 2:
            continue
        rows = bars.loc[(bars["job_id"] == job_id) & (bars["host"] == host)]
        requeue_times = set(teach.requeued.get(int(job_id), ())) if teach is not None else set()
        all_requeues = teach is not None and int(job_id) in teach.requeued_only
        for prev, nxt in zip(held.iloc[:-1].itertuples(), held.iloc[1:].itertuples(), strict=True):
            if nxt.start > prev.end and prev.host == host:  # off the processors
                r = rows.loc[rows["end"] == prev.end]
                row = int(r["row"].iloc[0]) if len(r) else 0
                if all_requeues or prev.end in requeue_times:  # a trial over: back to the queue
                    ax.plot([prev.end / scale], [row + 0.5], marker="x",
                            color="black", markersize=6, zorder=6)  # fmt: skip
                    ax.text(prev.end / scale, row + 0.5, f" J{job_id} requeued",
                            fontsize=7, ha="left", va="center", zorder=6,
                            bbox={"facecolor": "white", "alpha": 0.8, "linewidth": 0})  # fmt: skip
                    legend["trial requeued (x at its end)"] = Line2D(
                        [], [], marker="x", color="black", linestyle="none"
                    )
                    continue
                ax.add_patch(Rectangle(
                    (prev.end / scale, row), (nxt.start - prev.end) / scale, int(prev.procs),
                    facecolor="none", edgecolor=colour(job_id), hatch="..", linewidth=0.8,
                ))  # fmt: skip
                ax.text((prev.end + nxt.start) / 2 / scale, row + int(prev.procs), f"J{job_id} preempted",
                        fontsize=7, ha="center", va="top", zorder=6,
                        bbox={"facecolor": "white", "alpha": 0.8, "linewidth": 0})  # fmt: skip
                legend["preempted (dotted)"] = Patch(facecolor="none", edgecolor="0.4", hatch="..")
            elif nxt.start == prev.end and nxt.procs != prev.procs and nxt.host == host:
                r = rows.loc[rows["start"] == nxt.start]
                mid = float(r["row"].iloc[0] + r["rows"].iloc[0] / 2) if len(r) else 0.0
                ax.axvline(nxt.start / scale, color=colour(job_id), linewidth=2.0,
                           linestyle=":")  # fmt: skip
                ax.text(nxt.start / scale, mid, f" J{job_id} {int(prev.procs)}→{int(nxt.procs)}",
                        fontsize=7, va="center", zorder=6,
                        bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0})  # fmt: skip
                legend["resized (dotted line)"] = Line2D([], [], color="0.4", linestyle=":",
                                                         linewidth=2)  # fmt: skip


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
    """Draw :func:`gantt_figure` and write it as PNG to ``path`` (whole or not at all)."""
    fig = gantt_figure(segments, hosts, start=start, end=end, host_names=host_names,
                       title=title, teaching=teaching)  # fmt: skip
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format="png")
    return path


__all__ = [
    "EmptyWindow",
    "GanttRecorder",
    "Teaching",
    "assign_rows",
    "gantt_compare",
    "gantt_figure",
    "job_colour",
    "start_colours",
    "teaching_from_jobs",
    "write_gantt",
]
