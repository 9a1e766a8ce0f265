"""A generated fuzz suite of the value options of every command but ``run`` (issue 27), and
of :func:`o2ksim.simulate`'s keyword arguments.

``tests/test_fuzz_robust.py`` fuzzes ``o2ksim run``'s options; here every value option of
``generate``, ``fit``, ``characterize``, ``predict``, ``validate``, ``trace
convert/check/info``, ``gantt`` and ``play`` is given every hostile value (NaN,
infinities, -1, 0, 1e308, 2**63, 40 digits, text, an empty string, a line break ...) on the
tiny traces, in this process.  The property: exit 0, or exit 2 with exactly one line on
stderr naming the option or the value; never a traceback.  A value that is certainly
wrong for a numeric option (not a number, NaN, an infinity, 40 digits) must be refused.

Then Hypothesis draws ``simulate(trace, **{keyword: value})`` with hostile values of every
type: it returns a result or raises :class:`~o2ksim.errors.O2KSimError` with a one-line
message, never another exception.
"""

from __future__ import annotations

import contextlib
import io
import math
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import o2ksim
from o2ksim.cli import main
from o2ksim.errors import O2KSimError

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")
KTH = str(ROOT / "traces" / "kth-sp2-sample.swf")
SCENARIO = str(ROOT / "scenarios" / "explain-backfill.toml")
SHORT = "/tmp/o2ksim-fuzz-short.swf"  # replaced by the fixture below: KTH's first 20 jobs

VALUES = ["nan", "inf", "-inf", "-1", "0", "-0", "1e308", "1e-300", str(2**63), "9" * 40,
          "1e40", "abc", "", "a\nb", "\u00e9", "5m"]  # fmt: skip
NOT_NUMBERS = {"nan", "inf", "-inf", "9" * 40, "1e40", "1e308", "abc", "a\nb", "\u00e9"}
"""Certainly refused by a numeric option (a count, a rate, a load, a time)."""


def cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


