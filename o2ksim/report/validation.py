"""The validation page (``validation.html``): recorded against simulated waits, in figures and words.

Three figures, each with a caption that states the result in words computed
from the numbers (so the page reads the same whichever trace it shows):

* the CDFs of the recorded and simulated waits on a log wait axis (zero
  waits drawn at the left edge, their share named in the caption);
* mean wait per thesis runtime group, recorded and simulated side by side,
  on a log runtime axis labelled with the groups (thesis Fig. 9's view of
  NCSA-LSF* against the O2K's measured waits);
* the busy share of the machine per day, recorded and simulated.

Then the tables (overall, per runtime group, size group, queue, partition,
month) and the jobs that could not be compared, by reason.  Figures are
embedded as base64 PNGs so the page stands alone; the PNGs are also written.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from o2ksim.analysis.validate import ValidationResult
from o2ksim.files import write_atomically
from o2ksim.metrics import RUNTIME_GROUP_BOUNDS_MIN
from o2ksim.report.figures import report_style, save, subplots

__all__ = ["cdf_caption", "outage_caption", "runtime_caption", "utilisation_caption", "validation_page",
           "write_validation_page"]  # fmt: skip

HOUR = 3600.0
REC, SIM = "recorded", "simulated"


def _pct(x: float) -> str:
    return f"{x:+.0%}" if math.isfinite(x) else "n/a"


def _h(seconds: float) -> str:
    """Hours with three significant digits (minutes below 0.1 h)."""
    if not math.isfinite(seconds):
        return "n/a"
    if 0 < seconds < 360:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / HOUR:.3g} h"


def cdf_caption(o: dict[str, float]) -> str:
    """The CDF figure's result in words, e.g. "Simulated waits are shorter than recorded: ..."."""
    if not o.get("jobs"):
        return "No job could be compared."
    rel = o["sim_mean"] / o["rec_mean"] - 1 if o["rec_mean"] > 0 else math.nan
    way = "shorter than" if o["sim_mean"] < o["rec_mean"] else "longer than" if o["sim_mean"] > o["rec_mean"] else "as long as"
    return (
        f"Over {int(o['jobs'])} jobs, simulated waits are {way} the recorded ones: mean "
        f"{_h(o['sim_mean'])} against {_h(o['rec_mean'])} ({_pct(rel)}), median {_h(o['sim_median'])} "
        f"against {_h(o['rec_median'])}, 95th percentile {_h(o['sim_p95'])} against {_h(o['rec_p95'])}. "
        f"{o['sim_zero_share']:.0%} of the jobs start at once in the simulation against "
        f"{o['rec_zero_share']:.0%} in reality. The two CDFs are at most {o['ks']:.2f} apart "
        f"(Kolmogorov-Smirnov distance); per job, the waits correlate with Pearson "
        f"{o['pearson']:.2f} ({o['pearson_log']:.2f} for log(1 + wait))."
    )


def runtime_caption(rt: pd.DataFrame) -> str:
    """The runtime-group figure's result in words: in how many groups the simulation waits less, and the largest gap."""
    rt = rt.loc[rt["rec_mean"] > 0]
    if rt.empty:
        return "No runtime group has a recorded wait above zero."
    below = int((rt["sim_mean"] < rt["rec_mean"]).sum())
    ratio = rt["sim_mean"] / rt["rec_mean"]
    lo, hi = rt.loc[ratio.idxmin()], rt.loc[ratio.idxmax()]
    return (
        f"The simulated mean wait is below the recorded one in {below} of {len(rt)} runtime groups. "
        f"The ratio simulated/recorded ranges from {ratio.min():.2f} (jobs of runtime {lo['group']}, "
        f"{_h(lo['sim_mean'])} against {_h(lo['rec_mean'])}) to {ratio.max():.2f} (runtime "
        f"{hi['group']}, {_h(hi['sim_mean'])} against {_h(hi['rec_mean'])})."
    )


def outage_caption(a: dict[str, Any]) -> str:
    """The suspected outages in words (from :attr:`ValidationResult.availability`)."""
    if not a:
        return ""
    if not a["periods"]:
        return (f"No period of at least {a['min_hours']:g} h where the oldest waiting job would have fit "
                "the recorded free processors while no job started: nothing suggests missing capacity.")  # fmt: skip
    return (
        f"Shaded: {a['periods']} periods of at least {a['min_hours']:g} h ({a['hours']:.0f} h in all, "
        f"{a['span_share']:.0%} of the trace) where the oldest waiting job would have fit the processors the "
        f"log shows as free and yet no job started -- suspected outages, drains or dedicated time. "
        f"{a['wait_share']:.0%} of the recorded waiting time falls inside them; as far as they were outages, a replay on the "
        "full machine cannot reproduce that part (`--availability inferred` replays them as processors down)."
    )


