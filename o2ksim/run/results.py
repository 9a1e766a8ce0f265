"""What one run produced: :class:`Result`, its tables, its one-line views and its files.

:func:`result_columns` turns the finished engine's jobs into the per-job
table (numpy columns; :func:`result_table` as a DataFrame);
:class:`Result` holds it with the allocation segments, the overall measures
and the configuration, prints itself (:func:`result_text`, and
:func:`result_html` in Jupyter) and writes ``jobs.csv``, ``summary.json`` and
``run.json`` (:meth:`Result.save`, with :func:`write_json` and
:func:`versions`, which sweeps use for their own files too).
"""

from __future__ import annotations

import html
import importlib.metadata
import json
import math
import os
import platform
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import simpy

from o2ksim import __version__
from o2ksim.engine.contract import PolicyProtocol
from o2ksim.engine.core import RunStats
from o2ksim.engine.monitor import job_columns
from o2ksim.errors import O2KSimError
from o2ksim.jobs import Job
from o2ksim.machine import MachineSpec
from o2ksim.outfiles import TMP_SUFFIX, Staging, claim
from o2ksim.partitioning import allocation_arrays
from o2ksim.policies import Policy
from o2ksim.table import ColumnTable, with_text_markers, write_csv
from o2ksim.units import format_duration
from o2ksim.validation import check_flags

if TYPE_CHECKING:  # pandas is imported when a DataFrame is asked for (Result.jobs, .segments)
    import pandas as pd


class Result:
    """What one run produced, with the configuration that produced it.

    ``jobs`` (one row per job) and ``segments`` (one row per allocation
    interval) are DataFrames, built from the run's numpy columns on first
    access and then kept; :attr:`job_table` and :attr:`segment_table` give
    the same tables without building them (what ``o2ksim run`` writes and
    summarises, so that a run never imports pandas unless asked to).
    """

    def __init__(
        self,
        jobs: pd.DataFrame | ColumnTable,
        summary: dict[str, Any],
        segments: pd.DataFrame | ColumnTable,
        stats: RunStats,
        machine: MachineSpec,
        policy: dict[str, Any],
        config: dict[str, Any] | None = None,
        counters: Mapping[str, int] | None = None,
    ) -> None:
        self._jobs = jobs
        self.summary = summary
        self._segments = segments
        self.stats = stats
        self.machine = machine
        self.policy = policy
        self.config = {} if config is None else config
        #: the policy's own counters (``Policy.summary_counts``), also among ``summary``'s entries
        self.counters: dict[str, int] = dict(counters or {})
        #: the configuration as :meth:`RunConfig.to_dict <o2ksim.run.config.RunConfig.to_dict>`
        #: wrote it (trace paths absolute), stored in ``run.json`` as ``replay`` so that the run
        #: can be simulated again (``o2ksim play DIR``); ``None`` for a workload or policy held
        #: in memory, which has no such form
        self.replay: dict[str, Any] | None = None
        #: whether the run's random generator (``np.random.default_rng(seed)``, bound to the
        #: policy) was drawn from, seen by its ``bit_generator.state`` changing; ``None``: not
        #: known (a result read back from files).  Not stored: the seed's use is said on screen
        self.random_draws: bool | None = None
        #: the workload the engine was given when :func:`~o2ksim.run.api.run_config` built it
        #: from a recipe (a :class:`~o2ksim.workloads.swf.Trace`): a generated month with the
        #: cool-down tail it needed (T§3.4), whose jobs ``o2ksim run --check`` expects in the
        #: output; ``None`` otherwise.  Not stored: ``replay`` rebuilds it
        self.simulated: Any = None
        #: the trace header's ``UnixStartTime`` (``None``: none, or not a trace), to read the
        #: run's times against (:func:`o2ksim.availability.unused_periods_note`).  Not stored
        self.unix_start: int | None = None

    @property
    def jobs(self) -> pd.DataFrame:
        """The per-job table (see :func:`result_table`), a DataFrame."""
        if isinstance(self._jobs, ColumnTable):
            self._jobs = self._jobs.to_frame()
        return self._jobs

    @jobs.setter
    def jobs(self, frame: pd.DataFrame) -> None:
        self._jobs = frame

    @property
    def segments(self) -> pd.DataFrame:
        """The allocation segments (see :meth:`~o2ksim.engine.monitor.Monitor.segments`), a DataFrame."""
        if isinstance(self._segments, ColumnTable):
            self._segments = self._segments.to_frame()
        return self._segments

    @segments.setter
    def segments(self, frame: pd.DataFrame) -> None:
        self._segments = frame

    @property
    def job_table(self) -> pd.DataFrame | ColumnTable:
        """:attr:`jobs` as it is held: the DataFrame once built, else its numpy columns."""
        return self._jobs

    @property
    def segment_table(self) -> pd.DataFrame | ColumnTable:
        """:attr:`segments` as they are held: the DataFrame once built, else numpy columns."""
        return self._segments

    def __repr__(self) -> str:
        return result_text(self)

    def _repr_html_(self) -> str:
        return result_html(self)

    def save(
        self, out_dir: str | os.PathLike[str], *, parquet: bool = False, segments: bool = False
    ) -> Path:
        """Write ``jobs.csv`` (or ``.parquet``), ``summary.json`` and ``run.json`` (and
        ``segments.csv`` with ``segments=True``) into ``out_dir``; see :meth:`save_run`."""
        return self.save_run(out_dir, parquet=parquet, segments=segments).out

    def save_run(
        self,
        out_dir: str | os.PathLike[str],
        *,
        parquet: bool = False,
        segments: bool = False,
        extra: Callable[[Staging], object] | None = None,
        kind: str = "run",
    ) -> Staging:
        """:meth:`save`, safely: the folder is claimed (one writer at a time), every file is
        written under a temporary name and the set is committed together, replacing every
        file of an earlier run in that folder (:mod:`o2ksim.outfiles`).

        A failed write (a full disk) or an interrupt leaves the folder as it was.
        ``extra(staging)`` may stage more files to commit with these (``o2ksim run
        --report`` stages its report).  Returns the committed
        :class:`~o2ksim.outfiles.Staging`, whose ``replaced`` names the earlier
        run's files that were replaced or removed.  ``kind``: the result's kind
        (``"validation"``: ``o2ksim validate`` stages its own files with the run's), whose
        family the commit replaces; a folder holding another kind's result is refused
        (:func:`o2ksim.outkinds.refuse_another_result`).
        """
        check_flags("Result.save", parquet=parquet, segments=segments)
        with claim(out_dir, option="", kind=kind) as out, Staging.of(out, kind) as staged:
            try:
                self._write(staged, parquet, segments)
                if extra is not None:
                    extra(staged)
                staged.commit()
            except OSError as exc:
                raise O2KSimError(
                    f"{out}: cannot write the results ({exc.strerror or exc}); "
                    "nothing new was written there"
                ) from None
        return staged

    def _write(self, staged: Staging, parquet: bool, segments: bool) -> None:
        if parquet:
            self.jobs.to_parquet(staged.path("jobs.parquet"), index=False)
        else:
            # text columns without a value get '-', not an empty cell (table.NO_VALUE: no DtypeWarning)
            write_csv(with_text_markers(self._jobs), staged.path("jobs.csv"))  # no pandas for a ColumnTable
        if segments:
            write_csv(self._segments, staged.path("segments.csv"))
        write_json(staged.path("summary.json"), self.summary)
        write_json(
            staged.path("run.json"),
            {
                "config": self.config,
                **({"replay": self.replay} if self.replay is not None else {}),
                "policy": self.policy,
                "machine": self.machine.describe(),
                "stats": {
                    "passes": self.stats.passes,
                    "decisions": self.stats.decisions,
                    "wall_seconds": round(self.stats.wall_seconds, 3),
                    "simulated_until": self.stats.sim_end,
                    "stalled": self.stats.stalled,
                    **self.stats.extra,
                },
                "files": sorted(staged.files),
                "versions": versions(),
            },
        )


