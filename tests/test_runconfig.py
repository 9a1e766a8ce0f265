"""One validated run description (issue 9): :class:`o2ksim.run.config.RunConfig`.

Every field is checked with a one-line error naming it; the machine is parsed
once and the same object reaches the run; runtime estimates are parsed into a
typed value (and refused for a workload they cannot apply to); the JSON form
round-trips.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from conftest import job, one_host

from o2ksim import machine as machine_module
from o2ksim.cli import main
from o2ksim.engine.contract import RunSettings
from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.experiments.scenario import parse_scenario
from o2ksim.machine import load_machine, parse_machine
from o2ksim.policies.backfill import FCFS
from o2ksim.run import config_values as runconfig_values_module
from o2ksim.run.api import run_config, simulate
from o2ksim.run.config import PolicyChoice, RunConfig, WorkloadRecipe
from o2ksim.workloads.swf import read_swf
from o2ksim.workloads.transforms import Estimates, Window

REPO = Path(__file__).resolve().parents[1]
TINY = str(REPO / "traces" / "tiny.swf")
DAY = 86400.0


# ------------------------------------------------------------------------- typed values
def test_create_turns_what_users_write_into_typed_values():
    cfg = RunConfig.create(
        TINY, "o2k", "fcfs", policy_params={"reservations": 1}, window=("1h", "2d"),
        estimates="Scenario-A:10%", interval="5m", overrun_grace="2h", seed=7,
    )  # fmt: skip
    assert isinstance(cfg.workload, WorkloadRecipe) and cfg.workload.spec["trace"] == TINY
    assert cfg.machine.name == "o2k" and cfg.machine.total_procs == 960
    assert cfg.policy == PolicyChoice("fcfs", {"reservations": 1}, None)
    # Scenario A with K = 10 percent (T§6.2.1), as written (lower case)
    assert cfg.estimates == Estimates("scenario-a", 10.0, "scenario-a:10%")
    assert cfg.window == Window(3600.0, 2 * DAY, 7 * DAY)  # the CLI's 7-day warm-up
    # kill_overrun from the machine file's [options] (false); grace as given: 2 h
    assert cfg.settings == RunSettings(300.0, False, 7200.0, False)
    assert cfg.seed == 7 and cfg.progress is False


def test_settings_default_to_the_machine_options_and_to_off_without_a_machine():
    with_options = {
        "name": "m", "host": [{"name": "a", "procs": 4}],
        "options": {"kill_overrun": True, "overrun_grace": 60},
    }  # fmt: skip
    assert RunConfig.create(TINY, with_options).settings == RunSettings(None, True, 60.0)
    assert RunConfig.create(TINY, with_options, kill_overrun=False).settings.kill_overrun is False
    assert RunConfig.create(TINY).settings == RunSettings(None, False, 0.0)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"workload": 42}, "cannot use int as a workload"),
        ({"workload": []}, "cannot use list as a workload"),
        ({"machine": 3.5}, "field machine: must be a machine name"),
        ({"machine": {"host": []}}, "at least one [[host]]"),
        ({"policy": 5}, "field policy: must be a policy name or a policy object"),
        ({"policy_params": ["x"]}, "field policy_params: must be a table"),
        ({"label": ""}, "field label: must be a non-empty string"),
        ({"window": ("2d", "1d")}, "window end (1d) must be after its start (2d)"),
        ({"window": (0, math.nan)}, "field end: must be a finite number"),
        ({"window": "14d"}, "window: expected (start, end)"),
        ({"estimates": "scenario-c"}, "unknown runtime-estimate scenario 'scenario-c'"),
        ({"estimates": "scenario-a:-5"}, "estimates: the Scenario A percentage must be a number from 0 to 30,000"),
        ({"estimates": 20}, "estimates: expected a runtime-estimate scenario name"),
        ({"interval": 0.5}, "field interval: must be >= 1"),
        ({"interval": "soon"}, "'soon' is not a duration"),
        ({"kill_overrun": "yes"}, "field kill_overrun: must be a TOML boolean"),
        ({"overrun_grace": -1}, "field overrun_grace: must be >= 0"),
        ({"overrun_grace": math.inf}, "field overrun_grace: must be a finite number"),
        ({"seed": -1}, "field seed: must be >= 0"),
        ({"seed": 1.5}, "field seed: must be an integer"),
        ({"seed": True}, "field seed: must be an integer"),
        ({"seed": 2**63}, "field seed: must be at most"),
        ({"explain": 1}, "field explain: must be a TOML boolean"),
        ({"progress": "no"}, "field progress: must be a TOML boolean"),
    ],
)
def test_every_field_is_checked_with_a_one_line_error_naming_it(kwargs, needle):
    args = {"workload": TINY, **kwargs}
    with pytest.raises(O2KSimError) as err:
        RunConfig.create(args.pop("workload"), **args)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_numpy_integer_seeds_are_taken():
    import numpy as np

    assert RunConfig.create(TINY, seed=np.int64(3)).seed == 3


def test_parameters_with_a_policy_object_are_refused_not_ignored():
    with pytest.raises(ConfigError, match="parameters apply to a policy given by name"):
        RunConfig.create(TINY, policy=FCFS(), policy_params={"reservations": 2})
    assert isinstance(RunConfig.create(TINY, policy=FCFS()).policy, FCFS)


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("workload", "tiny.swf", "not a workload: str"),
        ("machine", "o2k", "field machine: must be MachineSpec or NoneType, got str"),
        ("estimates", "actual", "field estimates: must be Estimates, got str"),
        ("window", (0, 10), "field window: must be Window or NoneType, got tuple"),
        ("settings", {"interval": 60}, "field settings: must be RunSettings, got dict"),
        ("seed", "1", "field seed: must be an integer"),
        ("progress", 1, "field progress: must be a TOML boolean"),
    ],
)
def test_the_dataclass_itself_refuses_untyped_fields(field, value, needle):
    """Only create()/from_dict() coerce; building the dataclass directly needs typed values."""
    good = RunConfig.create(TINY)
    fields = {f: getattr(good, f) for f in good.__dataclass_fields__}
    fields[field] = value
    with pytest.raises(O2KSimError) as err:
        RunConfig(**fields)
    assert needle in str(err.value)


# ------------------------------------------------------------------------------ estimates
@pytest.mark.parametrize(
    ("text", "kind", "percent"),
    [
        (None, "requested", 0.0), ("", "requested", 0.0), ("requested", "requested", 0.0),
        ("actual", "actual", 0.0), ("scenario-a", "scenario-a", 20.0),
        ("scenario-a:5", "scenario-a", 5.0), ("scenario-a:12.5%", "scenario-a", 12.5),
        ("scenario-b", "scenario-b", 20.0),
    ],
)  # fmt: skip
def test_estimates_are_parsed_into_a_typed_value(text, kind, percent):
    est = Estimates.parse(text)
    assert (est.kind, est.percent) == (kind, percent)
    assert est.requested == (kind == "requested")


def test_estimates_are_refused_without_a_trace_or_frame():
    """Estimates rewrite a job table's requested runtimes; JobSpecs have none to rewrite."""
    specs = [job(1, 0, 1, 60)]
    with pytest.raises(O2KSimError, match="estimates and window need a trace or frame"):
        RunConfig.create(specs, one_host(4), estimates="actual")
    with pytest.raises(O2KSimError, match="estimates and window need a trace or frame"):
        RunConfig.create(specs, one_host(4), window=(0, 10, 0))
    assert RunConfig.create(specs, one_host(4)).job_specs == tuple(specs)


