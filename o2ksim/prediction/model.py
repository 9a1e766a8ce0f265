"""Downey's conditional lifetime model (CLM), D§3, and its fit from an archive trace.

The lifetimes of the jobs of one class have a *uniform-log* distribution
(D eq. 2)::

    cdf_L(t) = Pr{L < t} = beta0 + beta1 ln t,   t_min = e^(-beta0/beta1) <= t <= t_max = e^((1-beta0)/beta1)

so that, given that a job has already run for ``a`` seconds (D eq. 3)::

    1 - cdf_L|a(t) = Pr{L > t | L > a} = (1 - beta0 - beta1 ln t) / (1 - beta0 - beta1 ln a)

and its median lifetime is ``sqrt(t_max * a)`` (D eq. 4).  The cdf is clipped
to ``[0, 1]`` outside ``[t_min, t_max]``.

Fitting (D§3, §3.1): per class, least squares of the empirical cdf against
``ln t`` on the middle 80 % of the class's jobs (the shortest and the longest
10 % are dropped).  Classes come from the queue name (SWF field 15) by a
grouping rule (:class:`ClassRule`), with the sequential (one-processor) jobs a
class of their own (D Table 1); the paper fits the batch partition only (SWF
field 16).  Every fit also has the class ``all`` (all jobs together, D Fig. 1,
Table 5 "all jobs"), which predictions use for jobs of a class the fit does
not know.

The job classes (queue names, grouping rules, partitions) are in
:mod:`~o2ksim.prediction.classes`; their public names are importable from here
too.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.files import read_toml
from o2ksim.prediction.classes import (
    ALL,
    OTHER,
    SEQUENTIAL,
    ClassRule,
    class_rule_help,
    parse_class_rule,
    partition_number,
    partition_size,
    queue_names,
    select_jobs,
)
from o2ksim.units import format_duration

__all__ = [
    "ALL",
    "CLM",
    "OTHER",
    "SEQUENTIAL",
    "ClassFit",
    "ClassRule",
    "class_rule_help",
    "conditional_cdf",
    "conditional_mean",
    "conditional_median",
    "describe_params",
    "fit_class",
    "fit_clm",
    "lifetime_cdf",
    "load_clm",
    "median_table",
    "parse_class_rule",
    "partition_number",
    "partition_size",
    "queue_names",
    "select_jobs",
    "t_bounds",
]


# ============================================================================
# the model's algebra (vectorised over jobs)
# ============================================================================


def t_bounds(beta0: Any, beta1: Any) -> tuple[Any, Any]:
    """``(t_min, t_max)`` of ``cdf = beta0 + beta1 ln t`` (D§3, below eq. 2)."""
    b0 = np.asarray(beta0, dtype=float)
    b1 = np.asarray(beta1, dtype=float)
    return np.exp(-b0 / b1), np.exp((1.0 - b0) / b1)


def lifetime_cdf(t: Any, beta0: Any, beta1: Any) -> np.ndarray:
    """``Pr{L < t}`` of D eq. 2, clipped to ``[0, 1]`` (0 for ``t <= 0``)."""
    t = np.asarray(t, dtype=float)
    with np.errstate(divide="ignore"):
        lt = np.log(np.where(t > 0, t, 1.0))
    v = np.asarray(beta0, dtype=float) + np.asarray(beta1, dtype=float) * lt
    return np.where(t > 0, np.clip(v, 0.0, 1.0), 0.0)


OVERDUE_MODES = ("tail", "hold", "release")


def conditional_cdf(
    t: Any,
    age: Any,
    beta0: Any,
    beta1: Any,
    *,
    overdue: str = "tail",
    t_last: Any = None,
) -> np.ndarray:
    """``Pr{L < t | L > age}`` (D eq. 3) for a lifetime ``t >= age``; 0 for ``t <= age``.

    A job older than its class's ``t_max`` is outside the model (the paper:
    "we will need to be careful about how we apply our model to old jobs").
    ``overdue`` says what to assume for such a job:

    * ``"tail"`` (default): its lifetime is uniform-log between its age and
      ``t_last``, the longest lifetime of its class in the fitted data (the
      tail the fit leaves out); past ``t_last`` it ends at once;
    * ``"hold"``: its end is unpredictable (the cdf stays 0: it never frees
      its processors within a prediction);
    * ``"release"``: the model taken literally (it ends at once).
    """
    t = np.asarray(t, dtype=float)
    age = np.asarray(age, dtype=float)
    fa = lifetime_cdf(age, beta0, beta1)
    ft = lifetime_cdf(t, beta0, beta1)
    alive = fa < 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(alive, (ft - fa) / np.where(alive, 1.0 - fa, 1.0), 0.0)
        if overdue == "tail":
            last = (
                np.full(np.shape(age), np.inf)
                if t_last is None
                else np.asarray(t_last, dtype=float)
            )
            a = np.maximum(age, 1e-9)
            span = np.log(last / a)
            tail = np.where(
                span > 0, np.log(np.maximum(t, a) / a) / np.where(span > 0, span, 1.0), 1.0
            )
            c = np.where(alive, c, tail)
        elif overdue == "release":
            c = np.where(alive, c, 1.0)
        elif overdue != "hold":
            raise O2KSimError(f"overdue must be one of {', '.join(OVERDUE_MODES)}, got {overdue!r}")
    return np.where(t > age, np.clip(c, 0.0, 1.0), 0.0)


def conditional_median(age: Any, beta0: Any, beta1: Any) -> np.ndarray:
    """Median lifetime given the age (D eq. 4): ``sqrt(t_max * a)``, with ``a`` raised to ``t_min``.

    Below ``t_min`` the job has not yet used up any probability, so its median
    is the unconditional one, ``sqrt(t_min * t_max)``.  ``nan`` past ``t_max``.
    """
    tmin, tmax = t_bounds(beta0, beta1)
    a = np.maximum(np.asarray(age, dtype=float), tmin)
    return np.where(a < tmax, np.sqrt(tmax * a), np.nan)


def conditional_mean(age: Any, beta0: Any, beta1: Any) -> np.ndarray:
    """Mean lifetime given the age (D§3): ``E[L | a] = (t_max - a) / (ln t_max - ln a)``.

    (The paper calls it the average remaining lifetime; it is the mean of the
    whole lifetime, the remaining part is ``E[L | a] - a``.)  ``a`` is raised
    to ``t_min`` as in :func:`conditional_median`; ``nan`` past ``t_max``.
    """
    tmin, tmax = t_bounds(beta0, beta1)
    a = np.maximum(np.asarray(age, dtype=float), tmin)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a < tmax, (tmax - a) / (np.log(tmax) - np.log(a)), np.nan)


# ============================================================================
# fitting one class
# ============================================================================


@dataclass(frozen=True)
class ClassFit:
    """The fitted uniform-log distribution of one class (a row of D Table 1)."""

    name: str
    beta0: float
    beta1: float
    r2: float
    jobs: int
    t_last: float = float("inf")  # longest lifetime of the class in the fitted data

    @property
    def t_min(self) -> float:
        return float(math.exp(-self.beta0 / self.beta1))

    @property
    def t_max(self) -> float:
        return float(math.exp((1.0 - self.beta0) / self.beta1))

    @property
    def median(self) -> float:
        """The model's median lifetime, ``e^((0.5 - beta0)/beta1)`` (D Table 5, footnote 2)."""
        return float(math.exp((0.5 - self.beta0) / self.beta1))


