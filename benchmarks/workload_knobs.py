"""The workload knobs of ``benchmarks/workload_ablation.py`` and their Table 6 check (issue 23).

Each knob maps one generated O2K month's SWF jobs (a DataFrame, T Table 3's
LSF class in ``queue``) to the ablated jobs, changing one property and
keeping every job's LSF class, so that Table 6's class mix stays:

* :func:`class_limit_requests`: R := the class's time limit (5 / 50 / 200 / 400 h);
* :func:`scale_memory`, :func:`scale_memory_by_class`: requested memory raised,
  capped at the size class's limit (sj 2 GB, mj 4 GB, lj 16 GB);
  :func:`table6_factor` / :func:`table6_class_factors` choose the factors
  that give a month Table 6's M x T (in all, or class by class);
* :func:`batch_sizes`, :func:`replay_batches`: same-second submission batches
  of a real trace replayed over the generated jobs.

:func:`knob_transform` parses a ``--knobs`` item; :func:`table6_check`
checks a knob against issue 23's limits on Table 6 per class, as
``tests/test_o2k_months.py`` does.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.machine import KB_PER_MB
from o2ksim.o2k_classes import (
    CLASS_NAMES,
    TABLE6,
    TABLE6_MXT,
    TABLE6_MXT_RANGE,
    TABLE6_PXT_RANGE,
)
from o2ksim.workloads.models import generate

HOUR = 3600.0
TIME_LIMIT_S = np.array([5, 50, 200, 400]) * HOUR  # T Table 3: vst, st, mt, lt
SIZE_MEM_MB = np.array([2048, 4096, 16384])  # T Table 3: sj, mj, lj
MONTH_DAYS = {
    "1999-10": 31,
    "1999-11": 30,
    "1999-12": 31,
    "2000-01": 31,
    "2000-02": 29,
    "2000-03": 31,
}
TRACES = Path(os.environ.get("O2KSIM_TRACES", "/work/shared/traces"))
ALL_JOBS = {"dedicated": {"include": True}}
Transform = Callable[[pd.DataFrame, str, int], pd.DataFrame]


# ---------------------------------------------------------------------------------------------
# the knobs: each maps one generated month's SWF jobs to the ablated jobs
# ---------------------------------------------------------------------------------------------


def class_limit_requests(jobs: pd.DataFrame, month: str, seed: int) -> pd.DataFrame:
    """R := the job's LSF time class limit (queue 1..12, Table 6 order: time class = (q-1) % 4)."""
    out = jobs.copy()
    tc = (out["queue"].to_numpy() - 1) % 4
    out["req_time"] = np.maximum(out["req_time"].to_numpy(), TIME_LIMIT_S[tc]).astype(np.int64)
    return out


def scale_memory(jobs: pd.DataFrame, factor: float) -> pd.DataFrame:
    """Requested memory x factor, capped at the LSF size class's limit (the class stays)."""
    out = jobs.copy()
    p = out["req_procs"].to_numpy()
    sc = (out["queue"].to_numpy() - 1) // 4
    cap_kb = SIZE_MEM_MB[sc] * KB_PER_MB / p  # per processor
    kb = out["req_mem"].to_numpy().astype(float)
    out["req_mem"] = np.floor(np.minimum(np.maximum(kb * factor, kb), cap_kb)).astype(np.int64)
    return out


def _mxt_all(month: str, factor: float, seeds: range) -> float:
    """Mean M x T of all jobs (dedicated-host vst jobs included, as Table 6) with memory x factor."""
    days = MONTH_DAYS[month]
    cap = 336 * 1024 * 1024 * days * 86400.0
    vals = []
    for seed in seeds:
        j = scale_memory(generate("o2k", span=f"{days}d", seed=seed, params=month,
                                  overrides=ALL_JOBS).jobs, factor)  # fmt: skip
        vals.append(float((j["req_mem"] * j["req_procs"] * j["run_time"]).sum() / cap))
    return float(np.mean(vals))


_TABLE6_FACTOR: dict[str, float] = {}


