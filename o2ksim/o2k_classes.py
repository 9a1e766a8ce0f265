"""The twelve LSF job classes of the NCSA O2K (thesis Table 3) and Table 6's monthly data.

One definition shared by the O2K workload model, the NCSA-LSF* policy,
``o2ksim characterize`` and the report.  A class is a time class (``vst``,
``st``, ``mt``, ``lt``: requested runtime at most 5, 50, 200, 400 hours)
joined to a size class (``sj``, ``mj``, ``lj``: at most 8, 16, 64
processors *and* 2, 4, 16 GB of memory); labels read ``vst_sj``.  The order
of :data:`CLASS_NAMES` is Table 6's (size-major).

Table 6 (T§4.1) gives, for each of nine months, the number of jobs and the
processor demand P x T (as a fraction of the eight space-shared hosts'
capacity) of every class.  Those numbers are here once, as printed, so the
model's ``--month`` parameter sets, the characterisation report and the
tests all compare against the same values.

Only numpy is imported.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "CLASS_NAMES",
    "KB_PER_MB",
    "SIZE_CLASSES",
    "TABLE6",
    "TABLE6_JOB_SHARE",
    "TABLE6_JOB_SHARE_RANGE",
    "TABLE6_MONTHS",
    "TABLE6_MXT",
    "TABLE6_MXT_RANGE",
    "TABLE6_PXT",
    "TABLE6_PXT_RANGE",
    "TIME_CLASSES",
    "UNCLASSIFIED",
    "class_index",
    "class_labels",
    "label",
    "month_job_shares",
    "month_mxt",
    "month_pxt",
]

KB_PER_MB = 1024
_H = 3600.0

TIME_CLASSES: tuple[tuple[str, float], ...] = (
    ("vst", 5 * _H),
    ("st", 50 * _H),
    ("mt", 200 * _H),
    ("lt", 400 * _H),
)
"""``(name, longest requested runtime in seconds)``, shortest first (T Table 3)."""

SIZE_CLASSES: tuple[tuple[str, int, float], ...] = (
    ("sj", 8, 2048.0 * KB_PER_MB),
    ("mj", 16, 4096.0 * KB_PER_MB),
    ("lj", 64, 16384.0 * KB_PER_MB),
)
"""``(name, most processors, most memory in KB)``, smallest first (T Table 3; lj 16 GB until Sep 2000)."""

UNCLASSIFIED = "unclassified"
"""The label of a job that fits no class (more than 64 processors, 16 GB or 400 hours)."""

MEMORY_TOLERANCE_KB = 0.5
"""A memory request counts as within a size limit up to half a KB above it (MB -> KB rounding)."""


def label(time_class: str, size_class: str) -> str:
    """The class label of thesis Table 6, e.g. ``vst_sj``."""
    return f"{time_class}_{size_class}"


CLASS_NAMES: tuple[str, ...] = tuple(
    label(t, s) for s, _p, _m in SIZE_CLASSES for t, _b in TIME_CLASSES
)
"""The twelve labels in Table 6's column order (vst_sj, st_sj, mt_sj, lt_sj, vst_mj, ..., lt_lj)."""


def class_index(
    procs: np.ndarray,
    mem_kb: np.ndarray,
    req_s: np.ndarray,
    time_classes: Sequence[tuple[str, float]] = TIME_CLASSES,
    size_classes: Sequence[tuple[str, int, float]] = SIZE_CLASSES,
) -> np.ndarray:
    """Class index per job (size index x number of time classes + time index), -1 when none fits.

    The size class is the smallest whose processor *and* memory limits both
    hold (memory within :data:`MEMORY_TOLERANCE_KB`); the time class the
    smallest whose limit holds the requested runtime.  With the default
    classes the index is the position in :data:`CLASS_NAMES`.
    """
    procs = np.asarray(procs, dtype=float)
    mem_kb = np.asarray(mem_kb, dtype=float)
    req_s = np.asarray(req_s, dtype=float)
    size = np.full(len(procs), -1)
    for k in range(len(size_classes) - 1, -1, -1):
        _name, p, m = size_classes[k]
        size = np.where((procs <= p) & (mem_kb <= m + MEMORY_TOLERANCE_KB), k, size)
    bounds = np.array([b for _n, b in time_classes], dtype=float)
    time = np.searchsorted(bounds, req_s, side="left")
    time = np.where(time < len(bounds), time, -1)
    return np.where((size >= 0) & (time >= 0), size * len(bounds) + time, -1)


