"""The thesis's claims, evaluated on a scenario's runs: one table per results page.

The claims and the thesis's values live in one data file,
``o2ksim/data/thesis_claims.toml`` (each with the thesis's sentence and its
section).  A claim names one policy and one per-run measure and says either
where the measure must lie (``at_least``, ``at_most``) or how it must compare
with the same measure of other policies on the same jobs (``ratio_at_most``,
``ratio_at_least``).  :func:`evaluate` checks it in every *case* -- the runs
of a scenario that share all factor levels but the policy, and the seed (a
month and a seed for ``thesis-ch5``/``thesis-ch6``) -- and :func:`claims_markdown`
writes the claims table of a results page (claim, thesis, o2ksim, verdict,
evidence), so the page's table is computed from stored runs and cannot
drift from the code.  ``o2ksim scenario claims RESULTS_DIR`` is the command.

Why in ``experiments``: it reads a results directory
(:mod:`o2ksim.experiments.store`) and is used by the CLI; the measures are
plain functions of a run's summary and job table, so tests and benchmarks
compute them on runs of their own (:func:`run_measures`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from o2ksim.errors import O2KSimError
from o2ksim.experiments.store import Results, load_results
from o2ksim.files import read_small_text, read_toml
from o2ksim.run.api import simulate
from o2ksim.workloads.cooldown import append_tail, cooldown_chunk, run_with_cooldown
from o2ksim.workloads.models import generate
from o2ksim.workloads.transforms import Window

HOUR = 3600.0
MEASURES = (
    "mean_wait", "p95_wait", "max_wait", "mean_slowdown", "p95_wait_over_1min",
    "utilisation", "trials_share", "trials_completed_share", "trials",
    "trials_preempting_share", "placed_on_arrival_share",
)  # fmt: skip
"""Per-run measures a claim can name (waits in hours, shares as fractions, trials a count)."""
_HOURS = {"mean_wait", "p95_wait", "max_wait", "p95_wait_over_1min"}
_SHARES = {
    "trials_share", "trials_completed_share", "trials_preempting_share", "placed_on_arrival_share",
}  # fmt: skip
_COUNTS = {"trials"}
_TESTS = ("at_least", "at_most", "ratio_at_most", "ratio_at_least")
_KEYS = {
    "id", "page", "section", "quote", "claim", "thesis", "policy", "measure", "versus", "loaded",
    "evidence", *_TESTS,
}  # fmt: skip


@dataclass(frozen=True)
class Claim:
    """One claim of the thesis, as the data file states it (see the module docstring)."""

    id: str
    page: str
    section: str
    quote: str
    claim: str
    thesis: str
    policy: str
    measure: str
    versus: tuple[str, ...] = ()
    loaded: bool = False
    at_least: float | None = None
    at_most: float | None = None
    ratio_at_most: float | None = None
    ratio_at_least: float | None = None
    evidence: str = ""  # Markdown: why the claim fails where it does (the ablation), with a link

    def passes(self, value: float, others: Mapping[str, float]) -> bool:
        """Whether ``value`` (this claim's policy) satisfies the claim against ``others``."""
        if math.isnan(value):
            return False
        if self.at_least is not None and not value >= self.at_least:
            return False
        if self.at_most is not None and not value <= self.at_most:
            return False
        for v in others.values():
            if self.ratio_at_most is not None and not value <= self.ratio_at_most * v:
                return False
            if self.ratio_at_least is not None and not value >= self.ratio_at_least * v:
                return False
        return True


@dataclass
class Outcome:
    """A claim checked on a set of cases: which cases applied and which passed."""

    claim: Claim
    cases: list[str] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``holds``, ``holds in k of n cases``, ``does not hold``, ``no loaded case`` or ``not run``."""
        n, k = len(self.cases), len(self.passed)
        if n == 0:
            return "no loaded case" if self.skipped else "not run"
        if k == n:
            return "holds"
        return "does not hold" if k == 0 else f"holds in {k} of {n} cases"


# --------------------------------------------------------------------------- the data file
def claims_path() -> Path:
    """The shipped claims file, ``o2ksim/data/thesis_claims.toml``."""
    return Path(str(resources.files("o2ksim") / "data" / "thesis_claims.toml"))


def load_claims(
    path: str | os.PathLike[str] | None = None, *, page: str | None = None
) -> tuple[list[Claim], float]:
    """The claims of a claims file (the shipped one by default), optionally of one page.

    Returns the claims and the file's ``loaded_utilisation``.  A malformed
    file is a one-line :class:`O2KSimError` naming the file and the claim.
    """
    p = Path(path) if path is not None else claims_path()
    _, data = read_toml(p, "claims file")
    loaded = data.get("loaded_utilisation", 0.86)
    if not isinstance(loaded, (int, float)):
        raise O2KSimError(f"{p}: loaded_utilisation must be a number")
    claims = []
    for i, raw in enumerate(data.get("claim", []), 1):
        where = f"{p}: claim {i} ({raw.get('id', '?')})"
        unknown = set(raw) - _KEYS
        if unknown:
            raise O2KSimError(f"{where}: unknown field {sorted(unknown)[0]!r}")
        missing = [k for k in ("id", "page", "section", "quote", "claim", "thesis", "policy",
                               "measure") if not isinstance(raw.get(k), str)]  # fmt: skip
        if not isinstance(raw.get("evidence", ""), str):
            missing = ["evidence"]
        if missing:
            raise O2KSimError(f"{where}: field {missing[0]!r} missing or not a string")
        if raw["measure"] not in MEASURES:
            raise O2KSimError(f"{where}: field 'measure': unknown measure {raw['measure']!r}")
        if not any(k in raw for k in _TESTS):
            raise O2KSimError(f"{where}: give at least one of {', '.join(_TESTS)}")
        bad = [k for k in _TESTS if k in raw and not isinstance(raw[k], (int, float))]
        if bad or not isinstance(raw.get("loaded", False), bool):
            field_ = bad[0] if bad else "loaded"
            raise O2KSimError(f"{where}: field {field_!r} must be a number (loaded: true/false)")
        versus = raw.get("versus", [])
        if not isinstance(versus, list) or not all(isinstance(v, str) for v in versus):
            raise O2KSimError(f"{where}: field 'versus' must be a list of policy names")
        if any(k in raw for k in ("ratio_at_most", "ratio_at_least")) and not versus:
            raise O2KSimError(f"{where}: field 'versus': a ratio needs the policies to compare")
        c = Claim(**{**raw, "versus": tuple(versus)})
        if page is None or c.page == page:
            claims.append(c)
    return claims, float(loaded)


# ----------------------------------------------------------------------------- measures
def run_measures(summary: Mapping[str, Any], jobs: pd.DataFrame | None) -> dict[str, float]:
    """A run's claim measures from its summary (seconds) and per-job table.

    ``p95_wait_over_1min`` needs the job table (analysed jobs that completed
    with an actual runtime over 60 s); the trial shares are the
    immediate-service counters (NaN when the policy gives no trials);
    ``placed_on_arrival_share`` is EQspatial's count of jobs placed on a host
    at arrival over the analysed jobs (NaN for other policies).
    """

    def num(key: str) -> float:
        v = summary.get(key)
        return math.nan if v is None else float(v)

    out = {k: num(k) / (HOUR if k in _HOURS else 1.0) for k in
           ("mean_wait", "p95_wait", "max_wait", "mean_slowdown", "utilisation")}  # fmt: skip
    out["p95_wait_over_1min"] = math.nan
    if jobs is not None and len(jobs):
        mask = (jobs["status"] == "completed") & (jobs["run_time"] > 60)
        if "analysed" in jobs:
            mask &= jobs["analysed"].astype(bool)
        w = jobs.loc[mask, "wait"].to_numpy(float)
        if len(w):
            out["p95_wait_over_1min"] = float(np.percentile(w, 95)) / HOUR
    trials, arrivals = num("immediate_service_jobs"), num("jobs")
    out["trials_share"] = trials / arrivals if arrivals > 0 else math.nan
    out["trials_completed_share"] = (
        num("immediate_service_completed") / trials if trials > 0 else math.nan
    )
    out["trials"] = trials
    out["trials_preempting_share"] = (
        num("immediate_service_preempting") / trials if trials > 0 else math.nan
    )
    out["placed_on_arrival_share"] = num("placed_on_arrival") / arrivals if arrivals > 0 else math.nan
    return out


Cases = dict[str, dict[str, dict[str, float]]]
"""case label -> policy name -> measures."""


def results_measures(results: Results, policies: Iterable[str] | None = None) -> Cases:
    """The measures of every finished run of a results directory, grouped into cases.

    A case is the runs that share every factor level except the policy; its
    label is those levels (``workload.params=2000-02 seed=1``).  Policies are
    the registered names from each run's configuration (not the labels), so
    one claims file fits every scenario.  Only the runs of ``policies`` are
    read (their job tables are loaded), when given.
    """
    wanted = None if policies is None else set(policies)
    cases: Cases = {}
    ok = {r for r in results.ok["run_id"]}
    for run in results.runs:
        if run["run_id"] not in ok:
            continue
        name = run["config"]["policy"]["name"]
        if wanted is not None and name not in wanted:
            continue
        stored = results.run_summary(run["run_id"])
        m = run_measures(stored.get("summary", {}), results.jobs(run["run_id"]))
        label = " ".join(f"{k}={v}" for k, v in run["factors"].items() if k != "policy")
        if name in cases.setdefault(label, {}):
            raise O2KSimError(
                f"{results.out_dir}: two runs of policy {name!r} in case {label!r}; the claims "
                "compare one run per policy and case"
            )
        cases[label][name] = m
    return cases


def month_cases(
    months: Sequence[str],
    seeds: Sequence[int],
    policies: Iterable[str],
    *,
    warmup_days: float = 7.0,
    days: float = 30.0,
    progress: bool = False,
) -> Cases:
    """Measures of ``policies`` on generated O2K months (``--params`` sets), one case per month and seed.

    Each case is ``warmup_days`` of warm-up then ``days`` measured, with the
    protocol's cool-down tail (T§3.4: arrivals go on until every measured job
    has finished; :func:`~o2ksim.workloads.cooldown.run_with_cooldown`), on
    the eight O2K hosts -- the thesis's experiment; ``days`` under 30 is a
    reduced month (the first days of the month after the warm-up).
    """
    day = 86400.0
    window = Window(warmup_days * day, (warmup_days + days) * day, warmup_days * day)
    names = list(policies)
    cases: Cases = {}
    todo = [(m, s) for m in months for s in seeds]
    with tqdm(
        total=len(todo) * len(names), desc="claims", disable=not progress, leave=False
    ) as bar:
        for month, seed in todo:
            trace = generate("o2k", span=window.end, seed=seed, params=month)
            by_policy = cases.setdefault(f"{month} seed {seed}", {})
            for name in names:
                r = _run_month(trace, name, window, month, seed)
                by_policy[name] = run_measures(r.summary, r.jobs)
                bar.update(1)
    return cases


def _run_month(trace: Any, policy: str, window: Window, month: str, seed: int) -> Any:
    """One policy on one generated month, with the cool-down tail of the same month set."""

    def run(tr: Any) -> Any:
        return simulate(tr, machine="o2k", policy=policy, window=window)

    def extend(tr: Any, k: int) -> Any:
        return append_tail(tr, "o2k", after=window.end, seed=seed, params=month, chunks=k,
                           chunk_length=cooldown_chunk(window))  # fmt: skip

    return run_with_cooldown(run, trace, extend)


# ---------------------------------------------------------------------------- evaluating
def evaluate(claims: Sequence[Claim], cases: Cases, loaded_utilisation: float) -> list[Outcome]:
    """Check every claim in every case that has its policies (and, if ``loaded``, the load)."""
    outcomes = []
    for c in claims:
        o = Outcome(c)
        for label, by_policy in cases.items():
            if c.policy not in by_policy or any(v not in by_policy for v in c.versus):
                continue
            mine = by_policy[c.policy]
            if c.loaded and not mine["utilisation"] >= loaded_utilisation:
                o.skipped.append(label)
                continue
            value = mine[c.measure]
            others = {v: by_policy[v][c.measure] for v in c.versus}
            o.cases.append(label)
            o.values.append(value)
            o.ratios.extend(value / x if x > 0 else math.nan for x in others.values())
            if c.passes(value, others):
                o.passed.append(label)
        outcomes.append(o)
    return outcomes


def _span(values: Sequence[float], fmt: str) -> str:
    vals = [v for v in values if not math.isnan(v)]
    if not vals:
        return "n/a"
    lo, hi = min(vals), max(vals)
    return (
        fmt.format(lo)
        if fmt.format(lo) == fmt.format(hi)
        else f"{fmt.format(lo)} to {fmt.format(hi)}"
    )


def observed(o: Outcome) -> str:
    """The o2ksim column: the measure's range over the cases (and the ratio's, if any)."""
    if not o.cases:
        return "all cases light" if o.skipped else "no run of these policies"
    m = o.claim.measure
    if m in _SHARES:
        text = _span([100 * v for v in o.values], "{:.1f} %")
    elif m in _HOURS:
        text = _span(o.values, "{:.2f} h")
    elif m in _COUNTS:
        text = _span(o.values, "{:,.0f}")
    else:
        text = _span(o.values, "{:.2f}")
    if o.claim.versus:
        text += f"; {_span(o.ratios, '{:.2f}')}x {' / '.join(o.claim.versus)}"
    return f"{text} ({len(o.cases)} cases)"


def evidence(o: Outcome, loaded_utilisation: float) -> str:
    """The evidence column: which cases failed, which were left out as light, and the
    claim's own ``evidence`` (why it fails: the ablation) where it does not hold everywhere."""
    parts = []
    failed = [c for c in o.cases if c not in o.passed]
    if failed:
        parts.append("fails in " + "; ".join(failed))
    if o.skipped:
        parts.append(
            f"light (utilisation < {loaded_utilisation:.2f}), left out: " + "; ".join(o.skipped)
        )
    if o.claim.evidence and len(o.passed) < len(o.cases):
        parts.append(o.claim.evidence)
    if not parts:
        return "passes in every case" if o.cases else "the results have no run of these policies"
    return ". ".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def claims_markdown(outcomes: Sequence[Outcome], loaded_utilisation: float) -> str:
    """The claims table (claim, thesis, o2ksim, verdict, evidence) as Markdown."""
    lines = [
        "| claim (thesis section) | thesis | o2ksim | verdict | evidence |",
        "|---|---|---|---|---|",
    ]
    for o in outcomes:
        c = o.claim
        verdict = o.verdict if o.verdict == "holds" else f"**{o.verdict}**"
        cells = (
            f"{c.claim} ({c.section})",
            f'{c.thesis}: "{c.quote}"',
            observed(o),
            verdict,
            evidence(o, loaded_utilisation),
        )
        lines.append("| " + " | ".join(_cell(x) for x in cells) + " |")
    return "\n".join(lines) + "\n"


