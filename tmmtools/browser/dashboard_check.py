"""The operator dashboard (GET / on apiPort) in headless chromium against the real daemon.

hwtest's `dashboard` scenario (tmmtools/hwtest.py), also on its own:

  python3 -m tmmtools.browser.dashboard_check [--report DIR] [--bridge PATH] [--no-docs-images]

Starts `tmm-bridge run --replay Tests/Fixtures/nmea/ublox-zed-f9p-nmea.log --no-discovery
--registration open` (a ZED-F9P's NMEA with GPS, GLONASS, Galileo and BeiDou in view, through its
own gpsd: the demo's RTK capture has no GSV, so its sky would be empty) on free ports of 127.0.0.1 (browser_test.Bridge), registers one application with
`tmm-bridge open tmmregister://?...`, then checks, each a verify.Check: no console error (CSP
violations included); the position and fix shown match `tmm-bridge status --json`; the page
changes live; the sky and SNR canvases drawn; no application id disclosed, in the page nor in
any snapshot on /dashboard/socket, the masked name shown; Tab reaches the page's scrollers; the
Content-Security-Policy on `/`; screenshots at 1280x900 and 390x844 (report directory, and
docs/images/ unless --no-docs-images). Beside the browser, without one: a hello over the
WebSocket message limit is closed with 1009 (one frame, and fragmented), a first message that is
no hello with 4401, a page that never says hello with 1008 after the daemon's 10 s (run in a
thread from the start, so it costs no time of its own). tmmtools/browser/README.md says more.

Also the home of the dashboard's Chromium driving (start_chromium, wait, INKED, show_at, ...),
which dashboard_demo.py's --check uses against its synthetic server. Debian's chromium,
chromium-driver, python3-selenium and python3-websockets; run with /usr/bin/python3.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime as _dt
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid

from tmmtools import checkout, polling
from tmmtools.harness import verify

# A receiver with satellites in view of four constellations (the screenshots' sky plot).
CAPTURE = checkout.path("Tests", "Fixtures", "nmea", "ublox-zed-f9p-nmea.log")

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SIZES = {"desktop": (1280, 900), "phone": (390, 844)}
DOCS_IMAGES = checkout.path("docs", "images")
# dashboard.js's names of the fix qualities (status --json's `fix.quality`, the snapshot's fixHistory).
QUALITY_TEXT = {"noFix": "No fix", "autonomous": "Autonomous", "dgps": "DGPS", "rtkFloat": "RTK float",
                "rtkFixed": "RTK fixed"}
# The same qualities by verify.SOLUTION_TYPE's names (LocationV2's solutionType).
VERIFY_QUALITY = {"noFix": "none", "autonomous": "autonomous", "dgps": "dgps", "rtkFloat": "float", "rtkFixed": "fixed"}
# The daemon's WebSocket message limit (ws-max-message, default 64K) and its hello timeout.
MESSAGE_LIMIT = 64 * 1024
HELLO_DEADLINE = 15.0


def check(name: str, passed, detail: str = "") -> verify.Check:
    """A verify.Check whose detail (the evidence of a failure) is kept only when it failed."""
    return verify.Check(name, bool(passed), "" if passed else str(detail)[:2000])


# --- chromium, for this check and dashboard_demo.py's ---------------------------------------------

def start_chromium(scratch: str, log_path: str | None = None):
    """Headless chromium at 1280x900 with its console log kept (driver.get_log("browser")); every
    host name but localhost and 127.0.0.1 fails to resolve, so nothing leaves the machine.
    --no-sandbox: chromium refuses its sandbox as root; it renders only the local dashboard."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,900", "--force-device-scale-factor=1", f"--user-data-dir={scratch}/profile",
                     "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
                     "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                     "--disable-background-networking", "--disable-component-update", "--disable-default-apps"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(CHROMEDRIVER, log_path=log_path or os.path.join(scratch, "chromedriver.log"),
                      env=dict(os.environ, HOME=scratch))
    return webdriver.Chrome(service=service, options=options)