def table6_factor(month: str) -> float:
    """The memory factor that gives the month Table 6's M x T (bisection on ten generated months)."""
    if month not in _TABLE6_FACTOR:
        want, lo, hi = TABLE6_MXT[month][0], 1.0, 4.0
        if _mxt_all(month, 1.0, range(1, 11)) >= want:
            _TABLE6_FACTOR[month] = 1.0
            return 1.0
        for _ in range(12):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _mxt_all(month, mid, range(1, 11)) < want else (lo, mid)
        _TABLE6_FACTOR[month] = round((lo + hi) / 2, 3)
    return _TABLE6_FACTOR[month]


def scale_memory_by_class(jobs: pd.DataFrame, factors: np.ndarray) -> pd.DataFrame:
    """As :func:`scale_memory` with one factor per LSF class (Table 6's order)."""
    out = jobs.copy()
    k = out["queue"].to_numpy() - 1
    p = out["req_procs"].to_numpy()
    cap_kb = SIZE_MEM_MB[k // 4] * KB_PER_MB / p
    kb = out["req_mem"].to_numpy().astype(float)
    new = np.minimum(np.maximum(kb * factors[k], kb), cap_kb)
    out["req_mem"] = np.floor(new).astype(np.int64)
    return out


_CLASS_FACTORS: dict[str, np.ndarray] = {}


def table6_class_factors(month: str, rounds: int = 4) -> np.ndarray:
    """Per class, the memory factor (>= 1) that brings the class's M x T to the month's Table 6 value.

    Ten generated months (all jobs); a class at or above Table 6 keeps its
    requests.  A few fixed-point rounds absorb the class caps.
    """
    if month not in _CLASS_FACTORS:
        days = MONTH_DAYS[month]
        cap = 336 * 1024 * 1024 * days * 86400.0
        months = [
            generate("o2k", span=f"{days}d", seed=s, params=month, overrides=ALL_JOBS).jobs
            for s in range(1, 11)
        ]
        want = np.asarray(TABLE6_MXT[month][1])
        f = np.ones(12)
        for _ in range(rounds):
            got = np.zeros(12)
            for j in months:
                j = scale_memory_by_class(j, f)
                m = (j["req_mem"] * j["req_procs"] * j["run_time"]).to_numpy() / cap
                got += np.bincount(j["queue"].to_numpy() - 1, weights=m, minlength=12)
            got /= len(months)
            f = np.clip(f * np.where(got > 0, want / np.maximum(got, 1e-12), 1.0), 1.0, 8.0)
        _CLASS_FACTORS[month] = f
    return _CLASS_FACTORS[month]


_BATCHES: dict[str, np.ndarray] = {}


def batch_sizes(name: str, traces: Path = TRACES) -> np.ndarray:
    """The trace's batch sizes in time order: runs of jobs with the same submit second."""
    if name not in _BATCHES:
        hits = sorted(traces.glob(f"{name}*.swf.gz"))
        if not hits:
            raise SystemExit(f"workload_ablation.py: no trace {name}*.swf.gz in {traces}")
        submits = []
        with gzip.open(hits[0], "rt", errors="replace") as f:
            for line in f:
                if line.startswith(";") or not line.strip():
                    continue
                submits.append(int(float(line.split()[1])))
        s = np.sort(np.asarray(submits))
        edges = np.flatnonzero(np.diff(s)) + 1
        _BATCHES[name] = np.diff(np.concatenate([[0], edges, [len(s)]]))
    return _BATCHES[name]


def replay_batches(jobs: pd.DataFrame, sizes: np.ndarray, start: int) -> pd.DataFrame:
    """Group consecutive jobs by ``sizes`` (cycled from index ``start``); a group takes its first submit."""
    out = jobs.copy()
    sub = out["submit"].to_numpy().copy()
    i, k = 0, start
    while i < len(sub):
        b = int(sizes[k % len(sizes)])
        sub[i : i + b] = sub[i]
        i, k = i + b, k + 1
    out["submit"] = sub
    return out


def knob_transform(knob: str) -> tuple[Transform | None, str | None]:
    """(jobs transform or None, runtime-estimate scenario or None) for a ``--knobs`` item.

    Knobs joined by ``+`` (``mem=table6+requests=class-limit``) apply left to right.
    """
    if "+" in knob:
        parts = [knob_transform(k) for k in knob.split("+")]
        fns = [f for f, _e in parts if f is not None]
        est = next((e for _f, e in parts if e is not None), None)

        def chain(j: pd.DataFrame, m: str, s: int) -> pd.DataFrame:
            for f in fns:
                j = f(j, m, s)
            return j

        return (chain if fns else None), est
    if knob == "model":
        return None, None
    key, _, value = knob.partition("=")
    if key == "requests" and value == "class-limit":
        return class_limit_requests, None
    if key == "requests" and value == "scenario-a":
        return None, "scenario-a:20"
    if key == "mem" and value == "table6-class":
        return (lambda j, m, s: scale_memory_by_class(j, table6_class_factors(m))), None
    if key == "mem" and value == "table6":
        return (lambda j, m, s: scale_memory(j, table6_factor(m))), None
    if key == "mem":
        return (lambda j, m, s: scale_memory(j, float(value))), None
    if key == "batch":

        def batched(j: pd.DataFrame, m: str, s: int) -> pd.DataFrame:
            sizes = batch_sizes(value)  # a seeded start: each seed replays another stretch
            return replay_batches(j, sizes, int(np.random.default_rng(s).integers(len(sizes))))

        return batched, None
    raise SystemExit(f"workload_ablation.py: unknown knob '{knob}'")


def _within(got: float, want: float, rng: tuple[float, float], tol: float = 0.25) -> bool:
    return abs(got - want) <= tol * want or rng[0] - 0.005 <= got <= rng[1] + 0.005


MXT_RESIDUAL = {"mt_sj": 0.03, "vst_lj": 0.01}  # as tests/test_o2k_months.py (documented residuals)
NOISY = {"lt_lj": 0.5}  # as tests/test_o2k_months.py (20-25 jobs a month)


def table6_check(month: str, knob: str, seeds: range = range(1, 11)) -> dict[str, Any]:
    """Ten generated months (all jobs): class shares, P x T, M x T against issue 23's limits."""
    days = MONTH_DAYS[month]
    cap_p, cap_m = 960 * days * 86400.0, 336 * 1024 * 1024 * days * 86400.0
    fn, _est = knob_transform(knob)
    cls_p, cls_m, cls_n, tot_m = np.zeros(12), np.zeros(12), np.zeros(12), []
    for seed in seeds:
        j = generate("o2k", span=f"{days}d", seed=seed, params=month, overrides=ALL_JOBS).jobs
        if fn is not None:
            j = fn(j, month, seed)
        p = (j["req_procs"] * j["run_time"]).to_numpy() / cap_p
        m = (j["req_mem"] * j["req_procs"] * j["run_time"]).to_numpy() / cap_m
        k = j["queue"].to_numpy() - 1
        cls_p += np.bincount(k, weights=p, minlength=12)
        cls_m += np.bincount(k, weights=m, minlength=12)
        cls_n += np.bincount(k, minlength=12)
        tot_m.append(m.sum())
    n = len(seeds)
    total, counts, _pxt, cls_pxt = TABLE6[month]
    cls_mxt = TABLE6_MXT[month][1]
    bad = []
    for k, name in enumerate(CLASS_NAMES):
        if abs(cls_n[k] / cls_n.sum() - counts[k] / total) > 0.03:
            bad.append(f"{name} share")
        tol = NOISY.get(name, 0.25)
        if not _within(cls_p[k] / n, cls_pxt[k], TABLE6_PXT_RANGE[name], tol):
            bad.append(f"{name} PxT {cls_p[k] / n:.3f} (T6 {cls_pxt[k]:.2f})")
        got_m = cls_m[k] / n
        ok = (
            got_m <= TABLE6_MXT_RANGE[name][1] + MXT_RESIDUAL[name]
            if name in MXT_RESIDUAL
            else _within(got_m, cls_mxt[k], TABLE6_MXT_RANGE[name], tol)
        )
        if not ok:
            bad.append(f"{name} MxT {got_m:.3f} (T6 {cls_mxt[k]:.2f})")
    return {"month": month, "knob": knob, "mxt_all": float(np.mean(tot_m)),
            "mxt_table6": TABLE6_MXT[month][0], "outside": bad}  # fmt: skip