def test_estimates_apply_as_table_15_says():
    """Scenario A with K = 50: min(1.5 T, R); actual: R = T (hand-computed on tiny.swf)."""
    trace = read_swf(TINY)
    jobs = trace.jobs
    r_actual = simulate(trace, one_host(64), "fcfs-backfill", estimates="actual")  # fcfs: refused (reads none)
    assert r_actual.config["estimates"] == "actual"
    from o2ksim.workloads.transforms import apply_estimates

    out = apply_estimates(jobs, Estimates.parse("scenario-a:50"))
    for run, req, new in zip(jobs["run_time"], jobs["req_time"], out["req_time"], strict=True):
        if run >= 0:
            want = math.ceil(1.5 * run)
            assert new == (min(want, req) if req > 0 else want)


# ---------------------------------------------------------------------- machine parsed once
def test_a_given_machine_is_the_machine_of_the_run():
    spec = load_machine("o2k")
    cfg = RunConfig.create(TINY, spec, "fcfs")
    assert cfg.machine is spec
    assert run_config(cfg).machine is spec
    assert simulate(TINY, spec, "fcfs").machine is spec


SCENARIO = """
name = "machine-once"
machine = "o2k"
policies = ["fcfs", "fcfs-backfill"]
[workload]
trace = "traces/tiny.swf"
[protocol]
seeds = [1, 2]
[factors]
workload.estimates = ["requested", "actual"]
"""


