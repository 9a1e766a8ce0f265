"""One small toolkit for checking what users feed o2ksim.

Every configuration value (machine files, scenario TOML, policy presets, run
settings, command-line values) and every range a workload must respect is
checked here, with messages of one shape: the file (or the option), the line
when known, the field, what was expected and what was found.  A failed check
raises :class:`~o2ksim.errors.ConfigError` (an :class:`~o2ksim.errors.O2KSimError`),
which the CLI prints as one ``o2ksim: error: ...`` line with exit code 2.

Why one module: the rules ("a boolean is a TOML boolean", "a number is finite",
"an unknown key names the nearest valid one") must be the same everywhere, and
so must the limits that keep a run from hanging or wrapping around
(:data:`MAX_TIME`, :data:`MAX_JOB_MEMORY_KB`, :data:`MIN_INTERVAL`, ...).
``docs/reference/refusals.md`` lists every refusal and its reason.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import math
import numbers
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from o2ksim.errors import ConfigError, O2KSimError
from o2ksim.jobs import OVERRUN_RULES
from o2ksim.units import format_duration, parse_duration

# ------------------------------------------------------------------------------------- limits
MAX_TIME = 10**12
"""Largest time in seconds (about 31,700 years) a trace field or setting may hold.

Simulated times are floats; at 2**53 s adding one second no longer changes the
clock, and a run spins forever.  Below 10**12 s a float still resolves
0.2 ms, far finer than SWF's whole seconds."""
MAX_JOB_MEMORY_KB = 2**53
"""Largest memory request of one job (KB per processor x processors): 8 EB.
Keeps the product exact in int64 and in floats (no wrap-around to a negative
or zero demand)."""
MAX_PROCS = 2**31 - 1
"""Largest processor count of a job or host."""
MIN_INTERVAL = 1.0
"""Shortest periodic scheduling interval (seconds): SWF times are whole seconds,
so a shorter interval only adds empty passes (1e-6 s would mean 10**12 passes a
month)."""
MAX_SPAN = 3660 * 86400.0
"""Longest generated workload (ten years), warm-up included: the O2K model makes
about 10,000 jobs a month, so ten years is already over a million jobs."""
MAX_RUNS = 100_000
"""Most runs one scenario may plan: each run stores a directory of results."""
MAX_UNIX_TIME = 253402300799
"""``UnixStartTime`` of 9999-12-31 23:59:59 UTC, the last date Python can show."""
MAX_JOBS_PER_DAY = 100_000
"""Highest mean arrival rate of a workload model's parameter file (jobs a day; more than
one a second, day and night): the logs the models come from have 30 to 400 jobs a day,
and the busiest logs of the Parallel Workloads Archive a few thousand."""
MAX_GENERATED_JOBS = 2_000_000
"""Most jobs a generated workload may be expected to hold (rate x span): twice the O2K
model's ten years (:data:`MAX_SPAN`), about 300 MB while it is built.  A higher rate
over a long span is refused before a job is drawn, not when memory runs out."""
MIN_LOAD, MAX_LOAD = 0.001, 100.0
"""Range of the offered load ``generate --load`` scales a workload to: a hundred times what
the machine can serve already queues without end, and beyond it the arrivals collapse into
fractions of a second (``--load 1e40`` squeezed a month into 1e-41 days); below a thousandth
the jobs hardly ever meet and a month of arrivals stretches over 80 years."""

_BOOL_HINT = "a TOML boolean (true or false, without quotes)"


# --------------------------------------------------------------------------------- key checks
def nearest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``word`` (for "did you mean"), or None when none is close."""
    found = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def check_keys(
    table: Mapping[str, Any], known: Iterable[str], where: str | None, prefix: str = ""
) -> None:
    """Refuse keys of ``table`` not in ``known``, suggesting the nearest valid key.

    A misspelt key (``memory_gbs``) would otherwise be ignored and its value
    silently replaced by a default.
    """
    known = set(known)
    extra = sorted(str(k) for k in table if k not in known)
    if not extra:
        return
    key = extra[0]
    guess = nearest(key, known)
    hint = f"; did you mean '{guess}'?" if guess else f" (known: {', '.join(sorted(known))})"
    raise ConfigError(where, f"unknown key '{key}'{hint}", field=prefix + key)


def require_table(value: Any, where: str | None, field: str) -> dict[str, Any]:
    """``value`` when it is a TOML table."""
    if not isinstance(value, dict):
        raise ConfigError(where, f"must be a table, got {shown(value)}", field=field)
    return value


def shown(value: Any) -> str:
    """A value as a one-line message quotes it (its repr, cut at 40 characters)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def shown_number(value: Any) -> str:
    """A bound or value as written: whole numbers in full (``2147483648``, not
    ``2.14748e+09``, which would make a refusal read "at most 2.14748e+09, got
    2.14748e+09"), others as ``%g``; an integer beyond any float as its repr."""
    try:
        x = float(value)
    except OverflowError:
        return shown(value)
    if x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return f"{x:g}"


