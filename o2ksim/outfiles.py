"""Safe output folders: one run at a time, files written whole or not at all.

What the most careful tools do (SQLite's journal, git's ``index.lock``),
applied to a results folder such as ``o2ksim run --out DIR``:

* **one writer**: :func:`claim` takes an exclusive lock (``fcntl.flock`` on
  ``DIR/.o2ksim.lock``, which holds the holder's pid) for as long as the run
  lasts; a second run into the same folder is refused at once with the
  folder and that pid.  The operating system releases the lock when the
  process ends, however it ends, so a killed run never leaves the folder
  locked.
* **whole files**: :class:`Staging` writes every file under a temporary name
  in the same folder (``.NAME.PID.o2ksim-tmp``) and flushes it to disk; only
  when all of them are written does :meth:`Staging.commit` rename them into
  place.  A write that fails (a full disk) or an interrupt (Ctrl-C, SIGTERM)
  before that leaves nothing new: the temporary files are removed and the
  earlier run's files are untouched.
* **one run per folder**: the commit first moves the earlier run's files
  (:data:`RUN_FILES`) into a journal folder ``.o2ksim-previous``, then renames
  the new files in (``run.json`` last), then deletes the journal.  If the
  commit fails half-way, the new files are removed and the earlier ones put
  back; if the process is killed half-way (``kill -9``, a power cut), the
  next :func:`claim` of the folder finishes or undoes the commit from the
  journal.  A folder never holds files of two runs, and a result is complete
  exactly when ``run.json`` (written last) is there.

SIGINT and SIGTERM are held back during the commit's renames (a few
milliseconds) so that an interrupt cannot split it.

The same machinery serves every command that writes a set of files: a
:class:`Staging` names the *family* of files an earlier result of its kind
may have left (``o2ksim predict``'s ten files, ``o2ksim characterize``'s
tables and figures, a report's ``report.html``, ``figures/`` and
``tables/``) and the one it puts in *last* (what marks the result complete);
the journal records the new names, so that :func:`recover` undoes a cut
commit of any kind.  The families themselves, and which kind of result a folder
holds (one kind per folder: :func:`claim`'s ``kind``), are :mod:`o2ksim.outkinds`'.  :func:`interrupts_end` turns SIGINT/SIGTERM into the
one-line :class:`Interrupted` a command prints.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from o2ksim.errors import O2KSimError
from o2ksim.folder_lock import lock_folder, unlock_folder
from o2ksim.outkinds import (
    FAMILIES,
    LAST,
    RUN_FILES,
    SWEEP_PLAN,
    refuse_another_result,
    refuse_sweep_run,
)
from o2ksim.validation import folder_path, output_folder

JOURNAL_NAME = ".o2ksim-previous"
TMP_SUFFIX = ".o2ksim-tmp"
COMMIT_LAST = "run.json"
PHASE_B = ".new-files-going-in"

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_held: dict[Path, tuple[int, int]] = {}  # folder -> (lock file descriptor, nesting depth)


class Interrupted(O2KSimError):
    """SIGINT or SIGTERM during a command that writes a folder; exit code 128 + signal number."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.exit_code = 128 + signum


class Signalled(KeyboardInterrupt):
    """Raised by :func:`signals_raise`'s handlers so that ``finally`` blocks and cleanups run."""

    def __init__(self, signum: int | str) -> None:
        # built again from its args (the name) by SimPy, which re-raises an exception from a
        # process as type(exc)(*exc.args): a signal during a pass must survive that
        sig = signal.Signals[signum] if isinstance(signum, str) else signal.Signals(signum)
        super().__init__(sig.name)
        self.signum = int(sig)
        self.committed = False
        """True when it was delivered after a :meth:`Staging.commit` had put the new files in."""


