"""Options and arguments that did nothing, or something else than asked, without a word
(issue 27, the fourth audit): each is now refused in one line (exit 2, naming the option),
or said on screen.  Every expectation here is a property of the message or a count made by
hand, not an output of o2ksim."""

from __future__ import annotations

from pathlib import Path

import pytest

from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from o2ksim.run.api import simulate

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")
KTH = str(ROOT / "traces" / "kth-sp2-sample.swf")


def refused(capsys: pytest.CaptureFixture[str], argv: list[str], *words: str) -> str:
    """``argv`` exits 2 with one line on stderr holding every word; that line."""
    assert main(argv) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1, err
    for word in words:
        assert word in err[0], (word, err[0])
    return err[0]


@pytest.mark.parametrize("option", ["--set", "--versus"])
def test_a_key_given_twice_is_refused_not_the_last_kept(capsys, tmp_path, option):
    if option == "--set":
        argv = ["run", "--trace", TINY, "-q", "--set", "reservations=2", "--set", "reservations=3"]
    else:
        argv = ["explain", "--gantt", str(tmp_path / "g.png"), "--versus", "reservations=2",
                "--versus", "reservations=3"]  # fmt: skip
    refused(capsys, argv, f"{option} reservations", "given twice", "reservations=2", "reservations=3")
    assert not (tmp_path / "g.png").exists()


def test_a_reservation_count_beyond_any_queue_is_refused(capsys):
    refused(capsys, ["run", "--trace", TINY, "-q", "--reservations", str(2**64)], "--reservations")
    refused(capsys, ["run", "--trace", TINY, "-q", "--set", f"reservations={2**31}"], "reservations")
    assert main(["run", "--trace", TINY, "-q", "--reservations", str(2**31 - 1)]) == 0


def test_policy_params_need_string_names():
    with pytest.raises(O2KSimError, match=r"policy_params.*parameter names are strings"):
        simulate(TINY, policy_params={1: 1})


@pytest.mark.parametrize("value", ["0", "-1"])
def test_explain_max_jobs_must_be_at_least_one(capsys, value):
    refused(capsys, ["explain", "--max-jobs", value], f"--max-jobs {value}", "at least 1")


def test_play_names_its_own_limit(capsys, tmp_path):
    line = refused(capsys, ["play", "explain-backfill", "--max-jobs", "1", "-o", str(tmp_path / "p.html")],
                   "--max-jobs", "6 jobs")  # fmt: skip  (the scenario's six jobs, counted by hand)
    assert "explain prints" not in line


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--model", "downey", "--accuracy", "paper"], "--accuracy"),
        (["--model", "downey", "--size-fit", "exact"], "--size-fit"),
        (["--model", "downey", "--size-segments", "3"], "--size-segments"),
        (["--size-fit", "paper", "--size-segments", "3"], "--size-segments"),
    ],
)
def test_fit_options_of_another_model_or_fit_are_refused(capsys, extra, named):
    refused(capsys, ["fit", KTH, *extra], named)


def test_predict_whole_queue_sample_with_no_whole_queue_is_refused(capsys, tmp_path):
    refused(capsys, ["predict", KTH, "--no-whole-queue", "--whole-queue-sample", "5",
                     "--out", str(tmp_path / "p")], "--whole-queue-sample", "--no-whole-queue")  # fmt: skip
    assert not (tmp_path / "p").exists()


def test_characterize_no_figures_without_out_and_an_empty_out_are_refused(capsys):
    refused(capsys, ["characterize", TINY, "--no-figures"], "--no-figures", "--out")
    refused(capsys, ["characterize", TINY, "--out", ""], "--out", "empty")


SCENARIO = """
name = "{name}"
machine = "kth-sp2"
policies = [{policies}]
[workload]
trace = "{trace}"
[outputs]
report = false
"""


def scenario(tmp_path: Path, name: str, policies: str) -> str:
    path = tmp_path / f"{name}-{len(policies)}.toml"
    path.write_text(SCENARIO.format(name=name, policies=policies, trace=TINY))
    return str(path)


def test_scenario_run_with_an_empty_out_is_refused(capsys, tmp_path):
    refused(capsys, ["scenario", "run", scenario(tmp_path, "a", '"fcfs"'), "--out", "", "-q"],
            "--out", "empty")  # fmt: skip


def test_another_scenario_into_a_results_folder_is_refused(capsys, tmp_path):
    out = str(tmp_path / "r")
    assert main(["scenario", "run", scenario(tmp_path, "a", '"fcfs"'), "--out", out, "-q", "-j", "1"]) == 0
    plan = (tmp_path / "r" / "plan.json").read_text()
    refused(capsys, ["scenario", "run", scenario(tmp_path, "b", '"fcfs"'), "--out", out, "-q", "-j", "1"],
            "scenario 'a'", "scenario 'b'", out)  # fmt: skip
    assert (tmp_path / "r" / "plan.json").read_text() == plan  # untouched