def results_claims(
    results_dir: str | os.PathLike[str],
    *,
    page: str | None = None,
    claims_file: str | os.PathLike[str] | None = None,
) -> tuple[list[Outcome], float]:
    """Evaluate the claims (of ``page``) on a results directory; what the CLI prints."""
    claims, loaded = load_claims(claims_file, page=page)
    if not claims:
        raise O2KSimError(f"no claim with page {page!r} in {claims_file or claims_path()}")
    results = load_results(results_dir)
    policies = {c.policy for c in claims} | {v for c in claims for v in c.versus}
    return evaluate(claims, results_measures(results, policies), loaded), loaded


BEGIN = "<!-- claims table: generated by `o2ksim scenario claims`, do not edit -->"
END = "<!-- end of claims table -->"


def update_page(page: str | os.PathLike[str], table: str) -> None:
    """Replace the claims table of a docs page (between :data:`BEGIN` and :data:`END`)."""
    p = Path(page)
    text = read_small_text(p, "page")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise O2KSimError(f"{p}: no claims table markers (a line {BEGIN!r}, then {END!r})")
    p.write_text(text[: start + len(BEGIN)] + "\n" + table + text[end:])


__all__ = [
    "BEGIN",
    "END",
    "MEASURES",
    "Claim",
    "Outcome",
    "claims_markdown",
    "claims_path",
    "evaluate",
    "load_claims",
    "month_cases",
    "observed",
    "results_claims",
    "results_measures",
    "run_measures",
    "update_page",
]
