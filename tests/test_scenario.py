"""Scenario files: validation, the plan of runs, and the shipped scenarios against their
committed expected summaries (what CI runs, at reduced size)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

import o2ksim
from o2ksim.cli import main
from o2ksim.errors import ConfigError
from o2ksim.experiments.expected import compare_expected, expected_path
from o2ksim.experiments.scenario import (
    available_scenarios,
    load_scenario,
    parse_scenario,
    simulate_run,
)
from o2ksim.experiments.sweep import run_sweep
from o2ksim.run.api import simulate
from o2ksim.run.workload import build_workload, inline_jobs_frame
from o2ksim.workloads.transforms import Window

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "traces" / "kth-sp2-sample.swf"

BASIC = """
name = "basic"
description = "two policies on the KTH sample"
policies = ["fcfs", "fcfs-backfill"]
[workload]
trace = "traces/kth-sp2-sample.swf"
[protocol]
window = ["9d", "12d"]
warmup = "1d"
"""


def test_plan_crosses_seeds_factors_and_policies_policies_fastest():
    sc = parse_scenario(
        BASIC
        + """seeds = [3, 4]
[factors]
workload.estimates = ["requested", "actual", "scenario-a:50"]
"""
    )
    runs = sc.plan()
    assert len(runs) == 2 * 3 * 2
    assert [r.factors["policy"] for r in runs[:4]] == ["fcfs", "fcfs-backfill"] * 2
    assert runs[0].factors == {"policy": "fcfs", "workload.estimates": "requested", "seed": 3}
    assert runs[-1].factors == {
        "policy": "fcfs-backfill",
        "workload.estimates": "scenario-a:50",
        "seed": 4,
    }
    assert runs[2].config["workload"]["estimates"] == "actual"
    assert runs[-1].config["protocol"]["seed"] == 4
    assert runs[0].config["protocol"]["window"] == ["9d", "12d"]
    assert runs[0].config["protocol"]["warmup"] == 86400.0
    assert len({r.run_id for r in runs}) == len(runs)
    # identity comes from the configuration: the same file plans the same ids
    assert [r.run_id for r in parse_scenario(BASIC + "seeds = [3, 4]\n[factors]\n"
            'workload.estimates = ["requested", "actual", "scenario-a:50"]\n').plan()] == [r.run_id for r in runs]  # fmt: skip


def test_run_id_changes_with_the_configuration():
    a = parse_scenario(BASIC).plan()[0]
    b = parse_scenario(BASIC.replace('warmup = "1d"', 'warmup = "2d"')).plan()[0]
    assert a.factors == b.factors
    assert a.run_id != b.run_id
    assert a.run_id.startswith("fcfs-seed0-")


def test_policy_tables_labels_params_and_policy_factor():
    sc = parse_scenario(
        """
name = "res"
[[policy]]
name = "fcfs-backfill"
label = "EASY"
[[policy]]
name = "sjf-backfill"
params = { priority = "sjf" }
[workload]
trace = "traces/tiny.swf"
[factors]
policy.reservations = [1, 3]
"""
    )
    labels = [r.factors["policy"] for r in sc.plan()]
    assert labels == ["EASY", "sjf-backfill(priority=sjf)"] * 2
    assert [r.config["policy"]["params"]["reservations"] for r in sc.plan()] == [1, 1, 3, 3]
    assert sc.plan()[1].config["policy"]["params"] == {"priority": "sjf", "reservations": 1}
    assert len({r.run_id for r in sc.plan()}) == 4
    with pytest.raises(ConfigError, match="already fixes") as info:
        parse_scenario(
            '[[policy]]\nname = "fcfs-backfill"\nparams = { reservations = 2 }\n'
            '[workload]\ntrace = "traces/tiny.swf"\n[factors]\npolicy.reservations = [1, 3]\n'
        )
    assert info.value.field == "factors.policy.reservations"


def test_model_workload_seed_follows_the_run_seed_unless_fixed():
    text = """
