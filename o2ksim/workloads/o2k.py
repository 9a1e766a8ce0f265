"""The NCSA Origin 2000 workload model (thesis ch. 4), as a generator.

The thesis characterises the O2K workload of 2000 and lists a generator built
from its distributions as future work (T§7.3.1 (7)); this module is that
generator.  It follows the roadmaps of T§4.4.4 and T§4.5.3 step by step, one
job attribute conditioned on the ones drawn before it:

1. **Arrivals** (T§4.3): weekday peak (8-18 h), intermediate (18-24 h) and low
   (0-8 h) periods and weekend intermediate / low periods, each a renewal
   process with two-stage hyperexponential interarrival times of the period's
   mean and CV (balanced means, T§4.3 footnote 2).
2. **Requested processors P** (T§4.4.1): a hand-tuned harmonic-like
   distribution emphasising 1 and powers of two (30-40 % serial).
3. **Requested memory M | P** (T§4.4.2, Fig. 29 table): a distribution on round
   request sizes for each of the four processor ranges, with the table's mean
   and CV.
4. **Requested runtime R | (P, M)** (T§4.4.3, Table 9): one of the four
   conditional distributions A-D, each a mixture of the default requests
   (5, 50, 200, 400 h) and round non-default requests, uniform within ranges.
5. **Actual runtime T = R x ratio** (T§4.5.1, Table 10): the ratio T/R is
   conditioned on R, P and M; with the row's share a job overruns its request
   (ratio > 1), but never by more than the one-hour grace the O2K allowed.
   A ratio <= 1 then takes its LSF class's shape s (``ratio.class_shape``):
   r -> 1 - (1 - r)^s, calibrated so each class's processor demand is close
   to Table 6's (Table 10 does not condition on the class; Table 6 does).
6. **Peak memory | (M, T)** (T§4.5.2, Table 11): the ratio peak/requested
   memory, again split into <= 1 and > 1 parts.

Every number comes from ``o2ksim/data/models/o2k.toml``; where the thesis only
had a figure, the value is calibrated to the tables and the file says so.
Shapes of the conditional distributions whose figures were lost (ratios of
Tables 10 and 11) are beta distributions on (0, 1] with the table's mean and
CV, and shifted gamma distributions above 1.

Generated jobs are written as SWF rows: ``alloc_procs = req_procs = P``,
``req_mem`` = M / P in KB (SWF's per-processor unit), ``used_mem`` = peak / P,
``req_time`` = R, ``run_time`` = T, ``status`` = 1, ``wait`` = -1, and
``queue`` = the LSF job class (T Table 3) as 1..12 in Table 6's column order
(vst_sj, st_sj, mt_sj, lt_sj, vst_mj, ..., lt_lj).  Times are UTC seconds after
``UnixStartTime`` (a Monday 00:00 by default).

Only numpy is imported: a 30-day month (about 9,700 jobs) takes a few tens
of milliseconds.  The parameters' validation and their arrival calendar are
in :mod:`~o2ksim.workloads.o2k_params` (importable from here too); this module
draws the jobs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from o2ksim.errors import ConfigError
from o2ksim.o2k_classes import CLASS_NAMES, KB_PER_MB, class_index
from o2ksim.workloads.distributions import beta_params, hyperexp_sample
from o2ksim.workloads.o2k_params import (
    RATE_FIELD,
    arrival_intervals,
    expected_jobs,
    month_params,
    validate,
)
from o2ksim.workloads.swf import Trace
from o2ksim.workloads.synthetic import streams, synthetic_trace

__all__ = [
    "LSF_CLASSES",
    "RATE_FIELD",
    "arrival_intervals",
    "expected_jobs",
    "generate",
    "generate_jobs",
    "lsf_class",
    "month_params",
    "validate",
]

LSF_CLASSES: tuple[str, ...] = CLASS_NAMES
"""The twelve LSF job classes (T Table 3) in Table 6's column order; ``queue`` = index + 1."""

_INF = float("inf")
MB_KB = KB_PER_MB
_STREAMS = ("arrivals", "procs", "memory", "runtime", "ratio", "peak", "classes", "dedicated")


# ============================================================================
# sampling helpers
# ============================================================================


def _arrivals(
    periods: Sequence[Mapping[str, Any]], span: float, start_time: int, rng: np.random.Generator
) -> np.ndarray:
    """Submit times: a fresh hyperexponential renewal process in every interval."""
    chunks = []
    for a, b, k in arrival_intervals(periods, span, start_time):
        mean, cv = periods[k]["mean_s"], periods[k]["cv"]
        length = b - a
        want = int(length / mean * 1.3) + 20
        t = np.cumsum(hyperexp_sample(rng, want, mean, cv))
        while t[-1] < length:  # rare: draw more until the interval is covered
            t = np.concatenate([t, t[-1] + np.cumsum(hyperexp_sample(rng, want, mean, cv))])
        chunks.append(a + t[t < length])
    if not chunks:
        return np.empty(0)
    return np.concatenate(chunks)