Build = Callable[[str, Path], list[str]]
OPTIONS: dict[str, tuple[Build, bool]] = {
    # name -> (command line for a value and an output folder, numeric: certain values refused)
    "generate --span": (lambda v, o: ["generate", "--span", v, "--out", f"{o}/g.swf"], True),
    "generate --seed": (lambda v, o: ["generate", "--span", "1d", "--seed", v, "--out", f"{o}/g.swf"], True),
    "generate --load": (lambda v, o: ["generate", "--span", "1d", "--load", v, "--out", f"{o}/g.swf"], True),
    "generate --start": (lambda v, o: ["generate", "--span", "1d", "--start", v, "--out", f"{o}/g.swf"], True),
    "generate --month": (lambda v, o: ["generate", "--span", "1d", "--month", v, "--out", f"{o}/g.swf"], False),
    "generate --params": (lambda v, o: ["generate", "--span", "1d", "--params", v, "--out", f"{o}/g.swf"], False),
    "fit --size-segments": (lambda v, o: ["fit", KTH, "--size-segments", v, "--out", f"{o}/f.toml"], True),
    "fit --partition": (lambda v, o: ["fit", KTH, "--model", "downey", "--partition", v, "--out", f"{o}/f.toml"], False),
    "fit --classes": (lambda v, o: ["fit", KTH, "--model", "downey", "--classes", v, "--out", f"{o}/f.toml"], False),
    "characterize --procs": (lambda v, o: ["characterize", TINY, "--procs", v, "--no-fits"], True),
    "predict --procs": (lambda v, o: ["predict", SHORT, "--procs", v, "--out", f"{o}/p"], True),
    "predict --threshold": (lambda v, o: ["predict", SHORT, "--threshold", v, "--out", f"{o}/p"], True),
    "predict --whole-queue-sample": (lambda v, o: ["predict", SHORT, "--whole-queue-sample", v, "--out", f"{o}/p"], True),
    "predict --trim": (lambda v, o: ["predict", SHORT, "--trim", v, "--out", f"{o}/p"], True),
    "predict --partition": (lambda v, o: ["predict", SHORT, "--partition", v, "--out", f"{o}/p"], False),
    "predict --periods": (lambda v, o: ["predict", SHORT, "--periods", v, "--out", f"{o}/p"], False),
    "predict --window": (lambda v, o: ["predict", SHORT, "--window", "0", v, "--out", f"{o}/p"], False),
    "predict --fit-window": (lambda v, o: ["predict", SHORT, "--fit-window", v, "1d", "--out", f"{o}/p"], False),
    "predict --classes": (lambda v, o: ["predict", SHORT, "--classes", v, "--out", f"{o}/p"], False),
    "validate --warmup": (lambda v, o: ["validate", TINY, "--window", "0", "1d", "--warmup", v, "-q"], False),
    "validate --outage-min": (lambda v, o: ["validate", TINY, "--outage-min", v, "-q"], False),
    "validate --interval": (lambda v, o: ["validate", TINY, "--interval", v, "-q"], False),
    "validate --window": (lambda v, o: ["validate", TINY, "--window", "0", v, "-q"], False),
    "validate --set": (lambda v, o: ["validate", TINY, "--set", f"reservations={v}", "-q"], False),
    "trace convert --limit": (lambda v, o: ["trace", "convert", TINY, f"{o}/c.swf", "--limit", v], True),
    "trace info --machine": (lambda v, o: ["trace", "info", TINY, "--machine", v], False),
    "trace check --machine": (lambda v, o: ["trace", "check", TINY, "--machine", v], False),
    "gantt --start": (lambda v, o: ["gantt", SCENARIO, "-o", f"{o}/g.png", "--start", v], False),
    "gantt --end": (lambda v, o: ["gantt", SCENARIO, "-o", f"{o}/g.png", "--end", v], False),
    "play --start": (lambda v, o: ["play", SCENARIO, "-o", f"{o}/p.html", "--start", v], False),
    "play --max-jobs": (lambda v, o: ["play", SCENARIO, "-o", f"{o}/p.html", "--max-jobs", v], True),
}  # fmt: skip


def check(args: list[str], names: list[str], *, must_refuse: bool) -> str:
    code, _, err = cli(args)
    assert "Traceback" not in err, (args, err)
    if code == 0 and not must_refuse:
        return "accepted"
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("o2ksim: warning: ")]
    assert code == 2, (args, code, err)
    assert len(lines) == 1 and lines[0].startswith("o2ksim: error: "), (args, err)
    assert any(n in lines[0] for n in names), (args, names, lines[0])
    return "refused"


@pytest.fixture(scope="module", autouse=True)
def short_trace(tmp_path_factory):
    """The first 20 jobs of the KTH sample: enough for ``predict`` to fit its classes, and
    fast (a predict of the whole sample takes seconds)."""
    global SHORT
    SHORT = str(tmp_path_factory.mktemp("short") / "kth20.swf")
    assert cli(["trace", "convert", KTH, SHORT, "--limit", "20"])[0] == 0
    return SHORT


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_every_value_option_of_every_command(tmp_path, name):
    build, numeric = OPTIONS[name]
    option = name.split()[-1]
    outcomes = {"accepted": 0, "refused": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would be a second line on stderr
        for value in VALUES:
            names = [option, option.lstrip("-").replace("-", "_"), value.split("\n")[0] or option]
            if name.startswith("generate --params"):
                names.append("parameter")
            if name.endswith("--set"):
                names.append("reservations")
            certain = numeric and value in NOT_NUMBERS
            if name == "generate --span" and value in ("1e-300", "-0", "0", "-1", ""):
                certain = True
            outcomes[check(build(value, tmp_path), names, must_refuse=certain)] += 1
    assert sum(outcomes.values()) == len(VALUES)


# ------------------------------------------------------------ the defects, one by one
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["generate", "--span", "1d", "--start", "9" * 40], "--start"),  # wrote an unreadable header
        (["generate", "--span", "1d", "--start", "-253402300800"], "--start"),
        (["generate", "--span", "1d", "--load", "1e40"], "--load"),  # 8.9e-41 days
        (["generate", "--span", "1d", "--load", "1e-300"], "--load"),  # submit times past int64
        (["generate", "--span", "1d", "--seed", str(2**63)], "--seed"),
        (["fit", KTH, "--size-segments", str(2**63)], "--size-segments"),  # AssertionError
        (["fit", KTH, "--size-segments", "12"], "--size-segments"),
        (["fit", KTH, "--partition", "batch"], "--partition"),  # ignored by cirne-berman
        (["characterize", TINY, "--procs", str(2**63), "--no-fits"], "--procs"),
        (["gantt", SCENARIO, "--end", "9" * 40], "--end"),
    ],
)
def test_values_accepted_or_crashing_before_are_refused(tmp_path, args, says):
    if args[0] in ("generate", "fit", "gantt"):
        args = [*args, "--out", str(tmp_path / ("g.png" if args[0] == "gantt" else "x"))]
    code, _, err = cli(args)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and says in lines[0], err
    assert not (tmp_path / "x").exists()