def test_runs_of_an_earlier_plan_are_said(capsys, tmp_path):
    out = str(tmp_path / "r")
    both = scenario(tmp_path, "a", '"fcfs", "fcfs-backfill"')
    assert main(["scenario", "run", both, "--out", out, "-q", "-j", "1"]) == 0
    one = scenario(tmp_path, "a", '"fcfs"')
    assert main(["scenario", "run", one, "--out", out, "-j", "1"]) == 0
    said = capsys.readouterr().out.splitlines()[0]
    assert "1 stored run(s) of an earlier plan left out" in said  # fcfs-backfill's, by hand
    assert "fcfs-backfill" in said


def test_simulate_says_which_jobs_it_rejected(tmp_path):
    from o2ksim.errors import RejectedJobsWarning

    trace = tmp_path / "big.swf"
    trace.write_text(  # two jobs; the second asks 200 processors of a 100-processor machine
        "; MaxProcs: 100\n"
        "1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
        "2 10 -1 100 200 -1 -1 200 200 -1 1 1 1 -1 1 -1 -1 -1\n"
    )
    with pytest.warns(RejectedJobsWarning, match=r"^rejected 1: .*200") as caught:
        result = simulate(str(trace), machine="kth-sp2")
    assert len(caught) == 1
    assert int((result.jobs["status"] == "rejected").sum()) == 1


@pytest.mark.parametrize("value", [-1, "x", None])
def test_validate_outage_min_is_checked_and_named(value):
    from o2ksim import validate

    with pytest.raises(O2KSimError, match="outage_min"):
        validate(KTH, outage_min=value)


def test_a_dangling_symlink_as_out_is_named_as_such(capsys, tmp_path):
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "missing" / "folder")
    refused(capsys, ["run", "--trace", TINY, "-q", "--out", str(link)], "symbolic link", "does not exist")
    assert link.is_symlink() and not (tmp_path / "missing").exists()


def test_a_full_disk_at_the_summary_table_says_the_runs_are_stored(capsys, tmp_path, monkeypatch):
    import errno

    import pandas as pd

    real = pd.DataFrame.to_parquet

    def full_at_summary(self, path, *args, **kwargs):  # the runs' tables are written; not the summary
        if ".summary.parquet" in str(path):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full_at_summary)
    out = tmp_path / "r"
    line = refused(capsys, ["scenario", "run", scenario(tmp_path, "a", '"fcfs"'), "--out", str(out),
                            "-q", "-j", "1"], "summary table", "No space left on device",
                   "runs stored", "are complete")  # fmt: skip
    assert "nothing was written" not in line
    assert [d for d in (out / "runs").iterdir() if (d / "summary.json").exists()]  # the run is stored


@pytest.mark.parametrize("text", ["{", ""])
def test_a_damaged_run_json_is_named_as_damaged(capsys, tmp_path, text):
    folder = tmp_path / "run"
    assert main(["run", "--trace", TINY, "-q", "--out", str(folder)]) == 0
    (folder / "run.json").write_text(text)
    line = refused(capsys, ["report", str(folder)], "run.json", "not a readable run record")
    assert "without --report" not in line


def test_explain_all_reservations_under_a_policy_without_any_says_so(capsys):
    assert main(["explain", "--policy", "fcfs", "--all-reservations"]) == 0
    out = capsys.readouterr().out
    assert "--all-reservations: this run made no reservation (fcfs)" in out
    assert main(["explain", "--all-reservations"]) == 0  # the backfill example reserves
    assert "made no reservation" not in capsys.readouterr().out


def test_a_byte_order_mark_is_not_part_of_a_configuration_file(tmp_path):
    """Windows editors start UTF-8 files with a BOM; the SWF reader skipped it, the
    availability and TOML readers took it for the first header or key."""
    from o2ksim.machine import load_machine

    avail = tmp_path / "a.csv"
    avail.write_bytes(b"\xef\xbb\xbfhost,from,to,procs\nsp2,0,100,all\n")
    machine = tmp_path / "m.toml"
    machine.write_bytes(b'\xef\xbb\xbfname = "m"\n[[host]]\nname = "sp2"\nprocs = 4\n')
    assert load_machine(str(machine)).total_procs == 4
    r = simulate(TINY, machine=str(machine), availability=str(avail))
    assert len(r.jobs) == 8  # tiny.swf's eight jobs (counted in the file)