def wait(condition, seconds: float = 10.0):
    """condition()'s first truthy value within `seconds`, else a falsy one (polling.wait_until); an
    exception counts as not yet (the page is still loading)."""
    def attempt():
        try:
            return condition()
        except Exception:  # noqa: BLE001 - the page is still loading
            return None
    return polling.wait_until(attempt, seconds, interval=0.1)


# Non-white pixels of a canvas (its own getImageData: the page's origin, so not tainted).
INKED = """const c = document.getElementById(arguments[0]); if (!c || !c.width) return 0;
const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) n++;
return n;"""

# The canvases sized to their boxes again (the page redraws on resize), then two frames painted.
REDRAWN = """const done = arguments[arguments.length - 1], ratio = window.devicePixelRatio || 1;
const fits = (c) => !c || c.width === Math.max(1, Math.round(Math.round(c.clientWidth) * ratio));
if (window.innerWidth !== arguments[0] || !['sky', 'track'].every((id) => fits(document.getElementById(id)))) done(false);
else requestAnimationFrame(() => requestAnimationFrame(() => done(true)));"""


def show_at(driver, width: int, height: int, seconds: float = 5.0) -> bool:
    """The viewport (not the window: headless chromium's window is taller than its page) resized
    to width x height, and the page redrawn at that width (no fixed sleep)."""
    driver.set_window_size(width, height)
    inner = wait(lambda: driver.execute_script("return [window.innerWidth, window.innerHeight]"), seconds)
    if inner and tuple(inner) != (width, height):
        driver.set_window_size(2 * width - inner[0], 2 * height - inner[1])
    return bool(wait(lambda: driver.execute_async_script(REDRAWN, width), seconds))


def png_size(path: str) -> tuple[int, int]:
    with open(path, "rb") as handle:
        header = handle.read(24)
    return struct.unpack(">II", header[16:24])


def severe_entries(console: list[dict]) -> list[dict]:
    """The console's errors: chromium's SEVERE entries (CSP violations, failed loads, exceptions)."""
    return [entry for entry in console if entry.get("level") == "SEVERE"]


# --- the daemon's side, without a browser ----------------------------------------------------------

async def _close_of(ws, seconds: float):
    """(close code, reason, seconds waited) of a socket the server closes; (None, why, s) if not."""
    started = time.monotonic()
    import websockets
    try:
        while True:
            await asyncio.wait_for(ws.recv(), max(0.01, seconds - (time.monotonic() - started)))
    except websockets.ConnectionClosed:
        return ws.close_code, ws.close_reason, time.monotonic() - started
    except asyncio.TimeoutError:
        return None, "still open", time.monotonic() - started


class SocketProbe:
    """In a thread of its own: a page-like client recording every snapshot (raw text), and the
    hostile clients. `results` by name: (close code, reason, seconds)."""

    def __init__(self, url: str):
        self.url = url
        self.messages: list[str] = []
        self.results: dict[str, tuple] = {}
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self.thread.start()

    def join(self, seconds: float) -> bool:
        self.stop.set()
        self.thread.join(seconds)
        return not self.thread.is_alive()

    async def _main(self):
        await asyncio.gather(self._record(), self._silent(), self._hostile(), return_exceptions=False)

    async def _guard(self, name: str, body):
        try:
            self.results[name] = await body()
        except Exception as error:  # noqa: BLE001 - reported as the check's detail
            self.results[name] = (None, f"{type(error).__name__}: {error}", 0.0)

    async def _record(self):
        import websockets

        async def body():
            async with websockets.connect(self.url, max_size=None, open_timeout=10) as ws:
                await ws.send(json.dumps({"type": "hello", "token": None}))
                while not self.stop.is_set():
                    try:
                        self.messages.append(await asyncio.wait_for(ws.recv(), 0.5))
                    except asyncio.TimeoutError:
                        pass
            return (1000, "recorded", 0.0)
        await self._guard("record", body)

    async def _silent(self):
        import websockets

        async def body():
            # No ping from us either: the daemon must close it for the missing hello alone.
            async with websockets.connect(self.url, max_size=None, ping_interval=None, open_timeout=10) as ws:
                return await _close_of(ws, HELLO_DEADLINE)
        await self._guard("silent", body)

    async def _hostile(self):
        import websockets
        big = json.dumps({"type": "hello", "token": "x" * (MESSAGE_LIMIT + 4096)})
        cases = {
            "one big frame": lambda ws: ws.send(big),
            "fragmented": lambda ws: ws.send([big[:40000], big[40000:]]),  # each frame under the limit
            "not a hello": lambda ws: ws.send(json.dumps({"type": "subscribe", "token": None})),
            "binary hello": lambda ws: ws.send(json.dumps({"type": "hello", "token": None}).encode()),
        }
        for name, send in cases.items():
            async def body(send=send):
                async with websockets.connect(self.url, max_size=None, open_timeout=10) as ws:
                    await send(ws)
                    return await _close_of(ws, 5)
            await self._guard(name, body)