@pytest.fixture
def machine_parses(monkeypatch) -> list[str]:
    """The paths of every machine parse from now on (``parse_machine`` counted where it is used)."""
    calls: list[str] = []
    real = machine_module.parse_machine

    def counting(data, path="<machine>"):
        calls.append(str(path))
        return real(data, path)

    monkeypatch.setattr(machine_module, "parse_machine", counting)
    monkeypatch.setattr(runconfig_values_module, "parse_machine", counting)
    return calls


def test_a_scenario_parses_its_machine_once_and_every_run_gets_that_object(machine_parses):
    calls = machine_parses
    sc = parse_scenario(SCENARIO, path=str(REPO / "s.toml"))
    assert len(calls) == 1  # validated and kept, not validated, discarded and parsed again
    spec = next(iter(sc.machines.values()))
    runs = sc.plan()
    results = [run_config(sc.run_config(run)) for run in runs[:2]]
    assert len(calls) == 1
    assert all(r.machine is spec for r in results)


def test_machine_factor_levels_are_parsed_when_the_scenario_is_loaded():
    text = SCENARIO.replace(
        'workload.estimates = ["requested", "actual"]',
        'machine = ["o2k", {name = "bad", host = [{name = "a", procs = 0}]}]',
    )
    with pytest.raises(ConfigError, match=r"host\[0\]\.procs: must be a positive integer"):
        parse_scenario(text, path=str(REPO / "s.toml"))


# ------------------------------------------------------------------------------ round trip
def test_to_dict_from_dict_round_trip():
    cfg = RunConfig.create(
        TINY, "o2k", "fcfs-backfill", policy_params={"reservations": 2}, label="two",
        window=("1h", "3d", "30m"), estimates="scenario-b", interval="5m",
        kill_overrun=True, overrun_grace="1h", seed=11,
    )  # fmt: skip
    data = cfg.to_dict()
    assert json.loads(json.dumps(data)) == data  # plain JSON: a sweep stores it
    back = RunConfig.from_dict(data)
    assert back == cfg
    assert back.to_dict() == data
    # the machine travels as its table, with its LSF data and options
    assert back.machine == load_machine("o2k") and back.machine.params["lsf"]


def test_a_machine_table_reads_back_into_an_equal_machine():
    for name in ("o2k", "o2k-full", "kth-sp2", "sdsc-blue"):
        spec = load_machine(name)
        assert parse_machine(spec.to_table(), "copy") == spec


def test_scenario_runs_round_trip_and_run_as_stored(tmp_path):
    sc = parse_scenario(SCENARIO, path=str(REPO / "s.toml"))
    run = sc.plan()[3]  # fcfs-backfill, estimates actual, seed 1
    cfg = sc.run_config(run)
    assert cfg.estimates.kind == "actual" and cfg.seed == 1
    assert cfg.policy == PolicyChoice("fcfs-backfill", {}, "fcfs-backfill")
    assert RunConfig.from_dict(run.config) == cfg  # what a sweep worker builds
    assert RunConfig.from_dict(cfg.to_dict()) == cfg
    a = run_config(cfg)
    b = run_config(RunConfig.from_dict(cfg.to_dict()))
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    assert a.config["label"] == "fcfs-backfill" and a.config["estimates"] == "actual"