name = "m"
machine = "o2k"
policies = ["fcfs"]
[workload]
model = "o2k"
span = "10d"
params = { }
[protocol]
seeds = [5, 6]
"""
    runs = parse_scenario(text).plan()
    assert [r.config["workload"]["seed"] for r in runs] == [5, 6]
    assert runs[0].config["workload"]["span"] == 10 * 86400.0
    fixed = parse_scenario(text.replace('span = "10d"', 'span = "10d"\nseed = 9')).plan()
    assert [r.config["workload"]["seed"] for r in fixed] == [9, 9]
    assert [r.config["protocol"]["seed"] for r in fixed] == [5, 6]


def test_reduced_overrides_apply_only_when_asked(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text(
        BASIC
        + 'seeds = [1, 2, 3]\n[reduced]\nprotocol.seeds = [1]\nprotocol.window = ["9d", "10d"]\n'
    )
    full = load_scenario(path)
    small = load_scenario(path, reduced=True)
    assert len(full.plan()) == 6 and len(small.plan()) == 2
    assert small.protocol["window"] == ["9d", "10d"]
    assert full.has_reduced and small.reduced
    assert small.default_out_dir() == Path("results/basic-reduced")
    with pytest.raises(ConfigError, match="no \\[reduced\\] table"):
        parse_scenario(BASIC, reduced=True)


def test_trace_paths_resolve_relative_to_the_scenario_file(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.swf").write_text((REPO / "traces" / "tiny.swf").read_text())
    path = tmp_path / "s.toml"
    path.write_text('policies = ["fcfs"]\n[workload]\ntrace = "data/t.swf"\n')
    sc = load_scenario(path)
    assert sc.name == "s"
    assert sc.workload["trace"] == str((tmp_path / "data" / "t.swf").resolve())
    # the repository's traces/ directory is searched by file name too (from a non-editable
    # install, such as the compiled build's: the copy pip put in <prefix>/share/o2ksim/traces)
    sc2 = parse_scenario('policies = ["fcfs"]\n[workload]\ntrace = "kth-sp2-sample.swf"\n')
    from_repo = Path(o2ksim.__file__).resolve().parent == REPO / "o2ksim"
    shipped = SAMPLE if from_repo else Path(sys.prefix) / "share" / "o2ksim" / "traces" / SAMPLE.name
    assert sc2.workload["trace"] == str(shipped.resolve())


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (
            'policies = ["fcfs"]\nbogus = 1\n[workload]\ntrace = "traces/tiny.swf"\n',
            "bogus",
            "unknown key",
        ),
        ('policies = ["fcfs"]\n', "workload", "needs a \\[workload\\]"),
        (
            'policies = ["fcfs"]\n[workload]\ntrace = "traces/tiny.swf"\nmodel = "o2k"\n',
            "workload",
            "exactly one",
        ),
        ('policies = ["fcfs"]\n[workload]\ntrace = "nowhere.swf"\n', "workload.trace", "not found"),
        ('policies = ["fcfs"]\n[workload]\nmodel = "o2k"\n', "workload.span", "needs span"),
        (
            'policies = ["fcfs"]\n[workload]\nmodel = "o2k"\nspan = "ten days"\n',
            "workload.span",
            "not a duration",
        ),
        (
            'policies = ["no-such-policy"]\n[workload]\ntrace = "traces/tiny.swf"\n',
            "policy",
            "unknown policy",
        ),
        (
            '[[policy]]\nname = "fcfs-backfill"\nparams = { reservatons = 2 }\n[workload]\ntrace = "traces/tiny.swf"\n',
            "policy",
            "reservatons",
        ),
        (
            'policies = ["fcfs"]\n[workload]\ntrace = "traces/tiny.swf"\nestimates = "psychic"\n',
            "workload.estimates",
            "unknown runtime-estimate",
        ),
        (
            'policies = ["fcfs"]\n[workload]\ntrace = "traces/tiny.swf"\n[protocol]\nwarmup = "1d"\n',
            "protocol.warmup",
            "needs a window",
        ),
        (
            'policies = ["fcfs"]\n[workload]\ntrace = "traces/tiny.swf"\nwindow = [0, 10]\n[protocol]\nwindow = [0, 5]\n',
            "protocol.window",
            "not both",
        ),
        (
            'policies = ["fcfs"]\n[workload]\ntrace = "traces/tiny.swf"\n[protocol]\nseeds = [1, 1]\n',
            "protocol.seeds",
            "distinct",
        ),
        (
            'policies = ["fcfs"]\n[workload]\ntrace = "traces/tiny.swf"\n[factors]\nload = [1]\n',
            "factors.load",
            "a factor is",
        ),
        (
            'policies = ["fcfs"]\n[workload]\ntrace = "traces/tiny.swf"\n[factors]\nworkload.colour = [1, 2]\n',
            "factors.workload.colour",
            "no key",
        ),
        (
            'policies = ["fcfs"]\n[workload]\ntrace = "traces/tiny.swf"\n[factors]\nworkload.load = []\n',
            "factors.workload.load",
            "non-empty",
        ),
        (
            'policies = ["fcfs", "fcfs"]\n[workload]\ntrace = "traces/tiny.swf"\n',
            "policy",
            "unique",
        ),
        (
            'policies = ["fcfs"]\n[workload]\njob = [{ submit = 0, procs = 0, runtime = 5 }]\n',
            "workload.job[1].procs",
            "positive",
        ),
    ],
)
def test_invalid_scenarios_name_the_field(text, field, message):
    with pytest.raises(ConfigError, match=message) as info:
        parse_scenario(text, path=str(REPO / "x.toml"))
    assert info.value.field == field or (info.value.field or "").startswith(field)
    assert str(info.value).startswith(str(REPO / "x.toml"))


def test_toml_syntax_error_has_the_line():
    with pytest.raises(ConfigError) as info:
        parse_scenario('name = "a"\nx = = 1\n', path="bad.toml")
    assert info.value.line == 2
    assert str(info.value).startswith("bad.toml:2: ")


def test_inline_jobs_become_swf_rows_with_memory_per_processor():
    sc = parse_scenario(
        """
