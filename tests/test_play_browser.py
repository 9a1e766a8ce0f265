"""The player page in a real browser: headless Chromium driven by selenium.

The page is stepped to given events (by its API and by the keyboard) and what
it shows -- the reserved block's start, the queue order, the jobs holding
processors -- is compared with the engine's own records of the same run: the
decision log of :func:`o2ksim.explain.explain` and the allocation segments of
its result.  Skipped, with the reason, when Chromium, chromedriver or selenium
is not installed (Debian: ``apt-get install chromium chromium-driver``;
``pip install selenium``, in the ``test`` extras).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator

import pytest

from o2ksim.explain import explain
from o2ksim.report.player import write_player

MIN = 60.0


def _browser_paths() -> tuple[str, str]:
    chromium = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))
                     if p), None)  # fmt: skip
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("headless browser test: chromium and chromedriver not installed "
                    "(apt-get install chromium chromium-driver)")  # fmt: skip
    return chromium, driver


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium not installed")
    chromium, driver = _browser_paths()
    from selenium.webdriver.chrome.service import Service  # optional test dependency

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="o2ksim-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", f"--user-data-dir={profile}", "--window-size=1300,1400"):  # fmt: skip
        opts.add_argument(flag)
    d = webdriver.Chrome(service=Service(driver), options=opts)
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def fig1(browser, tmp_path_factory):
    """The Fig. 1 page open in the browser, with the engine's log and segments of the same run."""
    page = tmp_path_factory.mktemp("play") / "fig1.html"
    write_player(page, "explain-backfill")
    result, log = explain("explain-backfill")
    browser.get(page.as_uri())
    assert browser.execute_script("return window.o2kPlayer.count") == len(log.entries)
    return browser, log, result


def go(d, i: int) -> None:
    d.execute_script("window.o2kPlayer.go(arguments[0])", i)


def rows(d, table: str, player: int = 0) -> list[dict]:
    """The rows of one of the page's tables (queue, running, reservations) of player ``player``."""
    return d.execute_script(
        "return [...document.querySelectorAll(`#p${arguments[1]} .${arguments[0]} tbody tr[data-job]`)]"
        ".map(tr => ({job: +tr.dataset.job, at: tr.dataset.at, text: tr.innerText}))",
        table,
        player,
    )


def index_of(log, event: str, job: int | None, time: float | None = None) -> int:
    return next(i for i, e in enumerate(log.entries)
                if e.event == event and e.job == job and (time is None or e.time == time))  # fmt: skip


def running_from_segments(result, t: float) -> set[int]:
    seg = result.segments
    on = seg[(seg["start"] <= t) & (seg["end"] > t) & (seg["procs"] > 0)]
    return {int(j) for j in on["job_id"]}


def test_reserved_block_start(fig1):
    d, log, _ = fig1
    i = index_of(log, "reserved", 3)
    go(d, i)
    assert d.find_element("css selector", "#p0 .event").text.endswith(log.entries[i].text)
    (res,) = rows(d, "reservations")
    assert res["job"] == 3 and float(res["at"]) == 60 * MIN  # hand: J1's requested end
    assert "1:00:00" in res["text"] and "1:00:00" in log.entries[i].text  # the engine says so too


def test_queue_order_and_running_jobs(fig1):
    d, log, result = fig1
    i = index_of(log, "waiting", None, 5 * MIN)
    go(d, i)
    queue = [r["job"] for r in rows(d, "queue")]
    assert queue == [3, 4, 11]  # FCFS
    assert log.entries[i].text.startswith("J3, J4, J11")  # the engine's waiting line
    running = {r["job"] for r in rows(d, "running")}
    assert running == {1, 2, 10} == running_from_segments(result, 5 * MIN)


def test_slide_and_backfill_tags(fig1):
    d, log, result = fig1
    i = index_of(log, "starts", 3)
    go(d, i)
    assert d.execute_script("return window.o2kPlayer.time()") == 50 * MIN
    assert rows(d, "reservations") == []
    running = {r["job"]: r["text"] for r in rows(d, "running")}
    assert set(running) == {3, 11} == running_from_segments(result, 50 * MIN)
    assert "uses extra processors" in running[11]


