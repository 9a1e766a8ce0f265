"""A generated, seeded fuzz suite of hostile inputs (issue 27): every input kind, in seconds.

Cases are built from tables of hostile values (every SWF field x every kind
of damage; every machine, policy and scenario key x bad values; every
``o2ksim run`` value option x bad values) plus seeded random combinations, and
go through the real command line in this process (``o2ksim.cli.main``).  The
property for each: exit 0 (a value that is in fact acceptable) or exit 2 with
exactly one line on stderr naming the file (and line and field) or the option,
never a traceback.  Where the value is certainly wrong (not a number, negative,
a missing or extra field, beyond int64), exit 2 is required.

Output paths too: every command that writes, into every kind of place it
cannot write (a file as the folder, a missing folder, a folder as the file,
``/proc``), and a full disk injected into a sweep: exit 2, one line naming the
place, nothing left behind.

The case counts are asserted, so a table that silently shrinks fails too.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from o2ksim.cli import main
from o2ksim.workloads.swf import SWF_FIELDS

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "traces" / "tiny.swf")
KTH = str(ROOT / "traces" / "kth-sp2-sample.swf")
SEED = 27


def cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def check(args: list[str], names: list[str], *, must_refuse: bool) -> str:
    """Run ``args``; ``names``: one of them must be in a refusal's line.  Returns the
    outcome, ``accepted`` or the refusal's line."""
    code, _, err = cli(args)
    errors = [ln for ln in err.splitlines() if ln.startswith("o2ksim: error")]
    assert "Traceback" not in err, (args, err)
    if code == 0 and not must_refuse:
        return "accepted"
    assert code == 2, (args, code, err)
    assert len(errors) == 1 and len(err.strip().splitlines()) == 1, (args, err)
    assert any(n in errors[0] for n in names), (args, names, errors[0])
    return errors[0]


# ------------------------------------------------------------------ SWF
GOOD = [1, 0, -1, 100, 2, -1, -1, 2, 200, 1024, 1, 1, 1, 1, 1, 1, -1, -1]
BAD_TOKENS = {  # value -> certainly refused
    "-5": True, "-1000000": True, str(2**63): True, str(2**64 + 7): True, "abc": True,
    "1e3": True, "0x10": True, "+5": True, "nan": True, "inf": True, "1,000": True,
    "\u0665": True, "5s": True, "--1": True, str(2**62): False, str(10**15): False,
    str(2**53): False, "0": False, "999999999999": False, "3.": False, "0.5": False,
}  # fmt: skip


def swf_text(rows: list[list[str]]) -> str:
    return "; MaxProcs: 16\n" + "".join(" ".join(r) + "\n" for r in rows)


def swf_cases() -> Iterator[tuple[str, list[list[str]], bool, list[str]]]:
    """(description, rows, must refuse, names one of which the refusal line must hold)."""
    good = [str(v) for v in GOOD]
    for k in range(18):  # every field x every hostile token
        for token, certain in BAD_TOKENS.items():
            row = list(good)
            row[0] = "2"  # a second job
            row[k] = token
            if k == 5 and re.fullmatch(r"[0-9]+\.?[0-9]*", token):
                certain = False  # field 6 may be a decimal
            field = f"field {k + 1} ({SWF_FIELDS[k]})"
            names = [field] if certain else ["field ", "expected 18 fields"]
            yield (f"{field}={token!r}", [good, row], certain, names)
    for k in range(18):  # every field missing, one extra field, an empty line's neighbours
        row = good[:k] + good[k + 1 :]
        yield (f"field {k + 1} missing", [row], True, ["expected 18 fields"])
    yield ("extra field", [[*good, "7"]], True, ["expected 18 fields"])
    rnd = random.Random(SEED)  # random combinations: 1-4 damaged fields on 1-3 lines
    tokens = list(BAD_TOKENS)
    for i in range(150):
        rows = [list(good) for _ in range(rnd.randint(1, 3))]
        for n, r in enumerate(rows):
            r[0] = str(n + 1)
        for _ in range(rnd.randint(1, 4)):
            rows[rnd.randrange(len(rows))][rnd.randrange(18)] = rnd.choice(tokens)
        yield (f"random {i}", rows, False, ["field", "expected 18 fields", "job id"])


