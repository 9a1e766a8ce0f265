"""``[protocol] availability`` in a scenario: the periods reach every run, checked when loaded.

The schedule is the one worked out by hand in ``tests/test_availability.py``
(a 10-processor host; jobs 1 and 2 fill it from 0 to 100; 4 processors down
from 50 to 300): under EASY job 3 (8 processors) starts at 300, job 4
(2 processors) at 100; without the period both start at 100.
"""

from __future__ import annotations

import pytest

from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.experiments.scenario import parse_scenario
from o2ksim.run.api import run_config

HEAD = """
name = "drain"
machine = {name = "m", host = [{name = "machine", procs = 10}]}
policies = ["fcfs-backfill"]
[[workload.job]]
submit = 0
procs = 6
runtime = 100
[[workload.job]]
submit = 0
procs = 4
runtime = 100
[[workload.job]]
submit = 60
procs = 8
runtime = 50
[[workload.job]]
submit = 70
procs = 2
runtime = 20
"""


def starts(text: str, path: str | None = None) -> dict[int, float]:
    sc = parse_scenario(text, path=path)
    jobs = run_config(sc.run_config(sc.plan()[0])).jobs
    return dict(zip(jobs["job_id"], jobs["start"], strict=True))


def test_without_availability_both_start_at_100():
    assert starts(HEAD) == {1: 0, 2: 0, 3: 100, 4: 100}


def test_a_file_next_to_the_scenario_drains_the_run(tmp_path):
    (tmp_path / "down.csv").write_text("host,from,to,procs\nmachine,50,300,4\n")
    text = HEAD + '[protocol]\navailability = "down.csv"\n'
    assert starts(text, path=str(tmp_path / "s.toml")) == {1: 0, 2: 0, 3: 300, 4: 100}


def test_inline_tables_and_the_file_content_make_the_run_identity(tmp_path):
    inline = HEAD + '[protocol]\navailability = [{host = "machine", from = 50, to = 300, procs = 4}]\n'
    assert starts(inline) == {1: 0, 2: 0, 3: 300, 4: 100}
    f = tmp_path / "down.csv"
    f.write_text("host,from,to,procs\nmachine,50,300,4\n")
    text = HEAD + '[protocol]\navailability = "down.csv"\n'
    a = parse_scenario(text, path=str(tmp_path / "s.toml")).plan()[0]
    assert a.run_id == parse_scenario(inline).plan()[0].run_id
    f.write_text("host,from,to,procs\nmachine,50,300,5\n")
    b = parse_scenario(text, path=str(tmp_path / "s.toml")).plan()[0]
    assert a.run_id != b.run_id  # an edited file is a new run, never a stale result


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ('"nowhere.csv"', "protocol.availability: nowhere.csv: no such availability file"),
        ("3", "protocol.availability: must be an availability file or a list"),
        ('[{host = "machine", from = 50}]', "protocol.availability: field to: missing"),
        ('[{host = "machine", from = 50, to = 300, procs = 4, when = 1}]', "unknown key 'when'"),
        ('[{host = "other", from = 50, to = 300, procs = 4}]', "'other' is not a host of machine m"),
    ],
)
def test_bad_values_are_refused_when_the_scenario_is_loaded(tmp_path, value, needle):
    with pytest.raises(O2KSimError, match=needle):
        parse_scenario(HEAD + f"[protocol]\navailability = {value}\n", path=str(tmp_path / "s.toml"))


def test_a_bad_line_of_the_file_is_named(tmp_path):
    (tmp_path / "down.csv").write_text("host,from,to,procs\nmachine,50,300,40\n")
    with pytest.raises(O2KSimError, match=r"down.csv.*2.*procs: must be from 1 to 10"):
        parse_scenario(HEAD + '[protocol]\navailability = "down.csv"\n', path=str(tmp_path / "s.toml"))


def test_needs_a_machine():
    text = HEAD.replace('machine = {name = "m", host = [{name = "machine", procs = 10}]}\n', "")
    with pytest.raises(ConfigError, match=r"protocol\.availability: needs a machine"):
        parse_scenario(text + '[protocol]\navailability = [{host = "m", from = 0, to = 1, procs = 1}]\n')
