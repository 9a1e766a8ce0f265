"""Refit the O2K model's per-month sets (``[month."YYYY-MM"]`` in o2ksim/data/models/o2k.toml) to Table 6.

Why: a month set takes Table 6's job count and class mix, and used to give
each class's jobs the model's nine-month sizes and runtimes.  In a month whose
jobs were short for their class -- October 1999 has 2,226 ``mt_sj`` jobs
holding 14 % of the processors, February 2000 466 holding 11 % -- the
generated demand overshot: October 1999, the thesis's *light* month (T§5.5),
came out the heaviest (simulated P x T 103-108 % of the eight hosts, against
Table 6's 86 % with the dedicated-host vst jobs, about 81 % without them).

Two fits, one pool of generated months (average set, every job Table 6
counts, the dedicated-host vst jobs included, ``class_shape`` all 1):

* ``--mode shape`` (shipped): the job count and class shares stay Table 6's
  (so the arrivals are the month's), and each class gets the month's own
  ratio shape s (a ratio r <= 1 becomes 1 - (1 - r)^s, as ``[ratio]
  class_shape`` does for the average month): the s whose class P x T and
  M x T are nearest Table 6's month (relative squared error over
  max(value, 2 %)), heavily penalised outside the issue's tolerance (within
  25 % of the month's value or inside Table 6's nine-month range, half a
  point of rounding slack).  Table 6 counts the dedicated-host vst jobs; the
  model's ``[dedicated]`` rule then leaves them out (T§3.4), so the simulated
  month carries Table 6's demand minus their share.
* ``--mode rate`` (the ablation that rules the rate out): sizes and runtimes
  stay the model's and the arrival rate (job count) plus class shares within
  ``--share-pp`` (3) points are fitted instead (a convex least-squares
  problem in the jobs per class, P x T total as a constraint).  It has to
  cut October 1999 to about 7,800 jobs of Table 6's 13,562 and still leaves
  eight of its 24 class values outside the tolerance: the rate is not what
  was wrong.

    .venv/bin/python benchmarks/fit_o2k_months.py [--mode shape|rate] [--months 200] [--seed 101]

Prints the TOML ready for o2k.toml and a table of the fitted months against
Table 6 (expected values from the pool; tests/test_o2k_months.py checks
generated months against Table 6 itself).
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.optimize import minimize

from o2ksim.o2k_classes import (
    CLASS_NAMES,
    TABLE6,
    TABLE6_MONTHS,
    TABLE6_MXT,
    TABLE6_MXT_RANGE,
    TABLE6_PXT_RANGE,
)
from o2ksim.workloads import models, o2k

MONTH = 30 * 86400.0
TOTAL_WEIGHT = 400.0
TOTAL_WEIGHT_M = 25.0
BAND_WEIGHT = 100000.0
FIT_MARGIN = 0.4  # aim 40 % inside each side of the tolerance
SHAPE_FLOOR = 0.05  # below it a class is its overrunning jobs only: no shorter shapes
P_WEIGHT = 4.0  # processors are the constrained resource (T§5.6): P x T first


def pool(months: int, seed: int) -> dict[str, np.ndarray]:
    """Generated jobs of the average set, dedicated-host vst jobs included, every class shape 1."""
    params = models.load_params("o2k", {"dedicated": {"include": True}})[0]
    params["ratio"]["class_shape"] = [1.0] * len(CLASS_NAMES)
    return o2k.generate_jobs(
        params, span=months * MONTH, seed=seed, start_time=models.DEFAULT_START_TIME
    )


def class_means(jobs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per class: mean P x T, M x T and dedicated-host P x T per job, fractions of a 30-day month."""
    pt = jobs["procs"] * jobs["run_s"] / (960 * MONTH)
    mt = jobs["mem_mb"] / 1024 * jobs["run_s"] / (336 * MONTH)
    cls, ded = jobs["cls"], jobs["dedicated"]
    e = np.array([pt[cls == k].mean() for k in range(len(CLASS_NAMES))])
    m = np.array([mt[cls == k].mean() for k in range(len(CLASS_NAMES))])
    d = np.array([pt[(cls == k) & ded].sum() / (cls == k).sum() for k in range(len(CLASS_NAMES))])
    return e, m, d


