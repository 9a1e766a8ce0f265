"""A sweep's results directory: each run's workspace written atomically, and read back.

Layout (one *workspace* per run, desmod style)::

    RESULTS/
      scenario.toml          the scenario text the sweep ran
      plan.json              every planned run: run_id, factor levels, configuration
      summary.parquet        one row per planned run (also summary.csv)
      runs/<run_id>/
        config.json          the run's configuration and factor levels
        summary.json         status ("ok" | "failed"), measures, wall time, versions
        jobs.parquet         per-job table (``Result.jobs``)
        segments.parquet     allocation segments (for utilisation plots and Gantt charts)
        error.txt            the traceback, when the run failed

:func:`store_outcome` writes a workspace into a temporary directory and
renames it into place, so a run directory with a ``summary.json`` is always
complete; :func:`load_results` reads a directory back as :class:`Results`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from o2ksim.errors import O2KSimError
from o2ksim.experiments.scenario import RunSpec, Scenario
from o2ksim.experiments.sweep_lock import LOCK_FILE, locked_elsewhere
from o2ksim.experiments.workers import COUNTS, METRICS, RunOutcome
from o2ksim.files import atomic_path, write_atomically
from o2ksim.run.results import versions, write_json
from o2ksim.validation import check_path


# ------------------------------------------------------------------------------ writing
def run_dir(out_dir: Path, run_id: str) -> Path:
    """The workspace of run ``run_id``: ``OUT/runs/<run_id>``."""
    return Path(out_dir) / "runs" / run_id


def is_finished(out_dir: Path, run: RunSpec, *, count_failed: bool = False) -> bool:
    """Whether ``run`` already has a complete, verified workspace (``ok``; or ``failed`` if counted)."""
    status = read_status(out_dir, run.run_id, verify=True)
    return status == "ok" or (count_failed and status == "failed")


def read_status(out_dir: Path, run_id: str, *, verify: bool = False) -> str | None:
    """``ok``/``failed`` for a stored run, ``None`` when it has not finished.

    With ``verify``, an ``ok`` run whose stored tables do not match the sizes
    and SHA-256 digests recorded in its ``summary.json`` (or, for results
    written before digests were recorded, whose ``jobs.parquet`` cannot be
    read) is ``"corrupt"``: it does not count as finished and is run again.
    """
    p = run_dir(out_dir, run_id) / "summary.json"
    try:
        stored = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    status = stored.get("status") if isinstance(stored, dict) else None
    if verify and status == "ok" and not _verified(p.parent, stored):
        return "corrupt"
    return status


def _digest(path: Path) -> dict[str, Any]:
    """Size and SHA-256 of a stored file (recorded when the run is stored)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return {"bytes": path.stat().st_size, "sha256": h.hexdigest()}


def _verified(workspace: Path, stored: dict[str, Any]) -> bool:
    """Whether a stored run's tables are the ones its ``summary.json`` recorded."""
    files = stored.get("files")
    if isinstance(files, dict) and files:
        for name, want in files.items():
            p = workspace / name
            try:
                if p.stat().st_size != want.get("bytes") or _digest(p) != want:
                    return False
            except (OSError, AttributeError):
                return False
        return True
    try:  # results stored before digests were recorded: the table must at least be readable
        pq.read_metadata(workspace / "jobs.parquet")
    except Exception:
        return False
    return True


def store_outcome(out_dir: Path, run: RunSpec, outcome: RunOutcome) -> Path:
    """Write one run's workspace atomically (temporary directory, then rename)."""
    runs = Path(out_dir) / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    tmp = runs / f".tmp-{run.run_id}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        return _fill_workspace(tmp, runs / run.run_id, run, outcome)
    except BaseException:  # a full disk, an interrupt: no half workspace left behind
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _fill_workspace(tmp: Path, final: Path, run: RunSpec, outcome: RunOutcome) -> Path:
    write_json(tmp / "config.json", run.to_dict())
    if outcome.jobs is not None:
        outcome.jobs.to_parquet(tmp / "jobs.parquet", index=False)
    if outcome.segments is not None:
        outcome.segments.to_parquet(tmp / "segments.parquet", index=False)
    if outcome.error:
        (tmp / "error.txt").write_text(outcome.error)
    files = {
        name: _digest(tmp / name)
        for name in ("jobs.parquet", "segments.parquet")
        if (tmp / name).exists()
    }
    write_json(
        tmp / "summary.json",
        {
            "run_id": run.run_id,
            "status": outcome.status,
            "files": files,
            "factors": run.factors,
            "summary": outcome.summary,
            "wall_seconds": round(outcome.wall_seconds, 3),
            "error": outcome.error.strip().splitlines()[-1] if outcome.error.strip() else "",
            "info": outcome.info,
            "versions": versions(),
        },
    )
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


def clean_partial(out_dir: Path) -> None:
    """Remove temporary workspaces a killed sweep left behind."""
    runs = Path(out_dir) / "runs"
    if runs.is_dir():
        for p in runs.glob(".tmp-*"):
            shutil.rmtree(p, ignore_errors=True)