def utilisation_caption(u: pd.DataFrame) -> str:
    """The utilisation figure's result in words: mean busy shares and how often the simulation is busier."""
    if u.empty:
        return "No day to show."
    rec, sim = u[REC].to_numpy(float), u[SIM].to_numpy(float)
    more = int((sim > rec + 0.005).sum())
    low = int((rec < 0.5 * np.median(rec)).sum()) if np.median(rec) > 0 else 0
    return (
        f"Over {len(u)} days the machine was busy {rec.mean():.0%} of the time in reality and "
        f"{sim.mean():.0%} in the simulation; the simulation is busier on {more} days. "
        f"{low} days have a recorded utilisation below half the median day (candidates for "
        "outages, drains or dedicated time that the trace does not record)."
    )


def cdf_figure(compared: pd.DataFrame) -> Figure:
    """Empirical CDFs of recorded and simulated waits (hours, log axis; zeros at the left edge)."""
    fig, ax = subplots(figsize=(6.4, 3.8), layout="constrained")
    pos = compared[["recorded_wait", "simulated_wait"]].to_numpy(float)
    floor = max(np.nanmin(pos[pos > 0]) / HOUR / 2, 1e-3) if (pos > 0).any() else 1e-3
    for col, label, style in (("recorded_wait", REC, "-"), ("simulated_wait", SIM, "--")):
        w = np.sort(compared[col].to_numpy(float)) / HOUR
        y = np.arange(1, len(w) + 1) / len(w)
        ax.step(np.maximum(w, floor), y, where="post", linestyle=style, label=label)
    ax.set_xscale("log")
    ax.set_xlabel(f"wait (hours, log scale; zero waits at {floor:.2g} h)")
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.01)
    ax.legend(loc="lower right")
    return fig


def runtime_figure(rt: pd.DataFrame) -> Figure:
    """Mean wait per thesis runtime group, recorded and simulated bars side by side (Fig. 9's view)."""
    fig, ax = subplots(figsize=(7.5, 3.8), layout="constrained")
    bounds = np.asarray(RUNTIME_GROUP_BOUNDS_MIN) * 60.0
    lower = np.concatenate([[bounds[0] / math.sqrt(10)], bounds[:-1]])
    centre = np.sqrt(lower * bounds)
    keys = rt["key"].astype(int).to_numpy()
    x = centre[keys]
    w = 10**0.09  # half a bar's width as a factor on the log axis
    ax.bar(x / w, rt["rec_mean"] / HOUR, width=(x - x / w) * 0.95, align="edge", label=REC)
    ax.bar(x, rt["sim_mean"] / HOUR, width=x * (w - 1) * 0.95, align="edge", label=SIM, hatch="//")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(list(centre[keys])))
    labels = dict(zip(keys, rt["group"], strict=True))
    ax.xaxis.set_major_formatter(
        FuncFormatter(lambda v, _p: next((labels[k] for k in keys if math.isclose(centre[k], v)), ""))
    )
    ax.xaxis.set_minor_locator(NullLocator())
    ax.tick_params(axis="x", labelrotation=45)
    ax.set_xlabel("actual runtime group (upper bound)")
    ax.set_ylabel("mean wait (hours)")
    ax.legend()
    return fig


def utilisation_figure(u: pd.DataFrame, outages: pd.DataFrame | None = None) -> Figure:
    """Busy share of the machine per day, recorded and simulated; suspected outages shaded."""
    fig, ax = subplots(figsize=(9.5, 3.2), layout="constrained")
    days = u["day_start"].to_numpy(float) / 86400.0
    ax.step(days, u[REC], where="post", label=REC, linewidth=1.2)
    ax.step(days, u[SIM], where="post", label=SIM, linewidth=1.0, linestyle="--")
    if outages is not None and len(outages):
        lo, hi = days[0], days[-1] + 1
        for i, (a, b) in enumerate(zip(outages["start"] / 86400.0, outages["end"] / 86400.0, strict=True)):
            if b > lo and a < hi:
                ax.axvspan(max(a, lo), min(b, hi), color="0.85", zorder=0,
                           label="suspected outage or drain" if i == 0 else None)  # fmt: skip
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time (days since the trace start)")
    ax.set_ylabel("utilisation per day")
    ax.legend(loc="lower left")
    return fig


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, float_format=lambda v: f"{v:.3g}", border=0, classes="t")


def _hours(df: pd.DataFrame) -> pd.DataFrame:
    """The measures of a table with waits in hours (what the page shows)."""
    out = df.drop(columns=[c for c in ("grouping", "key") if c in df]).copy()
    for c in out.columns:
        if (c.startswith(("rec_", "sim_")) and not c.endswith("zero_share")) or c == "mean_diff":
            out[c] = out[c] / HOUR
    return out


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f"<img alt='{html.escape(alt)}' src='data:image/png;base64,{data}' style='max-width:100%'>"


