"""A user's policy class is checked when it is loaded (issue 27, D22).

``--policy ./qpol.py:Q`` with ``class Q(Policy): pass`` ran until the first
scheduling pass and died there with a bare ``NotImplementedError`` traceback
(exit 1): ``Policy.schedule`` is the base class's placeholder.  A class that
lacks a method of ``PolicyProtocol``, or whose constructor fails, is refused the
same way: one line naming the file, the class and what is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from o2ksim import simulate
from o2ksim.cli import main
from o2ksim.errors import O2KSimError
from tests.conftest import one_line

TINY = str(Path(__file__).resolve().parents[1] / "traces" / "tiny.swf")
CLASSES = {
    "Q": "from o2ksim.policies import Policy\nclass Q(Policy):\n    pass\n",
    "R": "class R:\n    def schedule(self, snap):\n        return []\n",
    "B": "from o2ksim.policies import Policy\nclass B(Policy):\n    def __init__(self, **kw):\n"
    "        raise RuntimeError('no')\n    def schedule(self, snap):\n        return []\n",
}
EXPECTED = {
    "Q": "class Q does not define schedule (",
    "R": "class R does not define bind, admit, quiet_until, stats, summary_counts (",
    "B": "B(name='B', ...) raised RuntimeError: no",
}


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_a_policy_class_is_refused_when_loaded(tmp_path, monkeypatch, capsys, name):
    (tmp_path / "pol.py").write_text(CLASSES[name])
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert main(["run", "--trace", TINY, "--policy", f"./pol.py:{name}", "--out", str(out)]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"o2ksim: error: policy './pol.py:{name}': ")
    assert EXPECTED[name] in line
    assert not out.exists()  # refused before any folder was made
    with pytest.raises(O2KSimError, match=EXPECTED[name].replace("(", r"\(").replace(")", r"\)")):
        simulate(TINY, policy=f"./pol.py:{name}")


def test_a_policy_class_with_schedule_runs(tmp_path, monkeypatch):
    (tmp_path / "pol.py").write_text(
        "from o2ksim.policies import Policy\nclass Idle(Policy):\n    def schedule(self, snap):\n        return []\n"
    )
    monkeypatch.chdir(tmp_path)
    result = simulate(TINY, policy="./pol.py:Idle")
    assert len(result.jobs) > 0  # a policy that starts nothing: every job unfinished, no error
