"""A generated fuzz suite of the workload models' parameter files (issue 27).

Every numeric value of every model's parameter file -- the shipped sets of
``downey``, ``cirne-berman`` and ``o2k`` and the files ``o2ksim fit`` writes
for ``downey`` and ``cirne-berman`` -- is replaced by hostile values (NaN,
infinities, 1e308, -1e308, 0, -1, 1e9, 2**63, 40 digits, a string, a boolean)
and the file goes through ``o2ksim generate --model M --params FILE --span 1d``
in this process.  The property: exit 0, or exit 2 with exactly one stderr line
naming the file (and the key, when the value is certainly wrong); never a
traceback; never a slow or huge generation (each case is timed, and the
generated job count is bounded by what a one-day span may hold).

Cases are a table (every key x every hostile value; for the O2K model, whose
file has 600 numbers in 62 kinds of key, the first of each kind) plus
Hypothesis, which draws any number of any file.  The case counts are asserted,
so a table that silently shrinks fails too.
"""

from __future__ import annotations

import contextlib
import io
import math
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o2ksim.cli import main
from o2ksim.workloads import models
from o2ksim.workloads.params import dump_toml

ROOT = Path(__file__).resolve().parents[1]
KTH = str(ROOT / "traces" / "kth-sp2-sample.swf")

HOSTILE: list[Any] = [
    math.nan, math.inf, -math.inf, 1e308, -1e308, 0, -1, 1e9, 2**63, 10**40, -(10**40),
    1e-308, "x", True,
]  # fmt: skip
"""Values every numeric key is tried with."""
CERTAIN = (math.nan, "x", True)
"""Values no numeric key may take: NaN, a string, a boolean (infinities are bounds of
O2K's ``[lo, hi]`` ranges)."""
pytestmark = pytest.mark.filterwarnings("error")  # a warning is a second line on stderr

SLOW = 5.0
"""Seconds one case may take (a one-day span of any model takes well under 0.1 s)."""


def cli(args: list[str]) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - start


