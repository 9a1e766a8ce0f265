"""A window of dates that selects nothing is refused in the user's terms (issue 27).

Reversed, empty and beyond-the-trace windows of dates, generated from a seeded
generator over three kinds of trace header (an IANA zone, a fixed offset, no
zone), through ``o2ksim run --window``, ``scenario run``, ``scenario check``
and ``simulate(window=...)``: one line quoting the dates as typed and the zone
they were read in, naming the option, or the file and field, exit 2, and no
results folder.  It used to quote day offsets from the trace start
(``window end (311d) must be after its start (330d)``).

Every expected text is written here from the input: the trace submits 40 jobs
6 hours apart from UnixStartTime 1,000,000,000 = 2001-09-09 01:46:40 UTC, so
its first job is submitted then and its last 39 x 6 h = 9 d 18 h later, at
2001-09-18 19:46:40 UTC.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from o2ksim import simulate
from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from o2ksim.workloads.swf import read_swf

UNIX = 1_000_000_000

# header lines, the zone as the message names it, and the first and last submit in that zone
ZONES = {
    "new-york": (
        ["; TimeZoneString: America/New_York"],
        "America/New_York (the trace header's TimeZoneString)",
        "2001-09-08 21:46:40 EDT",  # UTC-4 in September (daylight saving time)
        "2001-09-18 15:46:40 EDT",
    ),
    "offset": (
        ["; TimeZone: 3600"],
        "UTC+01:00 (the trace header's TimeZone of 3600 s)",
        "2001-09-09 02:46:40 UTC+01:00",
        "2001-09-18 20:46:40 UTC+01:00",
    ),
    "utc": (
        [],
        "UTC (the trace header names no time zone)",
        "2001-09-09 01:46:40 UTC",
        "2001-09-18 19:46:40 UTC",
    ),
}


def _trace(path: Path, zone: str) -> Path:
    lines = [f"; UnixStartTime: {UNIX}", *ZONES[zone][0], "; MaxProcs: 4"]
    lines += [f"{i} {21600 * (i - 1)} 0 60 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1" for i in range(1, 41)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _date(rng: random.Random, day: int) -> str:
    """A date of September 2001, plain or with an hour (``2001-09-14``, ``2001-09-14T05:00``)."""
    text = f"2001-09-{day:02d}"
    return text if rng.random() < 0.5 else f"{text}T{rng.randrange(24):02d}:00"


def _cases() -> list[tuple[str, str, str, str]]:
    """(zone, start, end, the expected message after the option or field), generated."""
    rng = random.Random(27)
    cases = []
    for zone, (_, label, first, last) in ZONES.items():
        for _ in range(2):
            late, early = sorted(rng.sample(range(9, 19), 2), reverse=True)
            start, end = f"2001-09-{late:02d}", _date(rng, early)  # the end a day or more earlier
            cases.append((zone, start, end, f"window end {end} must be after its start {start}; dates read in {label}"))
            same = _date(rng, rng.randrange(9, 19))
            cases.append((zone, same, same, f"window end {same} must be after its start {same}; dates read in {label}"))
            year = rng.randrange(2002, 2010)  # after the trace, or before it
            a, b = (f"{year}-01-{rng.randrange(1, 15):02d}", f"{year}-02-01") if rng.random() < 0.5 else (
                "2001-08-01", f"2001-09-0{rng.randrange(2, 8)}")  # fmt: skip
            cases.append((zone, a, b, f"no job of the trace is submitted in [{a}, {b}) (its jobs are "
                          f"submitted from {first} to {last}); dates read in {label}"))  # fmt: skip
    return cases


CASES = _cases()
IDS = [f"{z}-{a}-{b}" for z, a, b, _ in CASES]


@pytest.mark.parametrize(("zone", "start", "end", "message"), CASES, ids=IDS)
def test_run_window(tmp_path, capsys, zone, start, end, message):
    trace = _trace(tmp_path / "t.swf", zone)
    out = tmp_path / "out"
    code = main(["run", "--trace", str(trace), "--policy", "fcfs", "--window", start, end, "--out", str(out)])
    assert code == 2
    assert capsys.readouterr().err == f"o2ksim: error: --window {start} {end}: {message}\n"
    assert not out.exists()


def _scenario(tmp_path: Path, trace: Path, start: str, end: str, reduced: bool) -> Path:
    path = tmp_path / "s.toml"
    window = f'window = ["{start}", "{end}"]\n'
    text = f'name = "s"\npolicies = ["fcfs"]\n[workload]\ntrace = "{trace}"\n[protocol]\nwarmup = 0\n'
    text += f"[reduced]\nprotocol.{window}" if reduced else window
    path.write_text(text)
    return path


@pytest.mark.parametrize(("zone", "start", "end", "message"), CASES, ids=IDS)
def test_scenario_run(tmp_path, capsys, zone, start, end, message):
    path = _scenario(tmp_path, _trace(tmp_path / "t.swf", zone), start, end, reduced=False)
    out = tmp_path / "res"
    assert main(["scenario", "run", str(path), "--out", str(out), "-j", "1"]) == 2
    assert capsys.readouterr().err == f"o2ksim: error: {path}: field protocol.window: {message}\n"
    assert not out.exists()


@pytest.mark.parametrize(("zone", "start", "end", "message"), CASES[::3], ids=IDS[::3])
def test_scenario_check(tmp_path, capsys, zone, start, end, message):
    """``scenario check`` runs the [reduced] window: refused the same way, nothing written
    (no expected summary, no results)."""
    path = _scenario(tmp_path, _trace(tmp_path / "t.swf", zone), start, end, reduced=True)
    assert main(["scenario", "check", str(path), "-j", "1"]) == 2
    assert capsys.readouterr().err == f"o2ksim: error: {path}: field protocol.window: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml", "t.swf"]


@pytest.mark.parametrize(("zone", "start", "end", "message"), CASES, ids=IDS)
def test_the_api(tmp_path, zone, start, end, message):
    """``simulate`` takes dates too (read like ``--window``) and refuses them in one line
    naming the parameter, from a path and from a Trace already read."""
    trace = _trace(tmp_path / "t.swf", zone)
    for workload in (str(trace), read_swf(trace)):
        with pytest.raises(O2KSimError) as caught:
            simulate(workload, policy="fcfs", window=(start, end))
        assert str(caught.value) == f"window: {message}"


def test_the_api_reads_dates_like_the_cli(tmp_path):
    """A window of dates the API accepts is the one ``--window`` reads: 2001-09-14 00:00 EDT
    is 2001-09-14 04:00 UTC = 4 d 2 h 13 min 20 s after 2001-09-09 01:46:40 UTC = 440,000 s."""
    trace = _trace(tmp_path / "t.swf", "new-york")
    result = simulate(str(trace), policy="fcfs", window=("2001-09-14", "2001-09-15", "1d"))
    assert result.config["window"] == [440_000.0, 440_000.0 + 86400, 86400.0]
    # the jobs submitted at 6 h steps in [440,000 s, 526,400 s): 453,600 ... 518,400 s, 4 jobs
    assert result.summary["jobs"] == len([i for i in range(40) if 440_000 <= 21600 * i < 526_400]) == 4


def test_a_bound_with_its_own_offset_is_shown_with_the_date_it_stands_for(tmp_path, capsys):
    """2001-09-14T00:00+00:00 is 2001-09-13 20:00 in New York: the message shows both."""
    trace = _trace(tmp_path / "t.swf", "new-york")
    assert main(["run", "--trace", str(trace), "--window", "2001-09-14", "2001-09-14T00:00+00:00"]) == 2
    assert capsys.readouterr().err == (
        "o2ksim: error: --window 2001-09-14 2001-09-14T00:00+00:00: window end "
        "2001-09-14T00:00+00:00 (2001-09-13 20:00 EDT) must be after its start 2001-09-14; "
        "dates read in America/New_York (the trace header's TimeZoneString)\n"
    )


def test_durations_keep_their_message(tmp_path, capsys):
    """Durations typed are answered in durations, as before (no zone: none was used)."""
    trace = _trace(tmp_path / "t.swf", "new-york")
    assert main(["run", "--trace", str(trace), "--window", "5d", "3d"]) == 2
    assert capsys.readouterr().err == "o2ksim: error: --window 5d 3d: window end (3d) must be after its start (5d)\n"


NY = "; dates read in America/New_York (the trace header's TimeZoneString)"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    """An ``o2ksim run --out`` folder of the New York trace (every job runs 60 s, one by one)."""
    root = tmp_path_factory.mktemp("runfolder")
    trace = _trace(root / "t.swf", "new-york")
    assert main(["run", "--trace", str(trace), "--policy", "fcfs", "--out", str(root / "r"), "-q"]) == 0
    return root / "r"


@pytest.mark.parametrize("command", ["gantt", "play"])
def test_gantt_and_play_read_dates_in_the_header_zone_and_say_them(run_folder, tmp_path, capsys, command):
    """``--start``/``--end`` of a run folder: dates in the trace's zone, as ``--window``, and a
    reversed range quoted as typed.  They used to be read in UTC, 4 hours off in New York."""
    out = tmp_path / ("g.png" if command == "gantt" else "p.html")
    args = [command, str(run_folder), "-o", str(out)]
    assert main([*args, "--start", "2001-09-14", "--end", "2001-09-12"]) == 2
    assert capsys.readouterr().err == (
        "o2ksim: error: --start 2001-09-14 --end 2001-09-12: the end 2001-09-12 must be after the "
        f"start 2001-09-14{NY}\n"
    )
    # the job submitted 4 x 6 h = 24 h after 2001-09-08 21:46:40 EDT runs 21:46:40 to 21:47:40 EDT
    # on 2001-09-09: in New York's 21:00-22:00 (in UTC that hour holds no job: 01:46:40 is its)
    assert main([*args, "--start", "2001-09-09T21:00", "--end", "2001-09-09T22:00"]) == 0
    assert out.exists()
    assert "no job holds" not in capsys.readouterr().err
    assert main([*args, "--start", "2001-09-14T02:00", "--end", "2001-09-14T03:00"]) == (0 if command == "gantt" else 2)
    said = "warning: no job holds processors" if command == "gantt" else "error: nothing happens"
    where = "" if command == "gantt" else f" in {run_folder}"
    tail = "; no chart written" if command == "gantt" else ""
    assert capsys.readouterr().err == (
        f"o2ksim: {said} between 2001-09-14T02:00 and 2001-09-14T03:00{where}{NY}{tail}\n"
    )


def test_play_after_the_run_says_its_end_as_a_date(run_folder, tmp_path, capsys):
    """The last job is submitted at 2001-09-18 15:46:40 EDT and runs 60 s: the run ends then."""
    assert main(["play", str(run_folder), "-o", str(tmp_path / "p.html"), "--start", "2002-01-01"]) == 2
    assert capsys.readouterr().err == (
        f"o2ksim: error: --start 2002-01-01: the run ends at 2001-09-18 15:47:40 EDT; choose a start before it{NY}\n"
    )


def test_predict_fit_window_too_few_jobs_in_the_dates_typed(tmp_path, capsys):
    """``predict --fit-window`` of dates that hold too few jobs said
    ``[9.8612e+06, 1.25396e+07) s`` (found by this change's search for seconds in messages)."""
    trace = _trace(tmp_path / "t.swf", "new-york")
    out = tmp_path / "pred"
    args = ["predict", str(trace), "--out", str(out), "--fit-window", "2002-01-01", "2002-02-01"]
    assert main(args) == 2
    assert capsys.readouterr().err == (
        "o2ksim: error: --fit-window 2002-01-01 2002-02-01: only 0 job(s) submitted in "
        f"[2002-01-01, 2002-02-01) with a positive run time to fit (need at least 10){NY}\n"
    )
    assert not out.exists()
    # jobs come at 03:46:40, 09:46:40, 15:46:40 and 21:46:40 EDT; from 2001-09-09 12:00 to
    # 2001-09-11 00:00 EDT: 15:46:40 and 21:46:40 on the 9th, four on the 10th: 6, fewer than 10
    args[-2:] = ["2001-09-09T12:00", "2001-09-11"]
    assert main(args) == 2
    assert capsys.readouterr().err == (
        "o2ksim: error: --fit-window 2001-09-09T12:00 2001-09-11: only 6 job(s) submitted in "
        f"[2001-09-09T12:00, 2001-09-11) with a positive run time to fit (need at least 10){NY}\n"
    )


def test_validate_says_the_zone_its_dates_were_read_in(tmp_path, capsys):
    """As ``run`` does: jobs come at 03:46:40, 09:46:40, 15:46:40, 21:46:40 EDT, so the two New
    York days hold 8 of the 40 (in UTC, 4 hours earlier, the window would start at 20:00 EDT
    and still hold 8, so the count alone cannot tell: the note says which zone)."""
    trace = _trace(tmp_path / "t.swf", "new-york")
    assert main(["validate", str(trace), "--policy", "fcfs", "--window", "2001-09-12", "2001-09-14"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [
        "o2ksim: note: --window dates read in America/New_York (the trace header's TimeZoneString): "
        "[2001-09-12 00:00 EDT, 2001-09-14 00:00 EDT)",
        f"o2ksim: note: {trace}: 8 of 40 jobs compared (32 outside the window)",
    ]
    assert main(["validate", str(trace), "--policy", "fcfs", "--window", "2001-09-14", "2001-09-12"]) == 2
    assert capsys.readouterr().err == (
        f"o2ksim: error: --window 2001-09-14 2001-09-12: window end 2001-09-12 must be after its start 2001-09-14{NY}\n"
    )


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_later_refusal_stays_one_line_after_a_dated_window(tmp_path, capsys, command):
    """The zone note waits for every check: a window of dates and an unknown machine printed
    the note, then the error (two lines for a refusal)."""
    trace = _trace(tmp_path / "t.swf", "new-york")
    args = ["--window", "2001-09-12", "2001-09-14", "--machine", "nosuch"]
    argv = ["run", "--trace", str(trace), *args] if command == "run" else ["validate", str(trace), *args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("o2ksim: error: unknown machine 'nosuch'")
