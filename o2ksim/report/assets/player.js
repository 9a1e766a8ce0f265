// o2ksim step-through player: draws the frames o2ksim.report.player_data computed.
// Nothing is simulated here: every frame is one line of the engine's decision log.
"use strict";
(function () {
  const ALL = JSON.parse(document.getElementById("o2k-data").textContent);
  // Okabe-Ito (colour-blind safe) without its yellow, which vanishes as a dashed outline on white
  const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999999"];
  const $ = (id) => document.getElementById(id);
  const state = { s: 0, playing: false, timer: null, speed: 2 };

  function clock(t) {
    if (t === null || !isFinite(t)) return "never";
    t = Math.round(t);
    const d = Math.floor(t / 86400), h = Math.floor((t % 86400) / 3600);
    const m = Math.floor((t % 3600) / 60), s = t % 60;
    const p = (x) => String(x).padStart(2, "0");
    return d >= 2 ? `${d}d ${p(h)}:${p(m)}:${p(s)}` : `${h + 24 * d}:${p(m)}:${p(s)}`;
  }
  function parseClock(text) { // "1:02:03" or "2d 01:02:03" (o2ksim.clock) -> seconds
    const m = /^(?:(\d+)d )?(\d+):(\d\d):(\d\d)$/.exec(text.trim());
    return m ? (+(m[1] || 0)) * 86400 + (+m[2]) * 3600 + (+m[3]) * 60 + (+m[4]) : null;
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
  }

  // -- one player: its data, canvas and panels (a page holds one, or two stepped together) -----
  function makePlayer(root, D, onJump) {
    const el = (c) => root.querySelector("." + c);
    // frame: [t, running, reservations, queue, parts, queueLen, freeProcs, freeMem, timers]
    const F = D.frames;
    const me = { i: 0 };
    const canvas = el("lanes");
    const ctx = canvas.getContext("2d");
  // -- colours: consecutive starts get different hues ---------------------------------------
    const colourOf = {};
    D.lanes.slice().sort((a, b) => a[2] - b[2]).forEach((s) => {
      if (!(s[0] in colourOf)) colourOf[s[0]] = PALETTE[Object.keys(colourOf).length % PALETTE.length];
    });
    const colour = (j) => colourOf[j] || "#777777";

    // -- lanes by job; the run's time span ------------------------------------------------------
    const lanesOf = {};
    D.lanes.forEach((s) => (lanesOf[s[0]] = lanesOf[s[0]] || []).push(s));
    const tMin = D.begin || 0; // a run folder's window starts later than 0
    let tMax = D.end || 1;
    F.forEach((f) => {
      f[1].forEach((r) => { if (r[4] !== null) tMax = Math.max(tMax, r[4]); });
      f[2].forEach((r) => { tMax = Math.max(tMax, r[2] + D.jobs[r[0]][2]); });
    });
    // a job's reservation at time t: the last of its reservations made by then
    function episode(j, t) {
      const eps = D.history[j] || [];
      let found = null;
      eps.forEach((e) => { if (e[0] <= t) found = e; });
      return found;
    }
    tMax = tMin + (tMax - tMin) * 1.03;

    // -- geometry ----------------------------------------------------------------------------
    const totalProcs = D.procs.reduce((a, b) => a + b, 0);
    const ROW = Math.max(2, Math.min(22, Math.floor(440 / totalProcs)));
    const GAP = 18, LEFT = 78, RIGHT = 16, TOP = 58, AXIS = 30;
    const hostTop = [];
    let y0 = TOP;
    D.procs.forEach((p) => { hostTop.push(y0); y0 += p * ROW + GAP; });
    const HEIGHT = y0 + AXIS;

    function windowOf(now) {
      const w = parseFloat($("window").value);
      if (!w || w >= tMax - tMin) return [tMin, tMax];
      const a = Math.max(tMin, Math.min(now - w / 3, tMax - w));
      return [a, a + w];
    }

    function rowsFor(job, host, at) {
      // the rows the reserved job gets when it starts (its first lane on that host), else the top rows
      const mine = (lanesOf[job] || []).filter((s) => s[1] === host && s[2] >= at - 1e9);
      if (mine.length) return mine[0][5];
      const n = D.jobs[job][1];
      return [D.procs[host] - n, n];
    }

    function draw() {
      const f = F[me.i];
      const now = f[0];
      const dpr = window.devicePixelRatio || 1;
      const cssW = canvas.clientWidth || 1000;
      canvas.width = cssW * dpr; canvas.height = HEIGHT * dpr;
      canvas.style.height = HEIGHT + "px";
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.fillStyle = "#ffffff"; ctx.fillRect(0, 0, cssW, HEIGHT);
      const [a, b] = windowOf(now);
      const X = (t) => LEFT + ((t - a) / (b - a)) * (cssW - LEFT - RIGHT);
      const clipX = (t) => Math.max(LEFT, Math.min(cssW - RIGHT, X(t)));
      const rowY = (h, r) => hostTop[h] + r * ROW;

      // the event line, on the canvas too (a PNG for slides carries it)
      const line = D.log[me.i];
      ctx.fillStyle = "#111"; ctx.font = "bold 14px sans-serif";
      ctx.fillText(`${clock(line[0])}  ${line[2] !== null ? "J" + line[2] : ""} ${line[1]}`, 8, 18);
      ctx.font = "13px sans-serif"; ctx.fillStyle = "#333";
      ctx.fillText(line[3].length > 170 ? line[3].slice(0, 167) + "..." : line[3], 8, 36);

      // host frames and names
      D.procs.forEach((p, h) => {
        ctx.fillStyle = "#f4f4f4"; ctx.fillRect(LEFT, hostTop[h], cssW - LEFT - RIGHT, p * ROW);
        ctx.fillStyle = "#111"; ctx.font = "bold 12px sans-serif";
        ctx.fillText(D.hosts[h], 6, hostTop[h] + 13);
        ctx.font = "11px sans-serif"; ctx.fillStyle = "#555";
        ctx.fillText(`${f[6][h]}/${p} free`, 6, hostTop[h] + 27);
      });

      // past: the engine's allocation segments, filled up to now
      ctx.font = "11px sans-serif";
      D.lanes.forEach((s) => {
        if (s[2] >= now || s[3] <= a || s[2] >= b) return;
        const x1 = clipX(s[2]), x2 = clipX(Math.min(s[3], now));
        if (x2 - x1 < 0.5) return;
        const r = s[5];
        for (let k = 0; k < r.length; k += 2) {
          ctx.fillStyle = colour(s[0]);
          ctx.fillRect(x1, rowY(s[1], r[k]) + 0.5, x2 - x1, r[k + 1] * ROW - 1);
        }
        if (x2 - x1 > 24 && ROW * r[1] >= 11) {
          ctx.fillStyle = "#000";
          ctx.fillText("J" + s[0], x1 + 3, rowY(s[1], r[0]) + Math.min(r[1] * ROW, 24) / 2 + 4);
        }
      });

      // running jobs: their requested-runtime ghost from now on
      f[1].forEach(([j, h, p, start, ghost, suspended, trial]) => {
        const seg = (lanesOf[j] || []).find((s) => s[1] === h && s[2] <= now && (s[3] > now || s[2] === now));
        if (!seg || suspended || ghost === null) return;
        const r = seg[5];
        ctx.setLineDash([5, 3]); ctx.strokeStyle = colour(j); ctx.lineWidth = 2;
        for (let k = 0; k < r.length; k += 2) {
          const y = rowY(h, r[k]) + 1, hgt = r[k + 1] * ROW - 2;
          ctx.strokeRect(clipX(now), y, clipX(ghost) - clipX(now), hgt);
        }
        ctx.setLineDash([]);
        if (clipX(ghost) - clipX(now) > 60 && r[1] * ROW >= 11) {
          ctx.fillStyle = "#333";
          const tag = D.tags[j] ? " (backfilled)" : trial ? " (trial)" : "";
          ctx.fillText(`J${j} requested${tag}`, clipX(now) + 4, rowY(h, r[0]) + Math.min(r[1] * ROW, 24) / 2 + 4);
        }
      });

      // reservations: blocks of processors x requested time
      const marks = [];
      f[2].forEach(([j, h, at]) => {
        const req = D.jobs[j][2], r = rowsFor(j, h, at);
        ctx.fillStyle = "rgba(213, 94, 0, 0.18)"; ctx.strokeStyle = "#D55E00"; ctx.lineWidth = 2.5;
        for (let k = 0; k < r.length; k += 2) {
          const y = rowY(h, r[k]) + 1, hgt = r[k + 1] * ROW - 2;
          ctx.fillRect(clipX(at), y, clipX(at + req) - clipX(at), hgt);
          ctx.strokeRect(clipX(at), y, clipX(at + req) - clipX(at), hgt);
        }
        ctx.fillStyle = "#8a3a00"; ctx.font = "bold 12px sans-serif";
        ctx.fillText(`J${j} reserved`, clipX(at) + 4, rowY(h, r[0]) + 14);
        ctx.font = "11px sans-serif";
        const hist = episode(j, now);
        if (hist) marks.push([j, h, hist, at, null]);
      });
      // a job that started just now ahead of its reservation: the slide of T§3.2.1 Fig. 2
      f[1].forEach(([j]) => {
        const hist = episode(j, now);
        if (hist && hist[4] === now && hist[4] < hist[2]) marks.push([j, hist[1], hist, hist[2], now]);
      });
      marks.forEach(([j, h, hist, at, started]) => {
        const [t0, , t2] = hist, moves = hist[3].filter((m) => m[0] <= now); // nothing from the future
        let tp = started;
        if (tp === null && moves.length) tp = moves[moves.length - 1][0];
        if (tp === null && t2 === at) { mark(t0, "t0", h); mark(t2, "t2", h); return; }
        const req = D.jobs[j][2], r = rowsFor(j, h, at);
        ctx.setLineDash([3, 3]); ctx.strokeStyle = "#8a3a00"; ctx.lineWidth = 1.5;
        ctx.strokeRect(clipX(t2), rowY(h, r[0]) + 1, clipX(t2 + req) - clipX(t2), r[1] * ROW - 2);
        ctx.setLineDash([]);
        ctx.fillStyle = "#8a3a00";
        ctx.fillText(`J${j}'s first reservation (t2)`, clipX(t2) + 4, rowY(h, r[0]) + r[1] * ROW - 5);
        const cur = started !== null ? started : at;
        arrow(clipX(t2), clipX(cur), rowY(h, r[0]) + (r[1] * ROW) / 2);
        mark(t0, "t0", h); mark(tp, "t'", h); mark(t2, "t2", h);
      });
      function mark(t, label, h) {
        if (t === null || t < a || t > b) return;
        const x = X(t), yb = hostTop[h] + D.procs[h] * ROW;
        ctx.strokeStyle = "#8a3a00"; ctx.lineWidth = 1;
        ctx.beginPath(); ctx.moveTo(x, yb); ctx.lineTo(x, yb + 10); ctx.stroke();
        ctx.font = "bold 12px sans-serif";
        const w = ctx.measureText(label).width;
        ctx.fillStyle = "#ffffff"; ctx.fillRect(x + 2, yb + 3, w + 4, 14);
        ctx.fillStyle = "#8a3a00"; ctx.fillText(label, x + 4, yb + 14);
        ctx.font = "11px sans-serif";
      }
      function arrow(x1, x2, y) {
        if (Math.abs(x1 - x2) < 8) return;
        ctx.strokeStyle = "#8a3a00"; ctx.lineWidth = 2;
        ctx.beginPath(); ctx.moveTo(x1, y); ctx.lineTo(x2, y); ctx.stroke();
        const d = x2 < x1 ? 1 : -1;
        ctx.beginPath(); ctx.moveTo(x2, y); ctx.lineTo(x2 + 8 * d, y - 5); ctx.lineTo(x2 + 8 * d, y + 5);
        ctx.closePath(); ctx.fillStyle = "#8a3a00"; ctx.fill();
      }

      // time axis and the now cursor
      const yAxis = HEIGHT - AXIS + 6;
      ctx.strokeStyle = "#999"; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(LEFT, yAxis); ctx.lineTo(cssW - RIGHT, yAxis); ctx.stroke();
      const steps = [60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];
      const step = steps.find((s) => (b - a) / s <= 10) || 604800;
      ctx.fillStyle = "#444"; ctx.font = "11px sans-serif";
      for (let t = Math.ceil(a / step) * step; t <= b; t += step) {
        const x = X(t);
        ctx.beginPath(); ctx.moveTo(x, yAxis); ctx.lineTo(x, yAxis + 4); ctx.stroke();
        ctx.fillText(clock(t), x - 18, yAxis + 16);
      }
      if (now >= a && now <= b) {
        const x = X(now);
        ctx.strokeStyle = "#c00"; ctx.lineWidth = 2;
        ctx.beginPath(); ctx.moveTo(x, TOP - 8); ctx.lineTo(x, yAxis); ctx.stroke();
        ctx.fillStyle = "#c00"; ctx.font = "bold 12px sans-serif";
        ctx.fillText("now " + clock(now), Math.min(x + 4, cssW - 110), TOP - 8);
      }
    }

    // -- panels --------------------------------------------------------------------------------
    function panels() {
      const f = F[me.i];
      const now = f[0];
      const line = D.log[me.i];
      el("event").innerHTML = `<span class="t">${clock(line[0])}</span> <span class="j">${line[2] !== null ? "J" + line[2] : ""}</span> <span class="ev">${esc(line[1])}</span> ${esc(line[3])}`;
      el("event").dataset.event = line[1];

      // queue, priority order, with each priority's parts
      let q = "";
      f[3].forEach((j, k) => {
        const job = D.jobs[j], parts = f[4][k] || [];
        const shown = D.arrival_order ? `<td>${clock(parts[1])}</td>`
          : D.parts.map((_, n) => `<td>${(+parts[n + 1]).toFixed(3)}</td>`).join("") + `<td>${(+parts[0]).toFixed(3)}</td>`;
        q += `<tr data-job="${j}"><td>${k + 1}</td><td>J${j}</td><td>${job[1]}</td><td>${clock(job[2])}</td><td>${clock(now - job[0])}</td>${shown}</tr>`;
      });
      if (f[5] > f[3].length) q += `<tr><td colspan="9">... and ${f[5] - f[3].length} more</td></tr>`;
      el("queue").querySelector("tbody").innerHTML = q || `<tr><td colspan="9" class="none">nobody waits</td></tr>`;
      el("queue-count").textContent = f[5];

      let r = "";
      f[1].slice().sort((x, y) => x[1] - y[1] || x[3] - y[3]).forEach(([j, h, p, start, ghost, suspended, trial]) => {
        const why = suspended ? victim(j)
          : trial ? `trial run: requeued at ${clock(ghost)} unless done (in ${clock(ghost - now)})`
          : D.tags[j] ? "backfilled: " + D.tags[j] : catchingUp(j);
        r += `<tr data-job="${j}" class="${suspended ? "suspended" : ""}"><td><span class="sw" style="background:${colour(j)}"></span>J${j}</td><td>${esc(D.hosts[h])}</td><td>${p}</td><td>${clock(start)}</td><td>${suspended ? "-" : clock(ghost)}</td><td>${esc(why)}</td></tr>`;
      });
      el("running").querySelector("tbody").innerHTML = r || `<tr><td colspan="6" class="none">no job holds processors</td></tr>`;

      let s = "";
      f[2].forEach(([j, h, at]) => {
        const job = D.jobs[j], hist = episode(j, now);
        let story = "";
        if (hist) {
          story = `made at ${clock(hist[0])} for ${clock(hist[2])}`;
          hist[3].forEach(([t, a2]) => { if (t <= now) story += `; moved at ${clock(t)} to ${clock(a2)}`; });
        }
        s += `<tr data-job="${j}" data-at="${at}"><td>J${j}</td><td>${esc(D.hosts[h])}</td><td>${clock(at)}</td><td>${job[1]}</td><td>${clock(at + job[2])}</td><td>${story}</td></tr>`;
      });
      el("reservations").querySelector("tbody").innerHTML = s || `<tr><td colspan="6" class="none">no reservation</td></tr>`;

      let tm = "";
      f[8].forEach(([at, h, tag]) => {
        tm += `<tr><td>${clock(at)}</td><td>in ${clock(at - now)}</td><td>${h >= 0 ? esc(D.hosts[h]) : "all"}</td><td>${esc(tag)}</td></tr>`;
      });
      el("timers").querySelector("tbody").innerHTML = tm || `<tr><td colspan="4" class="none">no pass asked for</td></tr>`;

      let hs = "";
      const shares = EQ ? equalShares() : null;
      D.hosts.forEach((h, k) => {
        const mem = D.mem[k] === null ? "not constrained" : `${f[7][k]} of ${D.mem[k]} MB`;
        const eq = shares ? `<td>${esc(shares[k][0])}</td><td>${esc(shares[k][1])}</td>` : "";
        hs += `<tr data-host="${esc(h)}"><td>${esc(h)}</td><td>${f[6][k]} of ${D.procs[k]}</td><td>${mem}</td>${eq}</tr>`;
      });
      el("hosts").querySelector("tbody").innerHTML = hs;

      logWindow();
    }

    // the log shows the lines around the current one (a day of a real trace has thousands)
    const LOG_AROUND = 60;
    function logWindow() {
      const lo = Math.max(0, me.i - LOG_AROUND), hi = Math.min(D.log.length, me.i + LOG_AROUND + 1);
      const box = el("log");
      box.start = lo + 1;
      box.innerHTML = logHtml.slice(lo, hi).join("");
      const cur = box.children[me.i - lo];
      cur.classList.add("current");
      box.scrollTop = cur.offsetTop - box.clientHeight / 2;
    }

    const alone = ALL.players.length === 1;
    el("title").textContent = alone ? "" : D.run;
    el("machine").textContent = `${alone ? D.run + " on " : ""}${D.machine}; queue order: ${D.priority}`;
    el("queue").querySelector("thead").innerHTML = "<tr><th>#</th><th>job</th><th>procs</th><th>requests</th><th>waited</th>"
      + (D.arrival_order ? "<th>submitted</th>" : D.parts.map((p) => `<th>${esc(p)}</th>`).join("") + "<th>priority</th>") + "</tr>";
    const logHtml = D.log.map((l, k) => `<li data-i="${k}" class="ev-${l[1]}"><span class="t">${clock(l[0])}</span> <span class="j">${l[2] !== null ? "J" + l[2] : ""}</span> <span class="ev">${esc(l[1])}</span> ${esc(l[3])}</li>`);
    el("log").addEventListener("click", (e) => { const li = e.target.closest("li"); if (li) onJump(+li.dataset.i); });
    // -- what the policy's notes say: preemption victims, catch-up credit, equal shares --------
    const byJob = {};
    D.log.forEach((l, k) => { if (l[2] !== null) (byJob[l[2]] = byJob[l[2]] || []).push(k); });
    function lastLine(j, pred) {
      const ks = byJob[j] || [];
      for (let n = ks.length - 1; n >= 0; n--) if (ks[n] <= me.i && pred(D.log[ks[n]])) return D.log[ks[n]];
      return null;
    }
    function victim(j) {
      const l = lastLine(j, (x) => x[1] === "preempted");
      if (!l) return "suspended (preempted): keeps its memory";
      const by = /for (J\d+)'s trial/.exec(l[3]), sd = /current slowdown ([\d.]+)/.exec(l[3]);
      return `suspended at ${clock(l[0])}${by ? " for " + by[1] + "'s trial" : ""}`
        + `${sd ? "; its current slowdown then " + sd[1] : ""}; keeps its memory`;
    }
    function catchingUp(j) {
      const l = lastLine(j, (x) => x[1] === "starts" || x[1] === "resumes");
      const m = l && /catches up the (\d+) processor-seconds/.exec(l[3]);
      return m ? `catching up ${m[1]} processor-seconds of credit earned while waiting` : "";
    }
    const EQ = D.log.some((l) => / equal share /.test(l[3]));
    if (EQ) el("hosts").querySelector("thead tr").insertAdjacentHTML("beforeend",
      "<th>equal share</th><th>next repartitioning (MinInterval)</th>");
    function equalShares() {
      // per host: the last equal share and earliest next repartitioning its lines state
      const out = D.hosts.map(() => ["-", "-"]);
      const seen = D.hosts.map(() => [false, false]);
      for (let k = me.i; k >= 0 && k > me.i - 3000; k--) {
        const l = D.log[k], h = l[4];
        if (h < 0) continue;
        const share = !seen[h][0] && /equal share ([\d-]+)/.exec(l[3]);
        if (share) { out[h][0] = share[1]; seen[h][0] = true; }
        const next = !seen[h][1] && / next repartitioning of \S+ at (.+?) at the earliest/.exec(l[3]);
        if (next) {
          const at = parseClock(next[1]);
          out[h][1] = at !== null && at < D.frames[me.i][0] ? `allowed (since ${next[1]})` : next[1];
          seen[h][1] = true;
        }
      }
      return out;
    }

    function show(i) { me.i = i; draw(); panels(); }
    return { show, draw, F, tMin, tMax, canvas, me };
  }

  // -- the page: one timeline over every player's events ------------------------------------
  const players = ALL.players.map((D, k) =>
    makePlayer(document.getElementById("p" + k), D, (i) => { pause(); go(stepOf[k][i]); }));
  // steps: every event of every player in time order; at equal times the players take turns
  // (n-th event at that time of each, then the (n+1)-th), so arrivals line up with arrivals
  const steps = [];
  players.forEach((p, k) => {
    let rank = 0;
    p.F.forEach((f, i) => {
      rank = i > 0 && p.F[i - 1][0] === f[0] ? rank + 1 : 0;
      steps.push([f[0], k, i, rank]);
    });
  });
  steps.sort((x, y) => x[0] - y[0] || x[3] - y[3] || x[1] - y[1]);
  const pos = [], stepOf = players.map(() => []);
  const last = players.map(() => 0);
  steps.forEach(([, k, i], s) => { last[k] = i; pos.push(last.slice()); stepOf[k][i] = s; });
  const tEnd = Math.max(...ALL.players.map((D) => D.end || 0));

  function go(s) {
    state.s = Math.max(0, Math.min(steps.length - 1, s));
    const [t, k] = steps[state.s];
    players.forEach((p, n) => {
      p.show(pos[state.s][n]);
      p.canvas.closest(".player").classList.toggle("moved", n === k && players.length > 1);
    });
    $("now").textContent = clock(t);
    $("pos").textContent = `event ${state.s + 1} of ${steps.length}`;
    $("scrub").value = t;
    if (state.s === steps.length - 1) pause();
  }
  function play() {
    if (state.s === steps.length - 1) state.s = -1;
    state.playing = true; $("play").textContent = "Pause";
    clearInterval(state.timer);
    state.timer = setInterval(() => go(state.s + 1), 1000 / state.speed);
  }
  function pause() {
    state.playing = false; $("play").textContent = "Play";
    clearInterval(state.timer);
  }
  function setSpeed(v) {
    state.speed = v; $("speed").value = String(v);
    if (state.playing) play();
  }
  function stepAt(t) {
    let lo = 0, hi = steps.length - 1;
    while (lo < hi) { const m = (lo + hi + 1) >> 1; if (steps[m][0] <= t) lo = m; else hi = m - 1; }
    return lo;
  }

  $("scrub").min = Math.min(...players.map((p) => p.tMin));
  $("scrub").max = tEnd; $("scrub").step = "any";
  if (Math.max(...players.map((p) => p.tMax - p.tMin)) > 2 * 86400) $("window").value = "86400"; // a day around now
  $("play").addEventListener("click", () => (state.playing ? pause() : play()));
  $("prev").addEventListener("click", () => { pause(); go(state.s - 1); });
  $("next").addEventListener("click", () => { pause(); go(state.s + 1); });
  $("first").addEventListener("click", () => { pause(); go(0); });
  $("last").addEventListener("click", () => { pause(); go(steps.length - 1); });
  $("speed").addEventListener("change", (e) => setSpeed(parseFloat(e.target.value)));
  $("window").addEventListener("change", () => players.forEach((p) => p.draw()));
  $("scrub").addEventListener("input", (e) => { pause(); go(stepAt(parseFloat(e.target.value))); });
  $("png").addEventListener("click", () => {
    // every player's drawing, side by side, in one PNG
    const cs = players.map((p) => p.canvas);
    const out = document.createElement("canvas");
    out.width = cs.reduce((w, c) => w + c.width, 0);
    out.height = Math.max(...cs.map((c) => c.height));
    const g = out.getContext("2d");
    g.fillStyle = "#fff"; g.fillRect(0, 0, out.width, out.height);
    let x = 0;
    cs.forEach((c) => { g.drawImage(c, x, 0); x += c.width; });
    const a = document.createElement("a");
    a.download = `o2ksim-event-${state.s + 1}.png`; a.href = out.toDataURL("image/png"); a.click();
  });
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "SELECT" || (e.target.tagName === "INPUT" && e.key === " ")) return;
    const n = e.shiftKey ? 10 : 1;
    if (e.key === " ") { e.preventDefault(); state.playing ? pause() : play(); }
    else if (e.key === "ArrowRight") { e.preventDefault(); pause(); go(state.s + n); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); pause(); go(state.s - n); }
    else if (e.key === "Home") { pause(); go(0); }
    else if (e.key === "End") { pause(); go(steps.length - 1); }
    else if (e.key === "+" || e.key === "=") setSpeed(Math.min(state.speed * 2, 64));
    else if (e.key === "-") setSpeed(Math.max(state.speed / 2, 0.25));
  });
  window.addEventListener("resize", () => players.forEach((p) => p.draw()));
  window.o2kPlayer = {
    go, play, pause, count: steps.length, index: () => state.s, time: () => steps[state.s][0],
    frames: () => pos[state.s].slice(), // each player's frame (its log line) at this step
  };
  go(0);
})();
