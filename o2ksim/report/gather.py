"""The tables behind the report's figures, gathered from a results directory.

:func:`gather` loads the jobs of every finished run once and computes every
table a figure draws (waits per runtime group and their mean over the seeds
with 95% intervals, jobs per runtime group, 95th-percentile points, the
highest 5% of the waits, waits per size, per LSF class, utilisation over
time, and for one run the queue over time), each row tagged with its policy
and its *panel*: the levels of whatever the sweep varies besides the policy.
When the seeds are panels, ``level_of`` maps each per-seed panel to its
panel without the seed (``level_panels``), where the means over seeds are
drawn: ``runtime_mean``, ``p95_mean``, ``procs_mean``, ``mem_mean`` and
``util_mean`` (:func:`seed_means`: mean, Student-t 95% bounds ``_lo`` /
``_hi`` and ``n``).  The page (:mod:`~o2ksim.report.page`) and the figures
only read the :class:`Gathered` result, so what a report shows is decided
here, once.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from o2ksim.analysis.lsf_classes import lsf_class_table
from o2ksim.experiments.store import Results
from o2ksim.machine import load_machine
from o2ksim.report import data, partitioning_view

__all__ = [
    "HOUR",
    "MAX_PANELS",
    "Gathered",
    "gather",
    "level_text",
    "lsf_classes_table",
    "p95_over_seeds",
    "seed_means",
]

MAX_PANELS = 6
MAX_UTIL_PANELS = MAX_PANELS  # every figure draws every panel it has
HOUR = 3600.0


@dataclass
class Gathered:
    """Tidy frames behind every figure, with the panel each row belongs to."""

    table: pd.DataFrame
    policies: list[str]
    panels: list[str]
    panel_cols: list[str]
    pooled_seeds: bool
    truncated: int
    runtime: pd.DataFrame
    p95: pd.DataFrame
    procs: pd.DataFrame
    mem: pd.DataFrame
    util: pd.DataFrame
    window: tuple[float, float] | None
    notes: list[str] = field(default_factory=list)
    lsf_classes: pd.DataFrame = field(default_factory=pd.DataFrame)
    classes: pd.DataFrame = field(default_factory=pd.DataFrame)
    level_cols: list[str] = field(default_factory=list)
    short_panels: dict[str, str] = field(default_factory=dict)
    partitioning: pd.DataFrame = field(default_factory=pd.DataFrame)
    top: pd.DataFrame = field(default_factory=pd.DataFrame)
    seed_panels: bool = False
    level_panels: list[str] = field(default_factory=list)
    runtime_mean: pd.DataFrame = field(default_factory=pd.DataFrame)
    counts: pd.DataFrame = field(default_factory=pd.DataFrame)
    queue: pd.DataFrame = field(default_factory=pd.DataFrame)
    level_of: dict[str, str] = field(default_factory=dict)
    p95_mean: pd.DataFrame = field(default_factory=pd.DataFrame)
    procs_mean: pd.DataFrame = field(default_factory=pd.DataFrame)
    mem_mean: pd.DataFrame = field(default_factory=pd.DataFrame)
    util_mean: pd.DataFrame = field(default_factory=pd.DataFrame)


def level_text(v: Any) -> str:
    """A factor level as the page shows it: whole floats as ints, file paths by their name.

    Only what looks like a file path is shortened (a data file's suffix, or a
    leading ``/``, ``./``, ``../``, ``~``): a label such as
    ``EQspatial-5m/>50hr`` keeps its slash and everything after it.
    """
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, str) and os.sep in v and _looks_like_path(v):
        return Path(v).name
    return str(v)


PATH_SUFFIXES = frozenset({".swf", ".gz", ".toml", ".csv", ".parquet", ".json", ".txt", ".xz"})


def _looks_like_path(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~")) or Path(text).suffix.lower() in PATH_SUFFIXES


def _panel_label(row: pd.Series, cols: list[str]) -> str:
    return ", ".join(f"{c.rsplit('.', 1)[-1]} {level_text(row[c])}" for c in cols)


def gather(results: Results, max_panels: int = MAX_PANELS) -> Gathered:
    """Load the finished runs' jobs and compute every table the figures draw."""
    ok = results.ok.copy()
    policies = list(dict.fromkeys(r["factors"]["policy"] for r in results.runs))
    policies = [p for p in policies if p in set(ok["policy"])]
    factor_cols = [f for f in results.factors if f != "policy" and f in ok]
    vary = [f for f in factor_cols if ok[f].astype(str).nunique() > 1]
    notes: list[str] = []
    pooled = False
    combos = ok[vary].astype(str).drop_duplicates() if vary else pd.DataFrame(index=[0])
    if len(combos) > max_panels and "seed" in vary:
        vary = [f for f in vary if f != "seed"]
        pooled = True
        notes.append("Seeds are pooled: each panel shows the jobs of every seed together.")
    ok["panel"] = [_panel_label(r, vary) for _, r in ok.iterrows()] if vary else ""
    short = {
        _panel_label(r, vary): ", ".join(level_text(r[c]) for c in vary) for _, r in ok.iterrows()
    } if vary else {}  # fmt: skip
    panels = list(dict.fromkeys(ok.sort_values("index")["panel"]))
    truncated = max(0, len(panels) - max_panels)
    if truncated:
        notes.append(f"Only the first {max_panels} of {len(panels)} panels are drawn.")
        panels = panels[:max_panels]

    rt: list[pd.DataFrame] = []
    p95: list[pd.DataFrame] = []
    top: list[pd.DataFrame] = []
    procs: list[pd.DataFrame] = []
    mem: list[pd.DataFrame] = []
    classes: list[pd.DataFrame] = []
    on_o2k = True
    by_policy: dict[str, list[pd.DataFrame]] = {}
    for (panel, pol), grp in ok.loc[ok["panel"].isin(panels)].groupby(
        ["panel", "policy"], sort=False
    ):
        jobs = pd.concat([results.jobs(rid) for rid in grp["run_id"]], ignore_index=True)
        by_policy.setdefault(pol, []).append(jobs)
        for out, frame in (
            (rt, data.runtime_groups(jobs)),
            (p95, data.p95_points(jobs)),
            (top, data.top_waits(jobs)),
            (procs, data.size_groups(jobs, "procs")),
            (mem, data.size_groups(jobs, "mem")),
        ):
            if len(frame):
                out.append(frame.assign(panel=panel, policy=pol))
        on_o2k = on_o2k and _on_o2k_hosts(jobs)
        if on_o2k:
            classes.append(data.class_groups(jobs).assign(panel=panel, policy=pol))

    runtime = _concat(rt)
    seed_panels = "seed" in vary and ok.loc[ok["panel"].isin(panels), "seed"].nunique() > 1
    level_of = {p: _panel_label(r, [c for c in vary if c != "seed"]) for p, r in
                ok.drop_duplicates("panel").set_index("panel").iterrows()} if seed_panels else {}  # fmt: skip
    level_panels = list(dict.fromkeys(level_of[p] for p in panels)) if seed_panels else panels
    runtime_mean, counts = _over_seeds(runtime, level_of)
    p95_all, procs_all, mem_all = _concat(p95), _concat(procs), _concat(mem)
    lsf_classes = lsf_classes_table(by_policy)
    util, window = _utilisation(results, ok, panels[:MAX_UTIL_PANELS], pooled)
    if pooled and len(util):
        notes.append("Utilisation over time shows the lowest seed of each panel.")
    queue = pd.DataFrame()
    if len(ok) == 1 and len(util):  # a one-run report: the queue over the utilisation's range
        t0, t1 = float(util["start"].min()), float(util["end"].max())
        queue = data.queue_series(
            results.jobs(ok["run_id"].iloc[0]), t0, t1, min(1000, max(1, math.ceil((t1 - t0) / HOUR)))
        )  # hourly bins (at most 1000): a day's peak is not averaged away
    return Gathered(
        table=ok,
        policies=policies,
        panels=panels,
        panel_cols=vary,
        pooled_seeds=pooled,
        truncated=truncated,
        runtime=runtime,
        p95=p95_all,
        procs=procs_all,
        mem=mem_all,
        util=util,
        window=window,
        notes=notes,
        lsf_classes=lsf_classes,
        classes=_concat(classes) if on_o2k else pd.DataFrame(),
        level_cols=[f for f in vary if f != "seed"],
        short_panels=short,
        partitioning=partitioning_view.partitioning_table(by_policy),
        top=_concat(top),
        seed_panels=seed_panels,
        level_panels=level_panels,
        runtime_mean=runtime_mean,
        counts=counts,
        queue=queue,
        level_of=level_of,
        p95_mean=p95_over_seeds(p95_all, level_of) if seed_panels else pd.DataFrame(),
        procs_mean=seed_means(procs_all, level_of, ["group", "label"], SIZE_MEASURES),
        mem_mean=seed_means(mem_all, level_of, ["group", "label"], SIZE_MEASURES),
        util_mean=_util_over_seeds(util, level_of),
    )


