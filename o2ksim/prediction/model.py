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
"""

from __future__ import annotations

import fnmatch
import math
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError

__all__ = [
    "CLM",
    "ClassFit",
    "ClassRule",
    "conditional_cdf",
    "conditional_mean",
    "conditional_median",
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

ALL = "all"
SEQUENTIAL = "sequential"
OTHER = "other"


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
# classes: queue names, grouping rules, partitions
# ============================================================================


def queue_names(header: Any) -> dict[int, str]:
    """Queue numbers (SWF field 15) to names from the header's ``Queue:`` lines.

    o2ksim's own generators list them as ``Queues: ...: 1 sequential, 2 short``;
    both forms are read.
    """
    names: dict[int, str] = {}
    queues = getattr(header, "queues", None)
    if queues:
        for num, name in re.findall(r"(\d+)\s+([A-Za-z_][\w-]*)", str(queues).split(":", 1)[-1]):
            names[int(num)] = name
    for key, value in (getattr(header, "extra", {}) or {}).items():
        if key.lower() != "queue":
            continue
        for line in str(value).splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0].lstrip("-").isdigit():
                names[int(parts[0])] = parts[1]
    return names


def _partition_names(header: Any) -> dict[int, str]:
    names: dict[int, str] = {}
    for key, value in (getattr(header, "extra", {}) or {}).items():
        if key.lower() != "partition":
            continue
        for line in str(value).splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0].lstrip("-").isdigit():
                names[int(parts[0])] = parts[1]
    return names


def partition_number(header: Any, partition: int | str, source: str = "the trace") -> int:
    """The SWF partition number (field 16) of a number or a name listed in the header."""
    if isinstance(partition, int) or str(partition).lstrip("-").isdigit():
        return int(partition)
    names = _partition_names(header)
    for num, name in names.items():
        if name.lower() == str(partition).lower():
            return num
    known = ", ".join(f"{k} {v}" for k, v in sorted(names.items())) or "none"
    raise O2KSimError(
        f"{source}: no partition named {partition!r} in the header (Partition: lines: {known})"
    )


def partition_size(header: Any, partition: int | str | None) -> int | None:
    """Processors of a partition when the header says so.

    The PWA's SDSC Paragon logs write ``MaxNodes: 400 (48 interactive, 352
    batch, ...)``; this returns 352 for the batch partition.  ``None`` when the
    header does not name the partition's size.
    """
    if partition is None:
        return None
    name = str(partition)
    if name.lstrip("-").isdigit():
        name = _partition_names(header).get(int(name), "")
    if not name:
        return None
    text = " ".join(
        str(v)
        for k, v in (getattr(header, "extra", {}) or {}).items()
        if k.lower() in ("maxnodes", "maxprocs")
    )
    m = re.search(rf"(\d+)\s+{re.escape(name)}\b", text, flags=re.IGNORECASE)
    return int(m.group(1)) if m else None


#: Named grouping rules.  ``sdsc-paragon`` is D§3.1's grouping of the SDSC
#: NQS queues: ``q<N>s`` short, ``q<N>m`` medium, ``q<N>l`` long, the sequential
#: queues ``q1l``/``q1ll`` with the one-processor jobs, the standby queues
#: (not in D Table 1; they hold about half of the 1996 batch jobs) a class of
#: their own.
PRESET_RULES: dict[str, str] = {
    "sdsc-paragon": "sequential=q1l,q1ll; short=q*s,qf*s,q4t; medium=q*m,qf*m; "
    "long=q*l,qf*l; standby=standby,fstandby",
}


@dataclass(frozen=True)
class ClassRule:
    """How jobs are grouped into classes (D§3.1).

    ``kind``:

    * ``queue`` -- each queue name (field 15, named by the header) is a class;
    * ``none`` -- all jobs one class;
    * ``patterns`` -- ``NAME=GLOB,GLOB; NAME=GLOB`` on queue names, first match
      wins, unmatched queues go to ``other``;
    * ``reqtime`` -- by requested time (field 9) for traces without queues:
      ``reqtime:3600,14400`` gives short (<= 1 h), medium (<= 4 h), long.

    With ``sequential`` the one-processor jobs form the class ``sequential``
    whatever their queue (D Table 1).
    """

    kind: str = "queue"
    patterns: tuple[tuple[str, tuple[str, ...]], ...] = ()
    bounds: tuple[float, ...] = ()
    sequential: bool = True
    text: str = "queue"

    def assign(self, jobs: pd.DataFrame, header: Any = None) -> np.ndarray:
        """The class name of every job of ``jobs`` (SWF columns, ``procs`` or req/alloc processors)."""
        n = len(jobs)
        if self.kind == "none":
            labels = np.full(n, ALL, dtype=object)
        elif self.kind == "reqtime":
            req = jobs["req_time"].to_numpy(dtype=float)
            names = _reqtime_names(len(self.bounds))
            idx = np.searchsorted(np.asarray(self.bounds), req, side="left")
            labels = np.array(names, dtype=object)[idx]
            labels[req < 0] = OTHER
        else:
            qnames = queue_names(header)
            queue = jobs["queue"].to_numpy()
            uniq = np.unique(queue)
            mapping = {}
            for q in uniq:
                qn = qnames.get(int(q), f"queue{int(q)}") if q >= 0 else "unknown"
                mapping[q] = qn if self.kind == "queue" else self._match(qn)
            labels = (
                np.array([mapping[q] for q in queue], dtype=object)
                if n
                else np.empty(0, dtype=object)
            )
        if self.sequential:
            labels = np.where(job_procs(jobs) == 1, SEQUENTIAL, labels)
        return labels

    def _match(self, queue_name: str) -> str:
        for name, globs in self.patterns:
            if any(fnmatch.fnmatchcase(queue_name, g) for g in globs):
                return name
        return OTHER


def _reqtime_names(k: int) -> list[str]:
    if k == 1:
        return ["short", "long"]
    if k == 2:
        return ["short", "medium", "long"]
    return [f"reqtime{i + 1}" for i in range(k + 1)]


def parse_class_rule(text: str | ClassRule | None, *, sequential: bool = True) -> ClassRule:
    """A :class:`ClassRule` from its text form (see the class) or a preset name."""
    if isinstance(text, ClassRule):
        return text
    raw = (text or "queue").strip()
    spec = PRESET_RULES.get(raw, raw)
    if spec in ("queue", "none"):
        return ClassRule(kind=spec, sequential=sequential, text=raw)
    if spec.startswith("reqtime:"):
        try:
            bounds = tuple(
                float(parse_seconds(b)) for b in spec.split(":", 1)[1].split(",") if b.strip()
            )
        except O2KSimError:
            bounds = ()
        if not bounds or any(b <= 0 for b in bounds) or list(bounds) != sorted(bounds):
            raise O2KSimError(
                f"class rule {raw!r}: reqtime needs increasing positive bounds, e.g. reqtime:3600,14400"
            )
        return ClassRule(kind="reqtime", bounds=bounds, sequential=sequential, text=raw)
    groups = []
    for part in spec.split(";"):
        if not part.strip():
            continue
        name, eq, globs = part.partition("=")
        gl = tuple(g.strip() for g in globs.split(",") if g.strip())
        if not eq or not name.strip() or not gl:
            presets = ", ".join(PRESET_RULES)
            raise O2KSimError(
                f"class rule {raw!r}: {part.strip()!r} is not NAME=GLOB[,GLOB] "
                f"(rules: queue, none, reqtime:B1,B2, NAME=GLOBS;..., or a preset: {presets})"
            )
        groups.append((name.strip(), gl))
    return ClassRule(kind="patterns", patterns=tuple(groups), sequential=sequential, text=raw)


def parse_seconds(text: str) -> float:
    from o2ksim.workloads.transforms import parse_duration

    return parse_duration(text.strip())


def job_procs(jobs: pd.DataFrame) -> np.ndarray:
    """Processors of each job: ``procs`` if present, else requested (field 8) falling back to allocated (field 5)."""
    if "procs" in jobs:
        return jobs["procs"].to_numpy()
    req = jobs["req_procs"].to_numpy()
    return np.where(req > 0, req, jobs["alloc_procs"].to_numpy())


def select_jobs(
    jobs: pd.DataFrame,
    header: Any = None,
    *,
    partition: int | str | None = None,
    window: tuple[float, float] | None = None,
    source: str = "the trace",
) -> pd.DataFrame:
    """The jobs of one partition (field 16) submitted in ``[start, end)`` (trace seconds)."""
    keep = np.ones(len(jobs), dtype=bool)
    if partition is not None:
        num = partition_number(header, partition, source)
        keep &= jobs["partition"].to_numpy() == num
        if not keep.any():
            raise O2KSimError(f"{source}: no job in partition {partition} (SWF field 16)")
    if window is not None:
        sub = jobs["submit"].to_numpy()
        keep &= (sub >= window[0]) & (sub < window[1])
    return jobs.loc[keep].reset_index(drop=True)


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
    from o2ksim.errors import ConfigError

    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except OSError as exc:
        raise O2KSimError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(p, f"not valid TOML: {exc}") from None
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
        where = "" if window is None else f" submitted in [{window[0]:g}, {window[1]:g}) s"
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


def class_rule_help() -> str:
    presets = "; ".join(f"{k} = {v}" for k, v in PRESET_RULES.items())
    return (
        "queue (one class per queue name, field 15), none, reqtime:B1,B2 (by requested time), "
        f"NAME=GLOB,GLOB;NAME=GLOB (first match wins), or a preset ({presets})"
    )


def describe_params(params: Mapping[str, ClassFit]) -> str:
    return ", ".join(f"{n} ({c.beta0:.2f}, {c.beta1:.3f})" for n, c in params.items())