def bands(
    month: str, margin: float = 0.0
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The issue's tolerance per class, (low, high) for P x T and for M x T.

    Within 25 % of the month's Table 6 value or inside Table 6's nine-month
    range; Table 6 prints whole percents, so half a point of slack.  The fit
    aims inside a band narrowed by *margin* (a fraction of each side) so that
    a generated month's sampling noise stays inside the full band.
    """
    out = []
    for want, rng in (
        (np.asarray(TABLE6[month][3]), TABLE6_PXT_RANGE),
        (np.asarray(TABLE6_MXT[month][1]), TABLE6_MXT_RANGE),
    ):
        lo = np.minimum(0.75 * want, [rng[c][0] - 0.005 for c in CLASS_NAMES])
        hi = np.maximum(1.25 * want, [rng[c][1] + 0.005 for c in CLASS_NAMES])
        out.append((want - (1 - margin) * (want - lo), want + (1 - margin) * (hi - want)))
    return out[0], out[1]


def _penalty(got: np.ndarray, want: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    floor = np.maximum(want, 0.02)
    off = np.maximum(lo - got, 0) + np.maximum(got - hi, 0)
    return ((got - want) / floor) ** 2 + BAND_WEIGHT * (off / floor) ** 2


def fit_shapes(month: str, jobs: dict[str, np.ndarray], cap: int = 60000) -> np.ndarray:
    """The month's twelve ratio shapes (``--mode shape``, see the module docstring).

    Each class's P x T and M x T are tabulated over a grid of shapes; then
    coordinate descent over the classes minimises the classes' penalties plus
    the month's totals (P x T weighted :data:`TOTAL_WEIGHT`, M x T
    :data:`TOTAL_WEIGHT_M`).
    """
    _total, counts, pxt, cls_pxt = TABLE6[month]
    mxt, cls_mxt = TABLE6_MXT[month]
    scale = 30.0 / month_days(month)
    (plo, phi), (mlo, mhi) = bands(month, FIT_MARGIN)
    grid = np.exp(np.linspace(np.log(SHAPE_FLOOR), np.log(50.0), 601))
    rng = np.random.default_rng(0)
    n_cls = len(CLASS_NAMES)
    gp = np.zeros((n_cls, len(grid)))
    gm = np.zeros((n_cls, len(grid)))
    for k in range(n_cls):
        idx = np.flatnonzero(jobs["cls"] == k)
        if len(idx) > cap:
            idx = np.sort(rng.choice(idx, cap, replace=False))
        procs, mem = jobs["procs"][idx], jobs["mem_mb"][idx] / 1024
        req, run, over = jobs["req_s"][idx], jobs["run_s"][idx].astype(float), jobs["over"][idx]
        ratio = np.clip(run / req, 0.0, 1.0 - 1e-12)
        per_job = counts[k] * scale / len(idx)
        for j, sh in enumerate(grid):
            t = np.where(over, run, np.maximum(np.rint(req * -np.expm1(sh * np.log1p(-ratio))), 1))
            gp[k, j] = float((procs * t).sum()) / (960 * MONTH) * per_job
            gm[k, j] = float((mem * t).sum()) / (336 * MONTH) * per_job
    own = np.array(
        [
            P_WEIGHT * _penalty(gp[k], np.full(len(grid), cls_pxt[k]), plo[k], phi[k])
            + _penalty(gm[k], np.full(len(grid), cls_mxt[k]), mlo[k], mhi[k])
            for k in range(n_cls)
        ]
    )
    pick = np.argmin(own, axis=1)
    for _sweep in range(50):
        before = pick.copy()
        for k in range(n_cls):
            rest_p = sum(gp[i, pick[i]] for i in range(n_cls) if i != k)
            rest_m = sum(gm[i, pick[i]] for i in range(n_cls) if i != k)
            cost = (
                own[k]
                + TOTAL_WEIGHT * ((rest_p + gp[k] - pxt) / pxt) ** 2
                + TOTAL_WEIGHT_M * ((rest_m + gm[k] - mxt) / mxt) ** 2
            )
            pick[k] = int(np.argmin(cost))
        if (pick == before).all():
            break
    return np.array([round(float(grid[j]), 3) for j in pick])


def month_days(month: str) -> int:
    """The number of days of *month* (``YYYY-MM``)."""
    year, mon = (int(x) for x in month.split("-"))
    end = np.datetime64(f"{year + mon // 12:04d}-{mon % 12 + 1:02d}")
    return int((end - np.datetime64(month)).astype("timedelta64[D]").astype(int))


def fit_rate(month: str, e: np.ndarray, m: np.ndarray, share_pp: float) -> tuple[float, np.ndarray]:
    """The month's job count and class shares (see the module docstring)."""
    total, counts, pxt, cls_pxt = TABLE6[month]
    mxt, cls_mxt = TABLE6_MXT[month]
    scale = 30.0 / month_days(month)  # a job's demand as a fraction of this month's capacity
    e_m, m_m = e * scale, m * scale
    t = np.asarray(counts, dtype=float) / total
    p_c, m_c = np.asarray(cls_pxt), np.asarray(cls_mxt)
    n0 = pxt / float(t @ e_m)

    band = bands(month)

    # variables: jobs per class in hundreds (x); demand, shares and totals are linear in x, so the
    # loss is convex and the constrained minimum is the global one
    def loss(x: np.ndarray) -> float:
        jobs = x * 100
        out = TOTAL_WEIGHT * ((float(jobs @ m_m) - mxt) / mxt) ** 2
        for got, want, (lo, hi) in zip((jobs * e_m, jobs * m_m), (p_c, m_c), band, strict=True):
            out += float(_penalty(got, want, lo, hi).sum())
        return out

    lo_s = np.maximum(t - share_pp / 100, 0.0)
    hi_s = t + share_pp / 100
    res = minimize(
        loss,
        t * n0 / 100,
        method="SLSQP",
        bounds=[(0.0, None)] * len(t),
        constraints=[
            {"type": "eq", "fun": lambda x: float(x @ e_m) * 100 / pxt - 1.0},
            {"type": "ineq", "fun": lambda x: x - lo_s * x.sum()},
            {"type": "ineq", "fun": lambda x: hi_s * x.sum() - x},
        ],
        options={"maxiter": 2000, "ftol": 1e-14},
    )
    if res.status not in (0, 8):  # 8: the line search stalled at the (convex) optimum's scale
        raise RuntimeError(f"{month}: {res.message}")
    n = float(res.x.sum() * 100)
    return n, res.x / res.x.sum()


