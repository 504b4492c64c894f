// tmm-bridge operator dashboard: read-only, live over /dashboard/socket (JSON snapshots).
// No frameworks, no inline code: the server's CSP allows only this file and dashboard.css.
"use strict";
(function () {
  const TOKEN_KEY = "tmm-dashboard-token";
  const MIN_REDRAW_MS = 250;          // at most 4 redraws a second
  const WINDOW_MS = 10 * 60 * 1000;   // the history strip covers 10 minutes
  const SHORT = { noFix: "NF", autonomous: "Aut", dgps: "DG", rtkFloat: "Flt", rtkFixed: "Fix", unknown: "?" };
  const QUALITY = { noFix: "No fix", autonomous: "Autonomous", dgps: "DGPS", rtkFloat: "RTK float",
    rtkFixed: "RTK fixed", deadReckoning: "Dead reckoning", manual: "Manual", simulator: "Simulator", ppp: "PPP" };
  // Marker shape and colour per constellation; the shape alone tells them apart.
  const SYSTEMS = {
    GPS: { shape: "circle", color: "#0969da" }, GLONASS: { shape: "square", color: "#cf222e" },
    Galileo: { shape: "diamond", color: "#1a7f37" }, BeiDou: { shape: "triangle", color: "#9a6700" },
    QZSS: { shape: "down", color: "#8250df" }, SBAS: { shape: "hexagon", color: "#57606a" },
    NavIC: { shape: "star", color: "#bf3989" }, other: { shape: "hexagon", color: "#24292f" },
  };
  const $ = (id) => document.getElementById(id);

  let latest = null, lastDraw = 0, drawTimer = null;
  let socket = null, backoff = 1000, retryTimer = null;

  // --- formatting ----------------------------------------------------------------------------
  const num = (v) => typeof v === "number" && isFinite(v);
  const fixed = (v, d, unit) => (num(v) ? v.toFixed(d) + (unit ? " " + unit : "") : "–");
  const text = (v) => (v === null || v === undefined || v === "" ? "–" : String(v));
  // An ISO time as "2026-12-07 13:28:21.000 UTC": always milliseconds, so the text keeps its width
  // (the wire format leaves them out on whole seconds).
  const utc = (v) => {
    const t = typeof v === "string" ? Date.parse(v) : NaN;
    return Number.isFinite(t) ? new Date(t).toISOString().replace("T", " ").replace("Z", " UTC") : "–";
  };
  // The hemisphere letter carries the sign: 93.75° W, never -93.75° W.
  const degrees = (v, pos, neg) => (num(v) ? Math.abs(v).toFixed(9) + "° " + (v >= 0 ? pos : neg) : "–");
  const accuracy = (v) => (!num(v) ? "–" : v < 1 ? (v * 100).toFixed(1) + " cm" : v.toFixed(3) + " m");
  const quality = (q) => (q ? QUALITY[q] || String(q) : "–");
  function set(id, value) { const el = $(id); if (el.textContent !== value) el.textContent = value; }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }
  function el(tag, cls, content) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content !== undefined) e.textContent = content;
    return e;
  }
  function pair(dl, term, value) { dl.append(el("dt", "", term), el("dd", "", value)); }

  // --- connection ----------------------------------------------------------------------------
  function showConnection(state, words) {
    const c = $("conn");
    c.className = "conn conn-" + state;
    c.textContent = words;
  }

  function connect() {
    clearTimeout(retryTimer);
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/dashboard/socket";
    showConnection("connecting", "connecting");
    let ws;
    try { ws = new WebSocket(url); } catch (e) { scheduleReconnect(); return; }
    socket = ws;
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: "hello", token: sessionStorage.getItem(TOKEN_KEY) || null }));
    };
    ws.onmessage = (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch (e) { return; }
      if (!message || message.type !== "snapshot") return;
      backoff = 1000;
      showConnection("live", "live");
      latest = message;
      scheduleDraw();
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      if (event.code === 4401) { askForToken(); return; }
      scheduleReconnect();
    };
  }

  function scheduleReconnect() {
    const seconds = Math.round(backoff / 1000);
    showConnection("down", "disconnected, retrying in " + seconds + " s");
    retryTimer = setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 10000);
  }

  function askForToken() {
    const refused = sessionStorage.getItem(TOKEN_KEY) !== null;
    sessionStorage.removeItem(TOKEN_KEY);
    showConnection("token", refused ? "disconnected: token refused" : "disconnected: token required");
    set("token-note", refused ? "The token was refused. Enter the dashboard token."
      : "This dashboard is reachable beyond this machine: enter the dashboard token.");
    $("token-section").classList.remove("hidden");
    $("token-input").focus();
  }

  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = $("token-input");
    if (!input.value) return;
    sessionStorage.setItem(TOKEN_KEY, input.value);
    input.value = "";
    $("token-section").classList.add("hidden");
    backoff = 1000;
    connect();
  });

  // --- redraw, at most 4 times a second ------------------------------------------------------
  function scheduleDraw() {
    if (drawTimer !== null) return;
    const wait = Math.max(0, lastDraw + MIN_REDRAW_MS - Date.now());
    drawTimer = setTimeout(() => {
      drawTimer = null;
      lastDraw = Date.now();
      if (latest) draw(latest);
    }, wait);
  }
  window.addEventListener("resize", scheduleDraw);

  function draw(s) {
    set("time", utc(s.time));
    set("version", text(s.version));
    drawPosition(s.position || null, s.rate || null, s.fixHistory || []);
    drawTimeline(s.fixHistory || [], s.time ? Date.parse(s.time) : Date.now());
    drawTrack(s.track || []);
    drawSky(s.sky || []);
    drawCorrections(s.corrections || null);
    drawFleet(s.fleet || null);
    drawReceivers(s.receivers || []);
    drawClients(s.clients || null);
    drawApps(s.apps || []);
  }

  function drawPosition(p, rate, history) {
    const q = p || {};
    set("p-lat", degrees(q.latitude, "N", "S"));
    set("p-lon", degrees(q.longitude, "E", "W"));
    set("p-alt", fixed(q.altitude, 3, "m"));
    set("p-msl", fixed(q.mslHeight, 3, "m"));
    set("p-und", fixed(q.undulation, 3, "m"));
    set("p-hrms", accuracy(q.hrms));
    set("p-vrms", accuracy(q.vrms));
    set("p-sats", text(q.satellites));
    set("p-utc", utc(q.utcTimeStamp));
    const last = history.length ? history[history.length - 1] : null;
    const fix = p === null ? "No position" : last ? quality(last[1]) : text(q.solutionType);
    set("fix-state", fix);
    set("f-sol", text(q.solutionType));
    set("f-diff", text(q.diffStatus));
    set("f-age", fixed(q.diffAge, 1, "s"));
    const r = rate || {};
    set("r-rate", fixed(r.epochRate, 1, "Hz"));
    set("r-age", fixed(r.lastEpochAgeSeconds, 2, "s"));
  }

  function drawTimeline(history, end) {
    const list = $("timeline");
    clear(list);
    const start = end - WINDOW_MS;
    const points = history.filter((h) => Array.isArray(h) && num(h[0]));
    if (!points.length) { list.append(el("li", "q-other", "no history")); list.lastChild.style.flexGrow = "1"; return; }
    if (points[0][0] > start) points.unshift([start, "unknown"]);
    for (let i = 0; i < points.length; i++) {
      const from = Math.max(points[i][0], start);
      const to = i + 1 < points.length ? Math.min(points[i + 1][0], end) : end;
      if (to <= from) continue;
      const name = points[i][1];
      const label = name === "unknown" ? "Unknown" : quality(name);
      // Narrow segments get a short name (the full one is in the title, the aria-label and the key below).
      const narrow = (to - from) / WINDOW_MS < 0.12;
      const item = el("li", QUALITY[name] ? "q-" + name : "q-other", narrow ? SHORT[name] || label.slice(0, 3) : label);
      const minutes = ((to - from) / 60000).toFixed(1);
      item.title = label + ", " + minutes + " min";
      item.setAttribute("aria-label", label + " for " + minutes + " minutes");
      item.style.flexGrow = String(to - from);   // CSSOM: allowed under style-src 'self'
      item.style.flexBasis = "0";
      list.append(item);
    }
  }

  // --- canvases ------------------------------------------------------------------------------
  // Sizes the canvas backing store to its CSS box; returns the 2D context in CSS pixels.
  function context(canvas, cssWidth) {
    const ratio = window.devicePixelRatio || 1;
    if (cssWidth) canvas.style.width = cssWidth + "px";
    const w = Math.max(1, Math.round(canvas.clientWidth)), h = Math.max(1, Math.round(canvas.clientHeight));
    if (canvas.width !== Math.round(w * ratio) || canvas.height !== Math.round(h * ratio)) {
      canvas.width = Math.round(w * ratio);
      canvas.height = Math.round(h * ratio);
    }
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = "12px 'DejaVu Sans', sans-serif";
    return { g, w, h };
  }

  function niceLength(metres) {
    const power = Math.pow(10, Math.floor(Math.log10(metres)));
    for (const m of [5, 2, 1]) if (m * power <= metres) return m * power;
    return power;
  }
  const metresText = (m) => (m >= 1000 ? m / 1000 + " km" : m >= 1 ? m + " m" : Math.round(m * 100) + " cm");

  function drawTrack(track) {
    const canvas = $("track");
    const { g, w, h } = context(canvas);
    const points = track.filter((p) => Array.isArray(p) && num(p[0]) && num(p[1]));
    if (!points.length) {
      g.fillStyle = "#57606a"; g.fillText("No track yet", 10, 20);
      canvas.setAttribute("aria-label", "Track plot: no track yet");
      return;
    }
    const [lat0, lon0] = points[points.length - 1];
    const R = 6371008.8, rad = Math.PI / 180;
    const en = points.map(([lat, lon]) => [(lon - lon0) * rad * R * Math.cos(lat0 * rad), (lat - lat0) * rad * R]);
    let extent = 0.5;  // metres from the centre to show at least
    for (const [e, n] of en) extent = Math.max(extent, Math.abs(e), Math.abs(n));
    const scale = (Math.min(w, h) / 2 - 20) / (extent * 1.05);  // pixels per metre, same on both axes
    const cx = w / 2, cy = h / 2;
    g.strokeStyle = "#0969da"; g.lineWidth = 2; g.beginPath();
    en.forEach(([e, n], i) => (i ? g.lineTo(cx + e * scale, cy - n * scale) : g.moveTo(cx + e * scale, cy - n * scale)));
    g.stroke();
    const [e0, n0] = en[0];
    g.fillStyle = "#57606a"; g.beginPath(); g.arc(cx + e0 * scale, cy - n0 * scale, 3, 0, 2 * Math.PI); g.fill();
    g.fillText("oldest", cx + e0 * scale + 5, cy - n0 * scale - 5);
    g.strokeStyle = "#cf222e"; g.lineWidth = 2; g.beginPath();
    g.moveTo(cx - 8, cy); g.lineTo(cx + 8, cy); g.moveTo(cx, cy - 8); g.lineTo(cx, cy + 8); g.stroke();
    g.fillStyle = "#1b1f24"; g.fillText("N ↑", w - 34, 18);
    // Scale bar: a round number of metres near a quarter of the width.
    const bar = niceLength(w / 4 / scale), px = bar * scale;
    g.strokeStyle = "#1b1f24"; g.lineWidth = 2; g.beginPath();
    g.moveTo(12, h - 14); g.lineTo(12 + px, h - 14); g.moveTo(12, h - 19); g.lineTo(12, h - 9);
    g.moveTo(12 + px, h - 19); g.lineTo(12 + px, h - 9); g.stroke();
    g.fillText(metresText(bar), 16, h - 22);
    const minutes = points.length > 1 && num(points[0][2]) ? ((points[points.length - 1][2] - points[0][2]) / 60000).toFixed(1) : "0";
    canvas.setAttribute("aria-label", "Track plot: " + points.length + " points over " + minutes +
      " minutes, within " + extent.toFixed(2) + " m of the latest point; scale bar " + metresText(bar));
  }

  function marker(g, shape, x, y, r) {
    g.beginPath();
    if (shape === "circle") g.arc(x, y, r, 0, 2 * Math.PI);
    else if (shape === "square") g.rect(x - r * 0.85, y - r * 0.85, r * 1.7, r * 1.7);
    else {
      const corners = { diamond: [0, 90, 180, 270], triangle: [0, 120, 240], down: [180, 300, 60],
        hexagon: [0, 60, 120, 180, 240, 300], star: [0, 144, 288, 72, 216] }[shape] || [0, 90, 180, 270];
      corners.forEach((a, i) => {
        const px = x + r * 1.15 * Math.sin(a * Math.PI / 180), py = y - r * 1.15 * Math.cos(a * Math.PI / 180);
        i ? g.lineTo(px, py) : g.moveTo(px, py);
      });
      g.closePath();
    }
  }
  const system = (name) => SYSTEMS[name] || SYSTEMS.other;

  function drawSky(sky) {
    const sats = sky.filter((s) => s && num(s.elevation) && num(s.azimuth));
    const canvas = $("sky");
    const { g, w, h } = context(canvas);
    const cx = w / 2, cy = h / 2, r = Math.min(w, h) / 2 - 22;
    g.strokeStyle = "#8c959f"; g.lineWidth = 1; g.fillStyle = "#57606a";
    for (const e of [0, 30, 60]) {
      const rr = r * (90 - e) / 90;
      g.beginPath(); g.arc(cx, cy, rr, 0, 2 * Math.PI); g.stroke();
      g.fillText(e + "°", cx + 3, cy - rr + 12);
    }
    g.beginPath(); g.moveTo(cx - r, cy); g.lineTo(cx + r, cy); g.moveTo(cx, cy - r); g.lineTo(cx, cy + r); g.stroke();
    g.fillStyle = "#1b1f24"; g.font = "bold 13px 'DejaVu Sans', sans-serif";
    g.textAlign = "center"; g.textBaseline = "middle";
    g.fillText("N", cx, cy - r - 12); g.fillText("S", cx, cy + r + 12);
    g.fillText("E", cx + r + 12, cy); g.fillText("W", cx - r - 12, cy);
    g.font = "11px 'DejaVu Sans', sans-serif"; g.textAlign = "left";
    for (const s of sats) {
      const rr = r * (90 - Math.max(0, Math.min(90, s.elevation))) / 90, a = s.azimuth * Math.PI / 180;
      const x = cx + rr * Math.sin(a), y = cy - rr * Math.cos(a), sys = system(s.constellation);
      marker(g, sys.shape, x, y, 6);
      g.lineWidth = 2; g.strokeStyle = sys.color; g.fillStyle = sys.color;
      if (s.used) g.fill(); else { g.fillStyle = "#fff"; g.fill(); }
      g.stroke();
      g.fillStyle = "#1b1f24"; g.fillText(text(s.id), x + 8, y - 6);
    }
    if (!sats.length) {
      g.fillStyle = "#57606a"; g.textAlign = "center";
      g.fillText("no satellites in view reported", cx, cy + r / 2);
    }
    g.textBaseline = "alphabetic";
    const used = sats.filter((s) => s.used).length;
    canvas.setAttribute("aria-label", "Sky plot: " + sats.length + " satellites, " + used + " used");
    drawLegend(sats);
    drawSnr(sky.filter((s) => s && num(s.snr)));
    drawSatTable(sky.filter((s) => s));
  }

  let legendKey = null;  // nothing drawn yet, not even the key for no satellites
  function drawLegend(sats) {
    const names = [...new Set(sats.map((s) => (SYSTEMS[s.constellation] ? s.constellation : "other")))].sort();
    if (names.join() === legendKey) return;
    legendKey = names.join();
    const list = $("legend");
    clear(list);
    const item = (shape, color, filled, label) => {
      const c = document.createElement("canvas");
      c.width = 16; c.height = 16; c.setAttribute("aria-hidden", "true");
      const g = c.getContext("2d");
      marker(g, shape, 8, 8, 5); g.lineWidth = 2; g.strokeStyle = color; g.fillStyle = filled ? color : "#fff";
      g.fill(); g.stroke();
      const li = el("li"); li.append(c, el("span", "", label)); list.append(li);
    };
    item("circle", "#1b1f24", true, "filled: used in the solution");
    item("circle", "#1b1f24", false, "hollow: tracked, not used");
    for (const n of names) item(SYSTEMS[n].shape, SYSTEMS[n].color, true, n === "other" ? "other systems" : n);
  }

  let hatch = null;
  function drawSnr(sats) {
    sats.sort((a, b) => String(a.constellation).localeCompare(String(b.constellation)) || (a.id - b.id));
    const canvas = $("snr");
    const barW = 22, left = 34;
    const { g, w, h } = context(canvas, Math.max(left + sats.length * barW + 10, canvas.parentElement.clientWidth));
    const top = 22, bottom = h - 34, max = 60;
    const y = (v) => bottom - (Math.min(v, max) / max) * (bottom - top);
    g.strokeStyle = "#d0d7de"; g.fillStyle = "#57606a"; g.lineWidth = 1; g.textAlign = "right"; g.textBaseline = "middle";
    for (const v of [0, 20, 40, 60]) {
      g.beginPath(); g.moveTo(left, y(v)); g.lineTo(w, y(v)); g.stroke(); g.fillText(String(v), left - 4, y(v));
    }
    if (!hatch) {  // diagonal stripes: the "not used" bars
      const tile = document.createElement("canvas"); tile.width = 6; tile.height = 6;
      const t = tile.getContext("2d"); t.strokeStyle = "#57606a"; t.lineWidth = 1.5;
      t.beginPath(); t.moveTo(0, 6); t.lineTo(6, 0); t.stroke();
      hatch = g.createPattern(tile, "repeat");
    }
    g.textAlign = "center"; g.textBaseline = "top";
    sats.forEach((s, i) => {
      const x = left + i * barW + 3, sys = system(s.constellation), bw = barW - 6;
      g.fillStyle = s.used ? sys.color : hatch;
      g.fillRect(x, y(s.snr), bw, bottom - y(s.snr));
      g.strokeStyle = sys.color; g.lineWidth = 1; g.strokeRect(x + 0.5, y(s.snr) + 0.5, bw - 1, bottom - y(s.snr) - 1);
      g.fillStyle = "#1b1f24"; g.fillText(text(s.id), x + bw / 2, bottom + 4);
      g.fillText(s.used ? "u" : "–", x + bw / 2, bottom + 18);
    });
    g.textAlign = "left"; g.fillStyle = "#57606a"; g.fillText("dB-Hz", 2, 0);
    if (!sats.length) g.fillText("no signal strengths reported", left + 8, (top + bottom) / 2);
    canvas.setAttribute("aria-label", "Signal strength bars, " + sats.length + " satellites; solid = used (u), striped = not used (–)");
  }

  function drawSatTable(sats) {
    const body = $("sat-rows");
    clear(body);
    for (const s of sats) {
      const tr = el("tr");
      for (const v of [text(s.id), text(s.constellation), fixed(s.elevation, 0), fixed(s.azimuth, 0), fixed(s.snr, 0), s.used ? "yes" : "no"])
        tr.append(el("td", "", v));
      body.append(tr);
    }
  }

  // --- services ------------------------------------------------------------------------------
  function drawCorrections(c) {
    $("corr-section").classList.toggle("hidden", !c);
    if (!c) return;
    set("c-state", text(c.state)); set("c-msg", text(c.message)); set("c-caster", text(c.caster));
    set("c-mount", text(c.mountPoint)); set("c-age", fixed(c.lastFrameAgeSeconds, 1, "s"));
    set("c-station", text(c.stationID)); set("c-gga", text(c.ggaSent)); set("c-frames", text(c.frames));
  }

  function drawFleet(f) {
    $("fleet-section").classList.toggle("hidden", !f);
    if (!f) return;
    set("m-state", text(f.state)); set("m-msg", text(f.message)); set("m-broker", text(f.broker)); set("m-pending", text(f.pending));
  }

  function drawReceivers(receivers) {
    const list = $("receivers");
    clear(list);
    if (!receivers.length) { list.append(el("li", "empty", "No receiver")); return; }
    for (const r of receivers) {
      const dl = el("dl", "values");
      pair(dl, "Path", text(r.path));
      pair(dl, "Vendor / model", [r.brand, r.model].filter(Boolean).join(" ") || "–");
      pair(dl, "Serial", text(r.serialNumber));
      pair(dl, "Role", r.served ? "served" : "standby");
      pair(dl, "Connected", r.connected === false ? "no" : r.connected ? "yes" : "–");
      pair(dl, "Silent", r.silent ? "yes, no data" : r.silent === false ? "no" : "–");
      const li = el("li"); li.append(dl); list.append(li);
    }
  }

  function drawClients(c) {
    const dl = $("clients");
    clear(dl);
    if (!c) { pair(dl, "Clients", "–"); return; }
    pair(dl, "LocationV1", text(c.locationV1));
    pair(dl, "LocationV2", text(c.locationV2));
    pair(dl, "Events", text(c.events));
    pair(dl, "Dashboards", text(c.dashboard));
    pair(dl, "Total", text(c.total));
    const by = c.bySocket && typeof c.bySocket === "object" ? c.bySocket : {};
    for (const name of Object.keys(by).sort()) pair(dl, "on " + name, text(by[name]));
  }

  function drawApps(apps) {
    const list = $("apps");
    clear(list);
    if (!apps.length) { list.append(el("li", "empty", "No registered app")); return; }
    for (const a of apps) {
      const li = el("li", "", text(a && a.name));
      if (a && a.registeredAt) li.append(el("span", "label", " registered " + text(a.registeredAt)));
      list.append(li);
    }
  }

  // A page left (another page, a closed tab, the back/forward cache) lets go of its socket at
  // once instead of leaving the daemon a reader that stopped reading; shown again, it reconnects.
  window.addEventListener("pagehide", () => {
    const ws = socket;
    socket = null;
    clearTimeout(retryTimer);
    if (ws) ws.close(1000, "page hidden");
  });
  window.addEventListener("pageshow", (event) => { if (event.persisted && !socket) connect(); });
  connect();
})();
