"""The teaching view: the decision log of the thesis's Figure 1 example, hand-checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from o2ksim.experiments.scenario import parse_scenario
from o2ksim.explain import DecisionLog, clock, explain

REPO = Path(__file__).resolve().parents[1]
MIN = 60.0


def starts(result) -> dict[int, float]:
    return {
        int(j): s / MIN for j, s in zip(result.jobs["job_id"], result.jobs["start"], strict=True)
    }


def events(log: DecisionLog, event: str) -> list[tuple[float, int | None, str]]:
    return [(e.time / MIN, e.job, e.text) for e in log.entries if e.event == event]


def test_clock():
    assert clock(0) == "0:00:00"
    assert clock(3 * 3600 + 5 * 60 + 7) == "3:05:07"
    assert clock(30 * 3600) == "30:00:00"
    assert clock(2 * 86400 + 61) == "2d 00:01:01"
    assert clock(float("inf")) == "never"


def test_figure_1_one_reservation():
    """T§3.2.1 Fig. 1(a)-(b) and Fig. 2: J3 is reserved at 60 min; J10 is backfilled because
    it ends before that; J11 is backfilled on processors J3 does not need; J1 ends early and
    J3's reservation slides from 60 to 50 min."""
    result, log = explain("explain-backfill")
    assert starts(result) == {1: 0, 2: 0, 3: 50, 4: 110, 10: 3, 11: 18}
    assert events(log, "reserved") == [
        (1, 3, "h from 1:00:00 for 6 procs (2 free now): reservation 1 of 1"),
        (50, 4, "h from 1:50:00 for 4 procs (0 free now): reservation 1 of 1"),
    ]
    backfilled = events(log, "backfilled")
    assert [(t, j) for t, j, _ in backfilled] == [(3, 10), (18, 11)]
    assert backfilled[0][2].endswith(
        "delays no reservation; it ends by 0:23:00 (its requested time), before J3's reservation at 1:00:00"
    )
    assert (
        "may run past J3's reserved start at 1:00:00, but only on processors J3 does not need"
        in backfilled[1][2]
    )
    j3 = next(text for t, j, text in events(log, "starts") if j == 3)
    assert "after waiting 0:49:00" in j3 and "earlier than its reservation (1:00:00)" in j3
    ends = {j: t for t, j, _ in events(log, "ends")}
    assert ends == {10: 18, 2: 30, 1: 50, 11: 58, 3: 110, 4: 140}
    waiting = events(log, "waiting")
    assert waiting[0] == (1, None, "J3  (free procs: h=2)")


def test_figure_1_two_reservations_stop_j11():
    """Fig. 1(c): with N = 2, J4 is reserved too and J11 can no longer be backfilled at 18 min."""
    result, log = explain("explain-backfill", params={"reservations": 2})
    s = starts(result)
    assert s[11] > 18 and s[4] == 30 and s[10] == 3
    reserved = [(t, j) for t, j, _ in events(log, "reserved")]
    assert (2, 4) in reserved
    j10 = events(log, "backfilled")[0][2]
    assert "before the reservations of J3 (1:00:00) and J4 (0:30:00)" in j10


def test_strict_fcfs_has_no_reservations_or_backfilling():
    result, log = explain("explain-backfill", policy="fcfs")
    assert not events(log, "reserved") and not events(log, "backfilled")
    assert all("next in FCFS order and fits" in text for _, _, text in events(log, "starts"))
    s = starts(result)
    assert s[10] >= s[4] >= s[3]  # nobody overtakes


def test_every_job_arrives_and_ends_once_and_log_is_in_time_order():
    _result, log = explain("explain-backfill", queue=False)
    assert not events(log, "waiting")
    times = [e.time for e in log.entries]
    assert times == sorted(times)
    arrivals = [j for _, j, _ in events(log, "arrives")]
    assert sorted(arrivals) == [1, 2, 3, 4, 10, 11]
    assert sorted(j for _, j, _ in events(log, "ends")) == [1, 2, 3, 4, 10, 11]


def test_all_reservations_shows_every_recomputation():
    _r, quiet = explain("explain-backfill")
    _r, loud = explain("explain-backfill", all_reservations=True)
    assert len(events(loud, "reserved")) > len(events(quiet, "reserved"))


def test_rejections_and_the_job_limit():
    sc = parse_scenario(
        """
name = "rej"
policies = ["fcfs-backfill"]
[machine]
[[machine.host]]
name = "a"
procs = 4
[workload]
job = [{ submit = 0, procs = 8, runtime = "1m" }, { submit = 0, procs = 2, runtime = "1m" }]
"""
    )
    _r, log = explain(sc)
    assert events(log, "rejected")[0][1:] == (1, "requests 8 processors; the largest host has 4")
    with pytest.raises(O2KSimError, match="above the limit of 1"):
        explain(sc, max_jobs=1)


