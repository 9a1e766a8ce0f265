"""What a Gantt chart marks besides the allocations, each on its own place.

* a job suspended by a preemption is drawn in its host's *suspended* lanes,
  under the processor rows (it holds no processor then), one lane per
  suspension going on at once: never over the jobs that run on its processors;
* a trial of immediate service that did not finish ends with an "x" and
  "requeued" (it went back to the queue: nothing is drawn over the gap);
* a resize is a dotted line across the job's own rows;
* a reservation is a block of the reserved job's processors x its requested
  runtime, on the rows the job gets when it starts; where it was first made
  (and every position it slid to) is a dotted block, with arrows along the
  way to where the job really started.

All from the engine's allocation segments and the recorded
:class:`~o2ksim.report.gantt_teach.Teaching`; labels go through
:class:`~o2ksim.report.gantt_labels.Labels`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.clock import clock
from o2ksim.report.gantt_labels import Labels
from o2ksim.report.gantt_teach import Reservation, Teaching
from o2ksim.units import format_duration

SUSPENDED = "suspended (own lane, under the processors)"


def interruptions(
    segments: pd.DataFrame, teach: Teaching | None
) -> tuple[list[tuple[int, str, float, float]], list[tuple[int, str, float]],
           list[tuple[int, str, float, int, int]]]:  # fmt: skip
    """``(suspended, requeued, resized)`` from the segments: a gap between two of a job's
    allocations on one host is a suspension ``(job, host, from, to)`` unless the job went
    back to the queue then (``teach.requeued``, or a job the job table says was restarted
    and never preempted): a requeue ``(job, host, when)``; a change of processors at an
    instant is a resize ``(job, host, when, before, after)``."""
    suspended: list[tuple[int, str, float, float]] = []
    requeued: list[tuple[int, str, float]] = []
    resized: list[tuple[int, str, float, int, int]] = []
    held = segments.loc[segments["procs"] > 0].sort_values(["job_id", "start"], kind="stable")
    job = held["job_id"].to_numpy(dtype=np.int64)
    host = held["host"].astype(str).to_numpy()
    start, end = held["start"].to_numpy(dtype=float), held["end"].to_numpy(dtype=float)
    procs = held["procs"].to_numpy(dtype=np.int64)
    same = job[1:] == job[:-1]  # row k+1 follows row k of the same job
    gap = same & (start[1:] > end[:-1])
    change = same & (start[1:] == end[:-1]) & (procs[1:] != procs[:-1]) & (host[1:] == host[:-1])
    for k in np.flatnonzero(gap | change):
        j = int(job[k])
        if gap[k]:
            if (teach is not None and j in teach.requeued_only) or (
                teach is not None and end[k] in teach.requeued.get(j, ())
            ):
                requeued.append((j, str(host[k]), float(end[k])))
            else:
                suspended.append((j, str(host[k]), float(end[k]), float(start[k + 1])))
        else:
            resized.append((j, str(host[k + 1]), float(start[k + 1]), int(procs[k]), int(procs[k + 1])))
    return suspended, requeued, resized


def lanes_of(intervals: list[tuple[float, float]]) -> list[int]:
    """A lane per interval, lowest free first, so that intervals at the same time never
    share one (interval partitioning in start order: as few lanes as the most at once)."""
    order = sorted(range(len(intervals)), key=lambda i: intervals[i])
    lane_end: list[float] = []
    out = [0] * len(intervals)
    for i in order:
        start, end = intervals[i]
        k = next((n for n, e in enumerate(lane_end) if e <= start), len(lane_end))
        if k == len(lane_end):
            lane_end.append(end)
        else:
            lane_end[k] = end
        out[i] = k
    return out


def draw_suspended(ax: Any, items: list[tuple[int, float, float, int]], lane: float,
                   t0: float, t1: float, scale: float, colour: Callable[[int], str],
                   labels: Labels) -> None:  # fmt: skip
    """Suspended intervals ``(job, from, to, lane)`` under the rows (y from -lane height)."""
    from matplotlib.patches import Rectangle  # matplotlib is heavy: only when drawing

    for job, s, e, k in items:
        a, b = max(s, t0), min(e, t1)
        if b <= a:
            continue
        y = -(k + 1) * lane
        ax.add_patch(Rectangle((a / scale, y + 0.08 * lane), (b - a) / scale, 0.84 * lane,
                               facecolor=colour(job), alpha=0.45, hatch="..",
                               edgecolor=colour(job), linewidth=0.8))  # fmt: skip
        labels.add(ax, a / scale, y + lane / 2, f"J{job} suspended", priority=2, dx=2)


def draw_requeued(ax: Any, items: list[tuple[int, float, float]], scale: float,
                  labels: Labels) -> None:  # fmt: skip
    """``(job, when, row)``: an x where the trial ended, labelled "requeued"."""
    for job, when, row in items:
        ax.plot([when / scale], [row], marker="x", color="black", markersize=6, zorder=6)
        labels.add(ax, when / scale, row, f"J{job} requeued", priority=2, dx=4)


def draw_resized(ax: Any, items: list[tuple[int, float, int, int, float, float]], scale: float,
                 colour: Callable[[int], str], labels: Labels) -> None:  # fmt: skip
    """``(job, when, before, after, first row, rows)``: a dotted line across its own rows."""
    for job, when, before, after, row, rows in items:
        ax.plot([when / scale] * 2, [row, row + rows], color=colour(job), linewidth=2.0,
                linestyle=":", zorder=5)  # fmt: skip
        labels.add(ax, when / scale, row + rows / 2, f"J{job} {before}→{after}", priority=3, dx=3)


def reservation_rows(res: Reservation, bars: pd.DataFrame, procs: int, n: int) -> tuple[int, int]:
    """The rows a reservation block covers: those its job got when it started there
    (first row, count), else the top ``n`` rows of the host."""
    if res.start is not None:
        mine = bars.loc[(bars["job_id"] == res.job) & (bars["host"] == res.host)
                        & (bars["start"] == res.start)]  # fmt: skip
        if len(mine):
            first = int(mine["row"].min())
            last = int((mine["row"] + mine["rows"]).max())
            return first, last - first
    return max(procs - n, 0), min(n, procs)


def draw_reservation(ax: Any, res: Reservation, rows: tuple[int, int], req: float,
                     t0: float, t1: float, scale: float, labels: Labels,
                     short: bool = False) -> bool:  # fmt: skip
    """One reservation: its last position a dashed block (processors x requested time,
    grey where no job runs), the earlier ones dotted, arrows from each to the next and to
    the job's real start.  Returns whether any of it lies in ``t0..t1``."""
    from matplotlib.patches import Rectangle  # matplotlib is heavy: only when drawing

    row, n = rows
    ats = [at for _when, at in res.positions]
    ends = [*ats[1:], *([res.start] if res.start is not None and res.start != ats[-1] else [])]
    if not any(at < t1 and at + req > t0 for at in ats):
        return False
    for k, at in enumerate(ats):
        last = k == len(ats) - 1
        if last:  # under the bars: what shows is the reserved time no job uses
            ax.add_patch(Rectangle((at / scale, row), req / scale, n, facecolor="0.82",
                                   edgecolor="none", zorder=0.5))  # fmt: skip
        ax.add_patch(Rectangle(
            (at / scale, row), req / scale, n, fill=False, edgecolor="black",
            linestyle=(0, (4, 2)) if last else (0, (1, 2)), linewidth=1.5 if last else 1.0,
            zorder=4,
        ))  # fmt: skip
    top = row + n * 0.85
    for a, b in zip(ats, ends, strict=False):
        ax.annotate("", xy=(b / scale, top), xytext=(a / scale, top),
                    arrowprops={"arrowstyle": "->", "color": "black", "lw": 1.2}, zorder=6)  # fmt: skip
    text = f"J{res.job} reserved at {clock(res.made)} for {clock(ats[0])}"
    if len(ats) > 1:
        text += " → " + " → ".join(clock(a) for a in ats[1:])
    if res.start is not None and res.start != ats[-1]:
        text += f", started {clock(res.start)}"
    if short:  # a real run's chart: the job and how far it slid
        slid = ats[0] - (res.start if res.start is not None else ats[-1])
        text = f"J{res.job} slid {format_duration(slid)}" if slid > 0 else f"J{res.job} reserved"
    labels.add(ax, max(ats[-1], t0) / scale, row + n * 0.5, text, priority=1, dx=3)
    return True