def test_in_memory_workloads_and_policy_objects_have_no_json_form():
    with pytest.raises(O2KSimError, match="in memory cannot be written"):
        RunConfig.create(read_swf(TINY)).to_dict()
    with pytest.raises(O2KSimError, match="policy object cannot be written"):
        RunConfig.create(TINY, policy=FCFS()).to_dict()


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda d: d.update(extra=1), "unknown key 'extra'"),
        (lambda d: d["workload"].update(trace=None), "give exactly one of trace, model or jobs"),
        (lambda d: d["protocol"].update(window=[1]), "field protocol.window: must be [START, END]"),
        (lambda d: d["policy"].update(name=3), "field policy.name: must be a non-empty string"),
        (lambda d: d["protocol"].update(sed=1), "did you mean 'seed'?"),
    ],
)
def test_from_dict_refuses_a_broken_configuration(change, needle):
    data = RunConfig.create(TINY, "o2k").to_dict()
    change(data)
    with pytest.raises(ConfigError) as err:
        RunConfig.from_dict(data, where="run.json")
    assert str(err.value).startswith("run.json: ") and needle in str(err.value)


def test_the_cli_and_the_api_build_the_same_run(tmp_path, capsys):
    """``o2ksim run`` and ``simulate()`` on the same arguments give the same schedule."""
    args = ["run", "--trace", TINY, "--policy", "fcfs-backfill", "--estimates", "actual",
            "--interval", "5m", "--out", str(tmp_path), "-q"]  # fmt: skip
    assert main(args) == 0
    cli = pd.read_csv(tmp_path / "jobs.csv")
    api = simulate(TINY, None, "fcfs-backfill", estimates="actual", interval="5m")
    assert list(cli["start"]) == list(api.jobs["start"])
    stored = json.loads((tmp_path / "run.json").read_text())["config"]
    assert stored["interval"] == 300.0 and stored["estimates"] == "actual"


# ------------------------------------------------------------- scenario fields on the toolkit
INLINE = """
name = "inline"
machine = {name = "m", host = [{name = "a", procs = 4}]}
policies = ["fcfs"]
[[workload.job]]
submit = 0
procs = 1
runtime = 10
"""


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("mem_gb = {}", "workload.job[1].mem_gb: must be a number (GB), got {}"),
        ("mem_mb = 1e308", "workload.job[1].mem_mb: must be at most"),
        ("user = 'abc'", "workload.job[1].user: must be an integer"),
        ("user = 1.5", "workload.job[1].user: must be an integer"),
        ("id = -3", "workload.job[1].id: must be >= 0"),
        ("procs = 0", "workload.job[1].procs: must be a positive integer"),
        ("runtime = '5 parsecs'", "workload.job[1].runtime: '5 parsecs' is not a duration"),
    ],
)
def test_inline_job_fields_are_refused_in_one_line(extra, needle):
    text = INLINE + extra + "\n"
    if extra.startswith(("procs", "runtime")):
        key = extra.split(" ")[0]
        text = "\n".join(ln for ln in INLINE.splitlines() if not ln.startswith(key)) + f"\n{extra}\n"
    with pytest.raises(ConfigError) as err:
        parse_scenario(text, path="/tmp/inline.toml")
    assert str(err.value).startswith("/tmp/inline.toml: field ") and needle in str(err.value)


def test_inline_jobs_keep_their_values():
    sc = parse_scenario(INLINE + "mem_gb = 2\nuser = 7\n", path="/tmp/inline.toml")
    assert sc.workload["jobs"] == [
        {"id": 1, "submit": 0.0, "procs": 1, "runtime": 10.0, "requested": 10.0,
         "mem_mb": 2048.0, "user": 7}
    ]  # fmt: skip


def test_an_in_process_sweep_parses_the_machine_once(tmp_path, machine_parses):
    from o2ksim.experiments.sweep import run_sweep

    calls = machine_parses
    sc = parse_scenario(SCENARIO, path=str(REPO / "s.toml"))
    res = run_sweep(sc, tmp_path, workers=1, progress=False)
    assert res.ok and len(res.ran) == 8
    assert len(calls) == 1  # 8 runs, one machine file read