def hostile_checks(probe: SocketProbe) -> list[verify.Check]:
    def shown(name):
        code, reason, seconds = probe.results.get(name, (None, "no result", 0.0))
        return code, f"close {code} {reason!r} after {seconds:.2f} s"
    checks = []
    for name, expected, what in (
            ("one big frame", 1009, f"a hello of {MESSAGE_LIMIT + 4096 + 30} bytes in one frame (over the 64 KiB message limit)"),
            ("fragmented", 1009, "the same hello in two frames of under 64 KiB each"),
            ("not a hello", 4401, "a first message that is no hello"),
            ("binary hello", 4401, "a hello in a binary message")):
        code, detail = shown(name)
        checks.append(check(f"/dashboard/socket: {what} is closed with {expected}", code == expected, detail))
    code, reason, seconds = probe.results.get("silent", (None, "no result", 0.0))
    checks.append(check(f"/dashboard/socket: a page that never says hello is closed with 1008 after ~10 s "
                        f"({seconds:.1f} s, run beside the browser checks)",
                        code == 1008 and 9.5 <= seconds <= HELLO_DEADLINE,
                        f"close {code} {reason!r} after {seconds:.2f} s"))
    return checks


# --- the page against the daemon -------------------------------------------------------------------

class StatusPoller:
    """`tmm-bridge status --json`'s fix every ~35 ms in a thread (each run takes ~10 ms): [(monotonic, fix)]."""

    def __init__(self, binary: str, runtime_dir: str):
        self.command = [binary, "status", "--json", "--runtime-dir", runtime_dir]
        self.samples: list[tuple[float, dict]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            done = subprocess.run(self.command, capture_output=True, text=True, timeout=10)
            if done.returncode == 0:
                self.samples.append((time.monotonic(), json.loads(done.stdout).get("fix") or {}))
            self.stop.wait(0.025)

    def close(self):
        self.stop.set()
        self.thread.join(10)


SHOWN = """const t = (id) => document.getElementById(id).textContent;
return {lat: t('p-lat'), lon: t('p-lon'), fix: t('fix-state'), sol: t('f-sol'), time: t('time'), utc: t('p-utc'),
        conn: t('conn')};"""


def degrees_shown(text: str) -> tuple[float, int] | None:
    """"41.574979296° N" -> (41.574979296, 9 decimals); "93.75° W" -> (-93.75, 2). The hemisphere
    letter gives the sign; a minus sign besides (hemisphere_check) is not read."""
    match = re.fullmatch(r"-?(\d+)\.(\d+)° ([NSEW])", text or "")
    if not match:
        return None
    value = float(f"{match[1]}.{match[2]}")
    return (-value if match[3] in "SW" else value), len(match[2])


def hemisphere_check(page: list[tuple[float, dict]]) -> verify.Check:
    """A hemisphere letter and no minus sign: "93.75° W", never "-93.75° W" (which says east)."""
    signed = sorted({s[key] for _, s in page for key in ("lat", "lon") if s[key].startswith("-")})
    return check("latitude and longitude are shown unsigned with their hemisphere (N/S, E/W)", not signed,
                 f"shown with a minus sign and a hemisphere: {signed[:2]} (dashboard.js degrees(): "
                 "Math.abs(v).toFixed(9))")


def matches_status(shown: dict, fix: dict) -> bool:
    """The shown position is this status fix's, within the shown rounding, with its fix names."""
    for key, name in (("lat", "latitude"), ("lon", "longitude")):
        parsed, value = degrees_shown(shown[key]), fix.get(name)
        if parsed is None or not isinstance(value, (int, float)):
            return False
        if abs(parsed[0] - value) > 0.5 * 10 ** -parsed[1] + 1e-12:
            return False
    quality = fix.get("quality")
    return (shown["fix"] == QUALITY_TEXT.get(quality, quality)
            and shown["sol"] == (verify.SOLUTION_TYPE.get(VERIFY_QUALITY.get(quality)) or "–"))


def sample_page(driver, samples: int = 6, seconds: float = 4.0) -> list[tuple[float, dict]]:
    """What the page shows, `samples` times, each after the page changed (its Updated time)."""
    taken = []
    for _ in range(samples):
        previous = taken[-1][1]["time"] if taken else None
        shown = wait(lambda: (s := driver.execute_script(SHOWN))["time"] != previous and s, seconds)
        if not shown:
            break
        taken.append((time.monotonic(), shown))
    return taken


def position_checks(page: list[tuple[float, dict]], poller: StatusPoller) -> tuple[list[verify.Check], list[str]]:
    """Each page sample against the status fixes polled from 2 s before it to 0.3 s after (the page
    shows a snapshot of up to a quarter second ago, the demo's epochs come at 10 Hz)."""
    matched, misses = 0, []
    for at, shown in page:
        window = [fix for t, fix in poller.samples if at - 2.0 <= t <= at + 0.3]
        if any(matches_status(shown, fix) for fix in window):
            matched += 1
        else:
            nearest = min(window, key=lambda fix: abs((fix.get("latitude") or 0) - (degrees_shown(shown["lat"]) or (0,))[0]),
                          default=None)
            misses.append(f"shown {shown['lat']} {shown['lon']} {shown['fix']!r}/{shown['sol']!r}; nearest status fix "
                          f"{nearest and (nearest.get('latitude'), nearest.get('longitude'), nearest.get('quality'))} "
                          f"of {len(window)} polled")
    last = page[-1][1] if page else {}
    qualities = sorted({s["fix"] for _, s in page})
    # One miss is allowed: a status poll can come late on a busy 2-core bench and skip an epoch.
    checks = [check(
        f"the shown position and fix are the daemon's (status --json): {matched} of {len(page)} samples match "
        f"within the shown rounding ({last.get('lat')}, {last.get('lon')}; fix {', '.join(qualities)})",
        len(page) >= 5 and matched >= len(page) - 1, "; ".join(misses[:3]) or f"{len(page)} samples")]
    times, utcs = {s["time"] for _, s in page}, {s["utc"] for _, s in page}
    checks.append(check(
        f"the page changes live: {len(times)} Updated times and {len(utcs)} receiver times in "
        f"{(page[-1][0] - page[0][0]) if len(page) > 1 else 0:.1f} s, connection '{last.get('conn')}'",
        len(times) >= 3 and len(utcs) >= 3 and last.get("conn") == "live",
        f"{len(page)} samples: {sorted(times)[:3]} / {sorted(utcs)[:3]}"))
    return checks, misses


TAB_STOPS = """const e = document.activeElement;
return e === document.body || !e ? 'body' :
  (e.id || e.className || e.tagName.toLowerCase()) + '|' + getComputedStyle(e).outlineStyle;"""


def keyboard_check(driver) -> verify.Check:
    """Tab from the top of the page: the SNR scroller and the satellite table's summary take the
    focus, with a visible outline (:focus-visible)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
    stops = []
    for _ in range(8):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        stops.append(driver.execute_script(TAB_STOPS))
    reached = {stop.split("|")[0]: stop.split("|")[-1] for stop in stops if stop != "body"}
    wanted = ("snr-scroll", "summary")
    return check(f"keyboard: Tab reaches the SNR scroller and the satellite table's summary, outlined "
                 f"({' → '.join(s.split('|')[0] for s in stops[:4])})",
                 all(reached.get(name, "none") != "none" for name in wanted), repr(stops))


def csp_check(api: str) -> tuple[verify.Check, list[str]]:
    """`/`'s Content-Security-Policy: no inline code, nothing but the page's own origin."""
    from tmmtools.browser.dashboard_demo import CSP as DEMO_CSP
    with urllib.request.urlopen(api + "/", timeout=10) as response:
        policy = response.headers.get("Content-Security-Policy") or ""
        status = response.status
    directives = {d.strip().split(" ", 1)[0]: d.strip() for d in policy.split(";") if d.strip()}
    strict = (directives.get("default-src") == "default-src 'none'" and "script-src" in directives
              and "unsafe" not in policy and "*" not in policy and "connect-src 'self'" in directives.values()
              and "frame-ancestors 'none'" in directives.values())
    notes = [] if policy == DEMO_CSP else [f"the daemon's CSP differs from dashboard_demo.py's copy: {policy!r}"]
    return check(f"GET / ({status}) carries a strict Content-Security-Policy (default-src 'none', no unsafe-*, "
                 "connect-src 'self', frame-ancestors 'none')", status == 200 and strict, repr(policy)), notes


def disclosure_checks(driver, api: str, application_id: str, messages: list[str]) -> list[verify.Check]:
    """The registered id nowhere (any case, with or without hyphens, nor its first group), the
    masked name `application …abcd` listed."""
    with urllib.request.urlopen(api + "/", timeout=10) as response:
        served = response.read().decode("utf-8", "replace")
    page = driver.page_source + "\n" + driver.execute_script("return document.body.innerText")
    forms = {application_id.lower(), application_id.lower().replace("-", ""), application_id.split("-")[0].lower()}

    def leaks(text):
        lowered = text.lower()
        return sorted(form for form in forms if form in lowered)
    in_page, in_socket = leaks(page + served), [i for i, m in enumerate(messages) if leaks(m)]
    masked = "application …" + application_id[-4:].lower()
    apps_text = driver.execute_script("return document.getElementById('apps').textContent")
    listed = [json.loads(m).get("apps") for m in messages[-1:]]
    return [
        check("no application id in the page (DOM, text and the served HTML)", not in_page, repr(in_page)),
        check(f"no application id in any of {len(messages)} snapshots on /dashboard/socket",
              messages and not in_socket, f"in messages {in_socket[:5]}" if in_socket else "no snapshot recorded"),
        check(f"the registered app is listed masked ('{masked}')", masked in apps_text.lower(),
              f"#apps {apps_text!r}, snapshot apps {listed}"),
    ]


def canvas_checks(driver, messages: list[str]) -> tuple[list[verify.Check], list[str]]:
    """The sky plot has ink; the SNR chart has one bar per satellite with an SNR in the snapshot."""
    sky = json.loads(messages[-1]).get("sky") or [] if messages else []
    with_snr = [s for s in sky if isinstance(s.get("snr"), (int, float))]
    inked = wait(lambda: (n := driver.execute_script(INKED, "sky")) > 500 and n, 5) or driver.execute_script(INKED, "sky")
    snr_ink = driver.execute_script(INKED, "snr")
    label = driver.execute_script("return document.getElementById('snr').getAttribute('aria-label') || ''")
    bars = int(m[1]) if (m := re.search(r"(\d+) satellites", label)) else -1
    checks = [check(f"the sky plot is drawn ({inked} non-white pixels)", inked > 500, f"{inked} pixels"),
              check(f"the SNR chart is drawn with one bar per satellite of the snapshot ({bars} bars, {snr_ink} "
                    "non-white pixels)", snr_ink > 100 and bars == len(with_snr), f"label {label!r}, "
                    f"{len(with_snr)} satellites with an SNR in the last snapshot")]
    notes = [] if with_snr else ["the last snapshot's sky is empty: the sky plot shows its rings only and the SNR "
                                 "chart no bar"]
    return checks, notes


def screenshot_checks(driver, report_dir: str, docs_images: bool) -> list[verify.Check]:
    checks = []
    for width, height in SIZES.values():
        # From the top, nothing focused (keyboard_check leaves the focus further down).
        driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
        ready = show_at(driver, width, height)
        name = f"dashboard-{width}x{height}.png"
        path = os.path.join(report_dir, name)
        driver.save_screenshot(path)
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        size = png_size(path)
        checks.append(check(f"screenshot {name}: {size[0]}x{size[1]}, redrawn at that width, no horizontal scroll",
                            ready and size == (width, height) and overflow <= 0,
                            f"redrawn {ready}, size {size}, {overflow} px too wide"))
        if docs_images:
            os.makedirs(DOCS_IMAGES, exist_ok=True)
            shutil.copyfile(path, os.path.join(DOCS_IMAGES, name))
    show_at(driver, *SIZES["desktop"])
    return checks


@dataclasses.dataclass
class Session:
    """What a run started so far; `stop` ends just that."""
    bridge: object = None
    driver: object = None
    poller: StatusPoller | None = None
    probe: SocketProbe | None = None

    def stop(self):
        if self.poller:
            self.poller.close()
        if self.probe:
            self.probe.join(HELLO_DEADLINE + 5)
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception as error:  # noqa: BLE001 - a crashed chromium: the checks say what failed
                print(f"dashboard-check: chromedriver quit: {error}", file=sys.stderr)
        if self.bridge is not None:
            self.bridge.stop()


def run(report_dir: str, bridge: str | None = None, docs_images: bool = True) -> dict:
    """One run; writes report_dir/report.json and returns the same dict: {"passed", "checks":
    [{"name", "passed", "detail", "skipped"}], "notes", "seconds"}."""
    from tmmtools.browser import browser_test
    from tmmtools.harness.bench import bridge_binary

    os.makedirs(report_dir, exist_ok=True)
    started = time.monotonic()
    checks: list[verify.Check] = []
    notes: list[str] = []
    scratch = tempfile.mkdtemp(prefix="tmm-dashboard-")
    os.chmod(scratch, 0o755)  # the bridge drops to nobody before it writes its state here
    session = Session()
    try:
        missing = browser_test.missing_tools()
        if missing:
            checks.append(check("the browser packages are installed", False,
                                f"missing {' '.join(missing)}; {browser_test.INSTALL_HINT}"))
        else:
            run_checks(session, checks, notes, report_dir, scratch, bridge or bridge_binary(), docs_images)
    except Exception as error:  # noqa: BLE001 - BenchError, selenium's: a failed check with the reason, not a traceback
        checks.append(check("the bench ran", False, f"{type(error).__name__}: {error}"))
    finally:
        session.stop()
        if session.probe is not None:
            checks += hostile_checks(session.probe)
        shutil.rmtree(scratch, ignore_errors=True)
    result = {"passed": bool(checks) and all(c.passed for c in checks), "notes": notes,
              "checks": [dataclasses.asdict(c) for c in checks], "seconds": round(time.monotonic() - started, 1)}
    with open(os.path.join(report_dir, "report.json"), "w") as handle:
        json.dump(result, handle, indent=1)
    return result


def run_checks(session: Session, checks: list, notes: list, report_dir: str, scratch: str, binary: str,
               docs_images: bool):
    from tmmtools.browser import browser_test
    from tmmtools.client import tmmclient

    session.bridge = bridge = browser_test.Bridge(binary, scratch, None, os.path.join(report_dir, "bridge.log"),
                                                  source=("--replay", CAPTURE))
    context = dict(bridge.context(), bridge=binary)
    api = f"http://127.0.0.1:{bridge.ports['apiPort']}"
    # One application, as the iOS sample registers (any GUID: the open policy).
    application_id = str(uuid.uuid4())
    returl = "tmmhwtest://response/register"
    registered = tmmclient.tmm_open(context, tmmclient.ios_register_url(tmmclient.ios_register_json(application_id, returl)))
    reply = tmmclient.decode_ios_reply(registered.reply, returl) if registered.status == 0 else {}
    checks.append(check("one application registered (tmm-bridge open tmmregister://?..., registrationResult OK)",
                        reply.get("registrationResult") == "OK", f"{registered!r}: {reply}"))
    session.probe = SocketProbe(f"ws://127.0.0.1:{bridge.ports['apiPort']}/dashboard/socket")
    session.poller = poller = StatusPoller(binary, bridge.runtime_dir)
    session.driver = driver = start_chromium(scratch, os.path.join(report_dir, "chromedriver.log"))
    driver.set_page_load_timeout(30)
    driver.get(api + "/")
    live = wait(lambda: (shown := driver.execute_script(SHOWN))["conn"] == "live" and degrees_shown(shown["lat"]), 15)
    loaded = len(checks)
    checks.append(check(f"the page loads and goes live (Chromium {driver.capabilities.get('browserVersion', '?')})",
                        bool(live), repr(driver.execute_script(SHOWN))))
    page = sample_page(driver)
    poller.close()
    more, misses = position_checks(page, poller)
    checks += more
    with open(os.path.join(report_dir, "positions.json"), "w") as handle:  # what the position check compared
        json.dump({"page": page, "status": poller.samples, "misses": misses}, handle, indent=1)
    checks.append(hemisphere_check(page))
    messages = session.probe.messages
    more, more_notes = canvas_checks(driver, messages)
    checks += more
    notes += more_notes
    checks.append(keyboard_check(driver))
    checks += disclosure_checks(driver, api, application_id, list(session.probe.messages))
    csp, more_notes = csp_check(api)
    checks.append(csp)
    notes += more_notes
    checks += screenshot_checks(driver, report_dir, docs_images)
    console = driver.get_log("browser")
    with open(os.path.join(report_dir, "console.json"), "w") as handle:
        json.dump(console, handle, indent=1)
    errors = severe_entries(console)
    checks.insert(loaded + 1, check(f"no console errors, CSP violations included ({len(console)} console entries)",
                                    not errors, repr(errors[:5])))
    if messages:
        with open(os.path.join(report_dir, "snapshot.json"), "w") as handle:
            json.dump(json.loads(messages[-1]), handle, indent=1)


def main() -> int:
    from tmmtools.harness.bench import HWTESTS

    parser = argparse.ArgumentParser(prog="dashboard_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--report", help="report directory (default hwtests/reports/dashboard-<UTC timestamp>)")
    parser.add_argument("--bridge", help="the tmm-bridge binary (default: as tmmtools/harness/bench.py finds it)")
    parser.add_argument("--no-docs-images", action="store_true", help="do not copy the screenshots to docs/images/")
    args = parser.parse_args()
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    report_dir = os.path.abspath(args.report or os.path.join(HWTESTS, "reports", f"dashboard-{stamp}"))
    result = run(report_dir, args.bridge, not args.no_docs_images)
    for item in result["checks"]:
        print(f"   {'ok' if item['passed'] else 'FAIL'}: {item['name']}"
              + ("" if item["passed"] else f" — {item['detail'][:500]}"))
    for note in result["notes"]:
        print(f"   note: {note}")
    failed = [c for c in result["checks"] if not c["passed"]]
    print(f"dashboard-check: {'PASSED' if result['passed'] else 'FAILED'} "
          f"({len(result['checks']) - len(failed)} of {len(result['checks'])} checks passed, {result['seconds']} s)")
    print(report_dir)
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
