"""The step-through player: one self-contained HTML page to play a schedule event by event.

``write_player(path, "explain-backfill")`` runs the scenario with the
player's decision log (:mod:`o2ksim.report.player_data`) and writes one HTML
file with the data, the script and the style inline: no server, no network,
it opens from a USB stick.  The page draws, for every line of the log, the
processor lanes of each host filled up to a "now" cursor, the running jobs
with their requested-runtime ghosts, every reservation as a block of
processors x requested time (and how it slid: T§3.2.1 Fig. 2's t0, t' and
t2), the queue in priority order with the priority's parts, the free
processors and memory per host, and the log line itself, highlighted.
Controls: play/pause, previous/next event, a time scrubber, the speed, a
time window, PNG export of the drawing; keys Space, Left/Right (Shift: 10
events), Home/End, +/-.

>>> from o2ksim.report.player import player_html
>>> page = player_html("explain-backfill")
>>> page.startswith("<!DOCTYPE html>") and "http" not in page.split("<script")[0]
True
"""

from __future__ import annotations

import html
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from o2ksim.errors import O2KSimError
from o2ksim.files import parent_folder, write_atomically
from o2ksim.report.player_data import player_data
from o2ksim.validation import check_path

__all__ = ["page_path", "player_html", "render_player", "write_player"]

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style></head>
<body>
<header><h1>{title}</h1></header>
<div id="controls">
 <button id="first" title="first event (Home)">|&lt;</button>
 <button id="prev" title="previous event (Left)">&lt; Prev</button>
 <button id="play" title="play / pause (Space)">Play</button>
 <button id="next" title="next event (Right)">Next &gt;</button>
 <button id="last" title="last event (End)">&gt;|</button>
 <label>speed <select id="speed">
  <option value="0.5">0.5 events/s</option><option value="1">1 event/s</option>
  <option value="2" selected>2 events/s</option><option value="5">5 events/s</option>
  <option value="10">10 events/s</option><option value="30">30 events/s</option>
  <option value="100">100 events/s</option></select></label>
 <label>window <select id="window">
  <option value="0" selected>whole run</option><option value="3600">1 hour</option>
  <option value="21600">6 hours</option><option value="86400">1 day</option>
  <option value="604800">1 week</option></select></label>
 <input id="scrub" type="range" min="0" value="0" aria-label="time">
 <span id="now"></span><span id="pos"></span>
 <button id="png" title="save the drawing as PNG (for slides)">PNG</button>
 <div class="keys"><kbd>Space</kbd> play/pause &nbsp; <kbd>&larr;</kbd> <kbd>&rarr;</kbd> previous/next
  event (<kbd>Shift</kbd>: 10) &nbsp; <kbd>Home</kbd> <kbd>End</kbd> first/last &nbsp;
  <kbd>+</kbd> <kbd>-</kbd> speed &nbsp; click a log line to jump to it</div>
</div>
<div class="players n{n}">{players}</div>
<script type="application/json" id="o2k-data">{data}</script>
<script>{js}</script>
</body></html>
"""

PLAYER = """<div class="player" id="p{k}">
<h2 class="title"></h2><div class="sub machine"></div>
<div class="event" role="status" aria-live="polite"></div>
<canvas class="lanes" role="img" aria-label="processor lanes per host up to now, requested-runtime
 ghosts (dashed) and reservations (orange blocks)"></canvas>
<div class="panels">
 <section><h3>Queue, priority order (<span class="queue-count"></span> waiting)</h3>
  <table class="queue"><thead></thead><tbody></tbody></table></section>
 <section><h3>Holding processors</h3><table class="running"><thead><tr><th>job</th><th>host</th>
  <th>procs</th><th>since</th><th>requested end</th><th>why / state</th></tr></thead><tbody></tbody></table></section>
 <section><h3>Reservations</h3><table class="reservations"><thead><tr><th>job</th><th>host</th>
  <th>from</th><th>procs</th><th>until</th><th>history</th></tr></thead><tbody></tbody></table></section>
 <section><h3>Timers: passes the policy asked for</h3><table class="timers"><thead><tr><th>at</th>
  <th>countdown</th><th>host</th><th>why</th></tr></thead><tbody></tbody></table></section>
 <section><h3>Free per host</h3><table class="hosts"><thead><tr><th>host</th><th>processors</th>
  <th>memory</th></tr></thead><tbody></tbody></table></section>