def test_keyboard_steps_and_plays(fig1):
    d, log, _ = fig1
    from selenium.webdriver.common.keys import Keys  # optional test dependency

    go(d, 0)
    body = d.find_element("tag name", "body")
    body.send_keys(Keys.ARROW_RIGHT)
    body.send_keys(Keys.ARROW_RIGHT)
    assert d.execute_script("return window.o2kPlayer.index()") == 2
    body.send_keys(Keys.ARROW_LEFT)
    assert d.execute_script("return window.o2kPlayer.index()") == 1
    body.send_keys(Keys.END)
    assert d.execute_script("return window.o2kPlayer.index()") == len(log.entries) - 1
    body.send_keys(Keys.HOME)
    body.send_keys(Keys.SPACE)
    assert d.find_element("id", "play").text == "Pause"
    body.send_keys(Keys.SPACE)
    assert d.find_element("id", "play").text == "Play"


def test_no_script_errors_and_canvas_drawn(fig1):
    d, log, _ = fig1
    go(d, index_of(log, "backfilled", 11))
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    # the lanes are drawn: J1's colour (the second start's hue) is on the canvas
    png = d.execute_script("return document.querySelector('#p0 .lanes').toDataURL('image/png')")
    assert png.startswith("data:image/png;base64,") and len(png) > 5000


def test_two_settings_stepped_together(browser, tmp_path):
    """T§3.2.1 Fig. 1(b) against 1(c): when J11 is backfilled at 18 min under one
    reservation, under two it waits -- J4 is reserved at 30 min (J2's requested end)
    and J11, running to 63 min on 2 of the 8 processors, would leave J4 too few."""
    page = tmp_path / "versus.html"
    write_player(page, "explain-backfill", versus={"reservations": 2})
    _, log1 = explain("explain-backfill")
    _, log2 = explain("explain-backfill", params={"reservations": 2})
    browser.get(page.as_uri())
    d = browser
    assert d.execute_script("return window.o2kPlayer.count") == len(log1.entries) + len(
        log2.entries
    )
    i = index_of(log1, "backfilled", 11)
    step = d.execute_script(
        "const p = window.o2kPlayer; for (let s = 0; s < p.count; s++) { p.go(s);"
        " if (p.frames()[0] === arguments[0]) return s; } return -1;", i)  # fmt: skip
    assert step >= 0 and d.execute_script("return window.o2kPlayer.time()") == 18 * MIN
    j = d.execute_script("return window.o2kPlayer.frames()[1]")
    assert log2.entries[j].time <= 18 * MIN  # the other side is at the same moment
    assert 11 in [r["job"] for r in rows(d, "running", 0)]
    assert 11 in [r["job"] for r in rows(d, "queue", 1)]
    assert 11 not in [r["job"] for r in rows(d, "running", 1)]
    assert not [
        e for e in log2.entries if e.event == "backfilled" and e.job == 11 and e.time == 18 * MIN
    ]
    reserved = {r["job"]: float(r["at"]) for r in rows(d, "reservations", 1)}
    assert reserved == {3: 60 * MIN, 4: 30 * MIN}  # hand: J3 at J1's requested end, J4 at J2's
    assert "reservations=1" in d.find_element("css selector", "#p0 .title").text
    assert "reservations=2" in d.find_element("css selector", "#p1 .title").text


def test_preemption_victims_and_trial_countdown(browser, tmp_path):
    """explain-immediate (scenario comment, T§3.2.2): J7's 60 s trial starts at 0:22:10
    preempting J4 and J5; the page shows both suspended for J7's trial with the current
    slowdown the engine's log gives, and J7's trial requeued at 0:23:10 unless done."""
    page = tmp_path / "imm.html"
    write_player(page, "explain-immediate")
    _, log = explain("explain-immediate")
    browser.get(page.as_uri())
    i = index_of(log, "starts", 7, (22 * 60 + 10) * 1.0)
    go(browser, i)
    running = {r["job"]: r["text"] for r in rows(browser, "running")}
    for victim in (4, 5):
        line = log.entries[index_of(log, "preempted", victim, (22 * 60 + 10) * 1.0)].text
        slowdown = line.rsplit("current slowdown ", 1)[1]
        assert (
            "for J7's trial" in running[victim] and f"slowdown then {slowdown}" in running[victim]
        )
    assert "requeued at 0:23:10 unless done" in running[7] and "(in 0:01:00)" in running[7]