def _in_ranges(x: np.ndarray, ranges: Sequence[Sequence[float]] | None) -> np.ndarray:
    if ranges is None:
        return np.ones(len(x), dtype=bool)
    hit = np.zeros(len(x), dtype=bool)
    for lo, hi in ranges:
        hit |= (x >= lo) & (x <= hi)
    return hit


def _ratios(
    rng: np.random.Generator, n: int, rule: Mapping[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Ratios for *n* jobs of one rule: beta on (0, 1) or, with ``over_share``, 1 + gamma excess."""
    a, b = beta_params(rule["under_mean"], rule["under_cv"])
    r = rng.beta(a, b, n)
    over = rng.random(n) < rule["over_share"]
    k = int(over.sum())
    if k:
        ex_mean = rule["over_mean"] - 1.0
        ex_sd = rule["over_cv"] * rule["over_mean"]
        if ex_sd <= 0:
            r[over] = rule["over_mean"]
        else:
            shape = (ex_mean / ex_sd) ** 2
            r[over] = 1.0 + rng.gamma(shape, ex_mean / shape, k)
    return r, over


def lsf_class(
    procs: np.ndarray, mem_mb: np.ndarray, req_s: np.ndarray, lsf: Mapping[str, Any]
) -> np.ndarray:
    """LSF class index 0..11 (T Table 3; Table 6 order) or -1 when a job fits no class.

    Size: the smallest of sj/mj/lj whose processor and memory limits both hold;
    time: the smallest of vst/st/mt/lt whose limit holds the requested runtime.
    """
    times = tuple(
        zip(("vst", "st", "mt", "lt"), (h * 3600.0 for h in lsf["time_limits_h"]), strict=True)
    )
    sizes = tuple(
        (name, int(p), m * KB_PER_MB)
        for name, p, m in zip(
            ("sj", "mj", "lj"), lsf["size_procs"], lsf["size_mem_mb"], strict=True
        )
    )
    return class_index(procs, np.asarray(mem_mb) * KB_PER_MB, req_s, times, sizes)


# ============================================================================
# generation
# ============================================================================


def _draw(
    params: Mapping[str, Any], rngs: Mapping[str, np.random.Generator], n: int
) -> dict[str, np.ndarray]:
    """The attributes of *n* jobs (steps 2-6 of the module docstring), independent of arrivals."""
    # requested processors: group, then uniform within the group
    groups = params["processors"]["group"]
    gi = rngs["procs"].choice(len(groups), size=n, p=[g["probability"] for g in groups])
    procs = np.empty(n, dtype=np.int64)
    u = rngs["procs"].random(n)
    for k, g in enumerate(groups):
        mask = gi == k
        vals = np.asarray(g["values"], dtype=np.int64)
        procs[mask] = vals[np.minimum((u[mask] * len(vals)).astype(np.int64), len(vals) - 1)]

    # requested memory | P (Fig. 29 table)
    grid = np.asarray(params["memory"]["grid_mb"], dtype=float)
    mem_mb = np.empty(n)
    for g in params["memory"]["group"]:
        lo, hi = g["procs"]
        mask = (procs >= lo) & (procs <= hi)
        mem_mb[mask] = rngs["memory"].choice(grid, size=int(mask.sum()), p=g["probabilities"])
    # SWF stores KB per processor; the job's memory is that times P (floor: stay within class limits)
    req_mem_kb = np.floor(mem_mb * MB_KB / procs).astype(np.int64)
    mem_mb = req_mem_kb * procs / MB_KB

    # requested runtime | (P, M): conditional distribution A-D (Table 9)
    rt = params["runtime"]
    names = list(rt["dist"])
    dist = np.full(n, names.index(rt["default_dist"]))
    free = np.ones(n, dtype=bool)
    for c in rt["cell"]:
        mask = free & _in_ranges(procs, c["procs"]) & _in_ranges(mem_mb, c["mem_mb"])
        dist[mask] = names.index(c["dist"])
        free &= ~mask
    defaults = np.asarray(rt["default_s"], dtype=float)
    req_s = np.empty(n)
    rr = rngs["runtime"]
    is_default = np.zeros(n, dtype=bool)
    for k, name in enumerate(names):
        d = rt["dist"][name]
        mask = dist == k
        m = int(mask.sum())
        if not m:
            continue
        use_default = rr.random(m) < d["default_share"]
        req_vals = np.empty(m)
        nd = int(use_default.sum())
        req_vals[use_default] = rr.choice(defaults, size=nd, p=d["default_weights"])
        ri = rr.choice(len(rt["range"]), size=m - nd, p=d["range_weights"])
        pick = rr.random(m - nd)
        out = np.empty(m - nd)
        for j, r in enumerate(rt["range"]):
            sel = ri == j
            secs = np.asarray(r["seconds"], dtype=float)
            out[sel] = secs[np.minimum((pick[sel] * len(secs)).astype(np.int64), len(secs) - 1)]
        req_vals[~use_default] = out
        req_s[mask] = req_vals
        is_default[mask] = use_default

    # actual runtime = R x ratio | (R, P, M) (Table 10), with the overrun limit
    ra = params["ratio"]
    ratio = np.empty(n)
    over = np.zeros(n, dtype=bool)
    free = np.ones(n, dtype=bool)
    for rule in ra["rule"]:
        mask = (
            free
            & _in_ranges(req_s, rule["req_s"])
            & _in_ranges(procs, rule["procs"])
            & _in_ranges(mem_mb, rule["mem_mb"])
        )
        m = int(mask.sum())
        if m:
            ratio[mask], over[mask] = _ratios(rngs["ratio"], m, rule)
        free &= ~mask
    if free.any():
        raise ConfigError(
            "o2k parameters",
            "no ratio rule matches some jobs; make the last rule match all",
            field="ratio.rule",
        )
    # per LSF class: a ratio r <= 1 becomes 1 - (1 - r)^s (s > 1 longer, s < 1 shorter, still in (0, 1])
    cls = lsf_class(procs, mem_mb, req_s, params["lsf"])
    shape = np.asarray(ra["class_shape"], dtype=float)[np.where(cls >= 0, cls, 0)]
    shape = np.where(cls >= 0, shape, 1.0)
    under = ~over & (shape != 1.0)
    ratio[under] = -np.expm1(shape[under] * np.log1p(-np.minimum(ratio[under], 1.0 - 1e-12)))
    run_s = req_s * ratio
    if ra["overrun_limit_s"] is not None:
        run_s = np.minimum(run_s, req_s + ra["overrun_limit_s"])
    run_s = np.maximum(np.rint(run_s), ra["min_runtime_s"])

    # peak memory = M x ratio | (M, T) (Table 11)
    pk = params["peak_memory"]
    pratio = np.empty(n)
    free = np.ones(n, dtype=bool)
    for rule in pk["rule"]:
        mask = free & _in_ranges(mem_mb, rule["mem_mb"]) & _in_ranges(run_s, rule["run_s"])
        m = int(mask.sum())
        if m:
            pratio[mask] = _ratios(rngs["peak"], m, rule)[0]
        free &= ~mask
    if free.any():
        raise ConfigError(
            "o2k parameters",
            "no peak-memory rule matches some jobs; make the last rule match all",
            field="peak_memory.rule",
        )
    peak_mb = np.minimum(mem_mb * pratio, pk["max_gb"] * 1024.0)

    return {
        "procs": procs,
        "mem_mb": mem_mb,
        "req_mem_kb": req_mem_kb,
        "req_s": req_s,
        "run_s": run_s,
        "peak_mb": peak_mb,
        "cls": cls,
        "dist": dist,
        "over": over,
        "is_default": is_default,
    }


def generate_jobs(
    params: Mapping[str, Any], *, span: float, seed: int, start_time: int
) -> dict[str, np.ndarray]:
    """The job attributes as arrays: submit, procs, mem_mb, req_s, run_s, peak_mb, cls, dist, over, dedicated.

    This is the whole model; :func:`generate` only turns it into SWF rows.
    One child random stream per component (``SeedSequence(seed).spawn``), so
    changing, say, the peak-memory parameters leaves every runtime unchanged.
    With ``[classes]`` (a month's Table 6 column, :func:`month_params`) each
    job's LSF class is drawn from the given shares first and its attributes
    from the model conditioned on that class.  ``dedicated`` marks the vst
    jobs that run on the three dedicated hosts (T§3.4, ``[dedicated]``).
    """
    rngs = streams(seed, _STREAMS)
    periods = params["arrivals"]["period"]
    scale = params["arrivals"].get("rate_scale", 1.0)
    if scale != 1.0:
        periods = [{**per, "mean_s": per["mean_s"] / scale} for per in periods]
    submit = np.floor(_arrivals(periods, span, start_time, rngs["arrivals"]))
    n = len(submit)
    shares = params.get("classes", {}).get("shares")
    jobs = _draw(params, rngs, n) if shares is None else _draw_by_class(params, rngs, n, shares)
    jobs["submit"] = submit
    jobs["dedicated"] = _dedicated(params, rngs["dedicated"], jobs)
    return jobs


def _draw_by_class(
    params: Mapping[str, Any],
    rngs: Mapping[str, np.random.Generator],
    n: int,
    shares: Sequence[float],
) -> dict[str, np.ndarray]:
    """*n* jobs whose classes follow *shares*, each drawn from the model given its class (rejection)."""
    want = rngs["classes"].choice(len(shares), size=n, p=np.asarray(shares) / sum(shares))
    need = np.bincount(want, minlength=len(shares))
    picked: dict[int, list[dict[str, np.ndarray]]] = {k: [] for k in range(len(shares))}
    have = np.zeros(len(shares), dtype=np.int64)
    for _ in range(50):
        if (have >= need).all():
            break
        pool = _draw(params, rngs, max(4 * n, 1000))
        for k in np.flatnonzero(have < need).tolist():
            idx = np.flatnonzero(pool["cls"] == k)[: need[k] - have[k]]
            picked[k].append({key: v[idx] for key, v in pool.items()})
            have[k] += len(idx)
    short = [CLASS_NAMES[k] for k in np.flatnonzero(have < need)]
    if short:
        raise ConfigError(
            "o2k parameters",
            f"the model almost never produces class(es) {', '.join(short)}; cannot follow classes.shares",
            field="classes.shares",
        )
    keys = list(picked[int(np.argmax(need))][0])
    out = {key: np.empty(n, dtype=picked[int(np.argmax(need))][0][key].dtype) for key in keys}
    for k in range(len(shares)):
        if need[k] == 0:
            continue
        pos = np.flatnonzero(want == k)
        for key in keys:
            out[key][pos] = np.concatenate([part[key] for part in picked[k]])[: need[k]]
    return out


def _dedicated(
    params: Mapping[str, Any], rng: np.random.Generator, jobs: Mapping[str, np.ndarray]
) -> np.ndarray:
    """Which vst jobs run on the dedicated hosts (T§3.4): probability ``scale x P / 64``, at most 1."""
    d = params["dedicated"]
    u = rng.random(len(jobs["procs"]))
    vst = (jobs["cls"] >= 0) & (jobs["cls"] % 4 == 0)
    prob = np.minimum(d["scale"] * jobs["procs"] / d["full_procs"], 1.0)
    return vst & (u < prob)


def generate(params: Mapping[str, Any], *, span: float, seed: int, start_time: int) -> Trace:
    """A :class:`~o2ksim.workloads.swf.Trace` of the O2K model (see the module docstring)."""
    j = generate_jobs(params, span=span, seed=seed, start_time=start_time)
    include = params["dedicated"]["include"]
    if not include:  # T§3.4: the thesis simulates the space-shared hosts and their jobs only
        j = {k: v[~j["dedicated"]] for k, v in j.items()}
    n = len(j["submit"])
    req_mem = j["req_mem_kb"]
    mach = params["machine"]
    columns: dict[str, Any] = {
        "submit": j["submit"],
        "run_time": j["run_s"],
        "alloc_procs": j["procs"],
        "used_mem": np.maximum(np.rint(j["peak_mb"] * MB_KB / j["procs"]), 1),
        "req_procs": j["procs"],
        "req_time": j["req_s"],
        "req_mem": req_mem,
        "status": 1,
        "queue": j["cls"] + 1,
    }
    if include:  # SWF field 16: 1 = the eight space-shared hosts, 2 = the three dedicated hosts
        columns["partition"] = np.where(j["dedicated"], 2, 1)
    notes = [
        "req_time is wall-clock seconds; req_mem and used_mem are KB per processor (job memory = value x procs)",
        "used_mem is the peak memory of the job (thesis Table 11) divided by its processors",
        "vst jobs that ran on the dedicated hosts (thesis 3.4) are "
        + ("included, partition 2" if include else "left out, as in the thesis's simulations"),
    ]
    if "month" in params.get("classes", {}):
        notes.append(f"class mix and job count of {params['classes']['month']} (thesis Table 6)")
    return synthetic_trace(
        columns,
        computer=mach["computer"],
        installation=mach["installation"],
        start_time=start_time,
        procs=mach["procs"],
        max_runtime=int(j["run_s"].max()) if n else None,
        max_memory=int(req_mem.max()) if n else None,
        allow_overuse=False,
        queues="queue = LSF job class (thesis Table 3): "
        + ", ".join(f"{i + 1} {c}" for i, c in enumerate(LSF_CLASSES)),
        notes=notes,
    )