def check_bool(value: Any, where: str | None, field: str) -> bool:
    """A boolean, and only a real one: ``"no"`` or ``0`` is not ``False``."""
    if not isinstance(value, bool):
        raise ConfigError(where, f"must be {_BOOL_HINT}, got {shown(value)}", field=field)
    return value


def check_flags(where: str, **flags: Any) -> None:
    """Refuse, in one line naming the function and the argument, an API flag that is not a
    real boolean: ``lenient="no"`` or ``0`` would otherwise be read as a wish."""
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise O2KSimError(f"{where}: {name} must be True or False, got {shown(value)}")


def check_path(value: Any, where: str, field: str, *, also: str = "") -> None:
    """Refuse, in one line, an API argument that should be a path and is not (``also``:
    what else it may be, as the message says it)."""
    if isinstance(value, str | os.PathLike):
        if not os.fspath(value):
            raise O2KSimError(f"{where}: {field}: an empty path")
        return
    raise O2KSimError(f"{where}: {field} must be a path{also}, got {shown(value)}")


def check_number(
    value: Any,
    where: str | None,
    field: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    integer: bool = False,
    unit: str = "",
) -> float | int:
    """A finite number (an integer when ``integer``) in ``[minimum, maximum]``.

    ``exclusive_minimum`` makes the lower bound strict (``> 0`` rather than ``>= 0``).
    NaN and infinity are always refused: they compare false with everything
    and so slip through every other check.
    """
    kind = "an integer" if integer else "a number"
    ok_type = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok_type:
        raise ConfigError(where, f"must be {kind}{unit}, got {shown(value)}", field=field)
    if not math.isfinite(value):
        raise ConfigError(where, f"must be a finite number{unit}, got {value}", field=field)
    if minimum is not None and (value <= minimum if exclusive_minimum else value < minimum):
        rel = ">" if exclusive_minimum else ">="
        raise ConfigError(where, f"must be {rel} {minimum:g}{unit}, got {value:g}", field=field)
    if maximum is not None and value > maximum:
        raise ConfigError(
            where, f"must be at most {shown_number(maximum)}{unit}, got {shown_number(value)}", field=field
        )
    return value


def check_count(value: Any, where: str | None, field: str, *, maximum: int = MAX_PROCS) -> int:
    """A positive integer (a processor count, a number of things) of at most ``maximum``."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(where, f"must be a positive integer, got {shown(value)}", field=field)
    return int(check_number(value, where, field, maximum=maximum, integer=True))


def check_str(value: Any, where: str | None, field: str, *, empty: bool = False) -> str:
    """A string (non-empty unless ``empty``)."""
    if not isinstance(value, str) or (not empty and not value):
        kind = "a string" if empty else "a non-empty string"
        raise ConfigError(where, f"must be {kind}, got {shown(value)}", field=field)
    return value


def check_duration(
    value: Any, where: str | None, field: str, *, allow_none: bool = True
) -> float | None:
    """Seconds from a duration as TOML and the API take it (``3600``, ``"90m"``, ``"7d"``).

    Non-negative, finite and below :data:`MAX_TIME`; ``None`` stays ``None``
    when ``allow_none``.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConfigError(
            where, f"must be a duration (3600, '90m', '7d'), got {value!r}", field=field
        )
    try:
        seconds = parse_duration(value)
    except O2KSimError as exc:
        raise ConfigError(where, str(exc), field=field) from None
    if seconds < 0 or not math.isfinite(seconds):
        raise ConfigError(where, "must be a non-negative duration", field=field)
    if seconds >= MAX_TIME:
        raise ConfigError(  # the limit in days too, and the value as it was written
            where, f"must be below {MAX_TIME:g} s ({format_duration(MAX_TIME)}), got {value!r}", field=field
        )
    return seconds


def duration_below_limit(value: Any) -> float:
    """Seconds from a duration as the API takes it (``3600``, ``"90m"``), refused beyond
    :data:`MAX_TIME` with the value as written (``got '20000000d'``, not ``1.728e+12``)."""
    seconds = parse_duration(value)
    if math.isfinite(seconds) and seconds >= MAX_TIME:  # inf and NaN: "a finite number" later
        raise O2KSimError(f"must be below {MAX_TIME:g} s ({format_duration(MAX_TIME)}), got {value!r}")
    return seconds