def fit_class(lifetimes: Any, *, trim: float = 0.1, name: str = "") -> ClassFit:
    """Least-squares ``beta0, beta1`` and ``R^2`` of one class (D§3).

    The regression takes one point per distinct positive lifetime ``v``: the
    empirical ``Pr{L <= v}`` against ``ln v``, keeping only the points whose
    empirical cdf lies in ``(trim, 1 - trim]`` (the shortest and the longest
    ``trim`` of the jobs are omitted).
    """
    x = np.asarray(lifetimes, dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    if not 0 <= trim < 0.5:
        raise O2KSimError(f"trim must be in [0, 0.5), got {trim}")
    values, counts = np.unique(x, return_counts=True)
    cdf = np.cumsum(counts) / max(len(x), 1)
    keep = (cdf > trim + 1e-12) & (cdf <= 1.0 - trim + 1e-12)
    v, f = values[keep], cdf[keep]
    if len(v) < 2:
        raise O2KSimError(
            f"class {name or '?'}: cannot fit a uniform-log distribution to {len(v)} distinct "
            f"lifetime(s) in the middle {100 * (1 - 2 * trim):.0f} % ({len(x)} jobs)"
        )
    lx = np.log(v)
    b1, b0 = np.polyfit(lx, f, 1)
    resid = f - (b0 + b1 * lx)
    ss_tot = float(((f - f.mean()) ** 2).sum())
    r2 = 1.0 - float((resid**2).sum()) / ss_tot if ss_tot > 0 else 1.0
    if b1 <= 0:
        raise O2KSimError(f"class {name or '?'}: the fitted slope beta1 is not positive ({b1:.3g})")
    return ClassFit(
        name=name,
        beta0=float(b0),
        beta1=float(b1),
        r2=float(r2),
        jobs=len(x),
        t_last=float(x.max()),
    )


# ============================================================================
# the fitted model of a workload
# ============================================================================


@dataclass
class CLM:
    """Fitted classes of one workload (D Table 1 / Table 4) and how jobs map to them."""

    classes: dict[str, ClassFit]
    rule: ClassRule = field(default_factory=ClassRule)
    trim: float = 0.1
    meta: dict[str, Any] = field(default_factory=dict)
    merged: tuple[str, ...] = ()  # classes too small to fit alone, merged into ``other``

    def labels(self, jobs: pd.DataFrame, header: Any = None) -> np.ndarray:
        """The class name of every job under this model's rule (small classes as ``other``)."""
        labels = self.rule.assign(jobs, header)
        if self.merged:
            labels = np.where(np.isin(labels.astype(str), list(self.merged)), OTHER, labels)
        return labels

    def params_of(
        self, labels: Sequence[str] | np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(beta0, beta1, t_last)`` per job from its class name; unknown classes use ``all``."""
        fallback = self.classes[ALL]
        labels = np.asarray(labels, dtype=object)
        b0 = np.full(len(labels), fallback.beta0)
        b1 = np.full(len(labels), fallback.beta1)
        last = np.full(len(labels), fallback.t_last)
        for name, c in self.classes.items():
            if name == ALL:
                continue
            sel = labels == name
            b0[sel] = c.beta0
            b1[sel] = c.beta1
            last[sel] = c.t_last
        return b0, b1, last

    def table(self) -> pd.DataFrame:
        """One row per class: jobs, beta0, beta1, R^2, t_min, t_max and the model median (seconds)."""
        rows = [
            {
                "class": c.name,
                "jobs": c.jobs,
                "beta0": c.beta0,
                "beta1": c.beta1,
                "r2": c.r2,
                "t_min": c.t_min,
                "t_max": c.t_max,
                "median": c.median,
                "t_last": c.t_last,
            }
            for c in self.classes.values()
        ]
        return pd.DataFrame(rows)

    def to_toml(self) -> str:
        """The fitted model as TOML (``o2ksim predict --fit FILE`` reads it back)."""
        lines = [
            "# Downey conditional lifetime model (D§3): cdf(t) = beta0 + beta1 ln t per class",
            "# written by o2ksim predict; read with --fit FILE",
            f"rule = {_toml_str(self.rule.text)}",
            f"sequential_class = {str(self.rule.sequential).lower()}",
            f"trim = {self.trim!r}",
            "merged = [" + ", ".join(_toml_str(m) for m in self.merged) + "]",
        ]
        for k, v in self.meta.items():
            if isinstance(v, str):
                lines.append(f"{k} = {_toml_str(v)}")
            elif isinstance(v, bool):
                lines.append(f"{k} = {str(v).lower()}")
            elif isinstance(v, int | float):
                lines.append(f"{k} = {v!r}")
        for c in self.classes.values():
            lines += [
                "",
                "[[class]]",
                f"name = {_toml_str(c.name)}",
                f"beta0 = {c.beta0!r}",
                f"beta1 = {c.beta1!r}",
                f"r2 = {c.r2!r}",
                f"jobs = {c.jobs}",
                *([f"t_last = {c.t_last!r}"] if math.isfinite(c.t_last) else []),
                f"# t_min {c.t_min:.1f} s, t_max {c.t_max:.0f} s, median {c.median:.0f} s",
            ]
        return "\n".join(lines) + "\n"

    def save(self, path: str | os.PathLike[str]) -> Path:
        p = Path(path)
        try:
            p.write_text(self.to_toml())
        except OSError as exc:
            raise O2KSimError(f"{p}: cannot write: {exc.strerror or exc}") from None
        return p


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def load_clm(path: str | os.PathLike[str]) -> CLM:
    """Read a CLM written by :meth:`CLM.save` (or by hand: ``[[class]]`` with name, beta0, beta1)."""
    p = Path(path)
    _, data = read_toml(p, "fitted model file")
    classes: dict[str, ClassFit] = {}
    raw = data.get("class")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(p, "needs at least one [[class]] table", field="class")
    for i, c in enumerate(raw):
        where = f"class[{i}]"
        if not isinstance(c, dict):
            raise ConfigError(p, "must be a table", field=where)
        name = c.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(p, "needs a name", field=f"{where}.name")
        vals = {}
        for key in ("beta0", "beta1"):
            v = c.get(key)
            if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
                raise ConfigError(p, f"must be a number, got {v!r}", field=f"{where}.{key}")
            vals[key] = float(v)
        if vals["beta1"] <= 0:
            raise ConfigError(p, f"must be positive, got {vals['beta1']}", field=f"{where}.beta1")
        if vals["beta0"] >= 1:
            raise ConfigError(p, f"must be below 1, got {vals['beta0']}", field=f"{where}.beta0")
        last = c.get("t_last", float("inf"))
        if not isinstance(last, int | float) or isinstance(last, bool) or not last > 0:
            raise ConfigError(
                p, f"must be a positive number, got {last!r}", field=f"{where}.t_last"
            )
        classes[name] = ClassFit(
            name,
            vals["beta0"],
            vals["beta1"],
            float(c.get("r2", float("nan"))),
            int(c.get("jobs", 0)),
            float(last),
        )
    if ALL not in classes:
        raise ConfigError(
            p, f"needs a class named {ALL!r} (used for jobs of unknown classes)", field="class"
        )
    rule = parse_class_rule(
        str(data.get("rule", "queue")), sequential=bool(data.get("sequential_class", True))
    )
    merged = data.get("merged", [])
    if not isinstance(merged, list) or not all(isinstance(m, str) for m in merged):
        raise ConfigError(p, "must be a list of class names", field="merged")
    meta = {
        k: v
        for k, v in data.items()
        if k not in ("class", "rule", "sequential_class", "trim", "merged")
    }
    return CLM(classes, rule, float(data.get("trim", 0.1)), meta, tuple(merged))


def fit_clm(
    jobs: pd.DataFrame,
    header: Any = None,
    *,
    rule: str | ClassRule | None = "queue",
    sequential: bool = True,
    partition: int | str | None = None,
    window: tuple[float, float] | None = None,
    trim: float = 0.1,
    min_class_jobs: int = 20,
    source: str = "the trace",
) -> CLM:
    """Fit the CLM (D§3, §3.1) to the jobs of a partition submitted in a window.

    Jobs without a positive run time are left out.  Classes with fewer than
    ``min_class_jobs`` jobs are merged into ``other``; a class whose middle
    80 % cannot be fitted is dropped (its jobs use ``all`` in predictions).
    """
    cr = parse_class_rule(rule, sequential=sequential)
    sel = select_jobs(jobs, header, partition=partition, window=window, source=source)
    run = sel["run_time"].to_numpy(dtype=float)
    ok = run > 0
    if ok.sum() < 10:
        where = "" if window is None else (
            f" submitted in [{format_duration(window[0])}, {format_duration(window[1])}) after the trace start"
        )  # durations, not 9.8612e+06 s
        raise O2KSimError(
            f"{source}: only {int(ok.sum())} job(s){where} with a positive run time to fit "
            "(need at least 10)"
        )
    labels = cr.assign(sel, header)
    names, counts = np.unique(labels[ok].astype(str), return_counts=True)
    small = [n for n, c in zip(names, counts, strict=True) if c < min_class_jobs]
    if small:
        labels = np.where(np.isin(labels.astype(str), small), OTHER, labels)
    classes: dict[str, ClassFit] = {ALL: fit_class(run[ok], trim=trim, name=ALL)}
    order = sorted(set(labels[ok].astype(str)), key=lambda s: (s != SEQUENTIAL, s))
    for name in order:
        x = run[ok & (labels == name)]
        try:
            classes[name] = fit_class(x, trim=trim, name=name)
        except O2KSimError:
            continue
    meta: dict[str, Any] = {"jobs": int(ok.sum()), "source": source}
    if partition is not None:
        meta["partition"] = str(partition)
    if window is not None:
        meta["window_start"], meta["window_end"] = float(window[0]), float(window[1])
    return CLM(classes, cr, trim, meta, tuple(small))


def median_table(
    jobs: pd.DataFrame,
    header: Any,
    periods: Iterable[tuple[str, float, float]],
    **fit_options: Any,
) -> pd.DataFrame:
    """Model medians per class and period (D Table 5): rows classes, columns period labels."""
    cols: dict[str, dict[str, float]] = {}
    for label, start, end in periods:
        clm = fit_clm(jobs, header, window=(start, end), **fit_options)
        cols[label] = {name: c.median for name, c in clm.classes.items()}
    df = pd.DataFrame(cols)
    order = [n for n in df.index if n != ALL] + ([ALL] if ALL in df.index else [])
    return df.loc[order]


def describe_params(params: Mapping[str, ClassFit]) -> str:
    """The classes' ``(beta0, beta1)`` in one line, e.g. ``all (0.10, 0.123), short (...)``."""
    return ", ".join(f"{n} ({c.beta0:.2f}, {c.beta1:.3f})" for n, c in params.items())
