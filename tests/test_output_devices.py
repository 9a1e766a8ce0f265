"""An output that is a device or a pipe is written into, never renamed over (issue 27).

Found by the session-13 audit: ``o2ksim trace convert X /dev/full`` (and ``generate
--out``), run as root, renamed its temporary file over the device node, so that
``/dev/full`` became a regular file; ``--out /dev/null`` would have replaced
``/dev/null``.  The tests make their own device nodes (``mknod``, root only) and a
named pipe, never touching ``/dev``.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from o2ksim.cli import main
from o2ksim.errors import InputError
from o2ksim.files import write_atomically

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")
NULL, FULL = os.makedev(1, 3), os.makedev(1, 7)  # Linux's /dev/null and /dev/full


def device(tmp_path: Path, name: str, number: int) -> Path:
    path = tmp_path / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, number)
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


def still_a_device(path: Path) -> bool:
    return stat.S_ISCHR(path.stat().st_mode)


@pytest.mark.parametrize(
    "command",
    [
        lambda out: ["trace", "convert", TINY, out],
        lambda out: ["generate", "--span", "1d", "--out", out],
        lambda out: ["fit", str(ROOT / "traces" / "kth-sp2-sample.swf"), "--out", out],
    ],
    ids=["trace convert", "generate", "fit"],
)
def test_a_null_device_is_written_into_and_stays_a_device(tmp_path, command):
    null = device(tmp_path, "null", NULL)
    assert main(command(str(null))) == 0
    assert still_a_device(null)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no temporary left


def test_a_full_device_is_a_one_line_error_and_stays_a_device(tmp_path, capsys):
    full = device(tmp_path, "full", FULL)
    assert main(["trace", "convert", TINY, str(full)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"o2ksim: error: {full}: cannot write there (No space left on device)"]
    assert still_a_device(full)


def test_a_named_pipe_receives_the_whole_trace(tmp_path):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    write_atomically(pipe, b"; Version: 2.2\n")
    reader.join(timeout=10)
    assert received == [b"; Version: 2.2\n"]
    assert stat.S_ISFIFO(pipe.stat().st_mode)


def test_a_regular_file_is_still_replaced_whole(tmp_path):
    target = tmp_path / "x.swf"
    target.write_bytes(b"old")
    write_atomically(target, b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.swf"]


def test_a_failing_device_write_raises_the_one_line_input_error(tmp_path):
    full = device(tmp_path, "full", FULL)
    with pytest.raises(InputError, match="cannot write there"):
        write_atomically(full, b"x" * 10)