def test_fuzz_swf_fields(tmp_path):
    path = tmp_path / "t.swf"
    outcomes = {"accepted": 0, "refused": 0}
    for name, rows, certain, names in swf_cases():
        path.write_text(swf_text(rows))
        outcome = check(["run", "--trace", str(path), "-q"], names, must_refuse=certain)
        if outcome != "accepted":
            assert re.search(rf"{re.escape(str(path))}:\d+: ", outcome), (name, outcome)
            outcome = "refused"  # the line names the file and the line
        outcomes[outcome] += 1
    assert sum(outcomes.values()) == 18 * len(BAD_TOKENS) + 19 + 150
    assert outcomes["refused"] > 18 * 14  # every certain case at least


# ------------------------------------------------------------------ TOML files
BAD_VALUES = ["-1", "0", "1.5", '"8"', "nan", "inf", "-inf", "true", "[]", "{}", "2e300",
              str(2**63), '""', '"x"']  # fmt: skip
MACHINE_KEYS = {
    "procs": "host", "memory_gb": "host", "memory_mb": "host", "memory_per_proc_mb": "host",
    "name": "host", "dedicated": "host", "kill_overrun": "options", "overrun_grace": "options",
}  # fmt: skip


def machine_text(key: str, value: str) -> str:
    host = {"name": '"h"', "procs": "16", "memory_gb": "8"}
    options: dict[str, str] = {}
    (host if MACHINE_KEYS[key] == "host" else options)[key] = value
    if key in ("memory_mb", "memory_per_proc_mb"):
        del host["memory_gb"]
    text = 'name = "m"\n'
    if options:
        text += "[options]\n" + "".join(f"{k} = {v}\n" for k, v in options.items())
    return text + "[[host]]\n" + "".join(f"{k} = {v}\n" for k, v in host.items())


def test_fuzz_machine_files(tmp_path):
    path = tmp_path / "m.toml"
    n = 0
    for key in MACHINE_KEYS:
        for value in [*BAD_VALUES, "x = = 1"]:
            path.write_text(machine_text(key, value))
            certain = value in ('"8"', "nan", "[]", "{}", '"x"', "x = = 1") and key != "name"
            check(["run", "--trace", TINY, "--machine", str(path), "-q"], [str(path)],
                  must_refuse=certain)  # fmt: skip
            n += 1
    assert n == len(MACHINE_KEYS) * (len(BAD_VALUES) + 1)


POLICY_KEYS = ["reservations", "priority", "sliding", "reservation_kind", "quantum",
               "immediate_service", "initial_memory", "eligible_after", "bogus_key"]  # fmt: skip


def test_fuzz_policy_files(tmp_path):
    path = tmp_path / "p.toml"
    n = 0
    for key in POLICY_KEYS:
        for value in [*BAD_VALUES, '"-5m"', '"1e9GB"']:
            path.write_text(f'name = "p"\nkind = "backfill"\n[params]\n{key} = {value}\n')
            certain = key == "bogus_key" or value in ("nan", "[]") or (value == "{}" and key != "priority")
            check(["run", "--trace", TINY, "--policy", str(path), "-q"],
                  [str(path), "p:", key, "policy"], must_refuse=certain)  # fmt: skip
            n += 1
    assert n == len(POLICY_KEYS) * (len(BAD_VALUES) + 2)


SCENARIO_KEYS = {
    "protocol.window": ['["x", "y"]', "[100, 50]", "[50, 50]", "[nan, 100]", "[0]", "5",
                        '["1000d", "2000d"]'],
    "protocol.warmup": ['"-1d"', "nan", '"x"'],
    "protocol.interval": ['"0s"', '"-5m"', "nan", '"abc"', "true"],
    "protocol.seed": ["-1", "1.5", '"x"', str(2**64)],
    "protocol.overrun_grace": ["-1", "nan", '"x"'],
    "protocol.kill_overrun": ['"no"', "1"],
    "workload.trace": ['"no/such.swf"', "5", '""'],
    "workload.estimates": ['"scenario-z"', "5"],
    "workload.load": ["-1", "0", "nan", '"x"'],
    "policies": ['["no-such-policy"]', "5", "[]", '[""]'],
}  # fmt: skip