def validation_page(v: ValidationResult, figures: dict[str, Path]) -> str:
    """The HTML text of the page for ``v``, embedding the PNGs in ``figures`` (name -> path)."""
    c: dict[str, Any] = v.config
    rt = v.tables.loc[v.tables["grouping"] == "runtime"] if len(v.tables) else v.tables
    parts = [
        "<!doctype html><meta charset='utf-8'><title>o2ksim validation</title>",
        "<style>body{font-family:sans-serif;max-width:72em;margin:1em auto}"
        "table.t{border-collapse:collapse}table.t td,table.t th{padding:2px 8px;border-bottom:1px solid #ddd}"
        "p.cap{max-width:60em}</style>",
        "<h1>Validation: the recorded schedule against its replay</h1>",
        f"<p>{html.escape(str(c.get('trace')))} replayed under <b>{html.escape(str(c.get('policy')))}</b> on "
        f"{html.escape(str(c.get('machine')))}. {html.escape(v.message())}. Waits in hours.</p>",
    ]
    if c.get("scheduler_note"):
        parts.append(f"<p>The trace header says: <i>{html.escape(str(c['scheduler_note']))}</i></p>")
    for key, title, caption in (
        ("cdf", "Wait distributions", cdf_caption(v.overall)),
        ("runtime", "Mean wait per actual-runtime group (thesis Fig. 9's view)", runtime_caption(rt) if len(rt) else ""),
        ("utilisation", "Utilisation per day",
         utilisation_caption(v.utilisation) + " " + outage_caption(v.availability)),
    ):
        if key in figures:
            parts += [f"<h2>{title}</h2>", _img(figures[key], title), f"<p class='cap'>{html.escape(caption)}</p>"]
    parts += ["<h2>Overall</h2>", _table(_hours(v.table().iloc[:1]))]
    for g, title in (("runtime", "Per runtime group"), ("size", "Per size group (processors)"),
                     ("queue", "Per queue (SWF field 15)"), ("partition", "Per partition (SWF field 16)"),
                     ("month", "Per month")):  # fmt: skip
        part = v.tables.loc[v.tables["grouping"] == g] if len(v.tables) else v.tables
        if len(part):
            parts += [f"<h2>{title}</h2>", _table(_hours(part))]
    if len(v.outages):
        longest = v.outages.sort_values("hours", ascending=False).head(20)
        parts += ["<h2>Longest suspected outages or drains</h2>",
                  "<p>Times in seconds since the trace start; all in <code>outages.csv</code>.</p>", _table(longest)]  # fmt: skip
    counts = {r: n for r, n in v.counts.items() if n}
    parts.append("<h2>Jobs not compared</h2>")
    if counts:
        first = {r: v.excluded.loc[v.excluded["reason"] == r, "job_id"].head(10) for r in counts}
        rows = pd.DataFrame(
            [{"reason": r, "jobs": n, "first job numbers": ", ".join(map(str, first[r]))} for r, n in counts.items()]
        )
        parts += [_table(rows), "<p>Every one is listed in <code>excluded.csv</code>.</p>"]
    else:
        parts.append("<p>None: every job was compared.</p>")
    return "\n".join(parts) + "\n"


def write_validation_page(
    v: ValidationResult, out_dir: str | Path, *, path_of: Callable[[str], Path] | None = None
) -> Path:
    """Draw the figures (``validation-*.png``) and write ``validation.html`` into ``out_dir``.

    With ``path_of`` (a :class:`~o2ksim.outfiles.Staging`'s ``path``), file ``NAME`` is
    written to ``path_of(NAME)`` instead, to be committed with the validation's tables
    (``o2ksim validate --out``); the path returned is still ``out_dir/validation.html``."""
    out = Path(out_dir)
    if path_of is None:
        out.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Path] = {}
    rt = v.tables.loc[v.tables["grouping"] == "runtime"] if len(v.tables) else v.tables
    with report_style():
        drawn = {
            "cdf": cdf_figure(v.compared) if len(v.compared) else None,
            "runtime": runtime_figure(rt) if len(rt) else None,
            "utilisation": utilisation_figure(v.utilisation, v.outages) if len(v.utilisation) else None,
        }
        for name, fig in drawn.items():
            if fig is not None:
                file = f"validation-{name}.png"
                if path_of is None:
                    figures[name] = out / file
                    save(fig, str(figures[name]))
                else:  # staged: an OSError (a full disk) is the commit's to report
                    figures[name] = path_of(file)
                    fig.savefig(figures[name], dpi=110, format="png", bbox_inches="tight",
                                pad_inches=0.08)  # fmt: skip
    page = validation_page(v, figures)
    if path_of is None:
        write_atomically(out / "validation.html", page.encode())
    else:
        path_of("validation.html").write_text(page)
    return out / "validation.html"
