"""Configuration files are read with a size bound (issue 27, D20).

``machines /dev/zero`` read the endless device into memory until the kernel
killed it (exit 137; a ``MemoryError`` traceback under ``ulimit -v``).  Every
reader of a machine, policy preset, scenario, parameter, claims, fitted-model
or availability file goes through :func:`o2ksim.files.read_small_text`, which
reads at most 16 MiB and refuses a larger input in one line naming the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from o2ksim.cli import main
from o2ksim.errors import InputError
from o2ksim.files import MAX_INPUT_BYTES, read_small_text
from tests.conftest import one_line

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        (["machines", "/dev/zero"], "machine file"),
        (["run", "--trace", TINY, "--machine", "/dev/zero"], "machine file"),
        (["run", "--trace", TINY, "--machine", "/dev/urandom"], "machine file"),
        (["run", "--trace", TINY, "--policy", "/dev/zero"], "policy preset"),
        (["run", "--model", "downey", "--params", "/dev/zero"], "parameter file"),
        (["scenario", "show", "/dev/zero"], "scenario file"),
        (["explain", "/dev/zero"], "scenario file"),
        (["scenario", "claims", "D", "--claims", "/dev/zero"], "claims file"),
        (["predict", "--fit", "/dev/zero", TINY, "--out", "P"], "fitted model file"),
    ],
)
def test_an_endless_device_is_refused_in_one_line(tmp_path, monkeypatch, capsys, argv, what):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    line = one_line(capsys.readouterr().err)
    device = next(a for a in argv if a.startswith("/dev/"))
    assert line.startswith(f"o2ksim: error: {device}: ")
    assert f"larger than 16 MiB: not a {what}" in line
    assert list(tmp_path.iterdir()) == []  # nothing left behind (predict --out P)


def test_the_bound_is_16_mib_and_a_file_at_it_is_read(tmp_path):
    assert MAX_INPUT_BYTES == 16 * 1024 * 1024
    at = tmp_path / "at.toml"
    at.write_bytes(b"#" * (MAX_INPUT_BYTES - 1) + b"\n")
    assert len(read_small_text(at, "machine file")) == MAX_INPUT_BYTES
    over = tmp_path / "over.toml"
    over.write_bytes(b"#" * MAX_INPUT_BYTES + b"\n")
    with pytest.raises(InputError, match=r"over\.toml: larger than 16 MiB: not a machine file"):
        read_small_text(over, "machine file")


def test_an_availability_file_over_the_bound_is_refused(tmp_path, capsys):
    big = tmp_path / "a.csv"
    big.write_bytes(b"host,from,to,procs\n" + b"#\n" * (MAX_INPUT_BYTES // 2))
    assert main(["run", "--trace", TINY, "--machine", "kth-sp2", "--availability", str(big)]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"o2ksim: error: {big}: larger than 16 MiB: not an availability file "
        "(o2ksim reads availability files of at most 16 MiB)"
    )


@pytest.mark.parametrize("kind", ["machines", "scenario show"])
def test_bytes_that_are_not_utf8_name_the_line(tmp_path, capsys, kind):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'name = "m"\n# caf\xe9\n')
    assert main([*kind.split(), str(bad)]) == 2
    what = "machine" if kind == "machines" else "scenario"
    assert one_line(capsys.readouterr().err) == f"o2ksim: error: {bad}:2: not UTF-8 text (a {what} file is UTF-8 text)"


def test_a_device_given_as_availability_is_not_called_missing(capsys):
    assert main(["run", "--trace", TINY, "--machine", "kth-sp2", "--availability", "/dev/zero"]) == 2
    assert one_line(capsys.readouterr().err) == "o2ksim: error: --availability /dev/zero: not a file"