</div>
<section><h3>Decision log (o2ksim explain)</h3><ol class="log" start="1"></ol></section>
</div>"""


def _asset(name: str) -> str:
    return resources.files("o2ksim.report").joinpath("assets", name).read_text(encoding="utf-8")


def render_player(*data: dict[str, Any], title: str | None = None) -> str:
    """The page for player data (:func:`o2ksim.report.player_data.player_data`).

    Two or more: side by side, stepped together on one timeline (every event of
    each, in time order), e.g. one reservation against two.
    """
    if not data:
        raise ValueError("render_player needs the data of at least one run")
    # "</" inside the JSON would end the script element early
    payload = json.dumps({"players": list(data)}, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("</", "<\\/")
    heading = title or (data[0]["title"] if len(data) == 1 else
                        " vs ".join(d["run"] for d in data))  # fmt: skip
    players = "".join(PLAYER.format(k=k) for k in range(len(data)))
    return PAGE.format(title=html.escape(heading), css=_asset("player.css"), js=_asset("player.js"),
                       data=payload, players=players, n=len(data))  # fmt: skip


def player_html(
    source: Any = "explain-backfill", *, versus: dict[str, Any] | None = None, **kw: Any
) -> str:
    """The player page of ``source`` (arguments as :func:`~o2ksim.report.player_data.player_data`).

    ``versus``: parameter overrides for a second run of the same scenario, put on
    top of ``params`` and shown beside the first, stepped together (e.g.
    ``{"reservations": 2}``: T§3.2.1 Fig. 1(b) against 1(c)); the key ``policy``
    names another policy instead (``{"policy": "lxfw-backfill"}``).
    """
    if versus is None:
        return render_player(player_data(source, **kw))
    params = kw.pop("params", None) or {}
    other = dict(versus)
    other_policy = other.pop("policy", None)  # versus={"policy": "lxfw-backfill"}: another policy
    shown = {**params, **other}
    first = player_data(source, params=params, shown=shown, **kw)
    if other_policy is not None:
        kw["policy"] = str(other_policy)
    second = player_data(source, params=shown, shown=shown, **kw)
    return render_player(first, second, title=first["title"])


def page_path(path: str | os.PathLike[str], option: str, inputs: tuple[Any, ...] = ()) -> Path:
    """``path`` as the player page's file, checked before the work: a name ending in
    ``.html`` or ``.htm`` (a browser opens a file by its extension, so a page written
    as ``p.png`` would not open) in an existing, writable folder, not one of ``inputs``
    (:func:`~o2ksim.files.parent_folder`)."""
    out = parent_folder(path, option, inputs=inputs)
    if out.suffix.lower() not in (".html", ".htm"):
        raise O2KSimError(
            f"{option} {out}: the player is one HTML page; give a name ending in .html"
        )
    return out


def write_player(path: str | os.PathLike[str], source: Any = "explain-backfill", **kw: Any) -> Path:
    """Write the player page of ``source`` to ``path``; returns the path.

    ``source``: a scenario, a scenario file or a shipped scenario's name
    (``explain-backfill``, ``explain-immediate``, ``explain-eqspatial``);
    ``policy``, ``params`` (e.g. ``{"reservations": 2}``), ``max_jobs``,
    ``title`` as for :func:`~o2ksim.report.player_data.player_data`; ``versus``
    as for :func:`player_html`.
    """
    check_path(path, "write_player", "path")
    named = (source,) if isinstance(source, str | os.PathLike) else ()
    out = page_path(path, "write_player: path", named)
    write_atomically(out, player_html(source, **kw).encode("utf-8"))  # whole or not at all
    return out
