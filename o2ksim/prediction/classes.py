"""The job classes of Downey's model (D§3.1): which class each job belongs to.

The CLM is fitted per class.  Classes come from the queue name (SWF field 15,
named by the header's ``Queue:`` lines) through a grouping rule
(:class:`ClassRule`: one class per queue, glob patterns on queue names, bounds
on the requested time, or one class), with the one-processor jobs a class of
their own (D Table 1).  The paper fits one partition (SWF field 16), which
:func:`select_jobs` picks out together with a submit window.  Kept apart from
the model's algebra (:mod:`~o2ksim.prediction.model`) because it is about the
trace's bookkeeping, not about lifetimes.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.workloads.transforms import parse_duration

__all__ = [
    "ALL",
    "OTHER",
    "PRESET_RULES",
    "SEQUENTIAL",
    "ClassRule",
    "class_rule_help",
    "job_procs",
    "parse_class_rule",
    "partition_number",
    "partition_size",
    "queue_names",
    "select_jobs",
]

ALL = "all"
SEQUENTIAL = "sequential"
OTHER = "other"


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
    """Seconds of a duration such as ``3600``, ``1h`` or ``90m`` (a class rule's bounds)."""
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


def class_rule_help() -> str:
    """The class rules' text forms, for command-line help."""
    presets = "; ".join(f"{k} = {v}" for k, v in PRESET_RULES.items())
    return (
        "queue (one class per queue name, field 15), none, reqtime:B1,B2 (by requested time), "
        f"NAME=GLOB,GLOB;NAME=GLOB (first match wins), or a preset ({presets})"
    )
