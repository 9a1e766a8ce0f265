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

from o2ksim.report.player_data import player_data

__all__ = ["player_html", "render_player", "write_player"]

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style></head>
<body>
<header><h1 id="title"></h1><div class="sub" id="machine"></div></header>
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
<div id="event" role="status" aria-live="polite"></div>
<canvas id="lanes" role="img" aria-label="processor lanes per host up to now, requested-runtime
 ghosts (dashed) and reservations (orange blocks)"></canvas>
<div class="panels">
 <section><h2>Queue, priority order (<span id="queue-count"></span> waiting)</h2>
  <table id="queue"><thead></thead><tbody></tbody></table></section>
 <section><h2>Holding processors</h2><table id="running"><thead><tr><th>job</th><th>host</th>
  <th>procs</th><th>since</th><th>requested end</th><th>why / state</th></tr></thead><tbody></tbody></table></section>
 <section><h2>Reservations</h2><table id="reservations"><thead><tr><th>job</th><th>host</th>
  <th>from</th><th>procs</th><th>until</th><th>history</th></tr></thead><tbody></tbody></table></section>
 <section><h2>Timers: passes the policy asked for</h2><table id="timers"><thead><tr><th>at</th>
  <th>countdown</th><th>host</th><th>why</th></tr></thead><tbody></tbody></table></section>
 <section><h2>Free per host</h2><table id="hosts"><thead><tr><th>host</th><th>processors</th>
  <th>memory</th></tr></thead><tbody></tbody></table></section>
</div>
<section><h2>Decision log (o2ksim explain)</h2><ol id="log" start="1"></ol></section>
<script type="application/json" id="o2k-data">{data}</script>
<script>{js}</script>
</body></html>
"""


def _asset(name: str) -> str:
    return resources.files("o2ksim.report").joinpath("assets", name).read_text(encoding="utf-8")


def render_player(data: dict[str, Any]) -> str:
    """The page for player data (:func:`o2ksim.report.player_data.player_data`)."""
    # "</" inside the JSON would end the script element early
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return PAGE.format(title=html.escape(data["title"]), css=_asset("player.css"),
                       js=_asset("player.js"), data=payload)  # fmt: skip


def player_html(source: Any = "explain-backfill", **kw: Any) -> str:
    """The player page of ``source`` (arguments as :func:`~o2ksim.report.player_data.player_data`)."""
    return render_player(player_data(source, **kw))


def write_player(path: str | os.PathLike[str], source: Any = "explain-backfill", **kw: Any) -> Path:
    """Write the player page of ``source`` to ``path``; returns the path.

    ``source``: a scenario, a scenario file or a shipped scenario's name
    (``explain-backfill``, ``explain-immediate``, ``explain-eqspatial``);
    ``policy``, ``params`` (e.g. ``{"reservations": 2}``), ``max_jobs``,
    ``title`` as for :func:`~o2ksim.report.player_data.player_data`.
    """
    out = Path(path)
    out.write_text(player_html(source, **kw), encoding="utf-8")
    return out