def leaves(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The paths (keys and list indices) of every number in a parsed TOML document."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from leaves(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from leaves(value, (*path, i))
    elif isinstance(data, int | float) and not isinstance(data, bool):
        yield path


def replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of ``data`` with the number at ``path`` replaced by ``value``."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {k: replaced(v, rest, value) if k == head else v for k, v in data.items()}
    return [replaced(v, rest, value) if i == head else v for i, v in enumerate(data)]


def key_of(path: tuple[Any, ...]) -> str:
    """The dotted key a refusal names (``class[1].beta0`` -> ``beta0``): the last name."""
    return next(str(p) for p in reversed(path) if isinstance(p, str))


def may_take_anything(path: tuple[Any, ...]) -> bool:
    """The ``[fit]`` table: the fit's record (trace, trim, squared errors), which no
    generator reads (docs/reference/refusals.md)."""
    return path[0] == "fit"


def in_a_range(path: tuple[Any, ...]) -> bool:
    """A bound of an O2K ``[lo, hi]`` condition (``procs = [65, 128]``): +-inf is a bound."""
    return len(path) >= 2 and isinstance(path[-1], int) and path[-2] in (
        "procs", "mem_mb", "req_s", "run_s"
    )  # fmt: skip


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict[str, tuple[str, dict[str, Any]]]:
    """name -> (model, parsed file): the shipped sets and the files ``o2ksim fit`` writes."""
    tmp = tmp_path_factory.mktemp("fitted")
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for model in ("downey", "cirne-berman"):
        target = tmp / f"{model}.toml"
        code, _, err, _ = cli(["fit", "--model", model, KTH, "--out", str(target)])
        assert code == 0, err
        out[f"{model}-fitted"] = (model, tomllib.loads(target.read_text()))
    for model, name in (("downey", None), ("cirne-berman", "kth"), ("o2k", None)):
        out[f"{model}-shipped"] = (model, tomllib.loads(models.param_file(model, name).read_text()))
    return out


def check_case(tmp: Path, model: str, data: dict[str, Any], path: tuple[Any, ...], value: Any) -> str:
    """Write the file with ``value`` at ``path`` and generate a day from it: ``accepted`` or
    ``refused``, after checking the property."""
    file = tmp / "p.toml"
    file.write_text(dump_toml(replaced(data, path, value)))
    target = tmp / "g.swf"
    args = ["generate", "--model", model, "--params", str(file), "--span", "1d", "--out", str(target)]
    code, out, err, took = cli(args)
    what = (model, path, value, code, err)
    assert "Traceback" not in err, what
    assert took < SLOW, (*what, took)
    if code == 0:
        assert not err.strip(), what
        certain = any(value is v for v in CERTAIN) and not may_take_anything(path)
        assert not certain or (in_a_range(path) and value is not math.nan), what
        jobs = int(out.split(": ", 1)[1].split(" jobs", 1)[0])
        assert jobs <= 100_000 * 1.1 + 100, what  # at most a day of the highest rate
        return "accepted"
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, what
    assert lines[0].startswith("o2ksim: error: ") and str(file) in lines[0], what
    if any(value is v for v in CERTAIN) and not in_a_range(path):
        assert key_of(path) in lines[0], what
    return "refused"


def table_cases(bases: dict[str, tuple[str, dict[str, Any]]]) -> Iterator[tuple[str, dict[str, Any], tuple[Any, ...]]]:
    """(model, data, path) for every number of the Downey and Cirne-Berman files and the first
    number of each kind of key of the O2K file."""
    for model, data in bases.values():
        seen: set[tuple[Any, ...]] = set()
        for path in leaves(data):
            kind = tuple(p for p in path if isinstance(p, str))
            if model == "o2k" and kind in seen:
                continue
            seen.add(kind)
            yield model, data, path


def test_every_key_of_every_parameter_file(tmp_path, bases):
    outcomes = {"accepted": 0, "refused": 0}
    by_model: dict[str, int] = {}
    for model, data, path in table_cases(bases):
        for value in HOSTILE:
            outcomes[check_case(tmp_path, model, data, path, value)] += 1
            by_model[model] = by_model.get(model, 0) + 1
    n_paths = sum(1 for _ in table_cases(bases))
    assert sum(outcomes.values()) == n_paths * len(HOSTILE)
    assert by_model["o2k"] == 62 * len(HOSTILE)  # one number of each kind of O2K key
    assert by_model["downey"] >= 35 * len(HOSTILE) and by_model["cirne-berman"] >= 60 * len(HOSTILE)
    assert outcomes["refused"] > outcomes["accepted"]


NUMBERS = st.one_of(
    st.sampled_from(HOSTILE),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(min_value=-10, max_value=10),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_number_of_any_parameter_file(tmp_path, bases, data):
    """Hypothesis picks a file, any of its numbers (every O2K number, not one of a kind) and a
    value; the same property."""
    name = data.draw(st.sampled_from(sorted(bases)))
    model, parsed = bases[name]
    path = data.draw(st.sampled_from(list(leaves(parsed))))
    check_case(tmp_path, model, parsed, path, data.draw(NUMBERS))


# ---------------------------------------------------------------- the audit's cases, one by one
def fitted_with(bases: dict[str, Any], name: str, path: tuple[Any, ...], value: Any, tmp: Path) -> Path:
    _, data = bases[name]
    file = tmp / f"{name}.toml"
    file.write_text(dump_toml(replaced(data, path, value)))
    return file


@pytest.mark.parametrize(
    ("name", "path", "value", "says"),
    [
        ("downey-fitted", ("arrival", "jobs_per_day"), 1e308, "arrival.jobs_per_day: must be at most 100000"),
        ("cirne-berman-fitted", ("requested_time", "rho"), -1e308, "requested_time.rho"),
        ("cirne-berman-fitted", ("machine", "procs"), 1e308, "machine.procs: must be at most 1048576"),
        ("cirne-berman-fitted", ("arrival", "jobs_per_day"), 1e9, "arrival.jobs_per_day: must be at most"),
        ("downey-shipped", ("class", 0, "beta0"), -300.0, "class[0].beta0"),  # exp() overflowed
        ("cirne-berman-shipped", ("arrival", "coefficients", 3), 1e308, "arrival.coefficients"),
        ("o2k-shipped", ("ratio", "rule", 0, "under_cv"), 1e-300, "under_cv"),  # divided by zero
        ("o2k-shipped", ("arrivals", "period", 0, "mean_s"), 1e-300, "mean_s"),
        ("o2k-shipped", ("memory", "group", 0, "mean_gb"), "x", "mean_gb"),  # float('x')
    ],
)
@pytest.mark.parametrize("command", ["generate", "run"])
def test_audit_cases_are_refused_in_one_line(tmp_path, bases, name, path, value, says, command):
    file = fitted_with(bases, name, path, value, tmp_path)
    model = bases[name][0]
    if command == "generate":
        args = ["generate", "--out", str(tmp_path / "g.swf")]
    else:
        args = ["run", "-q", "--out", str(tmp_path / "res")]
    code, _, err, took = cli([*args, "--model", model, "--params", str(file), "--span", "2d"])
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert str(file) in lines[0] and says in lines[0], lines[0]
    assert took < SLOW


def test_a_rate_the_span_cannot_hold_is_refused_before_a_job_is_drawn(tmp_path, bases):
    """A rate within the file's limit over a span within ``--span``'s: the expected job count
    (2.7e8) is refused, naming the file and the rate, in well under a second."""
    file = fitted_with(bases, "cirne-berman-fitted", ("arrival", "jobs_per_day"), 90_000, tmp_path)
    code, _, err, took = cli(["generate", "--model", "cirne-berman", "--params", str(file),
                              "--span", "3000d", "--out", str(tmp_path / "g.swf")])  # fmt: skip
    assert code == 2 and str(file) in err and "arrival.jobs_per_day" in err and "2,000,000" in err, err
    assert took < 1.0


def test_api_generate_and_load_params_raise_config_errors(bases):
    from o2ksim.errors import ConfigError, O2KSimError

    with pytest.raises(ConfigError, match=r"field arrival\.jobs_per_day: must be at most"):
        models.load_params("downey", {"arrival": {"jobs_per_day": 1e308}})
    with pytest.raises(ConfigError, match=r"field machine\.procs: must be a whole number"):
        models.load_params("o2k", {"machine": {"procs": 12.5}})
    with pytest.raises(O2KSimError, match="start_time"):
        models.generate("downey", span="1d", seed=0, start_time=10**40)
    with pytest.raises(O2KSimError, match="seed"):
        models.generate("downey", span="1d", seed=2**64)


# ------------------------------------------------------------------ keys no generator reads
def tables(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The paths of every table (and array-of-tables element) of a parsed TOML document,
    the ``[fit]`` record left out."""
    if isinstance(data, dict):
        if path[:1] != ("fit",):
            yield path
        for key, value in data.items():
            yield from tables(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from tables(value, (*path, i))


def with_key(data: Any, path: tuple[Any, ...], key: str) -> Any:
    """A copy of ``data`` with ``key = 1`` added to the table at ``path``."""
    if not path:
        return {**data, key: 1}
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {k: with_key(v, rest, key) if k == head else v for k, v in data.items()}
    return [with_key(v, rest, key) if i == head else v for i, v in enumerate(data)]


def test_every_file_as_shipped_or_fitted_has_no_unread_key(tmp_path, bases):
    """The check below refuses nothing ``o2ksim fit`` writes or the package ships."""
    for name, (model, data) in bases.items():
        target = tmp_path / f"{name}.toml"
        target.write_text(dump_toml(data, {}, ""))
        code, _, err, _ = cli(["generate", "--model", model, "--params", str(target), "--span", "1d",
                               "--out", str(tmp_path / "g.swf")])  # fmt: skip
        assert code == 0, (name, err)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_key_no_generator_reads_is_refused_in_one_line(tmp_path, bases, data):
    """Found by the session-13 review: a misspelt key (``jobs_per_dy``) was dropped in
    silence and the default stood.  Any table of any file, a key it does not have."""
    name = data.draw(st.sampled_from(sorted(bases)))
    model, parsed = bases[name]
    where = data.draw(st.sampled_from(list(tables(parsed))))
    table: Any = parsed
    for step in where:
        table = table[step]
    taken = set(table) | ({"model", "base", "fit"} if not where else set())  # a file's own keys
    key = data.draw(st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True).filter(lambda k: k not in taken))
    target = tmp_path / "typo.toml"
    target.write_text(dump_toml(with_key(parsed, where, key), {}, ""))
    code, _, err, _ = cli(["generate", "--model", model, "--params", str(target), "--span", "1d",
                           "--out", str(tmp_path / "g.swf")])  # fmt: skip
    assert code == 2, (name, where, key, err)
    line = err.strip()
    assert "\n" not in line and line.startswith(f"o2ksim: error: {target}:")
    if where[-1:] == ("month",):  # O2K's [month.NAME] tables: a new name is a new month
        assert f'month."{key}": must be a table' in line or f"month.{key}: must be a table" in line
    elif where[-2:] == ("runtime", "dist"):  # O2K's [runtime.dist.NAME]: a new distribution
        assert f"runtime.dist.{key}: must be a table" in line, line
    else:
        assert f"{key}: unknown key: no generator reads it" in line


def test_a_runtime_distribution_is_a_table_that_a_cell_or_the_default_names(tmp_path):
    """Found by the fuzz above: ``[runtime.dist]`` ``a = 1`` was refused as "field
    runtime.dist.a.default_share: missing", and a fifth distribution that no cell and not
    ``default_dist`` names was accepted and never drawn from."""
    from o2ksim.errors import ConfigError

    base = models.load_params("o2k")[0]
    with pytest.raises(ConfigError, match=r"field runtime\.dist\.a: must be a table"):
        models.generate("o2k", span="1d", seed=1, params={"runtime": {"dist": {"a": 1}}})
    unused = {"default_share": 0.5, "default_weights": [1, 0, 0, 0], "range_weights": [1, 0, 0, 0, 0, 0]}
    assert len(base["runtime"]["range"]) == 6  # range_weights above: one per range
    with pytest.raises(ConfigError, match=r"field runtime\.dist\.E: unknown key: no generator reads it"):
        models.generate("o2k", span="1d", seed=1, params={"runtime": {"dist": {"E": unused}}})


@pytest.mark.parametrize(
    ("model", "params", "says"),
    [
        ("downey", {"arrival": {"jobs_per_dy": 5}},
         "field arrival.jobs_per_dy: unknown key: no generator reads it (did you mean 'jobs_per_day'?"),
        ("downey", {"arival": {"jobs_per_day": 5}}, "field arival: unknown key"),
        ("o2k", {"arrivals": {"scale": 2}}, "did you mean 'rate_scale'?"),
        ("cirne-berman", {"fit": {"anything": 1}}, None),  # the fit's record: read by no one, kept
    ],
)  # fmt: skip
def test_the_api_refuses_an_unread_key_of_a_mapping_too(model, params, says):
    from o2ksim.errors import ConfigError

    if says is None:
        assert models.load_params(model, params)[0]
        return
    with pytest.raises(ConfigError) as info:
        models.generate(model, span="1d", seed=1, params=params)
    assert says in str(info.value)
