"""Reading a results folder that another process may write: held against writers, even
where this process cannot write (``o2ksim report RUN --out ELSEWHERE`` on a read-only ``RUN``).

:func:`o2ksim.outfiles.claim` holds a folder for a writer by an exclusive ``flock`` on its lock
file, which it creates; a reader that cannot create it (a read-only mount, no write
permission) takes a shared ``flock`` on the lock file when there is one (SQLite likewise
takes a read lock on a database it opened read-only).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from o2ksim.errors import O2KSimError
from o2ksim.folder_lock import Unwritable, share_folder, unlock_folder
from o2ksim.outfiles import JOURNAL_NAME, claim


@contextlib.contextmanager
def held_to_read(folder: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold ``folder`` against a writer while the block only reads it (``o2ksim report RUN
    --out ELSEWHERE`` reads ``RUN``).

    A folder this process can write is claimed (:func:`claim`: a writer is refused, a commit a
    killed writer left half-done is finished or undone first).  One it cannot write (a
    read-only mount, no write permission) cannot be claimed, as its lock file cannot be made,
    and is still read: no o2ksim process writes through this path, and a writer through
    another (a read-write mount of the same files, another user) claims the folder with the
    lock file (:mod:`o2ksim.folder_lock`), which is opened for reading and held shared while the block runs,
    so such a writer is refused here (and refused while the block reads), as SQLite takes a
    read lock on a database it opened read-only.  With no lock file there nobody holds the
    folder.  A commit cut short there (its journal) cannot be finished by a reader: refused."""
    path = Path(folder)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(claim(path, ""))
        except Unwritable:
            stack.enter_context(_shared_hold(path))
        yield path


@contextlib.contextmanager
def _shared_hold(path: Path) -> Iterator[None]:
    """A shared hold on the lock file of ``path``, a folder this process cannot write, when
    there is one (:func:`held_to_read`)."""
    if (path / JOURNAL_NAME).is_dir():
        raise O2KSimError(
            f"{path}: holds a commit cut short ({JOURNAL_NAME}/), which only a process that can "
            "write there can finish or undo (any o2ksim command writing the folder does); its "
            "files may be of two results"
        )
    fd = share_folder(path, str(path))
    try:
        yield
    finally:
        unlock_folder(path, fd, shared=True)


__all__ = ["held_to_read"]
