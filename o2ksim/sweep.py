"""Sweeps: run every run of a scenario, in parallel, resumably, locally or on Dask.

Layout of a results directory (one *workspace* per run, desmod style)::

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

How the pieces fit:

* :func:`execute_run` is the only thing that runs in a worker (a local
  process, or a Dask worker): it simulates one :class:`~o2ksim.scenario.RunSpec`
  and *returns* the outcome, catching any error into it, so one failing run
  never stops the others.
* The coordinating process stores each outcome as soon as it arrives: it
  writes the workspace into a temporary directory and renames it into place,
  so a run directory with a ``summary.json`` is always complete.  A sweep
  killed at any moment therefore leaves only finished runs behind, and the
  next :func:`run_sweep` on the same directory skips them.
* A run's results depend only on its configuration (every random draw comes
  from its seed), so the same sweep gives identical results in one process,
  in a process pool or on a Dask cluster.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import shutil
import sys
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from o2ksim.errors import O2KSimError
from o2ksim.scenario import RunSpec, Scenario

METRICS = (
    "jobs", "completed", "killed", "rejected", "unfinished", "mean_wait", "p95_wait",
    "max_wait", "mean_slowdown", "mean_bounded_slowdown", "max_bounded_slowdown",
    "total_excessive_wait_50h", "utilisation",
)  # fmt: skip
"""Measures kept in the summary table (seconds for waits; see :func:`o2ksim.metrics.summary`)."""
COUNTS = ("jobs", "completed", "killed", "rejected", "unfinished")


@dataclass
class RunOutcome:
    """What a worker hands back for one run (picklable, so it can cross processes)."""

    run_id: str
    status: str
    summary: dict[str, Any]
    wall_seconds: float
    jobs: pd.DataFrame | None = None
    segments: pd.DataFrame | None = None
    error: str = ""
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class SweepResult:
    """What :func:`run_sweep` did: which runs ran, were skipped or failed, and the table."""

    out_dir: Path
    runs: list[RunSpec]
    ran: list[str]
    skipped: list[str]
    failed: list[str]
    table: pd.DataFrame
    wall_seconds: float

    @property
    def ok(self) -> bool:
        return not self.failed


def execute_run(
    run: RunSpec,
    *,
    keep_segments: bool = True,
    registrations: bytes | None = None,
    scenario: Scenario | None = None,
) -> RunOutcome:
    """Simulate one run and return its outcome; an error becomes a ``failed`` outcome.

    The run's JSON configuration becomes a validated
    :class:`~o2ksim.runconfig.RunConfig`; with ``scenario`` (in the
    coordinating process) it gets the machine the scenario already parsed.
    ``registrations``: the user's own priorities and policy kinds, packed by
    :func:`o2ksim.plugins.pack_registrations` in the coordinating process
    (a Dask worker gets them with every run; a local worker at start-up).
    """
    from o2ksim.runconfig import RunConfig
    from o2ksim.simulate import run_config

    t0 = time.perf_counter()
    try:
        if registrations:
            from o2ksim.plugins import install_registrations

            install_registrations(registrations)
        config = (
            scenario.run_config(run) if scenario is not None else RunConfig.from_dict(run.config)
        )
        result = run_config(config)
    except Exception as exc:
        if isinstance(exc, O2KSimError):
            error = f"{type(exc).__name__}: {exc}\n"
        else:
            error = traceback.format_exc()
        return RunOutcome(run.run_id, "failed", {}, time.perf_counter() - t0, error=error)
    return outcome_of(run.run_id, result, time.perf_counter() - t0, keep_segments=keep_segments)


def outcome_of(
    run_id: str, result: Any, wall_seconds: float, *, keep_segments: bool = True
) -> RunOutcome:
    """The stored form of a finished :class:`~o2ksim.simulate.Result`."""
    summary = {k: result.summary.get(k, math.nan) for k in METRICS}
    # policy counters (immediate service) and the protocol's cool-down, for the report
    summary.update((k, v) for k, v in result.summary.items() if k not in summary and k != "sim_seconds")
    info = {
        "machine": result.machine.describe(),
        "total_procs": result.machine.total_procs,
        "hosts": {h.name: h.procs for h in result.machine.hosts},
        "policy": result.policy,
        "passes": result.stats.passes,
        "decisions": result.stats.decisions,
        "sim_end": result.stats.sim_end,
        "window": result.config.get("window"),
        "workload": result.config.get("workload"),
    }
    return RunOutcome(
        run_id,
        "ok",
        summary,
        wall_seconds,
        jobs=result.jobs,
        segments=result.segments if keep_segments else None,
        info=info,
    )


# ------------------------------------------------------------------------------------ storage
def _write_json(path: Path, data: Any) -> None:
    """JSON with NaN/inf written as null and numpy scalars as plain numbers."""

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [clean(x) for x in v]
        if hasattr(v, "item") and not isinstance(v, str | bytes):
            v = v.item()
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return v

    path.write_text(json.dumps(clean(data), indent=2, sort_keys=False) + "\n")


def run_dir(out_dir: Path, run_id: str) -> Path:
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
        import pyarrow.parquet as pq

        pq.read_metadata(workspace / "jobs.parquet")
    except Exception:
        return False
    return True


def store_outcome(out_dir: Path, run: RunSpec, outcome: RunOutcome) -> Path:
    """Write one run's workspace atomically (temporary directory, then rename)."""
    from o2ksim.simulate import versions

    runs = Path(out_dir) / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    tmp = runs / f".tmp-{run.run_id}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    _write_json(tmp / "config.json", run.to_dict())
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
    _write_json(
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
    final = runs / run.run_id
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


def _clean_partial(out_dir: Path) -> None:
    """Remove temporary workspaces a killed sweep left behind."""
    runs = Path(out_dir) / "runs"
    if runs.is_dir():
        for p in runs.glob(".tmp-*"):
            shutil.rmtree(p, ignore_errors=True)


def _adopt_renamed(out_dir: Path, runs: Sequence[RunSpec]) -> None:
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
                _write_json(old / "summary.json", stored)
                _write_json(old / "config.json", run.to_dict())
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
    (out / "scenario.toml").write_text(scenario.text)
    _write_json(
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
    out = Path(out_dir)
    table.to_parquet(out / "summary.parquet", index=False)
    table.to_csv(out / "summary.csv", index=False)


# ------------------------------------------------------------------------------------ running
def run_sweep(
    scenario: Scenario,
    out_dir: str | os.PathLike[str] | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    client: Any = None,
    progress: bool | None = None,
    retry_failed: bool = True,
    log: Callable[[str], None] | None = None,
) -> SweepResult:
    """Run every run of ``scenario`` that has not finished yet; store each as it finishes.

    ``workers``: local worker processes (default: the number of CPUs, at most
    the number of runs; 1 runs everything in this process).  ``scheduler``: the
    address of a Dask scheduler (``tcp://host:8786``); ``client``: an existing
    ``distributed.Client`` (either replaces the local pool).  Runs that failed
    before are tried again unless ``retry_failed`` is false.  Returns what ran,
    what was skipped and the summary table (also written as
    ``summary.parquet``/``summary.csv``).
    """
    out = Path(out_dir) if out_dir is not None else scenario.default_out_dir()
    with results_lock(out):
        return _sweep(scenario, out, workers, scheduler, client, progress, retry_failed, log)


@contextmanager
def results_lock(out_dir: Path) -> Iterator[None]:
    """Hold the results directory for one sweep at a time.

    Two sweeps on the same directory would both see a run as not finished and
    simulate it twice; the second one is refused at once instead.  The lock is
    an ``flock`` on ``OUT/.lock``, which the system releases when the process
    ends, however it ends.
    """
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fh = open(out / ".lock", "a+")  # noqa: SIM115 - held for the whole sweep
    except OSError as exc:
        raise O2KSimError(f"{out}: cannot use as a results directory ({exc.strerror or exc})") from None
    try:
        try:
            import fcntl

            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - not POSIX: no lock
            pass
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "?"
            raise O2KSimError(
                f"{out}: another sweep (process {holder}) is writing to this results "
                "directory; wait for it to finish or give another --out"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        yield
    finally:
        fh.close()


def _sweep(
    scenario: Scenario,
    out: Path,
    workers: int | None,
    scheduler: str | None,
    client: Any,
    progress: bool | None,
    retry_failed: bool,
    log: Callable[[str], None] | None,
) -> SweepResult:
    """:func:`run_sweep` with the results directory locked."""
    t0 = time.perf_counter()
    runs = scenario.plan()
    write_plan(out, scenario, runs)
    _clean_partial(out)
    _adopt_renamed(out, runs)
    done = [r for r in runs if is_finished(out, r, count_failed=not retry_failed)]
    done_ids = {r.run_id for r in done}
    todo = [r for r in runs if r.run_id not in done_ids]
    say = log or (lambda _msg: None)
    if progress is None:
        progress = sys.stderr.isatty()
    keep_segments = bool(scenario.outputs.get("segments", True))
    where = "Dask" if (scheduler or client is not None) else None
    if where is None:
        n_workers = workers or os.cpu_count() or 1
        n_workers = max(1, min(n_workers, len(todo)))
        where = "this process" if n_workers == 1 else f"{n_workers} local processes"
    else:
        n_workers = 0
    say(
        f"{scenario.name}: {len(runs)} run(s); {len(done)} already finished, "
        f"{len(todo)} to run" + (f" on {where}" if todo else "")
    )
    ran: list[str] = []
    failed: list[str] = []
    if todo:
        from tqdm import tqdm

        bar = tqdm(
            total=len(todo),
            desc=scenario.name,
            unit="run",
            disable=not progress,
            leave=False,
            file=sys.stderr,
        )

        def finished(run: RunSpec, outcome: RunOutcome) -> None:
            store_outcome(out, run, outcome)
            ran.append(run.run_id)
            if outcome.status != "ok":
                failed.append(run.run_id)
                bar.set_postfix(failed=len(failed))
            bar.update(1)

        try:
            if scheduler or client is not None:
                _run_dask(todo, finished, scheduler, client, keep_segments)
            elif n_workers == 1:
                for run in todo:
                    finished(
                        run, execute_run(run, keep_segments=keep_segments, scenario=scenario)
                    )
            else:
                _run_pool(todo, finished, n_workers, keep_segments)
        finally:
            bar.close()
    table = summary_table(out, runs)
    write_table(out, table)
    return SweepResult(
        out,
        runs,
        ran,
        [r.run_id for r in done],
        failed,
        table,
        time.perf_counter() - t0,
    )


@contextlib.contextmanager
def _without_main_module() -> Iterator[None]:
    """Start worker processes that do not re-run the caller's script.

    ``multiprocessing`` (spawn, forkserver) normally imports the parent's
    ``__main__`` file in every worker so that functions defined there can be
    unpickled.  A script calling :func:`run_sweep` at its top level, without
    an ``if __name__ == "__main__":`` guard, then starts a sweep inside every
    worker, and every run fails.  The workers need nothing from the script:
    runs are plain configurations and the user's registered priorities and
    policies travel by value (:func:`o2ksim.plugins.pack_registrations`).  So
    while workers start, ``__main__`` is made to look like an interactive
    session (no file, no module spec), which ``multiprocessing`` leaves alone.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    missing = object()
    saved = {a: getattr(main, a, missing) for a in ("__file__", "__spec__")}
    try:
        if saved["__file__"] is not missing:
            del main.__file__
        main.__spec__ = None
        yield
    finally:
        for attr, value in saved.items():
            if value is missing:
                if hasattr(main, attr) and attr != "__spec__":
                    delattr(main, attr)
            else:
                setattr(main, attr, value)


def _init_worker(registrations: bytes | None, coordinator: int) -> None:
    """Worker start-up: end with the coordinator; register the user's priorities and policy kinds."""
    from o2ksim.plugins import install_registrations

    watch_coordinator(coordinator)
    install_registrations(registrations)


def _run_pool(
    todo: Sequence[RunSpec],
    finished: Callable[[RunSpec, RunOutcome], None],
    n_workers: int,
    keep_segments: bool,
) -> None:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    from o2ksim.plugins import pack_registrations

    # forkserver: workers are forked from a clean server process, never from a
    # parent that may hold threads (a Dask client, a GUI) -- and start fast.
    ctx = multiprocessing.get_context("forkserver")
    pool = ProcessPoolExecutor(
        max_workers=n_workers,
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(pack_registrations(), os.getpid()),
    )
    try:
        with _without_main_module():  # workers start while the runs are submitted
            pending = {
                pool.submit(execute_run, run, keep_segments=keep_segments): run for run in todo
            }
        while pending:
            ready, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in ready:
                run = pending.pop(fut)
                try:
                    outcome = fut.result()
                except BrokenProcessPool as exc:
                    outcome = RunOutcome(
                        run.run_id, "failed", {}, math.nan, error=f"worker process died: {exc}\n"
                    )
                finished(run, outcome)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def watch_coordinator(pid: int, period: float = 0.5) -> None:
    """Make this worker process end when the coordinating process ``pid`` is gone.

    A worker forked by the forkserver is not the coordinator's child, and it
    keeps the pool's pipes open, so a coordinator killed with SIGKILL would
    leave it (and through it the forkserver and the resource tracker) running
    for ever.  A daemon thread looks every ``period`` seconds and ends the
    process once the coordinator has gone; the forkserver and the resource
    tracker then see their pipes close and end too.
    """
    import threading

    def alive() -> bool:
        if os.getppid() == pid:
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # a process of another user reuses the id
            return False
        try:  # a zombie (killed, not yet reaped) is gone too
            with open(f"/proc/{pid}/stat", "rb") as f:
                return f.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
        except OSError:
            return True

    def watch() -> None:
        while alive():
            time.sleep(period)
        os._exit(1)

    threading.Thread(target=watch, name="o2ksim-watch-coordinator", daemon=True).start()


def _run_dask(
    todo: Sequence[RunSpec],
    finished: Callable[[RunSpec, RunOutcome], None],
    scheduler: str | None,
    client: Any,
    keep_segments: bool,
) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise O2KSimError("--scheduler needs Dask: pip install 'dask[distributed]'") from None
    own = client is None
    if own:
        try:
            client = Client(scheduler, set_as_default=False, timeout="20s")
        except (OSError, ValueError, TypeError) as exc:
            raise O2KSimError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    try:
        from o2ksim.plugins import pack_registrations

        registrations = pack_registrations()
        tag = uuid.uuid4().hex[:6]
        futures = {}
        for run in todo:
            fut = client.submit(
                execute_run,
                run,
                keep_segments=keep_segments,
                registrations=registrations,
                key=f"o2ksim-{run.run_id}-{tag}",
                pure=False,
            )
            futures[fut.key] = (fut, run)
        try:
            for fut in as_completed([f for f, _ in futures.values()], loop=client.loop):
                run = futures[fut.key][1]
                try:
                    outcome = fut.result()
                except Exception as exc:  # the worker died or the task was lost
                    outcome = RunOutcome(
                        run.run_id,
                        "failed",
                        {},
                        math.nan,
                        error=f"Dask task failed: {type(exc).__name__}: {exc}\n",
                    )
                finished(run, outcome)
                fut.release()
        except BaseException:
            client.cancel([f for f, _ in futures.values()])
            raise
    finally:
        if own:
            client.close()


# ------------------------------------------------------------------------------------ reading
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


def load_results(out_dir: str | os.PathLike[str]) -> Results:
    """Read a results directory written by :func:`run_sweep`."""
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


# ---------------------------------------------------------------------------- expected summaries
EXPECTED_METRICS = (
    "jobs", "completed", "rejected", "mean_wait", "p95_wait", "max_wait", "mean_slowdown",
    "max_bounded_slowdown", "utilisation",
)  # fmt: skip
"""Measures pinned in ``scenarios/expected/<name>.csv`` (the reduced runs CI checks)."""


def expected_path(scenario: Scenario) -> Path:
    """``expected/<name>.csv`` next to the scenario file."""
    if scenario.path is None:
        raise O2KSimError("a scenario given as text has no expected-summary file")
    return Path(scenario.path).parent / "expected" / f"{scenario.name}.csv"


def expected_table(table: pd.DataFrame, factors: Sequence[str]) -> pd.DataFrame:
    """The pinned part of a summary table: factor levels (as text), status and measures."""
    out = pd.DataFrame({f: [_level_text(v) for v in table[f]] for f in factors})
    out["status"] = table["status"].to_numpy()
    for k in EXPECTED_METRICS:
        out[k] = table[k].to_numpy(dtype=float, na_value=math.nan)
    return out.sort_values(list(factors), ignore_index=True)


def _level_text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True)


def write_expected(path: Path, table: pd.DataFrame, factors: Sequence[str]) -> None:
    """Write the pinned summary (``%.9g``: deterministic runs reproduce it exactly)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    expected_table(table, factors).to_csv(path, index=False, float_format="%.9g")


def compare_expected(
    table: pd.DataFrame, factors: Sequence[str], path: Path, *, rtol: float = 1e-6
) -> list[str]:
    """Differences between a fresh summary table and the pinned one (empty = same)."""
    if not path.exists():
        return [f"{path}: no expected summary (create it with `o2ksim scenario check --update`)"]
    want = pd.read_csv(path, dtype={f: str for f in factors}, keep_default_na=False, na_values=[""])
    got = expected_table(table, factors)
    problems: list[str] = []
    missing = [c for c in (*factors, "status", *EXPECTED_METRICS) if c not in want]
    if missing:
        return [f"{path}: missing column(s) {', '.join(missing)}"]
    keys_want = [tuple(r) for r in want[list(factors)].astype(str).itertuples(index=False)]
    keys_got = [tuple(r) for r in got[list(factors)].astype(str).itertuples(index=False)]
    if keys_want != keys_got:
        only_got = sorted(set(keys_got) - set(keys_want))
        only_want = sorted(set(keys_want) - set(keys_got))
        return [f"runs differ: new {only_got or 'none'}, gone {only_want or 'none'}"]
    for i, key in enumerate(keys_got):
        label = ", ".join(f"{f}={v}" for f, v in zip(factors, key, strict=True))
        if str(want["status"].iloc[i]) != str(got["status"].iloc[i]):
            problems.append(
                f"{label}: status {got['status'].iloc[i]} (expected {want['status'].iloc[i]})"
            )
            continue
        for k in EXPECTED_METRICS:
            a, b = float(got[k].iloc[i]), float(want[k].iloc[i])
            same = (math.isnan(a) and math.isnan(b)) or math.isclose(
                a, b, rel_tol=rtol, abs_tol=1e-9
            )
            if not same:
                problems.append(f"{label}: {k} = {a:.9g} (expected {b:.9g})")
    return problems


__all__ = [
    "METRICS",
    "Results",
    "RunOutcome",
    "SweepResult",
    "comparable",
    "compare_expected",
    "execute_run",
    "expected_path",
    "load_results",
    "run_sweep",
    "store_outcome",
    "summary_table",
    "write_expected",
]