policies = ["fcfs"]
[workload]
job = [
  { id = 7, submit = "1m", procs = 4, runtime = "10m", requested = "1h", mem_gb = 2 },
  { submit = 0, procs = 1, runtime = 30 },
]
"""
    )
    frame = inline_jobs_frame(sc.workload["jobs"])
    assert frame["job_id"].tolist() == [2, 7]  # sorted by submit; the second got id 2
    row = frame.iloc[1]
    assert (row["submit"], row["run_time"], row["req_time"], row["req_procs"]) == (60, 600, 3600, 4)
    assert row["req_mem"] * 4 == 2 * 1024 * 1024  # KB per processor x processors = 2 GB
    assert frame.iloc[0]["req_mem"] == -1
    trace = build_workload(sc.plan()[0].config["workload"])
    assert trace.header.max_procs == 4


def test_load_scaling_reaches_the_target_offered_load_on_the_machine():
    from o2ksim.workloads.reshape import offered_load

    sc = parse_scenario(
        'policies = ["fcfs-backfill"]\nmachine = "kth-sp2"\n[workload]\n'
        'trace = "traces/kth-sp2-sample.swf"\n[factors]\nworkload.load = [0.5, 0.9]\n'
    )
    for run, rho in zip(sc.plan(), (0.5, 0.9), strict=True):
        trace = build_workload(run.config["workload"], 100)
        assert offered_load(trace, 100) == pytest.approx(rho, rel=1e-3)
        assert len(trace) == 2000
    result = simulate_run(sc.plan()[1].config)
    assert result.summary["jobs"] == 2000


def test_a_run_is_exactly_simulate_with_the_scenario_settings():
    sc = parse_scenario(BASIC.replace('policies = ["fcfs", "fcfs-backfill"]', 'policies = ["fcfs-backfill"]')
                        + '[factors]\nworkload.estimates = ["actual"]\n')  # fmt: skip
    result = simulate_run(sc.plan()[0].config)
    direct = simulate(SAMPLE, policy="fcfs-backfill", estimates="actual",
                      window=Window(9 * 86400.0, 12 * 86400.0, 86400.0))  # fmt: skip
    pd.testing.assert_frame_equal(result.jobs, direct.jobs)
    assert result.summary["mean_wait"] == direct.summary["mean_wait"]


# ------------------------------------------------------------------------------------ CLI
def test_cli_show_and_list(capsys):
    assert main(["scenario", "show", "explain-backfill", "--runs"]) == 0
    out = capsys.readouterr().out
    assert (
        "scenario explain-backfill" in out and "1 run(s)" in out and "fcfs-backfill-seed0-" in out
    )
    assert main(["scenario", "list"]) == 0
    assert "explain-backfill" in capsys.readouterr().out


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('policies = ["fcfs"]\n[workload]\ntrace = "traces/tiny.swf"\nspeed = 3\n')
    assert main(["scenario", "run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "speed" in err and "Traceback" not in err
    assert main(["scenario", "run", "no-such-scenario"]) == 2
    assert "unknown scenario" in capsys.readouterr().err


def test_cli_check_compares_with_and_updates_the_expected_summary(tmp_path, capsys):
    path = tmp_path / "mini.toml"
    path.write_text(BASIC.replace('name = "basic"', 'name = "mini"')
                    + '[reduced]\nprotocol.window = ["9d", "10d"]\n')  # fmt: skip
    assert main(["scenario", "check", str(path), "-j", "1"]) == 1
    assert "no expected summary" in capsys.readouterr().out
    assert main(["scenario", "check", str(path), "--update", "-j", "1"]) == 0
    expected = tmp_path / "expected" / "mini.csv"
    assert expected.exists()
    assert main(["scenario", "check", str(path), "-j", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("ok mini (2 runs")
    frame = pd.read_csv(expected)
    frame.loc[0, "mean_wait"] *= 1.01
    frame.to_csv(expected, index=False)
    assert main(["scenario", "check", str(path), "-j", "1"]) == 1
    out = capsys.readouterr().out
    assert "DIFFERENT mini" in out and "mean_wait" in out


# ---------------------------------------------------------------------------- shipped scenarios
SHIPPED = sorted(available_scenarios().items())


def test_scenarios_are_shipped():
    names = {name for name, _ in SHIPPED}
    assert {"explain-backfill", "backfill-vs-lsf", "runtime-estimates", "sjf-reservations"} <= names


@pytest.mark.parametrize(("name", "path"), SHIPPED, ids=[n for n, _ in SHIPPED])
def test_shipped_scenario_is_valid_and_documented(name, path):
    sc = load_scenario(path)
    assert sc.name == name
    assert sc.description and sc.source
    assert len(sc.plan()) >= 1


REDUCED = [(n, p) for n, p in SHIPPED if load_scenario(p).has_reduced]


@pytest.mark.parametrize(("name", "path"), REDUCED, ids=[n for n, _ in REDUCED])
def test_shipped_scenario_reduced_matches_its_expected_summary(name, path, tmp_path):
    """The CI check: every shipped scenario at reduced size reproduces its committed summary."""
    sc = load_scenario(path, reduced=True)
    res = run_sweep(sc, tmp_path / name, workers=2)
    assert res.ok, res.table.loc[res.table["status"] != "ok", ["run_id", "error"]].to_string()
    problems = compare_expected(res.table, ["policy", *sc.factors, "seed"], expected_path(sc))
    assert not problems, "\n".join(problems)
    plan = json.loads((tmp_path / name / "plan.json").read_text())
    assert plan["reduced"] is True and len(plan["runs"]) == len(res.runs)
