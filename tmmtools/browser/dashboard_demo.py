"""The operator dashboard page (Sources/Bridge/Dashboard/Assets) against a synthetic server.

Serves index.html, dashboard.css and dashboard.js with the daemon's Content-Security-Policy on
http://127.0.0.1:PORT/ and a /dashboard/socket WebSocket sending synthetic snapshots at 4 Hz
(a point moving on a 3 m circle, ~20 satellites, a fix history, corrections streaming).
Uses Debian's python3-websockets (run with /usr/bin/python3).

  python3 -m tmmtools.browser.dashboard_demo [--port 9637] [--token X]     serve until Ctrl-C
  python3 -m tmmtools.browser.dashboard_demo --check [--shots DIR]         headless chromium check

--token X: the socket wants {"type":"hello","token":"X"} first, and closes with 4401 otherwise.
--check: no console errors (CSP violations included), the position shown, the sky canvas drawn,
the token form working, screenshots at 1280x900 and 390x844 in DIR; exit status 1 on failure.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import http
import json
import math
import os
import sys
import threading
import time

import websockets
import websockets.server

from tmmtools.browser.dashboard_check import INKED, SIZES, severe_entries, show_at, start_chromium, wait

HERE = os.path.dirname(os.path.abspath(__file__))
ASSETS = os.path.normpath(os.path.join(HERE, "..", "..", "Sources", "Bridge", "Dashboard", "Assets"))
FILES = {"/": ("index.html", "text/html; charset=utf-8"),
         "/index.html": ("index.html", "text/html; charset=utf-8"),
         "/dashboard.css": ("dashboard.css", "text/css; charset=utf-8"),
         "/dashboard.js": ("dashboard.js", "text/javascript; charset=utf-8")}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
ORIGIN = (47.376887, 8.541694)   # the circle's centre
START = time.time()
HISTORY = [(-590, "noFix"), (-575, "autonomous"), (-540, "dgps"), (-480, "rtkFloat"), (-400, "rtkFixed"),
           (-190, "rtkFloat"), (-160, "rtkFixed")]
SYSTEMS = ["GPS"] * 7 + ["GLONASS"] * 4 + ["Galileo"] * 5 + ["BeiDou"] * 4 + ["QZSS"]


def point(t: float) -> tuple[float, float]:
    """The moving point at unix time t: a 3 m circle, one turn a minute, drifting 1 cm/s east."""
    angle = 2 * math.pi * t / 60
    east, north = 3 * math.cos(angle) + 0.01 * (t - START), 3 * math.sin(angle)
    lat = ORIGIN[0] + north / 111_195
    lon = ORIGIN[1] + east / (111_195 * math.cos(math.radians(ORIGIN[0])))
    return lat, lon


def snapshot(now: float, frames: int) -> dict:
    lat, lon = point(now)
    iso = lambda t: _dt.datetime.fromtimestamp(t, _dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    track = [[*point(t), int(t * 1000)] for t in range(int(now) - 600, int(now) + 1)]
    sky = []
    for i, system in enumerate(SYSTEMS):
        elevation = 5 + (i * 37 + now / 20) % 85
        used = elevation > 15
        sky.append({"id": [3, 7, 12, 17, 22, 25, 31, 2, 9, 15, 21, 4, 11, 19, 26, 33, 5, 14, 28, 36, 194][i],
                    "constellation": system, "elevation": round(elevation), "azimuth": round((i * 71 + now / 10) % 360),
                    "snr": round(22 + elevation / 3 + 3 * math.sin(now + i)), "used": used})
    return {
        "type": "snapshot", "time": iso(now), "version": "0.1.0-demo",
        "position": {"latitude": lat, "longitude": lon, "altitude": 512.3 + 0.02 * math.sin(now), "mslHeight": 463.1,
                     "undulation": 49.2, "hrms": 0.012, "vrms": 0.02, "solutionType": "RTK Fixed", "diffStatus": 4,
                     "diffAge": 1.2, "satellites": sum(s["used"] for s in sky), "utcTimeStamp": iso(now)},
        "track": track,
        "fixHistory": [[int((now + dt) * 1000), q] for dt, q in HISTORY],
        "sky": sky,
        "rate": {"epochRate": 10.0, "lastEpochAgeSeconds": 0.05},
        "corrections": {"state": "streaming", "message": "RTCM 3.3 from the caster", "caster": "caster.example:2101",
                        "mountPoint": "RTCM3", "lastFrameAgeSeconds": 0.4, "stationID": 2718,
                        "ggaSent": int(now - START) // 10, "frames": frames},
        "fleet": {"state": "connected", "message": "publishing", "broker": "mqtt://fleet@broker.example:1883", "pending": 0},
        "receivers": [{"path": "/dev/ttyACM0", "brand": "u-blox", "model": "ZED-F9P", "serialNumber": "A1B2C3D4E5",
                       "served": True, "silent": False, "connected": True},
                      {"path": "/dev/ttyUSB1", "brand": "Septentrio", "model": "mosaic-X5", "serialNumber": "3912345",
                       "served": False, "silent": True, "connected": True}],
        "clients": {"locationV1": 0, "locationV2": 2, "events": 1, "total": 4, "bySocket": {"apiPort": 1, "tlsPort": 3}},
        "apps": [{"name": "application …9abc", "registeredAt": "2026-12-01T07:58:48Z"}],
    }


async def serve(port: int, token: str | None, ready: threading.Event | None = None, holder: dict | None = None):
    async def http_files(path, headers):
        path = path.split("?", 1)[0]
        if path == "/dashboard/socket":
            return None  # the WebSocket handshake goes on
        if path not in FILES:
            return http.HTTPStatus.NOT_FOUND, [("Content-Type", "text/plain")], b"not found\n"
        name, kind = FILES[path]
        with open(os.path.join(ASSETS, name), "rb") as handle:
            body = handle.read()
        return http.HTTPStatus.OK, [("Content-Type", kind), ("Content-Security-Policy", CSP),
                                    ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")], body

    async def socket(ws, path=None):
        try:
            hello = json.loads(await asyncio.wait_for(ws.recv(), 5))
        except (asyncio.TimeoutError, ValueError, websockets.ConnectionClosed):
            hello = {}
        if token is not None and (not isinstance(hello, dict) or hello.get("type") != "hello" or hello.get("token") != token):
            await ws.close(4401, "token required")
            return
        frames = 0
        try:
            # First the sparse snapshots the page must survive: fields absent, then null or empty.
            await ws.send(json.dumps({"type": "snapshot", "unknownField": {"ignored": True}}))
            await asyncio.sleep(0.3)
            await ws.send(json.dumps({key: ([] if key in ("track", "fixHistory", "sky", "receivers", "apps") else None)
                                      for key in snapshot(time.time(), 0)} | {"type": "snapshot"}))
            await asyncio.sleep(0.3)
            while True:
                frames += 40
                await ws.send(json.dumps(snapshot(time.time(), frames)))
                await asyncio.sleep(0.25)
        except websockets.ConnectionClosed:
            pass

    async with websockets.server.serve(socket, "127.0.0.1", port, process_request=http_files) as server:
        if holder is not None:
            holder["port"] = server.sockets[0].getsockname()[1]
            holder["loop"] = asyncio.get_running_loop()
            holder["stop"] = stop = asyncio.get_running_loop().create_future()
        else:
            stop = asyncio.get_running_loop().create_future()
        if ready is not None:
            ready.set()
        await stop


def start_in_thread(token: str | None) -> dict:
    """Serves on a free port from a thread; returns {"port", "loop", "stop"}."""
    holder, ready = {}, threading.Event()
    threading.Thread(target=lambda: asyncio.run(serve(0, token, ready, holder)), daemon=True).start()
    if not ready.wait(10):
        raise RuntimeError("the demo server did not start")
    return holder


def stop_thread(holder: dict):
    """Stops the server; nothing when it has stopped already (its loop closed)."""
    if holder["loop"].is_closed():
        return
    try:
        holder["loop"].call_soon_threadsafe(lambda: holder["stop"].done() or holder["stop"].set_result(None))
    except RuntimeError:  # the loop closed in between
        pass


# --- the headless chromium check ----------------------------------------------------------------
# The Chromium driving is dashboard_check.py's (which checks the page against the real daemon).

def check(shots: str | None) -> int:
    import tempfile
    from selenium.webdriver.common.by import By

    failures = []

    def expect(condition, name, detail=""):
        print(f"   {'ok' if condition else 'FAIL'}: {name}" + ("" if condition else f" - {detail}"), flush=True)
        if not condition:
            failures.append(name)

    if shots:
        os.makedirs(shots, exist_ok=True)
    open_server, token_server = start_in_thread(None), start_in_thread("s3cret")
    with tempfile.TemporaryDirectory(prefix="dashboard-check-") as scratch:
        driver = start_chromium(scratch)
        try:
            driver.get(f"http://127.0.0.1:{open_server['port']}/")
            latitude = wait(lambda: (t := driver.find_element(By.ID, "p-lat").text) != "–" and t)
            expect(latitude and latitude.startswith("47.37"), "the position is shown", repr(latitude))
            expect(wait(lambda: driver.find_element(By.ID, "conn").text == "live"), "the connection says live")
            expect(wait(lambda: driver.find_element(By.ID, "fix-state").text == "RTK fixed"), "the fix state is shown")
            expect(wait(lambda: driver.execute_script(INKED, "sky") > 500), "the sky canvas is drawn",
                   driver.execute_script(INKED, "sky"))
            expect(driver.execute_script(INKED, "track") > 200, "the track canvas is drawn")
            expect(driver.execute_script(INKED, "snr") > 200, "the SNR canvas is drawn")
            expect(len(driver.find_elements(By.CSS_SELECTOR, "#timeline li")) >= 7, "the fix history has its segments")
            expect("application …9abc" in driver.find_element(By.ID, "apps").text, "the registered app is listed")
            expect(not driver.find_element(By.ID, "corr-section").get_attribute("class").count("hidden"),
                   "the corrections are shown")
            # At most 4 redraws a second: the updated time changes at most 4 times in 2 s of 4 Hz... plus one.
            redraws = driver.execute_async_script("""const done = arguments[arguments.length - 1];
                let n = 0; const o = new MutationObserver(() => n++);
                o.observe(document.getElementById('time'), {childList: true, characterData: true, subtree: true});
                setTimeout(() => { o.disconnect(); done(n); }, 2000);""")
            expect(2 <= redraws <= 9, "redraws at most 4 times a second", f"{redraws} in 2 s")
            for name, (width, height) in SIZES.items():
                expect(show_at(driver, width, height), f"redrawn at {width}x{height}")
                overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
                expect(overflow <= 0, f"no horizontal scrolling at {width} px", f"{overflow} px too wide")
                if shots:
                    driver.save_screenshot(os.path.join(shots, f"dashboard-{name}-{width}x{height}.png"))
                    full = driver.execute_script("return document.documentElement.scrollHeight")
                    show_at(driver, width, full)  # the whole page, for review
                    driver.save_screenshot(os.path.join(shots, f"dashboard-{name}-full.png"))
            show_at(driver, *SIZES["desktop"])
            # The token: the form appears on 4401, a wrong token is refused, the right one connects.
            driver.get(f"http://127.0.0.1:{token_server['port']}/")
            form = wait(lambda: driver.find_element(By.ID, "token-input").is_displayed())
            expect(form, "a 4401 shows the token form")
            expect("token required" in driver.find_element(By.ID, "conn").text, "the connection says token required")
            if shots:
                driver.save_screenshot(os.path.join(shots, "dashboard-token.png"))
            driver.find_element(By.ID, "token-input").send_keys("wrong\n")
            expect(wait(lambda: "refused" in driver.find_element(By.ID, "conn").text), "a wrong token is refused")
            driver.find_element(By.ID, "token-input").send_keys("s3cret\n")
            expect(wait(lambda: driver.find_element(By.ID, "p-lat").text.startswith("47.37")), "the right token connects")
            stored = driver.execute_script("return [sessionStorage.getItem('tmm-dashboard-token'), localStorage.length]")
            expect(stored == ["s3cret", 0], "the token is in sessionStorage only", stored)
            # The socket goes away: "disconnected" in text, then back.
            stop_thread(open_server)
            driver.get(f"http://127.0.0.1:{token_server['port']}/")  # the token is still in the session
            expect(wait(lambda: driver.find_element(By.ID, "conn").text == "live"), "the session's token reconnects")
            console = driver.get_log("browser")
            errors = severe_entries(console)
            expect(not errors, "no console errors (CSP violations included)", repr(errors[:5]))
            # The server goes away: "disconnected" in text (chromium logs the failed reconnects: not checked).
            stop_thread(token_server)
            expect(wait(lambda: "disconnected" in driver.find_element(By.ID, "conn").text),
                   "a closed socket shows disconnected", driver.find_element(By.ID, "conn").text)
        finally:
            driver.quit()
            stop_thread(token_server)
    print("FAILED: " + ", ".join(failures) if failures else "all checks passed", flush=True)
    if shots:
        print(os.path.abspath(shots))
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=9637)
    parser.add_argument("--token", help="require this token in the hello (close 4401 otherwise)")
    parser.add_argument("--check", action="store_true", help="check the page in headless chromium, then exit")
    parser.add_argument("--shots", help="--check: write the screenshots to this directory")
    args = parser.parse_args()
    if args.check:
        return check(args.shots)
    print(f"dashboard demo on http://127.0.0.1:{args.port}/" + (" (token required)" if args.token else ""), flush=True)
    try:
        asyncio.run(serve(args.port, args.token))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