def test_predict_on_a_log_too_short_for_any_prediction_writes_no_figure(tmp_path):
    """20 jobs: every one falls in the fit window, nothing is predicted; the empty figure
    was a matplotlib ValueError (0 columns)."""
    code, _, err = cli(["predict", SHORT, "--out", str(tmp_path / "p")])
    assert code == 0, err
    assert (tmp_path / "p" / "summary.json").exists() and not (tmp_path / "p" / "fig4.png").exists()


def test_a_generated_trace_within_the_start_limit_reads_back(tmp_path):
    """The last start ``generate`` takes is one o2ksim's own reader takes back."""
    out = tmp_path / "g.swf"
    assert cli(["generate", "--span", "1d", "--start", "253402300799", "--out", str(out)])[0] == 0
    assert cli(["trace", "check", str(out)])[0] == 0


# ------------------------------------------------------------ simulate()'s keyword arguments
KEYWORDS = ["machine", "policy", "policy_params", "window", "estimates", "interval",
            "kill_overrun", "overrun_grace", "seed", "progress", "explain", "observers",
            "availability", "overrun"]  # fmt: skip
SCALARS = st.one_of(
    st.none(), st.booleans(), st.sampled_from(["", "x", "5m", "-5m", "1e308", "nan", "fcfs", "7d"]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([math.nan, math.inf, -math.inf, 2**63, 10**40, -1, 0]),
)
HOSTILE = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3),
    st.tuples(SCALARS, SCALARS),
    st.dictionaries(st.sampled_from(["reservations", "priority", "quantum", "x", "host", "procs"]),
                    SCALARS, max_size=2),
)  # fmt: skip


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(keyword=st.sampled_from(KEYWORDS), value=HOSTILE)
def test_simulate_keywords_raise_one_line_o2ksim_errors(keyword, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UnusedSeedWarning and the like are not errors
        try:
            o2ksim.simulate(TINY, **{keyword: value})
        except O2KSimError as exc:
            assert "\n" not in str(exc) and str(exc), (keyword, value, str(exc))


@pytest.mark.parametrize("workload", ["", b"x", None, 5, math.nan, [], {}, [1, 2], "no/such.swf"])
def test_simulate_hostile_workloads_raise_o2ksim_errors(workload):
    with pytest.raises(O2KSimError) as info:
        o2ksim.simulate(workload)
    assert "\n" not in str(info.value)


def test_the_option_table_covers_every_command_the_issue_names():
    commands = {name.split(" --")[0] for name in OPTIONS}
    assert {"generate", "fit", "characterize", "predict", "validate", "trace convert",
            "trace info", "trace check", "gantt", "play"} <= commands  # fmt: skip
    assert len(OPTIONS) == 31
