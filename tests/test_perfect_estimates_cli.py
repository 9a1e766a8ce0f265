"""The perfect-estimates warning from every command that simulates a trace (issue 27, D17).

Jobs without a requested runtime (SWF field 9 = -1) are planned with their actual
runtimes: perfect estimates, which flatter backfilling.  ``o2ksim run`` said so in one
line; ``o2ksim validate`` and ``o2ksim predict`` (whose API calls issue a
``PerfectEstimatesWarning``, ignored by the command line) said nothing.
"""

from __future__ import annotations

from pathlib import Path

from o2ksim.cli import main

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "traces" / "tiny.swf"
SAMPLE = ROOT / "traces" / "kth-sp2-sample.swf"  # every job has a requested runtime
NO_REQUEST = (2, 4, 5, 16, 17)  # the jobs whose requested runtime we erase


def _trace_without_requests(tmp_path: Path, source: Path = TINY) -> Path:
    out = []
    for line in source.read_text().splitlines():
        fields = line.split()
        if fields and not line.startswith(";") and int(fields[0]) in NO_REQUEST:
            fields[8] = "-1"  # SWF field 9, requested time: unknown
            line = " ".join(fields)
        out.append(line)
    path = tmp_path / "noreq.swf"
    path.write_text("\n".join(out) + "\n")
    return path


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("o2ksim: warning:")]


def _jobs(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip() and not line.startswith(";"))


def test_validate_says_it_as_run_does(tmp_path, capsys):
    trace = _trace_without_requests(tmp_path)
    assert main(["run", "--trace", str(trace)]) == 0
    said_by_run = _warnings(capsys.readouterr().err)
    assert main(["validate", str(trace)]) == 0
    said = _warnings(capsys.readouterr().err)
    assert len(said) == 1
    assert f"{trace}: 3 of {_jobs(trace)} jobs have no requested runtime" in said[0]  # 2, 4, 5
    assert said == said_by_run


def test_validate_quiet_says_nothing(tmp_path, capsys):
    assert main(["validate", str(_trace_without_requests(tmp_path)), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_predict_says_it_when_it_simulates(tmp_path, capsys):
    trace = _trace_without_requests(tmp_path, SAMPLE)  # enough jobs to fit the model
    args = ["predict", str(trace), "--policy", "fcfs-backfill", "--no-whole-queue"]
    assert main([*args, "--out", str(tmp_path / "p")]) == 0
    said = _warnings(capsys.readouterr().err)
    assert len(said) == 1
    assert f"{trace}: 2 of {_jobs(trace)} jobs have no requested runtime" in said[0]  # 16, 17


def test_a_trace_with_every_request_gives_no_warning(tmp_path, capsys):
    assert main(["validate", str(TINY)]) == 0
    assert _warnings(capsys.readouterr().err) == []