RUNTIME_MEASURES = ["mean_wait", "max_wait", "mean_slowdown", "max_slowdown", "runtime_gmean"]


def _over_seeds(
    runtime: pd.DataFrame, level_of: dict[str, str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runtime groups' measures as a mean over seeds with 95% intervals, and the job counts.

    ``level_of`` maps a per-seed panel to its panel without the seed; empty
    when the seeds are not panels (then each panel is its own "mean" of one
    run).  Counts are summed over the seeds of a panel.
    """
    if runtime.empty:
        return pd.DataFrame(), pd.DataFrame()
    rt = runtime.assign(panel=[level_of.get(p, p) for p in runtime["panel"]])
    means = data.mean_ci(rt, ["panel", "policy", "group"], RUNTIME_MEASURES)
    counts = rt.groupby(["panel", "policy", "group"], sort=False, as_index=False)["jobs"].sum()
    return means, counts


SIZE_MEASURES = ["mean_wait", "max_wait"]


def seed_means(
    frame: pd.DataFrame, level_of: dict[str, str], keys: list[str], values: list[str]
) -> pd.DataFrame:
    """``frame``'s ``values`` as means over the seeds of each level, with 95% intervals.

    ``frame``: per-seed rows with ``panel`` and ``policy``; ``level_of`` maps
    a per-seed panel to its level (empty when the seeds are not panels: then
    nothing is averaged and the result is empty).  Rows of the same level,
    policy and ``keys`` are averaged (:func:`o2ksim.report.data.mean_ci`:
    ``v``, ``v_lo``, ``v_hi``, ``n``); a key that some seed lacks is the mean
    of the seeds that have it (``n`` says how many).
    """
    if frame.empty or not level_of:
        return pd.DataFrame()
    levels = frame.assign(panel=[level_of.get(p, p) for p in frame["panel"]])
    return data.mean_ci(levels, ["panel", "policy", *keys], values)


def p95_over_seeds(p95: pd.DataFrame, level_of: dict[str, str]) -> pd.DataFrame:
    """The 95th-percentile plot over seeds: each range's largest remaining wait, mean and interval.

    From :func:`o2ksim.report.data.p95_points` rows (rank 1 of each range and
    seed), the mean over seeds of the wait (``p95_wait``) and of the runtime
    where it occurs (``runtime_gmean``, where the mean figure draws it), with
    ``group`` the range -- the columns :func:`o2ksim.report.views.mean_runtime_figure` reads.
    """
    if p95.empty:
        return pd.DataFrame()
    top = p95.loc[p95["rank"] == 1].rename(
        columns={"range": "group", "wait": "p95_wait", "run_time": "runtime_gmean"}
    )
    return seed_means(top, level_of, ["group"], ["p95_wait", "runtime_gmean"])


def _util_over_seeds(util: pd.DataFrame, level_of: dict[str, str]) -> pd.DataFrame:
    """Utilisation per time bin as a mean over seeds with 95% intervals (bins with the same start)."""
    means = seed_means(util, level_of, ["start", "end"], ["utilisation", "mid"])
    return means.sort_values(["panel", "policy", "start"], kind="stable", ignore_index=True) if len(means) else means


def _on_o2k_hosts(jobs: pd.DataFrame) -> bool:
    """Whether every job ran on a host of ``hosts/o2k.toml`` (where the LSF classes are defined)."""
    names = {h.name for h in load_machine("o2k").hosts}
    hosts = set(jobs["host"].dropna())
    return bool(hosts) and hosts <= names


def lsf_classes_table(by_policy: dict[str, list[pd.DataFrame]]) -> pd.DataFrame:
    """Mean and maximum wait (hours) per NCSA-LSF* job class and policy (thesis Figs. 5-6).

    Drawn only for runs on the O2K hosts, where the LSF classes are defined
    (``hosts/o2k.toml``); empty otherwise.
    """
    o2k = load_machine("o2k")
    names = {h.name for h in o2k.hosts}
    columns = {}
    for pol, frames in by_policy.items():
        jobs = pd.concat(frames, ignore_index=True)
        hosts = set(jobs["host"].dropna())
        if not hosts or not hosts <= names:
            return pd.DataFrame()
        t = lsf_class_table(jobs, o2k).set_index("class")
        columns[f"{pol} jobs"] = t["jobs"]
        columns[f"{pol} mean wait (h)"] = t["mean_wait"] / HOUR
        columns[f"{pol} max wait (h)"] = t["max_wait"] / HOUR
    if not columns:
        return pd.DataFrame()
    return pd.DataFrame(columns).reset_index()


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _utilisation(
    results: Results, ok: pd.DataFrame, panels: list[str], pooled: bool
) -> tuple[pd.DataFrame, tuple[float, float] | None]:
    frames = []
    window = None
    for (panel, pol), grp in ok.loc[ok["panel"].isin(panels)].groupby(
        ["panel", "policy"], sort=False
    ):
        first = grp.sort_values(["seed", "index"] if "seed" in grp else ["index"]).iloc[0]
        segs = results.segments(first["run_id"])
        if segs is None or segs.empty:
            continue
        info = results.run_summary(first["run_id"]).get("info", {})
        total = info.get("total_procs") or first.get("total_procs")
        win = info.get("window")
        if win:
            start, end, warmup = (float(x) for x in win)
            t0 = max(0.0, start - warmup)
            t1 = min(float(info.get("sim_end") or end), end + 0.25 * (end - start))
            t1 = max(t1, end)
            window = (start, end)
        else:
            t0 = float(segs["start"].min())
            t1 = float(segs["end"].max())
        if not total or t1 <= t0:
            continue
        span = t1 - t0
        width = 86400.0 if span >= 7 * 86400 else (3600.0 if span >= 12 * 3600 else span / 100)
        bins = max(1, math.floor(span / width))
        series = data.utilisation_series(segs, int(total), t0, t0 + bins * width, bins)
        frames.append(series.assign(panel=panel, policy=pol))
    return _concat(frames), window