def check_interval(value: Any, where: str | None, field: str) -> float | None:
    """A scheduling interval: a duration (or ``None``, every event) of at least :data:`MIN_INTERVAL`."""
    seconds = check_duration(value, where, field)
    if seconds is not None and seconds < MIN_INTERVAL:
        raise ConfigError(
            where, f"must be at least {MIN_INTERVAL:g} s, got {value!r}", field=field
        )
    return seconds


def check_span(value: Any, where: str | None, field: str) -> float:
    """A generated workload's span: a duration longer than 0 and at most :data:`MAX_SPAN`."""
    span = check_duration(value, where, field, allow_none=False)
    assert span is not None
    if span <= 0 or span > MAX_SPAN:
        raise ConfigError(
            where,
            f"must be longer than 0 and at most {MAX_SPAN / 86400:g} days "
            f"(a longer generated workload exhausts memory), got {span / 86400:g} days",
            field=field,
        )
    return span


def check_seed(value: Any, where: str | None, field: str = "seed") -> int:
    """A seed for ``numpy.random.default_rng``: an integer from 0 to 2**63 - 1."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = int(value)  # numpy integers too
    return int(check_number(value, where, field, minimum=0, maximum=2**63 - 1, integer=True))


# ------------------------------------------------------------------------------- run settings
def check_run_settings(
    interval: Any = None,
    kill_overrun: Any = None,
    overrun_grace: Any = None,
    *,
    overrun: Any = None,
    where: str | None = None,
) -> None:
    """The run settings every path into the engine passes (CLI, scenario, API, machine file).

    ``interval`` (seconds, None = at every event) at least :data:`MIN_INTERVAL`;
    ``kill_overrun`` a real boolean; ``overrun_grace`` a finite number of
    seconds >= 0 (a NaN grace would silently disable every kill); ``overrun``
    one of :data:`~o2ksim.jobs.OVERRUN_RULES`.
    """
    where = where or "run settings"
    if interval is not None:
        check_number(
            interval, where, "interval", minimum=MIN_INTERVAL, maximum=MAX_TIME, unit=" (seconds)"
        )
    if kill_overrun is not None:
        check_bool(kill_overrun, where, "kill_overrun")
    if overrun_grace is not None:
        check_number(
            overrun_grace, where, "overrun_grace", minimum=0, maximum=MAX_TIME, unit=" (seconds)"
        )
    if overrun is not None:
        check_overrun(overrun, where, "overrun")


def check_overrun(value: Any, where: str | None, field: str) -> str:
    """An overrun rule: one of :data:`~o2ksim.jobs.OVERRUN_RULES` (``now``, ``requested``)."""
    if not isinstance(value, str) or value not in OVERRUN_RULES:
        raise ConfigError(
            where, f"must be {' or '.join(OVERRUN_RULES)}, got {shown(value)}", field=field
        )
    return value


# ------------------------------------------------------------------------------ command line
def option_duration(option: str, text: str, *, positive: bool = False, days: bool = False) -> float:
    """A duration given to ``option`` on the command line, in seconds, checked.

    ``-5m`` is read as a value (see :func:`join_negative_values`) and refused as
    negative; ``nan`` and ``inf`` are refused; a bare number is days when
    ``days`` (``--warmup 7``), else seconds.
    """
    raw = text.strip()
    said = f"{option} {text}"
    if raw.startswith("-"):
        raise O2KSimError(f"{said}: must not be negative (a duration such as 12h)")
    try:
        number = float(raw)
    except ValueError:
        number = None
    if number is not None:
        if not math.isfinite(number):
            raise O2KSimError(f"{said}: must be a finite duration (e.g. 5m)")
        seconds = number * (86400.0 if days else 1.0)
    else:
        try:
            seconds = parse_duration(raw)
        except O2KSimError as exc:
            raise O2KSimError(f"{said}: {exc}") from None
    if positive and seconds <= 0:
        raise O2KSimError(f"{said}: must be longer than 0 (e.g. 5m)")
    if seconds > MAX_TIME:
        raise O2KSimError(f"{said}: at most {MAX_TIME:g} s")
    return seconds


def check_interval_option(seconds: float, option: str = "--interval") -> float:
    """Refuse a scheduling interval below :data:`MIN_INTERVAL` with the reason."""
    if seconds < MIN_INTERVAL:
        raise O2KSimError(
            f"{option}: at least {MIN_INTERVAL:g} s (trace times are whole seconds; "
            f"{seconds:g} s would only add empty scheduling passes)"
        )
    return seconds


def check_span_option(seconds: float, option: str = "--span", warmup: bool = True) -> float:
    """Refuse a generated workload longer than :data:`MAX_SPAN` with the reason (``warmup``:
    the span counted includes ``o2ksim run``'s warm-up)."""
    if seconds > MAX_SPAN:
        raise O2KSimError(
            f"{option}: at most {MAX_SPAN / 86400:g} days{' including the warm-up' if warmup else ''}, got "
            f"{seconds / 86400:g} days (a longer generated workload exhausts memory; "
            "simulate a recorded trace or several shorter spans)"
        )
    return seconds


def seed_value(text: str) -> int:
    """``--seed``: an integer from 0 to 2**63 - 1 (what numpy's generator takes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got '{text}'") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**63-1, got '{text}'")
    return value


def join_negative_values(argv: list[str], options: Iterable[str]) -> list[str]:
    """``--interval -5m`` -> ``--interval=-5m`` for options that take one value.

    argparse takes a token starting with ``-`` for an option and answers
    "expected one argument"; joined, the value reaches its parser, which can
    say what is wrong with it.
    """
    wanted = set(options)
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if (
            tok in wanted
            and i + 1 < len(argv)
            and re.match(r"-[0-9.]", argv[i + 1])
        ):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def folder_path(path: Any, option: str) -> Path:
    """``path`` as a folder's :class:`Path`, refused in one line naming ``option`` (or
    ``out_dir``, for the API) when it is not a path or is empty."""
    if not isinstance(path, str | os.PathLike) or not os.fspath(path):
        raise O2KSimError(f"{option or 'out_dir'}: expected a folder path, got {shown(path)}")
    out = Path(path)
    if out.is_symlink() and not out.exists():  # mkdir would say only "File exists"
        raise O2KSimError(
            f"{option + ' ' if option else ''}{out}: a symbolic link to {os.readlink(out)}, "
            "which does not exist"
        )
    return out


def writable_dir(path: str | os.PathLike[str], option: str) -> Path:
    """Make sure ``path`` is (or can be made) a directory o2ksim can write into.

    Checked before a run starts, so an unwritable ``--out`` fails in a second,
    not after the simulation.
    """
    out = folder_path(path, option)
    option = f"{option} " if option else ""  # "" : the message names the folder alone
    if out.exists() and not out.is_dir():
        raise O2KSimError(f"{option}{out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".o2ksim-write-test-{os.urandom(4).hex()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise O2KSimError(
            f"{option}{out}: cannot write there ({exc.strerror or exc})"
        ) from None
    return out


@contextlib.contextmanager
def output_folder(path: str | os.PathLike[str], option: str) -> Iterator[Path]:
    """:func:`writable_dir` for a command's output folder, undone when the command fails: a
    folder it had to create is removed again if it is still empty (a refusal after the check,
    ``predict --out new --window x y``, leaves nothing behind)."""
    out = Path(path)
    created = not out.exists()
    try:  # an interrupt just after the folder was made undoes it too
        writable_dir(out, option)
        yield out
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only when empty: never what the command or another wrote
        raise


DASK_ADDRESS = re.compile(r"[a-z][a-z0-9+.-]*://\S+|[A-Za-z0-9_.\-\[\]:]+:[0-9]{1,5}")


def check_dask_address(address: str) -> str:
    """``tcp://host:port`` (or ``host:port``): refused at once when malformed,
    instead of a 20 s connection time-out per attempt."""
    if not DASK_ADDRESS.fullmatch(address.strip()):
        raise O2KSimError(
            f"--scheduler: '{address}' is not a scheduler address (expected tcp://HOST:PORT)"
        )
    return address.strip()


__all__ = [
    "MAX_GENERATED_JOBS",
    "MAX_JOBS_PER_DAY",
    "MAX_JOB_MEMORY_KB",
    "MAX_LOAD",
    "MAX_RUNS",
    "MAX_SPAN",
    "MAX_TIME",
    "MIN_INTERVAL",
    "MIN_LOAD",
    "check_bool",
    "check_count",
    "check_dask_address",
    "check_duration",
    "check_interval",
    "check_interval_option",
    "check_keys",
    "check_number",
    "check_run_settings",
    "check_seed",
    "check_span",
    "check_span_option",
    "check_str",
    "duration_below_limit",
    "join_negative_values",
    "nearest",
    "option_duration",
    "output_folder",
    "require_table",
    "seed_value",
    "shown",
    "shown_number",
    "writable_dir",
]