def _raise_signal(signum: int, frame: FrameType | None) -> None:
    raise Signalled(signum)


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Signalled` (a ``KeyboardInterrupt``) inside the block.

    Python's default for SIGTERM is to die on the spot, skipping every cleanup;
    with this a terminated run removes its temporary files and says so.
    Outside the main thread (where handlers cannot be set) it does nothing.
    """
    try:
        old = {s: signal.signal(s, _raise_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def interrupts_end(describe: Callable[[Signalled], str]) -> Iterator[None]:
    """SIGINT and SIGTERM inside the block end the command in one line: :class:`Interrupted`
    with the message ``describe(signal)`` (which says what was stored), exit code 128 +
    signal number.  The block's cleanups (``finally``, :class:`Staging`) run first."""
    try:
        with signals_raise():
            yield
    except Signalled as exc:
        raise Interrupted(describe(exc), exc.signum) from None


def said_of_folder(
    out: str | os.PathLike[str] | None, done: str, earlier: str, written: Callable[[], bool]
) -> Callable[[Signalled], str]:
    """The line :func:`interrupts_end` prints for a command writing the folder ``out``:
    whether ``done`` ("the results were") had been written to it, else that nothing new was
    and ``earlier`` ("an earlier run's files there are") untouched."""

    def said(exc: Signalled) -> str:
        if not out:
            return f"interrupted by {exc}"
        if written() or exc.committed:
            return f"interrupted by {exc} after {done} written to {out}/"
        return f"interrupted by {exc}; nothing new was written to {out}/ ({earlier} untouched)"

    return said


def command_into_folder(
    out: str | None,
    kind: str,
    done: str,
    earlier: str,
    written: Callable[[], bool],
    body: Callable[[], int],
    option: str = "--out",
) -> int:
    """Run ``body``, a command writing its ``kind`` of result into the folder ``out`` (or
    nothing, without ``out``): the folder is checked and claimed before the work (a second
    writer, or a folder holding another command's result, is refused at once; a folder made
    here is removed again if the command fails), and SIGINT/SIGTERM end it in one line
    saying whether ``done`` had been written (:func:`said_of_folder`)."""
    with interrupts_end(said_of_folder(out, done, earlier, written)):
        if not out:
            return body()
        with output_folder(out, option), claim(out, option, kind=kind):
            return body()


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM are delivered after the block, not inside it.

    Blocking them in the operating system is not enough: a signal that arrived
    just before has its Python handler run at the next bytecode, inside the
    block.  So the handlers are swapped too, for one that only records the
    signal; it is delivered to the earlier handler when the block ends.
    """
    pending: list[int] = []
    try:
        old = {int(s): signal.signal(s, lambda n, f: pending.append(n)) for s in _SIGNALS}
    except ValueError:  # not the main thread: Python handlers run in the main thread only
        old = {}
    mask = getattr(signal, "pthread_sigmask", None)
    blocked = mask(signal.SIG_BLOCK, set(_SIGNALS)) if mask is not None else None
    try:
        yield
    finally:
        if mask is not None and blocked is not None:
            mask(signal.SIG_SETMASK, blocked)  # a signal blocked meanwhile reaches the recorder
        for s, handler in old.items():
            signal.signal(s, handler)
        if pending:
            handler = old[pending[0]]
            if callable(handler):
                handler(pending[0], None)
            else:  # SIG_DFL (or SIG_IGN): the operating system's action, now the block is over
                signal.raise_signal(pending[0])


@contextlib.contextmanager
def claim(
    out: str | os.PathLike[str],
    option: str = "--out",
    *,
    sweep_folder_ok: bool = False,
    kind: str | None = None,
) -> Iterator[Path]:
    """Hold the folder ``out`` (created if needed) for this process while the block runs.

    Refused with a one-line :class:`O2KSimError` naming the folder and the
    holder's pid when another process holds it.  Re-entrant within one process
    (``o2ksim run`` claims the folder, then :meth:`Result.save` claims it again).
    On claiming, a commit a killed run left half-done is finished or undone and
    its temporary files are removed.  A sweep's results directory is refused (a run's files
    would be mixed with it) unless ``sweep_folder_ok`` (a report may go there), and so is the
    folder of one of a sweep's runs.  With ``kind`` (a key of
    :data:`~o2ksim.outkinds.FAMILIES`: the result the caller will write), a folder holding
    another kind's result is refused too (:func:`~o2ksim.outkinds.refuse_another_result`).
    """
    path = folder_path(out, option)
    where = f"{option} {path}" if option else str(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise O2KSimError(f"{where}: cannot create the folder ({exc.strerror or exc})") from None
    key = path.resolve()
    if key in _held:
        held_fd, depth = _held[key]
        _held[key] = (held_fd, depth + 1)
        try:
            yield path
        finally:
            _held[key] = (held_fd, _held[key][1] - 1)
        return
    fd: int | None = None
    try:
        with _signals_held():  # a signal between creating the lock file and here would leave it
            fd = lock_folder(path, where)
            _held[key] = (fd, 1)
        if not sweep_folder_ok:
            _refuse_a_sweep_folder(path, where)
        refuse_sweep_run(path, where)
        recover(path)
        if kind is not None:  # after recover(): a cut commit's files are not a result
            refuse_another_result(path, where, kind)
        yield path
    finally:
        if fd is not None:
            del _held[key]
            unlock_folder(path, fd)


def _refuse_a_sweep_folder(path: Path, where: str) -> None:
    """A sweep's results directory (``o2ksim scenario run --out``) is not a run's folder: the
    two sets of files would be mixed (the sweep takes its own lock, ``.lock``)."""
    if (path / SWEEP_PLAN).exists():
        raise O2KSimError(
            f"{where}: holds the results of a sweep ({SWEEP_PLAN}, runs/); a run's files "
            "would be mixed with them: choose another folder"
        )


def recover(out: Path) -> None:
    """Finish or undo a commit a killed process left in ``out``, and remove its temporary files.

    Called with the folder claimed.  The journal's marker lists the new files in the
    order they were renamed in; the last one (a run's ``run.json``) is there only when
    the commit had finished (the journal is then deleted), otherwise the new files are
    removed and the journal's put back.
    """
    journal = out / JOURNAL_NAME
    if journal.is_dir():
        marker = journal / PHASE_B
        if not marker.exists():
            # killed while moving the earlier files out: move them back
            _restore(out, journal)
        else:
            try:
                new = marker.read_text().split("\n")[:-1]
            except OSError:  # pragma: no cover - an unreadable marker: a run's, as before
                new = []
            if not new:  # a marker without names (written by an earlier o2ksim): a run's files
                new = [*RUN_FILES, COMMIT_LAST]
            if not (out / new[-1]).exists():  # killed while moving the new files in: undo
                for name in new:
                    _remove(out / name)
                _restore(out, journal)
        shutil.rmtree(journal, ignore_errors=True)
    for tmp in out.glob(f".*{TMP_SUFFIX}"):
        _remove(tmp)


def _restore(out: Path, journal: Path) -> None:
    for old in journal.iterdir():
        if old.name != PHASE_B:
            os.replace(old, out / old.name)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _fsync(path: Path, *, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:  # pragma: no cover - a platform that cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - folders that cannot be synced
        if not directory:
            raise
    finally:
        os.close(fd)


@dataclass
class Staging:
    """The files of one result, written under temporary names, then committed together.

    ``path(name)`` gives the temporary path to write ``name`` to; :meth:`commit`
    puts them in place (see the module's description).  Used as a context
    manager: leaving the block without committing removes the temporary files.
    """

    out: Path
    files: dict[str, Path] = field(default_factory=dict)
    replaced: list[str] = field(default_factory=list)
    """The earlier run's files the commit replaced or removed."""
    written: list[str] = field(default_factory=list)
    """The files the commit put in place."""
    scratch_dirs: list[Path] = field(default_factory=list)
    committed: bool = False
    """True once :meth:`commit` has put every file in place."""
    family: tuple[str, ...] = RUN_FILES
    """The names an earlier result of the same kind may have left in the folder: the commit
    replaces them as a set (``o2ksim predict`` passes its own)."""
    last: str = COMMIT_LAST
    """The name renamed in last (and moved out first): a folder holds it only with the
    rest of its result (a run's ``run.json``, a report's ``report.html``)."""
    kind: str = "run"
    """What the result is called in :meth:`replaced_text` ("an earlier run's files")."""
    sweep_folder_ok: bool = False
    """Whether the folder may be a sweep's results directory (a report's may, a run's may not)."""

    @classmethod
    def of(cls, out: Path, kind: str) -> Staging:
        """The staging of a result of ``kind`` (a key of :data:`~o2ksim.outkinds.FAMILIES`):
        its family, the file it commits last, and its name in :meth:`replaced_text`."""
        return cls(out, family=FAMILIES[kind], last=LAST[kind], kind=kind)

    def path(self, name: str) -> Path:
        tmp = self.out / f".{name}.{os.getpid()}{TMP_SUFFIX}"
        self.files[name] = tmp
        return tmp

    def scratch(self, *names: str) -> Path:
        """A temporary folder whose sub-folders ``names`` (written by the caller, e.g. a
        report's ``report`` and ``results``) are committed with the files."""
        tmp = self.out / f".{'+'.join(names)}.{os.getpid()}{TMP_SUFFIX}"
        tmp.mkdir(exist_ok=True)
        self.scratch_dirs.append(tmp)
        for name in names:
            self.files[name] = tmp / name
        return tmp

    def discard(self) -> None:
        for tmp in [*self.files.values(), *self.scratch_dirs]:
            with contextlib.suppress(OSError):
                _remove(tmp)
        self.files.clear()
        self.scratch_dirs.clear()

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    def commit(self) -> list[str]:
        """Replace the folder's earlier run (every name of :data:`RUN_FILES`) by the staged files.

        Returns the earlier run's names that were there (also in :attr:`replaced`).
        """
        for tmp in self.files.values():
            if tmp.is_file():
                _fsync(tmp)
        if not self.sweep_folder_ok:  # a sweep that began during the run
            _refuse_a_sweep_folder(self.out, str(self.out))
        order = sorted(self.files, key=lambda n: n == self.last)
        journal = self.out / JOURNAL_NAME
        try:
            self._commit(order, journal)
        except Signalled as exc:  # delivered when the renames were over: say whether they were done
            exc.committed = self.committed
            raise
        return self.replaced

    def _commit(self, order: list[str], journal: Path) -> None:
        with _signals_held():
            # run.json goes first (out) and last (in): a folder holds run.json only when complete
            earlier = sorted(
                (n for n in self.family if (self.out / n).exists() or (self.out / n).is_symlink()),
                key=lambda n: n != self.last,
            )
            journal.mkdir(exist_ok=True)
            moved: list[str] = []
            done: list[str] = []
            try:
                for name in earlier:
                    os.replace(self.out / name, journal / name)
                    moved.append(name)
                # the new names, in order: what recover() removes if the commit is cut
                (journal / PHASE_B).write_text("".join(f"{n}\n" for n in order))
                for name in order:
                    os.replace(self.files[name], self.out / name)
                    done.append(name)
            except OSError:
                for name in done:  # undo: the new files out, the earlier ones back
                    with contextlib.suppress(OSError):
                        _remove(self.out / name)
                for name in moved:
                    with contextlib.suppress(OSError):
                        os.replace(journal / name, self.out / name)
                shutil.rmtree(journal, ignore_errors=True)
                raise
            self.written = sorted(self.files)
            self.discard()
            shutil.rmtree(journal, ignore_errors=True)
            _fsync(self.out, directory=True)
            self.replaced = sorted(earlier)
            self.committed = True

    def replaced_text(self) -> str:
        """One phrase on what the commit did to an earlier run's files ('' when there were none)."""
        if not self.replaced:
            return ""
        gone = [n for n in self.replaced if n not in self.written]
        return f"replacing an earlier {self.kind}'s files" + (
            f" (removed {', '.join(gone)}, which this {self.kind} does not write)" if gone else ""
        )


__all__ = [
    "RUN_FILES",
    "TMP_SUFFIX",
    "Interrupted",
    "Signalled",
    "Staging",
    "claim",
    "interrupts_end",
    "recover",
    "said_of_folder",
    "signals_raise",
]