def versions() -> dict[str, str]:
    """Versions of o2ksim and the libraries a result depends on (pandas's from its
    installed metadata when the run has not imported it)."""
    return {
        "o2ksim": __version__,
        "python": platform.python_version(),
        "simpy": simpy.__version__ if hasattr(simpy, "__version__") else "?",
        "numpy": np.__version__,
        "pandas": _pandas_version(),
    }


def _pandas_version() -> str:
    pd = sys.modules.get("pandas")
    if pd is not None:
        return pd.__version__
    try:
        return importlib.metadata.version("pandas")
    except importlib.metadata.PackageNotFoundError:
        return "?"


#: What ``json.dumps`` writes for an infinity (outside strings), and what it becomes.
_INFINITY = re.compile(r'("(?:[^"\\]|\\.)*")|(-?)Infinity')


def json_text(data: Any, indent: int | None = 2) -> str:
    """``data`` as JSON text, as :func:`write_json` writes it: infinities as ``1e999`` and
    ``-1e999`` (read back as infinities), NaN as ``null``, numpy scalars as plain numbers."""

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [clean(x) for x in v]
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, float) and math.isnan(v):
            return None
        return v

    text = json.dumps(clean(data), indent=indent)  # an infinity: the bare token Infinity
    return _INFINITY.sub(lambda m: m.group(1) or f"{m.group(2)}1e999", text) + "\n"


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON, numpy scalars as plain numbers: how ``summary.json``,
    ``run.json`` and a sweep's files are written.

    JSON has no infinity.  An infinity is written ``1e999`` (``-1e999``), a number
    every JSON reader accepts and reads back as infinity (Python's ``json``,
    JavaScript's ``JSON.parse``; SQLite's JSON functions write ``9e999`` for the
    same reason), so that a configuration with ``eligible_after = inf`` replays as
    it ran; a ``null`` would read back as "not set" (:func:`json_text`).  NaN, an
    undefined measure (the mean wait of no job), is ``null``.

    Atomic: written under a temporary name in the same folder, flushed to disk,
    then renamed over ``path``, so a reader never sees half a file."""

    text = json_text(data)
    if path.name.endswith(TMP_SUFFIX):  # staged by Result.save: renamed into place with the others
        path.write_text(text)
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")  # whole or not at all
    try:
        with open(tmp, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def result_table(
    jobs: list[Job], segments: pd.DataFrame | ColumnTable, analysed: np.ndarray | None = None
) -> pd.DataFrame:
    """The run's per-job table: the monitor's columns, ``analysed`` (with a window),
    ``proc_seconds`` and ``mean_procs``; one row per job, by submit time then id.

    Built from whole numpy columns (:func:`result_columns`) and turned into a DataFrame once.
    """
    return result_columns(jobs, segments, analysed).to_frame()


def result_columns(
    jobs: list[Job], segments: pd.DataFrame | ColumnTable, analysed: np.ndarray | None = None
) -> ColumnTable:
    """The columns of :func:`result_table`, without pandas."""
    columns = job_columns(jobs)
    order = np.lexsort((columns["job_id"], columns["submit"]))
    for name, values in columns.items():  # one column at a time: one extra copy at most
        columns[name] = values[order]
    if analysed is not None:
        columns["analysed"] = np.isin(columns["job_id"], analysed)
    columns["proc_seconds"], columns["mean_procs"] = allocation_arrays(
        columns["job_id"],
        columns["start"],
        columns["end"],
        columns["procs"],
        columns["status"] == "completed",
        segments,
    )
    return ColumnTable(columns, len(jobs))


def describe_policy(policy: PolicyProtocol) -> dict[str, Any]:
    """The policy's configuration for ``run.json``: ``describe()`` of a :class:`Policy`, else its name."""
    if isinstance(policy, Policy):
        return policy.describe()
    return {"name": policy.name}


