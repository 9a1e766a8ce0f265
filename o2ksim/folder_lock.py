"""The lock file that holds a results folder for one process (``LOCK_NAME`` in the folder).

A writer holds it exclusively (:func:`~o2ksim.outfiles.claim`); a reader that cannot write
the folder (a read-only mount) holds it shared, so that a writer through another path is
refused meanwhile (:func:`~o2ksim.outread.held_to_read`), as SQLite takes a read lock on a
database it opened read-only.  The lock is an ``flock`` on the file; the holder writes its
pid there for the refusals to name, and removes the file as it leaves, while still holding
it, so a process that opened the old file re-checks the inode and locks the new one.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from o2ksim.errors import O2KSimError

try:  # POSIX; elsewhere a folder is not locked (documented in docs/reference/outputs.md)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".o2ksim.lock"

_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)
"""Why a lock file cannot be made in a folder that can still be read."""


class Unwritable(O2KSimError):
    """A folder's lock file cannot be made because nothing can be written there (a read-only
    file system, no write permission)."""


def holder_of(lock: Path) -> str:
    """Who holds the lock file ``lock``, as a refusal names it (the pid it holds)."""
    try:
        pid = lock.read_text().split()[0]
    except (OSError, IndexError):
        return "another process"
    return f"another o2ksim process (pid {pid})"


def lock_folder(path: Path, where: str) -> int:
    """Hold the folder ``path`` for this process, a writer: its lock file, created if needed,
    locked exclusively and this process's pid written in it; the descriptor to give to
    :func:`unlock_folder`.  A folder where the file cannot be made is :class:`Unwritable`;
    one another process holds is one line naming it (``where`` names the folder as the
    command was given it).  -1 where ``flock`` does not exist (not POSIX)."""
    fd = _hold(path, where, shared=False)
    assert fd is not None  # an exclusive hold creates the file
    return fd


def share_folder(path: Path, where: str) -> int | None:
    """Hold the folder ``path`` as a reader that cannot write there: its lock file opened and
    locked shared (:func:`~o2ksim.outread.held_to_read`); ``None`` when there is none (nobody
    holds the folder); one line naming the writer that holds it."""
    return _hold(path, where, shared=True)


def _hold(path: Path, where: str, *, shared: bool) -> int | None:
    """:func:`lock_folder` or :func:`share_folder`: one loop, as the lock file may be replaced
    between the open and the lock."""
    lock = path / LOCK_NAME
    if fcntl is None:  # pragma: no cover - Windows
        return -1
    while True:
        try:
            fd = os.open(lock, os.O_RDONLY) if shared else os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            if shared:  # a claim keeps its lock file while held: nobody holds the folder
                return None
            raise O2KSimError(f"{where}: cannot write there (no such folder)") from None
        except OSError as exc:
            if shared:
                raise O2KSimError(f"{lock}: cannot read the folder's lock file ({exc.strerror or exc})") from None
            kind = Unwritable if exc.errno in _READ_ONLY else O2KSimError
            raise kind(f"{where}: cannot write there ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            then = ", which is writing there; wait for it to end" if shared else (
                "; wait for it to end or choose another folder")
            raise O2KSimError(f"{where}: in use by {holder_of(lock)}{then}") from None
        try:  # the holder may have removed the file between our open and our lock: lock the new one
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            if not shared:
                with contextlib.suppress(OSError):  # the pid only names the holder: a full disk
                    os.ftruncate(fd, 0)  # that cannot take it leaves the lock held, unnamed
                    os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)


def unlock_folder(path: Path, fd: int | None, *, shared: bool = False) -> None:
    """Let go of a hold :func:`lock_folder` gave; an exclusive holder removes the lock file
    first, while still holding it (the next claimer re-checks the inode)."""
    if fd is None or fd < 0:  # nothing held (no lock file, or not POSIX)
        return
    if not shared:
        with contextlib.suppress(OSError):
            (path / LOCK_NAME).unlink()
    os.close(fd)


__all__ = ["LOCK_NAME", "Unwritable", "lock_folder", "share_folder", "unlock_folder"]
