"""Wait per NCSA-LSF* job class for any run (thesis Figures 5-6): analysis, not scheduling.

Reads machine files and builds pandas tables, so it lives outside
``o2ksim.policies``; ``o2ksim.policies.lsf`` still re-exports both functions.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from o2ksim.machine import KB_PER_MB, MachineSpec, load_machine
from o2ksim.o2k_classes import class_labels
from o2ksim.policies.lsf.classes import UNCLASSIFIED, LSFConfig, label, lsf_config


def _config_of(machine: MachineSpec | LSFConfig | str | None) -> LSFConfig:
    if isinstance(machine, LSFConfig):
        return machine
    if machine is None:
        machine = "o2k"
    if not isinstance(machine, MachineSpec):
        machine = load_machine(machine)
    return lsf_config(machine)


def job_classes(
    jobs: pd.DataFrame, machine: MachineSpec | LSFConfig | str | None = None
) -> pd.Series:
    """The LSF class label (``vst_sj``...) of every row of a per-job table.

    Uses the columns ``req_time`` (s), ``procs`` and ``mem`` (MB, as in
    :func:`~o2ksim.engine.monitor.jobs_table`) and the classes of ``machine``
    (default ``o2k``); rows that fit no class get ``"unclassified"``.
    """
    cfg = _config_of(machine)
    mem_kb = jobs["mem"].to_numpy(float) * KB_PER_MB
    procs, req = jobs["procs"].to_numpy(float), jobs["req_time"].to_numpy(float)
    out = class_labels(procs, mem_kb, req, cfg.time_classes, cfg.size_classes)
    return pd.Series(out, index=jobs.index, name="lsf_class")


def lsf_class_table(
    jobs: pd.DataFrame, machine: MachineSpec | LSFConfig | str | None = None
) -> pd.DataFrame:
    """Average and maximum wait per LSF job class (thesis Figures 5-6).

    ``jobs`` is a per-job table (``Result.jobs``); only jobs that ran (and,
    when the table has an ``analysed`` column, were analysed) count.  Works for
    any policy's run, so backfill policies can be compared class by class.
    Columns: class, time_class, size_class, jobs, mean_wait, p95_wait,
    max_wait (seconds); one row per class in thesis Table 6 order (size-major),
    plus an ``unclassified`` row when some job fits no class.
    """
    cfg = _config_of(machine)
    mask = jobs["status"].isin(("completed", "killed"))
    if "analysed" in jobs:
        mask &= jobs["analysed"].astype(bool)
    ran = jobs.loc[mask]
    classes = job_classes(ran, cfg)
    rows = []
    names = [(label(t, s), t, s) for s, _p, _m in cfg.size_classes for t, _b in cfg.time_classes]
    if (classes == UNCLASSIFIED).any():
        names.append((UNCLASSIFIED, "", ""))
    for name, t, s in names:
        wait = ran.loc[classes == name, "wait"].to_numpy(float)
        rows.append(
            {
                "class": name,
                "time_class": t,
                "size_class": s,
                "jobs": len(wait),
                "mean_wait": float(wait.mean()) if len(wait) else math.nan,
                "p95_wait": float(np.percentile(wait, 95)) if len(wait) else math.nan,
                "max_wait": float(wait.max()) if len(wait) else math.nan,
            }
        )
    return pd.DataFrame(rows)