def scenario_text(key: str, value: str) -> str:
    tables: dict[str, dict[str, str]] = {
        "": {"name": '"s"', "policies": '["fcfs"]'},
        "workload": {"trace": f'"{TINY}"'},
        "protocol": {},
    }
    section, _, name = key.rpartition(".")
    tables[section][name] = value
    text = "".join(f"{k} = {v}\n" for k, v in tables[""].items())
    for section in ("workload", "protocol"):
        text += f"[{section}]\n" + "".join(f"{k} = {v}\n" for k, v in tables[section].items())
    return text


@pytest.mark.parametrize("action", ["show", "run"])
def test_fuzz_scenario_files(tmp_path, action):
    """``show`` reads the file alone; ``run`` also reads each window against its trace (a
    window beyond the trace is refused there, before the results folder is made)."""
    path = tmp_path / "s.toml"
    extra = ["--out", str(tmp_path / "res"), "-q", "-j", "1"] if action == "run" else []
    n = 0
    for key, values in SCENARIO_KEYS.items():
        for value in values:
            path.write_text(scenario_text(key, value))
            certain = action == "run" or key != "protocol.window" or value != '["1000d", "2000d"]'
            check(["scenario", action, str(path), *extra], [str(path), key.rpartition(".")[2]],
                  must_refuse=certain)  # fmt: skip
            assert not (tmp_path / "res").exists()
            n += 1
    assert n == sum(len(v) for v in SCENARIO_KEYS.values())


# ------------------------------------------------------------------ command-line values
CLI_VALUES = ["", "-5", "0", "nan", "inf", "-inf", "1e400", "abc", "5x", "a\nb", "9" * 40,
              "\u00e9", "--", "5m", "1.5"]  # fmt: skip
CLI_OPTIONS = ["--interval", "--grace", "--seed", "--estimates", "--reservations", "--quantum",
               "--initial-memory", "--eligible-after", "--machine", "--policy", "--set",
               "--warmup", "--immediate-service", "--priority"]  # fmt: skip


def test_fuzz_cli_values(tmp_path):
    n = 0
    for option in CLI_OPTIONS:
        for value in CLI_VALUES:
            args = ["run", "--trace", TINY, "-q", option, value]
            if option in ("--quantum", "--initial-memory", "--eligible-after"):
                args += ["--policy", "fcfs-backfill-immediate"]
            if option == "--grace":
                args += ["--kill-overrun"]
            if option == "--warmup":
                args += ["--window", "0", "1h"]
            certain = value in ("", "nan", "inf", "-inf", "abc", "a\nb", "\u00e9", "--") and not (
                option == "--reservations" and value == "inf"  # 'inf' = 'all': every waiting job
            )
            names = [option, option.lstrip("-").replace("-", "_"), value.split("\n")[0] or option]
            check(args, names, must_refuse=certain and option not in ("--set",))
            n += 1
    for first, second in [("x", "y"), ("5", "1"), ("nan", "1"), ("1", "1"), ("1e9", "2e9"),
                          ("1990-01-01", "1990-02-01"), ("-5", "5"), ("10000d", "20000d"),
                          ("", "5"), ("5", "a\nb")]:  # fmt: skip
        check(["run", "--trace", TINY, "-q", "--window", first, second], ["--window"],
              must_refuse=True)  # fmt: skip
        n += 1
    for span in ["0", "-1d", "nan", "1e400", "abc", "99999d"]:  # a generated workload's span
        check(["run", "-q", "--span", span], ["--span"], must_refuse=True)
        n += 1
    assert n == len(CLI_OPTIONS) * len(CLI_VALUES) + 10 + 6