# ------------------------------------------------------------------------------ views
def result_label(result: Any) -> str:
    """The name a result goes by: its scenario label, or the policy and its parameters."""
    label = result.config.get("label")
    return str(label) if label else str(result.policy.get("name", "?"))


def _summary_items(result: Any) -> list[tuple[str, str]]:
    s, c = result.summary, result.config
    params = {k: v for k, v in result.policy.items() if k not in ("name", "kind")}

    def dur(key: str) -> str:
        v = s.get(key)
        return "–" if v is None or v != v else format_duration(float(v))

    def num(key: str, fmt: str = ".3g") -> str:
        v = s.get(key)
        return "–" if v is None or v != v else format(float(v), fmt)

    counts = ", ".join(
        f"{s[k]} {k}" for k in ("completed", "killed", "rejected", "unfinished") if s.get(k)
    )
    items = [
        ("policy", result_label(result)
         + (" (" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else "")),
        ("machine", result.machine.describe()),
        ("workload", str(c.get("workload", "?"))
         + (f", estimates {c['estimates']}" if c.get("estimates") not in (None, "requested") else "")),
        ("jobs", f"{s.get('jobs', '?')} analysed" + (f" ({counts})" if counts else "")),
        ("wait", f"mean {dur('mean_wait')}, 95th {dur('p95_wait')}, max {dur('max_wait')}"),
        ("slowdown", f"mean {num('mean_slowdown')}, bounded {num('mean_bounded_slowdown')}"),
        ("utilisation", num("utilisation", ".3f") + (
            f" (of the capacity up: {num('utilisation_up', '.3f')})" if "utilisation_up" in s else "")),
    ]  # fmt: skip
    win = c.get("window")
    if win:
        items.insert(3, ("window", f"[{format_duration(win[0])}, {format_duration(win[1])}), "
                         f"{format_duration(win[2])} warm-up"))  # fmt: skip
    return items


def result_text(result: Any) -> str:
    """A compact multi-line summary of a result (its ``repr``)."""
    lines = [f"<o2ksim Result: {result_label(result)}, {result.summary.get('jobs', '?')} jobs>"]
    lines += [f"  {k:<12}{v}" for k, v in _summary_items(result)]
    lines.append("  (tables: .jobs, .segments, .summary; compare([...]) for views)")
    return "\n".join(lines)


def result_html(result: Any) -> str:
    """The same summary as a small HTML table (Jupyter's rich display)."""
    rows = "".join(
        f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
        f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
        for k, v in _summary_items(result)
    )
    return (
        f"<div><b>o2ksim Result</b>: {html.escape(result_label(result))}"
        f"<table>{rows}</table><small>.jobs, .segments, .summary</small></div>"
    )


__all__ = [
    "Result",
    "describe_policy",
    "json_text",
    "result_columns",
    "result_html",
    "result_label",
    "result_table",
    "result_text",
    "versions",
    "write_json",
]
