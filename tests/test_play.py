"""The step-through player's data and page (``o2ksim play``), checked against T§3.2.1 Fig. 1-2.

The expected values are worked out by hand from the scenario (one host of 8
processors; J1 4 procs requests 60 min runs 50; J2 2 procs 30/30; J3 6 procs at
1 min, 60/60; J4 4 procs at 2 min, 30/30; J10 2 procs at 3 min requests 20 runs
15; J11 2 procs at 5 min requests 45 runs 40):

* at 1 min J3 needs 6 processors, 2 are free; by requested runtimes J2 frees
  2 at 30 min (4 free), J1 frees 4 at 60 min (8 free): J3 is reserved at 60 min
  (the shadow time t2), on the pass of t0 = 1 min;
* J10 (3 min, requests 20) ends by 23 min < 60: backfilled, "ends before the shadow time";
* J10 ends at 18 min; J11 (requests 45) would end at 63 min > 60, but at 60 min
  8 - 6 = 2 processors are extra and J11 needs 2: "uses extra processors";
* J1 ends at 50 min (t'), J2 ended at 30: 6 free, J3 starts at 50 min < t2 (Fig. 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from o2ksim.report.player import player_html, write_player
from o2ksim.report.player_data import ENDS_BEFORE, EXTRA_PROCS, assign_lanes, player_data

MIN = 60.0


@pytest.fixture(scope="module")
def fig1() -> dict:
    return player_data("explain-backfill")


def frame_of(data: dict, event: str, job: int | None, time: float | None = None) -> list:
    """The frame of the first log line with this event, job (and time)."""
    for line, frame in zip(data["log"], data["frames"], strict=True):
        if line[1] == event and line[2] == job and (time is None or line[0] == time):
            return frame
    raise AssertionError(f"no {event} line for J{job}")


def test_one_frame_per_log_line(fig1):
    assert len(fig1["frames"]) == len(fig1["log"]) > 20
    times = [f[0] for f in fig1["frames"]]
    assert times == sorted(times)
    assert [line[0] for line in fig1["log"]] == times


def test_reservation_block_and_its_slide(fig1):
    f = frame_of(fig1, "reserved", 3)
    assert f[0] == 1 * MIN
    assert f[2] == [[3, 0, 60 * MIN]]  # J3 on host 0 from 60 min
    ((t0, host, t2, moves, started),) = fig1["history"]["3"]
    assert (t0, host, t2, moves, started) == (1 * MIN, 0, 60 * MIN, [], 50 * MIN)  # t0, t2, t'
    f = frame_of(fig1, "starts", 3)
    assert f[2] == [] and 3 in [r[0] for r in f[1]]


def test_backfill_reasons(fig1):
    assert fig1["tags"] == {"10": ENDS_BEFORE, "11": EXTRA_PROCS}


def test_queue_running_and_free(fig1):
    f = frame_of(fig1, "waiting", None, 5 * MIN)
    assert f[3] == [3, 4, 11]  # FCFS order
    assert f[5] == 3
    assert sorted(r[0] for r in f[1]) == [1, 2, 10]
    assert f[6] == [0]  # 4 + 2 + 2 of 8 processors held
    # J10's requested-runtime ghost: started at 3 min, requests 20
    assert {r[0]: r[4] for r in f[1]}[10] == 23 * MIN
    f = frame_of(fig1, "ends", 1)  # J1 gone, J3 not started yet
    assert sorted(r[0] for r in f[1]) == [11] and f[6] == [6]


def test_lanes_never_overlap(fig1):
    lanes = fig1["lanes"]
    rows = {}
    for job, _host, start, end, procs, ranges in lanes:
        got = {
            r for k in range(0, len(ranges), 2) for r in range(ranges[k], ranges[k] + ranges[k + 1])
        }
        assert len(got) == procs
        rows[job] = (start, end, got)
    for a, (s1, e1, r1) in rows.items():
        for b, (s2, e2, r2) in rows.items():
            if a < b and s1 < e2 and s2 < e1:
                assert not r1 & r2, (a, b)


def test_resized_job_keeps_its_rows():
    """A job shrinking from 8 to 4 processors keeps 4 of its own rows (no jump)."""
    segs = {
        "job_id": [1, 1, 2], "host": ["a", "a", "a"], "start": [0.0, 60.0, 60.0],
        "end": [60.0, 100.0, 100.0], "procs": [8, 4, 4],
    }  # fmt: skip
    lanes = assign_lanes(segs, ["a"], [8])
    assert lanes[0][5] == [0, 8]
    assert [s[5] for s in lanes if s[0] == 1][1] == [0, 4]


def test_priority_parts_lxf():
    data = player_data("explain-backfill", params={"priority": "lxf"})
    assert data["parts"] == ["1×Jx"]
    f = frame_of(data, "waiting", None, 5 * MIN)
    # Jx = (wait + requested) / requested at 5 min: J3 (4+60)/60, J4 (3+30)/30, J11 (0+45)/45
    jx = {3: 64 / 60, 4: 33 / 30, 11: 1.0}
    assert f[3] == sorted(jx, key=lambda j: -jx[j])
    assert [round(p[0], 4) for p in f[4]] == [round(jx[j], 4) for j in f[3]]


def test_page_is_self_contained(tmp_path):
    page = player_html("explain-backfill")
    assert page.startswith("<!DOCTYPE html>")
    for needle in ("http://", "https://", " src=", "<link", "@import", "fetch("):
        assert needle not in page, needle
    out = write_player(tmp_path / "p.html", "explain-immediate")
    assert out.stat().st_size > 5000


def test_cli(tmp_path, capsys):
    out = tmp_path / "fig1.html"
    assert main(["play", "explain-backfill", "-o", str(out), "--set", "reservations=2"]) == 0
    assert "player:" in capsys.readouterr().out
    assert "reservations=2" in out.read_text()


def test_cli_bad_source(tmp_path, capsys):
    code = main(["play", str(tmp_path / "missing.toml"), "-o", str(tmp_path / "x.html")])
    err = capsys.readouterr().err
    assert code == 2 and "missing.toml" in err and "Traceback" not in err
    assert not Path(tmp_path / "x.html").exists()


@pytest.mark.parametrize("name", ["p.png", "p.svg", "p", "p.html.txt"])
def test_a_page_name_without_html_is_refused_before_the_work(tmp_path, capsys, name):
    """A browser opens a file by its extension: an HTML page written as ``p.png`` does
    not open, so the name is refused, from the CLI and the API, and nothing is written."""
    out = tmp_path / name
    code = main(["play", "explain-backfill", "-o", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "give a name ending in .html" in err[0]
    with pytest.raises(O2KSimError, match=r"write_player: path .*ending in \.html"):
        write_player(out, "explain-backfill")
    assert list(tmp_path.iterdir()) == []


def test_htm_and_upper_case_names_are_pages(tmp_path):
    for name in ("p.htm", "P.HTML"):
        assert write_player(tmp_path / name, "explain-backfill").read_text().startswith("<!DOCTYPE html>")


def test_versus_another_policy():
    page = player_html("explain-backfill", versus={"policy": "lxfw-backfill"})
    assert page.count('class="player"') == 2
    assert '"run":"fcfs-backfill: ' in page and '"run":"lxfw-backfill: ' in page


def test_priority_function_shows_its_score(tmp_path, monkeypatch):
    """A priority given as ``module:function`` (widest first, waiting breaks ties): the queue
    in its order with its score, Jp + 0.01 Jw at 5 min: J3 6 + 0.01*4/60, J4 4 + 0.01*3/60, J11 2."""
    (tmp_path / "widest_mod.py").write_text("def widest(q):\n    return q.jp + 0.01 * q.jw\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    data = player_data("explain-backfill", params={"priority": "widest_mod:widest"})
    assert data["priority"] == "widest_mod:widest" and not data["arrival_order"]
    f = frame_of(data, "waiting", None, 5 * MIN)
    assert f[3] == [3, 4, 11]
    assert f[4] == [[round(6 + 0.01 * 4 / 60, 4)], [round(4 + 0.01 * 3 / 60, 4)], [2.0]]
