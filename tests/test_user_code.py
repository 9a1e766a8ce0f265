"""Sweeps and user code from plain scripts (issue 15).

* ``run_sweep`` at the top level of a script without a ``__main__`` guard
  runs in worker processes (they must not re-run the script);
* a priority or a policy kind registered in the user's script reaches the
  workers;
* ``"module:Class"`` policies and ``"module:function"`` priorities are found
  next to the scenario file and in the working directory, and a failing
  import shows its real cause.

The expected starts are worked out by hand in ``SCENARIO``'s comment.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from o2ksim.errors import O2KSimError

# One host of 4 processors.  J1 (4 procs) runs 0-100.  J2 (2 procs, submitted at 1)
# and J3 (3 procs, at 2) wait.  When J1 ends at 100:
#   FCFS:          J2 starts at 100; J3 needs 3 of the 2 free procs -> starts at 150.
#   widest first:  J3 starts at 100; J2 needs 2 of the 1 free proc   -> starts at 150.
SCENARIO = """
name = "user-code"
[machine]
name = "four"
[[machine.host]]
name = "h"
procs = 4
[workload]
job = [
  {{ id = 1, submit = 0, procs = 4, runtime = 100, requested = 100 }},
  {{ id = 2, submit = 1, procs = 2, runtime = 50, requested = 50 }},
  {{ id = 3, submit = 2, procs = 3, runtime = 50, requested = 50 }},
]
{policies}
"""


def policy_tables(*entries: str) -> str:
    """``[[policy]]`` tables from inline bodies such as ``name = "fcfs-backfill"``."""
    return "".join(f"[[policy]]\n{e}\n" for e in entries)


WIDEST_FIRST_STARTS = {1: 0.0, 2: 150.0, 3: 100.0}
FCFS_STARTS = {1: 0.0, 2: 100.0, 3: 150.0}

SCRIPT = """
import json, sys
import numpy as np
from o2ksim.policies import POLICIES
from o2ksim.policies.backfill import Backfill
from o2ksim.policies.priority import register_priority
from o2ksim.experiments.scenario import parse_scenario
from o2ksim.experiments.store import load_results
from o2ksim.experiments.sweep import run_sweep

@register_priority("widest-first")
def widest_first(q):
    return np.asarray(q.jp, dtype=float)

class WidestBackfill(Backfill):
    kind = "widest-backfill"
    def __init__(self, name=None, **params):
        params.setdefault("priority", "widest-first")
        super().__init__(name, **params)

POLICIES.register(WidestBackfill)

sc = parse_scenario(sys.argv[1])
res = run_sweep(sc, sys.argv[2], workers=2)
table = load_results(sys.argv[2])
out = {}
for rid, label in zip(table.table["run_id"], table.table["policy"]):
    if table.table.set_index("run_id").loc[rid, "status"] == "ok":
        jobs = table.jobs(rid)
        out[label] = dict(zip(map(str, jobs["job_id"]), map(float, jobs["start"])))
print(json.dumps({"failed": res.failed, "starts": out}))
"""


def _run_script(tmp_path: Path, body: str, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / "user_script.py"
    script.write_text(body)
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
    )


def test_guardless_script_with_registered_priority_and_policy_runs_in_two_workers(tmp_path):
    text = SCENARIO.format(
        policies=policy_tables(
            'name = "fcfs-backfill"',
            'name = "backfill"\nlabel = "widest"\nparams = { priority = "widest-first" }',
            'name = "widest-backfill"',
        )
    )
    proc = _run_script(tmp_path, SCRIPT, text, str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "bootstrapping" not in proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["failed"] == []
    want = {str(k): v for k, v in WIDEST_FIRST_STARTS.items()}
    assert out["starts"]["widest"] == want
    assert out["starts"]["widest-backfill"] == want
    assert out["starts"]["fcfs-backfill"] == {str(k): v for k, v in FCFS_STARTS.items()}


def test_module_class_policy_next_to_the_scenario_is_found_from_another_directory(tmp_path):
    from o2ksim.experiments.scenario import load_scenario
    from o2ksim.experiments.store import load_results
    from o2ksim.experiments.sweep import run_sweep

    code = tmp_path / "sc"
    code.mkdir()
    (code / "mysched.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            from o2ksim.policies.backfill import Backfill

            def widest(q):
                return np.asarray(q.jp, dtype=float)

            class Widest(Backfill):
                kind = "widest"
                def __init__(self, name=None, **params):
                    params.setdefault("priority", widest)
                    super().__init__(name, **params)
            """
        )
    )
    path = code / "s.toml"
    path.write_text(
        SCENARIO.format(
            policies=policy_tables(
                'name = "mysched:Widest"\nlabel = "cls"',
                'name = "backfill"\nlabel = "fn"\nparams = { priority = "mysched:widest" }',
            )
        )
    )
    sc = load_scenario(path)
    res = run_sweep(sc, tmp_path / "out", workers=2)
    assert res.failed == []
    loaded = load_results(tmp_path / "out")
    for rid in loaded.table["run_id"]:
        jobs = loaded.jobs(rid)
        assert dict(zip(jobs["job_id"], jobs["start"], strict=True)) == WIDEST_FIRST_STARTS


def test_a_failing_user_module_shows_its_own_import_error(tmp_path, monkeypatch):
    from o2ksim.policies import make_policy

    (tmp_path / "broken.py").write_text("import numpyy_does_not_exist\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(O2KSimError, match="numpyy_does_not_exist"):
        make_policy("broken:Policy")
    with pytest.raises(O2KSimError, match="numpyy_does_not_exist"):
        make_policy("backfill", priority="broken:fn")
    with pytest.raises(O2KSimError, match="no module named 'nosuchmod'"):
        make_policy("backfill", priority="nosuchmod:fn")


def test_in_process_sweep_matches_the_hand_computed_starts(tmp_path):
    from o2ksim.experiments.scenario import parse_scenario
    from o2ksim.experiments.store import load_results
    from o2ksim.experiments.sweep import run_sweep

    res = run_sweep(
        parse_scenario(SCENARIO.format(policies=policy_tables('name = "fcfs-backfill"'))),
        tmp_path,
        workers=1,
    )
    assert res.failed == []
    jobs = load_results(tmp_path).jobs(res.runs[0].run_id)
    assert dict(zip(jobs["job_id"], jobs["start"], strict=True)) == FCFS_STARTS
    assert isinstance(jobs, pd.DataFrame)