def month_demand(
    month: str, jobs: dict[str, np.ndarray], n: float, shares: np.ndarray, shapes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Expected P x T, M x T and dedicated-host P x T per class of a fitted month (from the pool)."""
    scale = 30.0 / month_days(month)
    out = np.zeros((3, len(CLASS_NAMES)))
    for k in range(len(CLASS_NAMES)):
        sel = jobs["cls"] == k
        procs, mem = jobs["procs"][sel], jobs["mem_mb"][sel] / 1024
        req, run, over = jobs["req_s"][sel], jobs["run_s"][sel].astype(float), jobs["over"][sel]
        ratio = np.clip(run / req, 0.0, 1.0 - 1e-12)
        t = np.where(
            over, run, np.maximum(np.rint(req * -np.expm1(shapes[k] * np.log1p(-ratio))), 1)
        )
        per_job = n * shares[k] * scale / sel.sum()
        out[0, k] = (procs * t).sum() / (960 * MONTH) * per_job
        out[1, k] = (mem * t).sum() / (336 * MONTH) * per_job
        out[2, k] = (procs * t)[jobs["dedicated"][sel]].sum() / (960 * MONTH) * per_job
    return out[0], out[1], out[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("shape", "rate"), default="shape")
    ap.add_argument("--months", type=int, default=200, help="pool size in 30-day months")
    ap.add_argument("--seed", type=int, default=101)
    ap.add_argument("--share-pp", type=float, default=3.0)
    a = ap.parse_args()
    jobs = pool(a.months, a.seed)
    e, m, _d = class_means(jobs)
    toml, rows = [], []
    for month in TABLE6_MONTHS:
        total, counts, pxt, cls_pxt = TABLE6[month]
        mxt, cls_mxt = TABLE6_MXT[month]
        t = np.asarray(counts) / total
        if a.mode == "shape":
            n, s, shapes = float(total), t, fit_shapes(month, jobs)
            toml.append(
                f'[month."{month}"]\nclass_shape = [' + ", ".join(f"{x:g}" for x in shapes) + "]"
            )
        else:
            n, s = fit_rate(month, e, m, a.share_pp)
            shapes = np.ones(len(CLASS_NAMES))
            toml.append(
                f'[month."{month}"]  # rate ablation\njobs = {round(n)}\nshares = ['
                + ", ".join(f"{x:.4f}" for x in s)
                + "]"
            )
        got_p, got_m, ded = month_demand(month, jobs, n, s, shapes)
        rows.append(
            f"| {month} | {total:,} / {n:,.0f} | {pxt:.0%} / {got_p.sum():.1%} "
            f"| {ded.sum():.1%} | {got_p.sum() - ded.sum():.1%} | {mxt:.0%} / {got_m.sum():.1%} "
            f"| {np.abs(s - t).max() * 100:.1f} |"
        )
        (plo, phi), (mlo, mhi) = bands(month)
        worst = [
            f"{what} {c} {g:.3f} (Table 6 {p:.2f})"
            for what, got, want, lo, hi in (
                ("P x T", got_p, cls_pxt, plo, phi),
                ("M x T", got_m, cls_mxt, mlo, mhi),
            )
            for c, g, p, lo_c, hi_c in zip(CLASS_NAMES, got, want, lo, hi, strict=True)
            if not lo_c <= g <= hi_c
        ]
        if worst:
            rows.append(f"| outside 25 % and the range: {'; '.join(worst)} |")
    print("\n\n".join(toml))
    print()
    print(
        "| month | jobs, Table 6 / fitted | P x T, Table 6 / fitted | dedicated vst "
        "| simulated P x T | M x T, Table 6 / fitted | max share change (pp) |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