def arrival_hosts(segments: pd.DataFrame) -> Mapping[int, str]:
    """Each job's host: where it first held processors."""
    held = segments.loc[segments["procs"] > 0].sort_values(["start", "job_id"], kind="stable")
    first = held.drop_duplicates("job_id")
    return dict(zip(first["job_id"].astype(int), first["host"].astype(str), strict=True))


def draw_arrivals(ax: Any, arrivals: list[tuple[int, float]], scale: float, labels: Labels,
                  limit: int = 60) -> bool:  # fmt: skip
    """Triangles at the bottom of the host's panel, each labelled with its job (labels of
    arrivals close together stacked); more than ``limit``: triangles only.  Returns
    whether they were labelled."""
    xs = [t / scale for _j, t in arrivals]
    ax.plot(xs, [0] * len(xs), marker="^", linestyle="none", color="black",
            markersize=7 if len(xs) <= limit else 4, clip_on=False, zorder=5,
            transform=ax.get_xaxis_transform())  # fmt: skip
    if len(arrivals) > limit:
        return False
    levels = tuple(10.0 * k for k in range(6))
    for job, t in sorted(arrivals, key=lambda a: (a[1], a[0])):
        labels.add(ax, t / scale, 0, f"J{job}", priority=0, nudges=levels, dy=8,
                   xycoords=("data", "axes fraction"), ha="center", va="bottom")  # fmt: skip
    return True


__all__ = [
    "SUSPENDED",
    "arrival_hosts",
    "draw_arrivals",
    "draw_requeued",
    "draw_reservation",
    "draw_resized",
    "draw_suspended",
    "interruptions",
    "lanes_of",
    "reservation_rows",
]
