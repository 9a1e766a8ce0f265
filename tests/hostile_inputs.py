"""Generators of hostile input and the property every input must satisfy.

Used by ``tests/test_fuzz_hostile.py`` (about a thousand inputs per category,
seeded, in ``make test``) and ``benchmarks/test_bench_hostile.py`` (many more,
in ``make bench``).  Three categories:

* SWF *text* (bytes, in fact: encodings, line endings, gzip) through the real
  reader and ``o2ksim run --check``;
* machine TOML through ``o2ksim machines FILE``;
* scenario TOML through ``o2ksim scenario show FILE``.

The property: exit 0 with a result that matches the input (every job line is
one output row, every host as written, as many runs as the levels multiply
to), or exit 2 with exactly one line ``o2ksim: error: ...`` that names the
file (and a field, for a value that is wrong); never a traceback (any other
exception fails the test), never a hang (the tests carry a time limit).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import random
import re
import tempfile
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import strategies as st

from o2ksim.cli import main

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "traces" / "tiny.swf"

OUTCOMES: Counter[str] = Counter()
"""Counts per category and outcome (``swf/ok``, ``swf/refused`` ...) for reports."""


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """``o2ksim ARGS`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def assert_clean_refusal(code: int, err: str, name: str, *, value_error: bool = True) -> str:
    """Exit 2 and one line ``o2ksim: error: ...`` naming the file ``name`` (besides warnings)."""
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("o2ksim: warning: ")]
    assert code == 2, (code, err)
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("o2ksim: error: "), line
    assert name in line, (name, line)
    return line


# =============================================================================== SWF text
HOSTILE_TOKENS = [
    "-1", "-2", "-7", "-0", "+5", "12.5", "12.5e", "1e5", "abc", "NaN", "inf", "0x10",
    "\u0663", "\uff11\uff12", "9" * 40, str(2**53), str(10**12), str(10**12 - 1),
    str(2**63 - 1), str(2**63), str(2**64), "3.", ".5", "1,000", "\x00", "\x7f", "\u00e9",
]  # fmt: skip
MAX_PROCS_VALUES = ["0", "-5", "abc", str(2**40), "9" * 25, "16 (all)"]
UNIX_VALUES = ["946684800", "99999999999999", "-1", "x", str(2**70)]


def swf_row(rnd: random.Random, job_id: int, hostile: bool) -> list[str]:
    """One job line's tokens: a plausible job; when ``hostile``, one to three bad fields."""
    procs = rnd.randint(1, 16)
    run = rnd.randint(0, 10**4)
    row = [
        job_id, rnd.randint(0, 10**5), -1, run, procs, -1, -1, rnd.choice([procs, -1]),
        rnd.choice([-1, run, run * 2 + 1]), rnd.choice([-1, 1024, 2**20]), 1, rnd.randint(1, 5),
        1, 1, 1, 1, -1, -1,
    ]  # fmt: skip
    tokens = [str(v) for v in row]
    if hostile:
        change = rnd.choice(["token", "token", "token", "drop", "extra", "huge-mem", "huge-time"])
        if change == "token":
            for _ in range(rnd.randint(1, 3)):
                tokens[rnd.randrange(18)] = rnd.choice(HOSTILE_TOKENS)
        elif change == "drop":
            tokens.pop(rnd.randrange(18))
        elif change == "extra":
            tokens.append("7")
        elif change == "huge-mem":
            tokens[9] = str(2**62)
        else:
            tokens[rnd.choice([1, 3, 8])] = str(rnd.choice([2**53, 10**12, 10**15]))
    return tokens


@st.composite
def swf_bytes(draw: Any) -> bytes:
    """A whole SWF file as bytes: header, job lines, line endings, encoding.

    Hypothesis draws the structure (how many jobs, which are hostile, the
    header, line endings, encoding); a seeded ``random.Random`` fills in the
    field values (far fewer draws: generation stays cheap).
    """
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.sampled_from([3, 5, 8, 1, 2, 4, 6, 7, 0]))
    n_hostile = draw(st.sampled_from([0, 0, 0, 1, 1, 2]))
    bad_rows = set(rnd.sample(range(n), min(n, n_hostile)))
    rows = [swf_row(rnd, i + 1, i in bad_rows) for i in range(n)]
    if rows and rnd.random() < 0.08:  # a repeated job id
        rows.append(list(rows[rnd.randrange(len(rows))]))
    header = ["; Version: 2.2"]
    head_kind = draw(st.sampled_from(["ok"] * 8 + ["bad-procs", "no-procs", "bad-unix", "note"]))
    if head_kind != "no-procs":
        header.append(f"; MaxProcs: {rnd.choice(MAX_PROCS_VALUES) if head_kind == 'bad-procs' else 16}")
    if head_kind == "bad-unix":
        header.append(f"; UnixStartTime: {rnd.choice(UNIX_VALUES)}")
    if head_kind == "note":
        header.append("; Note: caf\u00e9 \u2014 sp\u00e4t")
    sep = rnd.choice([" ", "\t", "   ", " \t "])
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    lines = header + [sep.join(r) for r in rows]
    if rows and rnd.random() < 0.1:
        lines.insert(rnd.randint(len(header), len(lines)), "; a comment among the jobs")
    if rnd.random() < 0.1:
        lines.insert(len(header), "")
    text = end.join(lines) + (end if rnd.random() < 0.5 else "")
    encoding = draw(
        st.sampled_from(["utf-8"] * 12 + ["latin-1", "utf-16", "gzip", "gzip-cut", "junk", "bom"])
    )
    if encoding == "utf-8":
        return text.encode("utf-8")
    if encoding == "latin-1":
        return text.encode("latin-1", "replace")
    if encoding == "utf-16":
        return text.encode("utf-16")
    if encoding == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    data = text.encode()
    if encoding.startswith("gzip"):
        packed = gzip.compress(data, mtime=0)
        return packed if encoding == "gzip" else packed[: max(2, len(packed) // 2)]
    cut = rnd.randint(0, len(data))
    return data[:cut] + rnd.randbytes(rnd.randint(1, 8)) + data[cut:]


def job_lines(data: bytes) -> list[str] | None:
    """The job lines a correct reader must find (None when gzip data is damaged)."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except Exception:
            return None
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")  # old logs: comments in Latin-1 (job lines are ASCII)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return [ln for ln in text.split("\n") if ln.strip() and not ln.strip().startswith(";")]


def check_swf(data: bytes, policy: str = "fcfs-backfill", *, full: bool | None = None) -> str:
    """The property for one SWF file through ``o2ksim run``; returns the outcome.

    Accepted: the run reports as many jobs as the file has job lines.  One
    input in eight (or every one with ``full``) also goes through ``--out
    --check``: the written jobs.csv holds exactly the file's job ids and the
    invariant checker passes on the written files.
    """
    if full is None:
        full = zlib.crc32(data) % 8 == 0
    with tempfile.TemporaryDirectory(prefix="o2ksim-fuzz-") as tmp:
        path = Path(tmp) / "t.swf"
        path.write_bytes(data)
        out = Path(tmp) / "out"
        extra = ["--out", str(out), "--check"] if full else []
        code, stdout, err = run_cli(["run", "--trace", str(path), "--policy", policy, *extra])
        if code == 0:
            assert "Traceback" not in err and "error" not in err, err
            expected = job_lines(data)
            assert expected is not None, "accepted bytes that are not SWF text"
            m = re.search(r"^jobs (\d+):", stdout, re.M)
            assert m and int(m.group(1)) == len(expected), ("jobs in != jobs out", stdout)
            if full:
                jobs = pd.read_csv(out / "jobs.csv")
                ids = sorted(int(ln.split()[0]) for ln in expected)
                assert sorted(jobs["job_id"].tolist()) == ids, "job ids in != job ids out"
                assert "check: ok" in stdout
            OUTCOMES["swf/ok"] += 1
            return "ok"
        line = assert_clean_refusal(code, err, "t.swf")
        if "field" in line:
            assert re.search(r"t\.swf:\d+: ", line), line
        OUTCOMES["swf/refused"] += 1
        return "refused"


# =============================================================================== TOML text
def toml_value(v: Any) -> str:
    """A value written as TOML (inline)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)


HOSTILE_SCALARS = [
    True, False, 0, -1, -10, 2**31, 2**63 - 1, 10**30, math.nan, math.inf, -math.inf,
    0.0001, 1e-300, 1e300, -0.0, 0.5, "", "no", "yes", "true", "16", "nan", "7d", "-5d",
    "\u00e9", [1, 2], [], {},
]  # fmt: skip
MACHINE_TYPOS = ["memory_gbs", "proc", "nmae", "kil_overrun", "memory", "Procs", "colour"]
HOST_KEYS_DOC = {"name", "procs", "memory_gb", "memory_mb", "memory_per_proc_mb", "dedicated"}
KB = {"memory_gb": 2**20, "memory_mb": 2**10}


def maybe(rnd: random.Random, good: Any, p_bad: float) -> Any:
    """``good``, or with probability ``p_bad`` a hostile value instead."""
    return rnd.choice(HOSTILE_SCALARS) if rnd.random() < p_bad else good


@st.composite
def machine_doc(draw: Any) -> dict[str, Any]:
    """A machine as a dict: mostly plausible, with hostile values and keys.

    ``p_bad`` (drawn) is how likely each value is hostile, so the suite sees
    clean files, files with one mistake and files full of them.
    """
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    p_bad = draw(st.sampled_from([0.0, 0.0, 0.03, 0.1, 0.3]))
    doc: dict[str, Any] = {}
    if rnd.random() < 0.5:
        doc["name"] = maybe(rnd, "m", p_bad)
    hosts = []
    for i in range(draw(st.integers(1, 3)) if rnd.random() > p_bad else 0):
        h: dict[str, Any] = {"name": maybe(rnd, f"h{i}", p_bad)}
        h["procs"] = maybe(rnd, rnd.randint(1, 256), p_bad)
        mem = rnd.choice([None, "memory_gb", "memory_mb", "memory_per_proc_mb"])
        if mem:
            h[mem] = maybe(rnd, rnd.choice([rnd.randint(1, 512), round(rnd.uniform(0.5, 512), 3)]), p_bad)
        if rnd.random() < p_bad:
            h[rnd.choice(MACHINE_TYPOS)] = rnd.choice(HOSTILE_SCALARS)
        if rnd.random() < 0.2:
            h["dedicated"] = maybe(rnd, rnd.random() < 0.5, p_bad)
        if rnd.random() < 0.2:
            h["lsf"] = {"limits": {}}
        hosts.append(h)
    doc["host"] = hosts if rnd.random() > p_bad / 3 else rnd.choice(HOSTILE_SCALARS)
    if rnd.random() < 0.5:
        options: Any = {}
        if rnd.random() < 0.7:
            options["kill_overrun"] = maybe(rnd, rnd.random() < 0.5, p_bad)
        if rnd.random() < 0.7:
            options["overrun_grace"] = maybe(rnd, rnd.randint(0, 7200), p_bad)
        if rnd.random() < p_bad:
            options["kil_overrun"] = True
        doc["options"] = options if rnd.random() > p_bad / 3 else rnd.choice(HOSTILE_SCALARS)
    if rnd.random() < p_bad:
        doc[rnd.choice(["nmae", "descripton", "lsf"])] = rnd.choice(HOSTILE_SCALARS)
    return doc


def machine_text(doc: dict[str, Any]) -> str:
    lines = []
    for k, v in doc.items():
        if k != "host" and not isinstance(v, dict):
            lines.append(f"{toml_key(k)} = {toml_value(v)}")
    for k, v in doc.items():
        if k != "host" and isinstance(v, dict):
            lines.append(f"[{toml_key(k)}]")
            lines.extend(f"{toml_key(a)} = {toml_value(b)}" for a, b in v.items())
    hosts = doc.get("host")
    if isinstance(hosts, list) and all(isinstance(h, dict) for h in hosts) and hosts:
        for h in hosts:
            lines.append("[[host]]")
            lines.extend(f"{toml_key(a)} = {toml_value(b)}" for a, b in h.items())
    elif "host" in doc:
        lines.insert(0, f"host = {toml_value(hosts)}")
    return "\n".join(lines) + "\n"


@st.composite
def machine_bytes(draw: Any) -> tuple[dict[str, Any] | None, bytes]:
    """Machine TOML bytes and the document they hold (None when mangled)."""
    doc = draw(machine_doc())
    data = machine_text(doc).encode("utf-8")
    how = draw(st.sampled_from(["plain"] * 12 + ["cut", "junk", "binary"]))
    rnd = random.Random(len(data))
    if how == "plain":
        return doc, data
    if how == "binary":
        return None, rnd.randbytes(rnd.randint(1, 64))
    cut = rnd.randint(0, len(data))
    if how == "cut":
        return None, data[:cut]
    return None, data[:cut] + rnd.randbytes(rnd.randint(1, 6)) + data[cut:]


def check_machine(doc: dict[str, Any] | None, data: bytes) -> str:
    """The property for one machine file through ``o2ksim machines FILE``."""
    from o2ksim.machine import load_machine

    with tempfile.TemporaryDirectory(prefix="o2ksim-fuzz-") as tmp:
        path = Path(tmp) / "m.toml"
        path.write_bytes(data)
        code, _, err = run_cli(["machines", str(path)])
        if code == 0:
            m = load_machine(path)
            if doc is not None:  # accepted: exactly what was written, nothing ignored
                hosts = doc["host"]
                assert set(doc) <= {"name", "description", "host", "options", "lsf"}, doc
                assert len(m.hosts) == len(hosts)
                for spec, h in zip(m.hosts, hosts, strict=True):
                    keys = set(h)
                    assert keys <= HOST_KEYS_DOC | {"lsf"}, f"unknown key accepted: {keys - HOST_KEYS_DOC}"
                    assert spec.procs == h["procs"] and spec.name == h["name"]
                    mem = [k for k in h if k in ("memory_gb", "memory_mb", "memory_per_proc_mb")]
                    if mem:
                        per = KB.get(mem[0], 2**10 * h["procs"])
                        assert spec.memory == round(h[mem[0]] * per) and spec.memory >= 1
                    else:
                        assert math.isinf(spec.memory)
                opts = doc.get("options", {})
                assert set(opts) <= {"kill_overrun", "overrun_grace"}
                assert isinstance(opts.get("kill_overrun", False), bool)
                grace = opts.get("overrun_grace", 0)
                assert not isinstance(grace, bool) and math.isfinite(grace) and grace >= 0
            OUTCOMES["machine/ok"] += 1
            return "ok"
        line = assert_clean_refusal(code, err, "m.toml")
        if doc is not None:
            assert "field " in line or "not valid TOML" in line, line
        OUTCOMES["machine/refused"] += 1
        return "refused"


POLICY_NAMES = ["fcfs", "fcfs-backfill", "sjf-backfill", "lxf-backfill"]
HOSTILE_POLICIES = ["nope", "fcfs.toml", "", "FCFS"]
DURATIONS = ["10d", "1h", "90m", "7", 3600, 86400.0]
HOSTILE_DURATIONS = ["-5d", "nan", "inf", "100000d", "0", "1e-6", "x", -5, 1e300, math.nan]


@st.composite
def scenario_doc(draw: Any) -> dict[str, Any]:
    """A scenario as a dict: plausible sections, with hostile values and keys at a drawn rate."""
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    p_bad = draw(st.sampled_from([0.0, 0.0, 0.03, 0.1, 0.3]))

    def dur(good: Any) -> Any:
        return rnd.choice(HOSTILE_DURATIONS + HOSTILE_SCALARS) if rnd.random() < p_bad else good

    doc: dict[str, Any] = {"name": maybe(rnd, "fz", p_bad / 2)}
    doc["machine"] = maybe(rnd, rnd.choice(["kth-sp2", "o2k", "sdsc-par"]), p_bad)
    policies = rnd.sample(POLICY_NAMES, rnd.randint(1, 3))
    if rnd.random() < p_bad:
        policies.append(rnd.choice(HOSTILE_POLICIES))
    doc["policies"] = maybe(rnd, policies, p_bad / 3)
    workload: dict[str, Any] = {}
    kind = rnd.choice(["trace", "trace", "model"]) if rnd.random() > p_bad / 3 else "none"
    if kind == "trace":
        workload["trace"] = str(TINY) if rnd.random() > p_bad else "missing.swf"
    elif kind == "model":
        workload["model"] = "o2k"
        workload["span"] = dur(rnd.choice(DURATIONS))
    if rnd.random() < 0.2:
        key = rnd.choice(["load", "estimates", "lenient"])
        good = {"load": 0.9, "estimates": "actual", "lenient": True}[key]
        workload[key] = maybe(rnd, good, p_bad)
    if rnd.random() < p_bad:
        workload[rnd.choice(["estimate", "window", "spam"])] = rnd.choice(HOSTILE_SCALARS)
    doc["workload"] = workload
    protocol: dict[str, Any] = {}
    if rnd.random() < 0.5:
        protocol["seeds"] = maybe(rnd, rnd.sample(range(50), rnd.randint(1, 3)), p_bad)
    if rnd.random() < 0.3:
        protocol["interval"] = dur(rnd.choice(["5m", 60, "1h"]))
    if rnd.random() < 0.3:
        protocol["kill_overrun"] = maybe(rnd, rnd.random() < 0.5, p_bad)
    if rnd.random() < 0.3:
        protocol["overrun_grace"] = dur(rnd.choice(DURATIONS))
    if rnd.random() < p_bad:
        protocol["intervall"] = "5m"
    if protocol:
        doc["protocol"] = protocol
    if rnd.random() < 0.3:
        key = rnd.choice(["policy.reservations", "workload.load", "protocol.interval"])
        good = {
            "policy.reservations": rnd.sample(range(6), rnd.randint(1, 3)),
            "workload.load": [0.5, 0.9][: rnd.randint(1, 2)],
            "protocol.interval": ["5m", "1h"][: rnd.randint(1, 2)],
        }[key]
        levels = maybe(rnd, good, p_bad)
        if rnd.random() < p_bad:
            key = rnd.choice(["colour", "policy", "workload.spam"])
        doc["factors"] = {key: levels}
    if rnd.random() < 0.3:
        key = rnd.choice(["report", "segments"]) if rnd.random() > p_bad else "dri"
        doc["outputs"] = {key: maybe(rnd, False, p_bad)}
    return doc


def scenario_text(doc: dict[str, Any]) -> str:
    lines = [f"{toml_key(k)} = {toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict)]
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append(f"[{toml_key(k)}]")
            lines.extend(f"{json.dumps(a) if '.' in a else toml_key(a)} = {toml_value(b)}" for a, b in v.items())
    return "\n".join(lines) + "\n"


def expected_runs(doc: dict[str, Any]) -> int:
    """Runs an accepted scenario plans: seeds x policies x factor levels (independent count)."""
    seeds = doc.get("protocol", {}).get("seeds", [0])
    n = (len(seeds) if isinstance(seeds, list) else 1) * len(doc["policies"])
    for levels in doc.get("factors", {}).values():
        n *= len(levels)
    return n


def check_scenario(doc: dict[str, Any], text: str) -> str:
    """The property for one scenario file through ``o2ksim scenario show FILE``."""
    with tempfile.TemporaryDirectory(prefix="o2ksim-fuzz-") as tmp:
        path = Path(tmp) / "sc.toml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        code, out, err = run_cli(["scenario", "show", str(path)])
        if code == 0:
            m = re.search(r"(\d+) run\(s\)", out)
            assert m and int(m.group(1)) == expected_runs(doc), (out, doc)
            OUTCOMES["scenario/ok"] += 1
            return "ok"
        line = assert_clean_refusal(code, err, "sc.toml")
        assert "field " in line or "not valid TOML" in line or "no [reduced]" in line, line
        OUTCOMES["scenario/refused"] += 1
        return "refused"