def test_cli_explain_prints_the_log_and_draws_the_gantt_chart(tmp_path, capsys):
    png = tmp_path / "fig1.png"
    assert main(["explain", "--set", "reservations=2", "--gantt", str(png)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# fcfs-backfill (reservations=2): 6 inline job(s) on fig1: 1 host(s), 8 processors")
    assert "J4    reserved    h from 0:30:00" in out
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["explain", "--set", "reservations"]) == 2


def test_teaching_gantt_marks_arrivals_reservations_requested_and_backfilled_jobs(tmp_path):
    """T§3.2.1 Fig. 1 (scenarios/explain-backfill.toml): J3 is reserved at J1's requested end
    (60 min), J10 and J11 are backfilled; with two reservations J4 is reserved too."""
    from o2ksim.explain import explain as run_explain
    from o2ksim.report.gantt import GanttRecorder, gantt_compare

    rec1, rec2 = GanttRecorder(), GanttRecorder()
    r1, _ = run_explain("explain-backfill", observers=(rec1,))
    r2, _ = run_explain("explain-backfill", params={"reservations": 2}, observers=(rec2,))
    t1 = rec1.teaching
    assert t1.reservations[0] == (3, "h", 3600.0)  # J1 requests 60 min from 0
    assert {10, 11} <= t1.backfilled
    assert t1.submit[11] == 300.0 and t1.requested[11] == 45 * 60.0
    assert 4 in {j for j, _h, _a in rec2.teaching.reservations}
    fig = gantt_compare(
        [(r1.segments, "reservations=1", t1), (r2.segments, "reservations=2", rec2.teaching)],
        {"h": 8},
    )
    legend = {t.get_text() for t in fig.legends[0].get_texts()}
    assert legend == {
        "backfilled (hatched)", "requested runtime (dashed whisker)",
        "reservation: procs x requested time (dotted: where it was made)", "arrival (triangle)",
    }  # fmt: skip
    assert [ax.get_title() for ax in fig.axes] == ["reservations=1", "reservations=2"]


def test_gantt_of_an_empty_window_is_a_one_line_warning(tmp_path, capsys):
    png = tmp_path / "g.png"
    assert main(["gantt", "explain-backfill", "-o", str(png), "--start", "5h", "--end", "6h"]) == 0
    err = capsys.readouterr().err.strip()
    assert err == "o2ksim: warning: no job holds processors between 5h and 6h; no chart written"
    assert not png.exists()


def test_explain_header_shows_every_override_and_lists_rejected_jobs(tmp_path, capsys):
    sc = tmp_path / "s.toml"
    sc.write_text(
        """
policies = ["fcfs-backfill"]
[machine]
name = "m"
[[machine.host]]
name = "h"
procs = 4
[workload]
job = [
  { id = 1, submit = 0, procs = 2, runtime = 60, requested = 60 },
  { id = 2, submit = 0, procs = 8, runtime = 60, requested = 60 },
]
"""
    )
    assert main(["explain", str(sc), "--set", "reservations=2", "--no-queue"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# fcfs-backfill (reservations=2): 2 inline job(s) on m:")
    assert "# 1 job(s) rejected:" in out and "#   J2: " in out


def test_gantt_draws_preempted_and_resized_intervals_from_the_segments():
    """Hand-made segments: J1 holds 4 procs 0-100, is preempted 100-150 (keeps its memory:
    a 0-processor segment), resumes 150-200; J2 grows from 2 to 4 procs at 60."""
    import pandas as pd
    from matplotlib.patches import Rectangle

    from o2ksim.report.gantt import gantt_figure

    segs = pd.DataFrame(
        [(1, "h", 0, 100, 4, 0), (1, "h", 100, 150, 0, 10), (1, "h", 150, 200, 4, 0),
         (2, "h", 0, 60, 2, 0), (2, "h", 60, 120, 4, 0), (3, "h", 100, 150, 4, 0)],
        columns=["job_id", "host", "start", "end", "procs", "mem"],
    )  # fmt: skip
    fig = gantt_figure(segs, {"h": 10})
    ax = fig.axes[0]
    texts = {t.get_text() for t in ax.texts}
    assert "J1 suspended" in texts and "J2 2→4" in texts
    hatched = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch() == ".."]
    # in its own lane under the 10 processor rows, not over J3, which runs on its processors
    assert [(p.get_x() * 60, (p.get_x() + p.get_width()) * 60) for p in hatched] == [(100.0, 150.0)]
    assert hatched[0].get_y() + hatched[0].get_height() <= 0


def test_run_header_and_gantt_name_overrides_and_rejected_jobs(tmp_path, capsys):
    sc = tmp_path / "s.toml"
    sc.write_text(
        """
[[policy]]
name = "fcfs-backfill"
params = { reservations = 2 }
[machine]
name = "m"
[[machine.host]]
name = "h"
procs = 4
[workload]
job = [
  { id = 1, submit = 0, procs = 2, runtime = 60, requested = 60 },
  { id = 2, submit = 0, procs = 8, runtime = 60, requested = 60 },
]
"""
    )
    assert main(["gantt", str(sc), "-o", str(tmp_path / "g.png")]) == 0
    out = capsys.readouterr().out
    assert "1 job(s) rejected (not drawn):" in out and "  J2: " in out
    assert main(["run", "--trace", str(Path(__file__).parents[1] / "traces" / "tiny.swf"), "--reservations", "2",
                 "--estimates", "actual", "-q"]) == 0  # fmt: skip
    assert main(["run", "--trace", str(Path(__file__).parents[1] / "traces" / "tiny.swf"), "--reservations", "2",
                 "--estimates", "actual"]) == 0  # fmt: skip
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("policy fcfs-backfill (reservations=2, estimates actual) on ")
