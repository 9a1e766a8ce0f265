"""A sweep's results directory held by one sweep at a time, and refused before the heavy
modules of a sweep load: ``o2ksim scenario run`` into a folder that another sweep holds, or
that holds another command's result, is refused as soon as the scenario is read, as ``o2ksim
run`` refuses its folder (this module needs neither pandas nor the engine)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from o2ksim.errors import O2KSimError
from o2ksim.outkinds import COMMANDS, SWEEP_PLAN, refuse_sweep_run, result_held

LOCK_FILE = ".lock"
"""The file a sweep holds exclusively (:func:`results_lock`) and a report shares
(:func:`~o2ksim.experiments.store.reading_results`); it holds the process id of the last sweep."""


def locked_elsewhere(fh: IO[str], *, exclusive: bool) -> str | None:
    """Take the ``flock`` on the open lock file ``fh`` without waiting (exclusive for a sweep,
    shared for a reader); when another process holds it, the process id written in the file
    (the last sweep's), or ``?``."""
    try:
        fcntl.flock(fh.fileno(), (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except OSError:
        fh.seek(0)
        return fh.read().strip() or "?"
    return None


def _in_use(out: Path, holder: str) -> O2KSimError:
    return O2KSimError(
        f"{out}: another sweep is writing to this results directory (process {holder}, "
        "the last sweep to write there) or a report is being made from it; wait for it "
        "to finish or give another --out"
    )


def refuse_for_a_sweep(out_dir: str | os.PathLike[str]) -> None:
    """Refuse ``out_dir`` as a sweep's results directory, making nothing there: the folder of
    another sweep's run (or its ``runs/``), a folder holding another command's result, or one
    that another sweep or a report holds now (its lock file, when there is one, taken and
    let go at once; :func:`results_lock` takes it for the sweep)."""
    out = Path(out_dir)
    refuse_sweep_run(out, str(out))  # another sweep's run folder, or its runs/
    held = result_held(out)  # a run's, a validation's, a prediction's, a characterisation's
    if held is not None and not (out / SWEEP_PLAN).exists():
        kind, names = held
        raise O2KSimError(
            f"{out}: holds the results of `o2ksim {COMMANDS[kind]}` ({', '.join(names[:4])}); "
            "a sweep's files would be mixed with them: give another --out"
        )
    try:
        fh = open(out / LOCK_FILE, "r+")  # noqa: SIM115 - no lock file, or none to write: the sweep says
    except OSError:
        return
    with fh:
        holder = locked_elsewhere(fh, exclusive=True)  # let go as the file closes
    if holder is not None:
        raise _in_use(out, holder)


@contextmanager
def results_lock(out_dir: Path) -> Iterator[None]:
    """Hold the results directory for one sweep at a time.

    Two sweeps on the same directory would both see a run as not finished and
    simulate it twice; the second one is refused at once instead.  The lock is
    an ``flock`` on ``OUT/.lock``, which the system releases when the process
    ends, however it ends.
    """
    out = Path(out_dir)
    refuse_for_a_sweep(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fh = open(out / LOCK_FILE, "a+")  # noqa: SIM115 - held for the whole sweep
    except OSError as exc:
        raise O2KSimError(f"{out}: cannot use as a results directory ({exc.strerror or exc})") from None
    try:
        holder = locked_elsewhere(fh, exclusive=True)
        if holder is not None:
            raise _in_use(out, holder)
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        yield
    finally:
        fh.close()


__all__ = ["LOCK_FILE", "locked_elsewhere", "refuse_for_a_sweep", "results_lock"]
