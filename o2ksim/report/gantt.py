"""Gantt chart: processor allocation per host over a time range, as PNG.

The engine records *how many* processors of which host each job holds and
when (``Result.segments``), not which processors.  To draw the chart, each
allocation is given concrete processor rows (:func:`assign_rows`): at its
start it takes the lowest contiguous block of free rows on its host, or, when
the free rows are scattered, the lowest free rows (then it is drawn as
several bars).  Ends are handled before starts at the same instant, as in the
engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

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
    out: list[tuple[int, str, float, float, int, int]] = []
    job_ids = segs["job_id"].to_numpy()
    host_of = segs["host"].to_numpy()
    procs = segs["procs"].to_numpy(int)
    starts = segs["start"].to_numpy(float)
    ends = segs["end"].to_numpy(float)
    for _t, kind, i in events:
        host = host_of[i]
        if host not in busy:
            raise ValueError(f"segment on unknown host {host!r}")
        rows_free = busy[host]
        if kind == 0:
            rows_free[taken.pop(i)] = False
            continue
        idx = _pick(rows_free, int(procs[i]))
        rows_free[idx] = True
        taken[i] = idx
        for first, count in _runs(idx):
            out.append((int(job_ids[i]), host, starts[i], ends[i], first, count))
    return pd.DataFrame(out, columns=ROW_COLUMNS)


def _pick(busy: np.ndarray, n: int) -> np.ndarray:
    """Lowest contiguous block of ``n`` free rows, else the ``n`` lowest free rows."""
    free = ~busy
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


def _unit(span: float) -> tuple[float, str]:
    if span <= 3 * 3600:
        return 60.0, "minutes"
    if span <= 3 * 86400:
        return 3600.0, "hours"
    return 86400.0, "days"


def gantt_figure(
    segments: pd.DataFrame,
    hosts: Mapping[str, int],
    *,
    start: float | None = None,
    end: float | None = None,
    host_names: Sequence[str] | None = None,
    title: str = "",
    label_jobs: bool = True,
):
    """A Gantt chart (one panel per host, height proportional to its processors).

    ``start``/``end`` (seconds) crop the time range (default: all segments);
    ``host_names`` selects and orders hosts.  Each job has one colour; its id
    is written on bars large enough to hold it.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    names = list(host_names) if host_names else list(hosts)
    unknown = [h for h in names if h not in hosts]
    if unknown:
        raise ValueError(f"unknown host(s): {', '.join(unknown)} (known: {', '.join(hosts)})")
    bars = assign_rows(segments, hosts)
    t0 = float(segments["start"].min()) if start is None and len(segments) else (start or 0.0)
    t1 = float(segments["end"].max()) if end is None and len(segments) else (end or t0 + 1.0)
    if not t1 > t0:
        raise ValueError("the time range is empty (end must be after start)")
    bars = bars.loc[(bars["end"] > t0) & (bars["start"] < t1) & bars["host"].isin(names)]
    scale, unit = _unit(t1 - t0)
    ratios = [max(hosts[h], 1) for h in names]
    height = 1.0 + (3.0 if len(names) == 1 else 2.2 if len(names) <= 3 else 1.3) * len(names)
    fig, axes = plt.subplots(
        len(names), 1, figsize=(11, height), sharex=True, squeeze=False,
        gridspec_kw={"height_ratios": ratios}, layout="constrained",
    )  # fmt: skip
    cmap = plt.get_cmap("tab20")
    jobs = sorted(bars["job_id"].unique())
    colour = {j: cmap(k % 20) for k, j in enumerate(jobs)}
    for ax, host in zip(axes[:, 0], names, strict=True):
        part = bars.loc[bars["host"] == host]
        procs = hosts[host]
        for b in part.itertuples(index=False):
            x0 = (max(b.start, t0)) / scale
            x1 = (min(b.end, t1)) / scale
            ax.add_patch(
                Rectangle(
                    (x0, b.row),
                    x1 - x0,
                    b.rows,
                    facecolor=colour[b.job_id],
                    edgecolor="white",
                    linewidth=0.6,
                )
            )
            wide = (x1 - x0) > 0.035 * (t1 - t0) / scale
            tall = b.rows >= max(1, 0.07 * procs)
            if label_jobs and wide and tall:
                ax.text(
                    (x0 + x1) / 2,
                    b.row + b.rows / 2,
                    f"J{b.job_id}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="black",
                )
        ax.set_ylim(0, procs)
        ax.set_xlim(t0 / scale, t1 / scale)
        ax.set_ylabel(f"{host}\n({procs} procs)", rotation=0, ha="right", va="center", fontsize=9)
        ax.set_yticks([0, procs])
        ax.grid(axis="x", color="0.9")
        ax.set_axisbelow(True)
    axes[-1, 0].set_xlabel(f"time ({unit})")
    fig.suptitle(title or "Processor allocation per host", fontsize=12, fontweight="bold")
    return fig


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
) -> str:
    """Draw :func:`gantt_figure` and write it as PNG to ``path``."""
    import matplotlib.pyplot as plt

    fig = gantt_figure(segments, hosts, start=start, end=end, host_names=host_names, title=title)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


__all__ = ["assign_rows", "gantt_figure", "write_gantt"]