def earlier_scenario(out_dir: Path, scenario: Scenario) -> None:
    """Refuse a results directory that holds another scenario's results (``plan.json`` names
    it): the new plan would replace its plan, and its runs would stay under ``runs/``,
    left out of every table in silence."""
    plan_path = Path(out_dir) / "plan.json"
    try:
        earlier = json.loads(plan_path.read_text()).get("scenario")
    except (OSError, ValueError, AttributeError):
        return  # none, or unreadable: the sweep writes its own
    if earlier is not None and earlier != scenario.name:
        raise O2KSimError(
            f"{out_dir}: holds the results of scenario '{earlier}' (plan.json); this is "
            f"scenario '{scenario.name}': give another --out, or remove the folder to start again"
        )


def runs_outside(out_dir: Path, runs: Sequence[RunSpec]) -> list[str]:
    """The run folders stored in ``out_dir`` that ``runs`` does not plan (an earlier plan's:
    a policy or seed dropped from the scenario); the summary and report leave them out."""
    root = Path(out_dir) / "runs"
    if not root.is_dir():
        return []
    planned = {r.run_id for r in runs}
    return sorted(
        d.name
        for d in root.iterdir()
        if d.is_dir() and not d.name.startswith(".") and d.name not in planned
    )


def adopt_renamed(out_dir: Path, runs: Sequence[RunSpec]) -> None:
    """Reuse finished runs whose configuration is planned under another name.

    A run's directory is named by its factor levels and the hash of its
    configuration; when a scenario gains a factor or a policy is relabelled,
    the same simulation gets a new name.  Such a directory (same hash,
    status ``ok``) is renamed to the new run id instead of being run again.
    """
    root = Path(out_dir) / "runs"
    if not root.is_dir():
        return
    by_hash: dict[str, list[Path]] = {}
    for d in root.iterdir():
        if d.is_dir() and not d.name.startswith("."):
            by_hash.setdefault(d.name.rsplit("-", 1)[-1], []).append(d)
    for run in runs:
        if (root / run.run_id).exists():
            continue
        digest = run.run_id.rsplit("-", 1)[-1]
        for old in by_hash.get(digest, []):
            if old.exists() and read_status(out_dir, old.name, verify=True) == "ok":
                stored = json.loads((old / "summary.json").read_text())
                stored.update(run_id=run.run_id, factors=run.factors)
                write_json(old / "summary.json", stored)
                write_json(old / "config.json", run.to_dict())
                os.replace(old, root / run.run_id)
                break


def summary_table(out_dir: Path, runs: Sequence[RunSpec]) -> pd.DataFrame:
    """One row per planned run: run_id, status, factor levels, measures, wall time, error."""
    rows = []
    for run in runs:
        row: dict[str, Any] = {"run_id": run.run_id, "index": run.index}
        try:
            stored = json.loads((run_dir(out_dir, run.run_id) / "summary.json").read_text())
        except (OSError, ValueError):
            stored = {"status": "pending", "summary": {}, "wall_seconds": math.nan, "error": ""}
        if not (isinstance(stored, dict) and stored.get("status") in ("ok", "failed")
                and isinstance(stored.get("summary"), dict)):  # fmt: skip
            # not a sweep run's summary (a run's, written over it by an earlier o2ksim that
            # let `run --out` into a sweep's run folder): simulated again, not a KeyError
            stored = {"status": "corrupt", "summary": {}, "wall_seconds": math.nan,
                      "error": "summary.json is not a sweep run's (replaced by another command)"}  # fmt: skip
        row["status"] = stored["status"]
        if stored["status"] == "ok" and not _verified(run_dir(out_dir, run.run_id), stored):
            row["status"] = "corrupt"
            stored = {**stored, "error": "stored tables do not match summary.json (corrupt)"}
        row.update(run.factors)
        for k in METRICS:
            v = stored["summary"].get(k)
            row[k] = math.nan if v is None else v
        row["total_procs"] = stored.get("info", {}).get("total_procs", math.nan)
        row["wall_seconds"] = stored.get("wall_seconds", math.nan)
        row["error"] = stored.get("error", "")
        rows.append(row)
    df = pd.DataFrame(rows)
    for k in METRICS:
        if k in df:
            df[k] = pd.to_numeric(df[k], errors="coerce").astype("Int64" if k in COUNTS else float)
    return df