def class_labels(
    procs: np.ndarray,
    mem_kb: np.ndarray,
    req_s: np.ndarray,
    time_classes: Sequence[tuple[str, float]] = TIME_CLASSES,
    size_classes: Sequence[tuple[str, int, float]] = SIZE_CLASSES,
) -> np.ndarray:
    """Class label per job (``"vst_sj"``...), :data:`UNCLASSIFIED` when none fits."""
    idx = class_index(procs, mem_kb, req_s, time_classes, size_classes)
    names = np.array(
        [label(t, s) for s, _p, _m in size_classes for t, _b in time_classes] + [UNCLASSIFIED],
        dtype=object,
    )
    return names[np.where(idx >= 0, idx, len(names) - 1)]


# Thesis Table 6, as printed: month -> (all jobs, jobs per class; all P x T, P x T per class).
# P x T is the fraction of the eight space-shared hosts' capacity (960 processors x the month),
# including the vst jobs that ran on the three dedicated hosts (4-9 % of the demand, T§4.1).
TABLE6: dict[str, tuple[int, tuple[int, ...], float, tuple[float, ...]]] = {
    "1999-10": (13562, (5186, 2190, 2226, 118, 1483, 750, 145, 27, 1067, 244, 74, 52),
                0.86, (0.02, 0.09, 0.14, 0.03, 0.03, 0.08, 0.08, 0.01, 0.09, 0.13, 0.11, 0.04)),
    "1999-11": (10916, (3884, 2231, 510, 141, 1312, 722, 212, 40, 1404, 345, 94, 21),
                0.91, (0.02, 0.09, 0.07, 0.02, 0.03, 0.14, 0.10, 0.03, 0.07, 0.16, 0.15, 0.03)),
    "1999-12": (8778, (3223, 2081, 557, 114, 732, 575, 189, 28, 840, 276, 134, 29),
                0.95, (0.01, 0.08, 0.10, 0.04, 0.01, 0.13, 0.17, 0.04, 0.04, 0.10, 0.15, 0.09)),
    "2000-01": (9652, (3622, 2606, 553, 71, 950, 589, 163, 61, 671, 252, 91, 23),
                0.88, (0.02, 0.09, 0.11, 0.03, 0.02, 0.09, 0.13, 0.06, 0.04, 0.08, 0.12, 0.10)),
    "2000-02": (11290, (5296, 2269, 466, 71, 1128, 698, 219, 33, 686, 314, 90, 20),
                0.96, (0.02, 0.09, 0.11, 0.03, 0.03, 0.10, 0.13, 0.03, 0.06, 0.18, 0.12, 0.05)),
    "2000-03": (12101, (4671, 2678, 472, 57, 1808, 631, 216, 70, 850, 500, 123, 25),
                0.94, (0.02, 0.11, 0.09, 0.03, 0.04, 0.11, 0.15, 0.04, 0.04, 0.14, 0.14, 0.03)),
    "2000-10": (9768, (3012, 2488, 580, 278, 881, 627, 241, 50, 957, 367, 209, 78),
                0.90, (0.01, 0.11, 0.09, 0.07, 0.02, 0.10, 0.11, 0.02, 0.05, 0.14, 0.13, 0.04)),
    "2000-11": (8708, (2982, 2279, 416, 60, 711, 497, 187, 16, 912, 513, 110, 25),
                0.91, (0.02, 0.10, 0.08, 0.03, 0.02, 0.09, 0.12, 0.03, 0.06, 0.20, 0.13, 0.03)),
    "2000-12": (7798, (2581, 2190, 565, 164, 801, 252, 215, 59, 667, 176, 113, 15),
                1.02, (0.02, 0.11, 0.10, 0.09, 0.02, 0.05, 0.18, 0.04, 0.06, 0.11, 0.13, 0.12)),
}  # fmt: skip