def test_eqspatial_shares_and_catch_up(browser, tmp_path):
    """explain-eqspatial: J6 starts on b at 0:24:30 catching up the credit it earned while
    waiting (the engine's log says how much); a's equal share is 2-3 since 0:07:00
    (8 processors, 3 jobs: J1, J3, J5)."""
    page = tmp_path / "eq.html"
    write_player(page, "explain-eqspatial")
    _, log = explain("explain-eqspatial")
    browser.get(page.as_uri())
    i = index_of(log, "starts", 6, 24 * 60 + 30.0)
    go(browser, i)
    credit = log.entries[i].text.split("catches up the ", 1)[1].split(" ", 1)[0]
    running = {r["job"]: r["text"] for r in rows(browser, "running")}
    assert f"catching up {credit} processor-seconds" in running[6]
    shares = browser.execute_script(
        "return [...document.querySelectorAll('#p0 .hosts tbody tr')].map(tr => tr.innerText)"
    )
    assert shares[0].split("\t")[0] == "a" and "2-3" in shares[0]


def test_png_export_makes_an_image(fig1):
    """The PNG button draws every player's canvas into one image (the download itself is the
    browser's); the drawing it saves is a PNG of the lanes' size."""
    d, log, _ = fig1
    go(d, index_of(log, "starts", 3))
    d.execute_script(
        "window.__saved = null; HTMLAnchorElement.prototype.click = function () {"
        " window.__saved = [this.download, this.href]; };"
    )
    d.find_element("id", "png").click()
    name, href = d.execute_script("return window.__saved")
    assert name == f"o2ksim-event-{index_of(log, 'starts', 3) + 1}.png"
    assert href.startswith("data:image/png;base64,") and len(href) > 5000
    assert [e for e in d.get_log("browser") if e["level"] == "SEVERE"] == []


def test_a_day_of_a_real_run_is_smooth(browser, tmp_path):
    """Days 6-11 of a stored run (``o2ksim run --out``, the KTH-SP2 sample under FCFS-backfill,
    622 submissions, about 2,500 events: as many as a busy day of a larger machine) played
    from the folder: the page shows what
    the stored ``jobs.csv`` says is running, and a step (draw + panels) stays far below
    the 0.5 s of the default speed.  Measured with the page's own clock
    (``performance.now()`` around ``go``); the figures are printed (``pytest -s``)."""
    import time
    from pathlib import Path

    import pandas as pd

    from o2ksim.cli import main

    out = tmp_path / "run"
    sample = Path(__file__).resolve().parents[1] / "traces" / "kth-sp2-sample.swf"
    assert main(["run", "--trace", str(sample), "--policy", "fcfs-backfill", "--out", str(out),
                 "-q"]) == 0  # fmt: skip
    page = tmp_path / "day.html"
    t0 = time.perf_counter()
    assert main(["play", str(out), "--start", "6d", "--end", "11d", "-o", str(page)]) == 0
    written = time.perf_counter() - t0
    jobs = pd.read_csv(out / "jobs.csv")
    t0 = time.perf_counter()
    browser.get(page.as_uri())
    n = browser.execute_script("return window.o2kPlayer.count")
    opened = time.perf_counter() - t0
    assert n > 2000
    for k in (n // 5, n // 2, 4 * n // 5):
        go(browser, k)
        t = browser.execute_script("return window.o2kPlayer.time()")
        shown = {r["job"] for r in rows(browser, "running")}
        sure = set(jobs.loc[(jobs["start"] < t) & (jobs["end"] > t), "job_id"].astype(int))
        maybe = set(jobs.loc[(jobs["start"] <= t) & (jobs["end"] >= t), "job_id"].astype(int))
        assert sure <= shown <= maybe
    ms = browser.execute_script(
        "const p = window.o2kPlayer, out = [];"
        "for (let s = 0; s < p.count; s += Math.max(1, Math.floor(p.count / 300))) {"
        " const a = performance.now(); p.go(s); out.push(performance.now() - a); }"
        "return out.sort((x, y) => x - y);"
    )
    median, worst = ms[len(ms) // 2], ms[-1]
    size = page.stat().st_size
    print(f"\ndays 6-11 of the KTH sample: {n} events, {size / 1e6:.2f} MB, written in {written:.1f} s, "
          f"opened in {opened:.2f} s, step median {median:.1f} ms, worst {worst:.1f} ms "
          f"over {len(ms)} steps")  # fmt: skip
    assert size < 5e6 and median < 100 and worst < 500
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