# ------------------------------------------------------------------ output paths
SCENARIO = str(ROOT / "scenarios" / "explain-backfill.toml")
# each command with where its output goes: a file (`file`) or a folder (`folder`)
OUTPUT_COMMANDS = {
    "trace convert": (lambda out: ["trace", "convert", TINY, out], "file"),
    "characterize": (lambda out: ["characterize", TINY, "--out", out, "--no-figures"], "folder"),
    "gantt": (lambda out: ["gantt", SCENARIO, "-o", out], "file"),
    "run": (lambda out: ["run", "--trace", TINY, "-q", "--out", out], "folder"),
    "scenario run": (lambda out: ["scenario", "run", SCENARIO, "-q", "--no-report", "--out", out], "folder"),
    # added by the issue-27 audit: play and report were tracebacks; fit, predict and generate
    # refused only after their work
    "play": (lambda out: ["play", SCENARIO, "-o", out], "file"),
    "generate": (lambda out: ["generate", "--span", "1d", "--out", out], "file"),
    "fit": (lambda out: ["fit", KTH, "--out", out], "file"),
    "predict": (lambda out: ["predict", KTH, "--out", out], "folder"),
    "validate": (lambda out: ["validate", KTH, "--out", out], "folder"),
    "report": (lambda out: ["report", str(REPORTABLE), "-q", "--out", out], "folder"),
}
KINDS = [kind for _, kind in OUTPUT_COMMANDS.values()]


def bad_targets(tmp: Path, kind: str) -> Iterator[tuple[str, str]]:
    """``(target, what its error must name)`` for outputs that cannot be written there."""
    (tmp / "afile").write_text("in the way\n")
    (tmp / "adir").mkdir(exist_ok=True)
    yield str(tmp / "afile" / "x.out"), "afile"  # the parent is a file
    yield "/proc/o2ksim-fuzz/x.out", "/proc/o2ksim-fuzz"  # a place nobody can write
    if kind == "file":
        yield str(tmp / "missing" / "x.out"), "missing"  # a folder that does not exist
        yield str(tmp / "adir"), "adir"  # a folder where a file is wanted
    else:
        yield str(tmp / "afile"), "afile"  # a file where a folder is wanted


@pytest.fixture(scope="module")
def reportable(tmp_path_factory):
    """A results directory ``o2ksim report`` can read (a sweep of the tiny explain scenario)."""
    global REPORTABLE
    REPORTABLE = tmp_path_factory.mktemp("reportable") / "res"
    assert main(["scenario", "run", SCENARIO, "-q", "--no-report", "--out", str(REPORTABLE)]) == 0
    return REPORTABLE


REPORTABLE = Path("unset")


def test_fuzz_output_paths(tmp_path, reportable):
    """Every command that writes, into every kind of place it cannot write: exit 2, one line
    naming the place, and nothing left behind (no new file anywhere under tmp_path)."""
    n = 0
    for name, (command, kind) in OUTPUT_COMMANDS.items():
        for target, named in bad_targets(tmp_path, kind):
            before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
            line = check(command(target), [named], must_refuse=True)
            assert "Traceback" not in line
            assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before, (name, target)
            n += 1
    assert n == 4 * KINDS.count("file") + 3 * KINDS.count("folder")  # 4 bad files, 3 bad folders


@pytest.mark.parametrize("stage", ["workspace", "summary", "report"])
def test_scenario_run_on_a_full_disk_is_one_line_and_leaves_no_half_file(tmp_path, monkeypatch, stage):
    """A write error (ENOSPC) injected where a sweep writes its run, its summary table or its
    report: exit 2, one line naming the place, no temporary file or half workspace left."""
    import errno

    import pandas as pd
    from matplotlib.figure import Figure

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "res" / stage))

    if stage == "workspace":
        monkeypatch.setattr(pd.DataFrame, "to_parquet", full)
    elif stage == "summary":
        monkeypatch.setattr("o2ksim.experiments.sweep.write_table", full)
    else:  # the report's first file is a figure
        monkeypatch.setattr(Figure, "savefig", full)
    out = tmp_path / "res"
    args = ["scenario", "run", SCENARIO, "-q", "--out", str(out)]
    line = check(args, [str(out)], must_refuse=True)
    assert "No space left on device" in line
    assert not [p for p in out.rglob("*") if "tmp" in p.name], list(out.rglob("*"))
    if stage == "workspace":
        assert not (out / "runs").exists() or not any((out / "runs").iterdir())