# Thesis Table 6, M x T rows as printed: month -> (all, per class in Table 6's order).  Memory demand
# is requested memory x actual runtime as a fraction of the eight hosts' 336 GB x the month.
TABLE6_MXT: dict[str, tuple[float, tuple[float, ...]]] = {
    "1999-10": (0.58, (0.01, 0.04, 0.08, 0.03, 0.02, 0.04, 0.07, 0.05, 0.02, 0.04, 0.11, 0.08)),
    "1999-11": (0.57, (0.01, 0.06, 0.06, 0.02, 0.01, 0.05, 0.10, 0.05, 0.02, 0.08, 0.07, 0.05)),
    "1999-12": (0.74, (0.01, 0.05, 0.07, 0.03, 0.00, 0.05, 0.11, 0.04, 0.01, 0.10, 0.14, 0.11)),
    "2000-01": (0.76, (0.01, 0.06, 0.07, 0.03, 0.01, 0.05, 0.10, 0.06, 0.01, 0.11, 0.10, 0.17)),
    "2000-02": (0.78, (0.01, 0.07, 0.07, 0.03, 0.02, 0.05, 0.11, 0.05, 0.01, 0.10, 0.12, 0.15)),
    "2000-03": (0.83, (0.01, 0.07, 0.06, 0.03, 0.02, 0.07, 0.09, 0.08, 0.02, 0.16, 0.18, 0.04)),
    "2000-10": (0.84, (0.01, 0.06, 0.07, 0.09, 0.01, 0.06, 0.06, 0.02, 0.02, 0.06, 0.18, 0.20)),
    "2000-11": (0.63, (0.01, 0.05, 0.05, 0.02, 0.01, 0.05, 0.06, 0.01, 0.02, 0.10, 0.11, 0.14)),
    "2000-12": (0.68, (0.01, 0.06, 0.08, 0.05, 0.01, 0.02, 0.10, 0.06, 0.02, 0.04, 0.13, 0.09)),
}  # fmt: skip
"""Table 6's memory-demand rows (T§4.1), typed from the thesis; like P x T they include the
vst jobs that ran on the three dedicated hosts."""

TABLE6_MONTHS: tuple[str, ...] = tuple(TABLE6)
"""The nine months of Table 6 as ``YYYY-MM``."""


def month_job_shares(month: str) -> dict[str, float]:
    """Share of the month's jobs in each class (Table 6)."""
    total, counts, _pxt, _cls = TABLE6[month]
    return {c: n / total for c, n in zip(CLASS_NAMES, counts, strict=True)}


def month_mxt(month: str) -> dict[str, float]:
    """Memory demand of each class in the month, fraction of the 8 hosts' 336 GB-months (Table 6)."""
    return dict(zip(CLASS_NAMES, TABLE6_MXT[month][1], strict=True))


def month_pxt(month: str) -> dict[str, float]:
    """Processor demand of each class in the month, fraction of the 8 hosts' capacity (Table 6)."""
    return dict(zip(CLASS_NAMES, TABLE6[month][3], strict=True))


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values))


TABLE6_JOB_SHARE: dict[str, float] = {
    c: _mean([month_job_shares(m)[c] for m in TABLE6_MONTHS]) for c in CLASS_NAMES
}
"""Share of jobs per class, mean of the nine months of Table 6."""

TABLE6_JOB_SHARE_RANGE: dict[str, tuple[float, float]] = {
    c: (
        min(month_job_shares(m)[c] for m in TABLE6_MONTHS),
        max(month_job_shares(m)[c] for m in TABLE6_MONTHS),
    )
    for c in CLASS_NAMES
}
"""Smallest and largest share of jobs per class over the nine months of Table 6."""

TABLE6_PXT: dict[str, float] = {
    c: _mean([month_pxt(m)[c] for m in TABLE6_MONTHS]) for c in CLASS_NAMES
}
"""Processor demand per class, fraction of the eight hosts' capacity, nine-month mean of Table 6."""

TABLE6_MXT_RANGE: dict[str, tuple[float, float]] = {
    c: (min(month_mxt(m)[c] for m in TABLE6_MONTHS), max(month_mxt(m)[c] for m in TABLE6_MONTHS))
    for c in CLASS_NAMES
}
"""Smallest and largest memory demand per class over the nine months of Table 6."""

TABLE6_PXT_RANGE: dict[str, tuple[float, float]] = {
    c: (min(month_pxt(m)[c] for m in TABLE6_MONTHS), max(month_pxt(m)[c] for m in TABLE6_MONTHS))
    for c in CLASS_NAMES
}
"""Smallest and largest processor demand per class over the nine months of Table 6."""
