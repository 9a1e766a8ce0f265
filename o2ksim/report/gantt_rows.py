"""Processor rows for a Gantt chart's allocation segments.

The engine records *how many* processors of which host each job holds and
when (``Result.segments``), not which processors.  To draw the chart, each
allocation is given concrete processor rows (:func:`assign_rows`): at its
start it takes the lowest contiguous block of free rows on its host, or, when
the free rows are scattered, the lowest free rows (then it is drawn as
several bars); a job whose allocation changes at an instant (a resize, a
resume) keeps the rows it held, so it stays on its rows.  Ends are handled
before starts at the same instant, as in the engine.
"""

from __future__ import annotations

from collections.abc import Mapping

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
        keep = back[1][~rows_free[back[1]]] if back is not None and back[0] == t else None
        if keep is not None and len(keep):
            keep = _shrink(rows_free, keep, int(procs[i]))
            rows_free[keep] = True
            extra = _grow(rows_free, keep, int(procs[i]) - len(keep))
            rows_free[keep] = False
            idx = np.sort(np.concatenate([keep, extra]))
        else:
            idx = _pick(rows_free, int(procs[i]))
        rows_free[idx] = True
        taken[i] = idx
        for first, count in _runs(idx):
            out.append((int(job_ids[i]), host, starts[i], ends[i], first, count))
    return pd.DataFrame(out, columns=ROW_COLUMNS)


def _shrink(busy: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """``n`` of a shrinking job's ``rows`` (sorted), consecutive in that list, chosen so
    that the rows it gives back touch free rows: the free space stays in one piece and
    the next job placed there is not split (EQspatial repartitions shrink several jobs at
    once).  Ties: the lowest."""
    if n >= len(rows):
        return rows
    best, best_score = 0, -1
    for k in range(len(rows) - n + 1):
        mine = set(rows[k : k + n].tolist())
        score = 0
        for r in (*rows[:k].tolist(), *rows[k + n :].tolist()):
            score += sum(1 for q in (r - 1, r + 1)
                         if 0 <= q < len(busy) and q not in mine and not busy[q])  # fmt: skip
        if score > best_score:
            best, best_score = k, score
    return rows[best : best + n]


def _grow(busy: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """``n`` more free rows for a growing job: next to its ``rows`` (above, then below)
    while they are free, else the lowest block :func:`_pick` finds."""
    if n <= 0:
        return rows[:0]
    out: list[int] = []
    lo, hi = int(rows.min()), int(rows.max())
    while len(out) < n:
        if hi + 1 < len(busy) and not busy[hi + 1]:
            hi += 1
            out.append(hi)
        elif lo - 1 >= 0 and not busy[lo - 1]:
            lo -= 1
            out.append(lo)
        else:
            break
    if len(out) < n:
        taken = busy.copy()
        taken[out] = True
        out += _pick(taken, n - len(out)).tolist()
    return np.asarray(sorted(out), dtype=int)


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


__all__ = ["ROW_COLUMNS", "assign_rows"]