def write_plan(out_dir: Path, scenario: Scenario, runs: Sequence[RunSpec]) -> None:
    """Record the scenario text and the planned runs next to the results."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_atomically(out / "scenario.toml", scenario.text.encode())
    write_json(
        out / "plan.json",
        {
            "scenario": scenario.name,
            "description": scenario.description,
            "source": scenario.source,
            "path": scenario.path,
            "reduced": scenario.reduced,
            "factors": ["policy", *scenario.factors, "seed"],
            "runs": [r.to_dict() for r in runs],
        },
    )


def write_table(out_dir: Path, table: pd.DataFrame) -> None:
    """The summary table as ``summary.parquet`` and ``summary.csv``."""
    out = Path(out_dir)
    with atomic_path(out / "summary.parquet") as tmp:  # whole or not at all (a full disk)
        table.to_parquet(tmp, index=False)
    with atomic_path(out / "summary.csv") as tmp:
        table.to_csv(tmp, index=False)


# ------------------------------------------------------------------------------ reading
@dataclass
class Results:
    """A results directory read back: the plan, the summary table and per-run tables on demand."""

    out_dir: Path
    scenario_name: str
    description: str
    source: str
    scenario_text: str
    factors: list[str]
    runs: list[dict[str, Any]]
    table: pd.DataFrame
    reduced: bool = False

    def jobs(self, run_id: str) -> pd.DataFrame:
        """The per-job table of one finished run."""
        return _read_table(run_dir(self.out_dir, run_id) / "jobs.parquet")

    def segments(self, run_id: str) -> pd.DataFrame | None:
        """Allocation segments of one finished run (``None`` if not stored)."""
        p = run_dir(self.out_dir, run_id) / "segments.parquet"
        return _read_table(p) if p.exists() else None

    def run_summary(self, run_id: str) -> dict[str, Any]:
        return json.loads((run_dir(self.out_dir, run_id) / "summary.json").read_text())

    def error(self, run_id: str) -> str:
        p = run_dir(self.out_dir, run_id) / "error.txt"
        return p.read_text() if p.exists() else ""

    @property
    def ok(self) -> pd.DataFrame:
        """Rows of the runs that finished without error."""
        return self.table.loc[self.table["status"] == "ok"]


def _read_table(path: Path) -> pd.DataFrame:
    """A stored parquet table; a missing or damaged file is a one-line error."""
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise O2KSimError(
            f"{path}: cannot read the stored table ({type(exc).__name__}); run "
            "`o2ksim scenario run` on this directory again to redo the run"
        ) from None


@contextmanager
def reading_results(out_dir: str | os.PathLike[str]) -> Iterator[None]:
    """Hold a results directory against a sweep writing into it while it is read.

    A report read while a sweep stores runs would mix finished runs with runs missing
    from its tables, and the page would look complete.  So the reader takes a shared
    ``flock`` on ``OUT/.lock`` and is refused at once, in one line, while a sweep holds it
    (sweeps hold it exclusively, so a sweep started while a report is being made is
    refused too).  In a directory where the lock file cannot be made or written (a
    read-only mount, no write permission) no sweep writes through this path, and one
    writing through another (a read-write mount, another user) holds the lock file: it is
    opened for reading and shared the same way (:func:`o2ksim.outread.held_to_read` for a
    run's folder); with no lock file there no sweep ever held the directory.  One without
    ``plan.json`` is not a results directory and gets no lock file (its reader refuses it).
    """
    lock = Path(out_dir) / LOCK_FILE
    if not (Path(out_dir) / "plan.json").exists():  # not a results directory: nothing made there
        yield
        return
    try:
        fh = open(lock, "a+")  # noqa: SIM115 - held while the directory is read
    except OSError:
        try:
            fh = open(lock)  # noqa: SIM115 - read-only here: a sweep elsewhere still holds it
        except OSError:
            yield
            return
    try:
        holder = locked_elsewhere(fh, exclusive=False)
        if holder is not None:
            raise O2KSimError(
                f"{out_dir}: a sweep (process {holder}) is writing to this results directory; "
                "make the report once it has finished"
            )
        yield
    finally:
        fh.close()


def load_results(out_dir: str | os.PathLike[str]) -> Results:
    """Read a results directory written by :func:`run_sweep`."""
    check_path(out_dir, "load_results", "out_dir")
    out = Path(out_dir)
    plan_path = out / "plan.json"
    if not plan_path.exists():
        raise O2KSimError(
            f"{out}: not a results directory (no plan.json; run `o2ksim scenario run`)"
        )
    try:
        plan = json.loads(plan_path.read_text())
    except ValueError as exc:
        raise O2KSimError(f"{plan_path}: unreadable ({exc})") from None
    runs = [RunSpec(r["run_id"], r["index"], r["factors"], r["config"]) for r in plan["runs"]]
    table = summary_table(out, runs)
    text_path = out / "scenario.toml"
    return Results(
        out_dir=out,
        scenario_name=plan.get("scenario", out.name),
        description=plan.get("description", ""),
        source=plan.get("source", ""),
        scenario_text=text_path.read_text() if text_path.exists() else "",
        factors=list(plan.get("factors", ["policy", "seed"])),
        runs=plan["runs"],
        table=table,
        reduced=bool(plan.get("reduced", False)),
    )


def comparable(table: pd.DataFrame, columns: Iterable[str] = ("wall_seconds",)) -> pd.DataFrame:
    """The summary table without columns that legitimately differ between executions."""
    drop = [c for c in columns if c in table]
    return table.drop(columns=drop).sort_values("run_id", ignore_index=True)


__all__ = [
    "Results",
    "adopt_renamed",
    "clean_partial",
    "comparable",
    "is_finished",
    "load_results",
    "read_status",
    "run_dir",
    "store_outcome",
    "summary_table",
    "write_plan",
    "write_table",
]
