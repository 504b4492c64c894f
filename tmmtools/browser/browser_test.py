"""make browser-test: a real browser (Debian's chromium, headless) as a TMM web client.

Starts `tmm-bridge run --demo` (the built-in RTK capture replayed through gpsd) on free ports,
serves tmmtools/browser/ (index.html, tmm.js) from its own origin (http://localhost:<port>, cross-origin to the bridge,
like the web sample's Vite server on 5173), and drives chromium with Selenium and chromedriver:
the page makes an Access Code V2 with WebCrypto, registers through REST (CORS preflights
included) and reads LocationV2 over ws:// and wss://. Then it checks what the browser saw and
the screenshot. tmmtools/browser/README.md says what each check means.

  python3 -m tmmtools.browser.browser_test [--report DIR] [--bridge PATH] [--positions N] [--bridge-arg ARG]...
  python3 -m tmmtools.browser.browser_test --check-tools    exit 0 when the browser packages are installed

Writes DIR/report.json ({"passed", "checks": [{"name", "passed", "detail", "skipped"}],
"screenshot"}), DIR/screenshot.png and the logs; prints DIR as its last line. Exit status 0 only
when every check passed. `run(report_dir)` does the same for tmmtools/hwtest.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import functools
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

from tmmtools import checkout, polling
from tmmtools.client import tmmclient  # capture_epochs, position_problems, TMM_HOST, ...
from tmmtools.harness import verify  # Check, and the solutionType names
from tmmtools.harness.bench import HWTESTS, PORT_OPTIONS, BenchError, bridge_binary, stop_process, wait_for

# The page (index.html, tmm.js) is served from this folder.
HERE = os.path.dirname(os.path.abspath(__file__))

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CERTUTIL = "/usr/bin/certutil"
# The page's monospace font (index.html): without it the values could render in no font at all.
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
CAPTURE = checkout.path("Tests", "Fixtures", "nmea", "nmea-rtk.log")
INSTALL_HINT = "install them with: sudo scripts/install-deps.sh --browser"
# GGA quality of the capture's epochs -> the names tmmtools/harness/verify.py maps to solutionType.
QUALITY_NAMES = {1: "autonomous", 2: "dgps", 4: "fixed", 5: "float"}
WINDOW = (1280, 720)


class Checks:
    """verify.Check results in order; `check` records and returns the condition."""

    def __init__(self):
        self.items: list[verify.Check] = []

    def check(self, condition, name: str, detail: str = "") -> bool:
        self.items.append(verify.Check(name, bool(condition), "" if condition else str(detail)[:2000]))
        print(f"   {'ok' if condition else 'FAIL'}: {name}" + ("" if condition else f" — {str(detail)[:500]}"), flush=True)
        return bool(condition)


def missing_tools() -> list[str]:
    """What this test needs and the machine lacks (Debian package names)."""
    missing = []
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver"), (CERTUTIL, "libnss3-tools")):
        if not os.access(path, os.X_OK):
            missing.append(package)
    if not os.path.exists(FONT):
        missing.append("fonts-dejavu-core")
    for module, package in (("selenium", "python3-selenium"), ("PIL", "python3-pil")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    return missing


# --- the bridge ----------------------------------------------------------------------------------

class Bridge:
    """`tmm-bridge run --demo` on free ports with a fresh state directory (so a new local CA) and
    the allowlist policy with one application id; V2 starts locked. `application_id` None: the
    open policy instead (any GUID registers; tmmtools/browser/dashboard_check.py). `source`: the
    receiver, `--demo` or `--replay FILE`."""

    def __init__(self, binary: str, scratch: str, application_id: str | None, log_path: str, extra=(),
                 source=("--demo",)):
        self.state_dir = os.path.join(scratch, "state")
        self.runtime_dir = os.path.join(scratch, "run")
        self.log_path = log_path
        keys = list(PORT_OPTIONS)
        chosen = tmmclient.free_ports(len(keys) + 1)
        policy = ["allowlist", "--allow-app-id", application_id] if application_id else ["open"]
        arguments = [binary, "run", *source, "--no-discovery", "--registration", *policy,
                     "--state-dir", self.state_dir,
                     "--runtime-dir", self.runtime_dir, "--listen", "127.0.0.1",
                     # Fallbacks from a port of our own, never TMM's 9650 (another bridge's).
                     "--fallback-port-start", str(chosen[-1])]
        for key, port in zip(keys, chosen):
            arguments += [f"--{PORT_OPTIONS[key]}", str(port)]
        arguments += list(extra)
        with open(log_path, "ab") as log:
            self.process = subprocess.Popen(arguments, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        self.ports = self._wait_ready()

    def log(self) -> str:
        with open(self.log_path, errors="replace") as handle:
            return handle.read()

    def _wait_ready(self) -> dict:
        def ready():
            if self.process.poll() is not None:
                raise BenchError(f"tmm-bridge exited with {self.process.returncode}:\n{self.log()[-3000:]}")
            return "tmm-bridge: ready\n" in self.log()
        wait_for(ready, 60, what="tmm-bridge to print 'ready'")
        # "tmm-bridge: ports: locationPort=N ...": the ports it took (after any fallback).
        line = next(line for line in self.log().splitlines() if line.startswith("tmm-bridge: ports: "))
        ports = dict(pair.split("=") for pair in line[len("tmm-bridge: ports: "):].split())
        return {key: int(ports[key]) for key in PORT_OPTIONS}

    def context(self) -> dict:
        """What tmmtools/client/tmmclient.py's helpers take."""
        return {"stateDir": self.state_dir, "runtimeDir": self.runtime_dir, "host": "127.0.0.1", "ports": self.ports}

    def stop(self):
        stop_process(self.process, 20)


# --- the page's own origin -----------------------------------------------------------------------

class PageServer:
    """tmmtools/browser/ over http on 127.0.0.1:<free port>, in a thread; remembers each request."""

    def __init__(self):
        self.requests: list[str] = []
        requests = self.requests

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002  (the base class's name)
                requests.append(format % args)

            def end_headers(self):
                # Always the files on disk: a cached tmm.js from an older checkout would test it.
                self.send_header("Cache-Control", "no-store")
                super().end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=HERE))
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


# --- chromium --------------------------------------------------------------------------------------

def trust_ca(home: str, ca_pem: str):
    """The bridge's local CA in a fresh NSS database under `home`, trusted for servers only
    ("C,,"): what docs/tls.md tells a user to do for Chromium, in a throw-away HOME so the
    machine's own store is untouched. Chromium then verifies the chain and the host name itself."""
    database = os.path.join(home, ".pki", "nssdb")
    os.makedirs(database, mode=0o700)
    for command in (["-N", "--empty-password"], ["-A", "-t", "C,,", "-n", "tmm-bridge local CA", "-i", ca_pem]):
        done = subprocess.run([CERTUTIL, "-d", "sql:" + database, *command], capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise BenchError(f"certutil {' '.join(command)}: {done.stdout}{done.stderr}")


def start_chromium(scratch: str, log_path: str):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        # Chromium refuses to start as root with its sandbox on. A test bench running a local page
        # it wrote itself against a local daemon: nothing untrusted is rendered.
        "--no-sandbox",
        "--disable-dev-shm-usage",  # containers often have a 64 MB /dev/shm
        "--disable-gpu",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        "--force-device-scale-factor=1",  # one screenshot pixel per CSS pixel
        f"--user-data-dir={os.path.join(scratch, 'profile')}",
        # The web sample's host name (TMM-API.md §2.1) reaches the bridge here whatever DNS
        # says, and nothing else leaves the machine: the run is hermetic.
        f"--host-resolver-rules=MAP {tmmclient.TMM_HOST} 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
        "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
        "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
    ):
        options.add_argument(argument)
    # The DevTools network events (the preflights) and the console, read after the run.
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    options.add_experimental_option("perfLoggingPrefs", {"enableNetwork": True, "enablePage": False})
    # HOME: the NSS database trust_ca made (chromium reads $HOME/.pki/nssdb).
    environment = dict(os.environ, HOME=scratch)
    service = Service(CHROMEDRIVER, log_path=log_path, env=environment)
    return webdriver.Chrome(service=service, options=options)


def network_exchanges(performance_log: list[dict]) -> list[dict]:
    """Requests and their answers from the DevTools events, by request id: {method, url,
    request_headers, type, status, headers}. A CORS preflight is a request of its own (method
    OPTIONS, type "Preflight" on its response); a WebSocket's is its handshake (method "WebSocket",
    status 101)."""
    exchanges: dict[str, dict] = {}
    for entry in performance_log:
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        exchange = exchanges.setdefault(params.get("requestId", ""), {})
        if method == "Network.requestWillBeSent":
            request = params["request"]
            exchange.update(method=request["method"], url=request["url"],
                            request_headers={k.lower(): v for k, v in request.get("headers", {}).items()})
        elif method == "Network.responseReceived":
            response = params["response"]
            exchange.update(type=params.get("type"), status=response["status"],
                            headers={k.lower(): v for k, v in response.get("headers", {}).items()})
        elif method == "Network.webSocketCreated":
            exchange.update(method="WebSocket", url=params["url"])
        elif method == "Network.webSocketWillSendHandshakeRequest":
            exchange.update(request_headers={k.lower(): v for k, v in params["request"].get("headers", {}).items()})
        elif method == "Network.webSocketHandshakeResponseReceived":
            exchange.update(status=params["response"]["status"])
    # Chromium's own chrome:// pages (the first tab) are not the page's traffic.
    return [exchange for exchange in exchanges.values()
            if "method" in exchange and exchange["url"].split(":")[0] in ("http", "https", "ws", "wss")]


# --- the screenshot -------------------------------------------------------------------------------

def ink_pixels(image, box) -> int:
    """Pixels in `box` (left, top, right, bottom) darker than mid-grey: the value text is black on
    white, so these are its strokes."""
    region = image.crop(box).convert("L")
    return sum(count for level, count in enumerate(region.histogram()) if level < 128)


VALUE_FIELDS = ("count", "latitude", "longitude", "solutionType", "utcTime")

# Each value's text and its box (the text's own extent, through a Range), in CSS pixels.
VALUE_BOXES_JS = """
const out = {};
for (const name of ["ws", "wss"]) {
  for (const field of arguments[0]) {
    const element = document.querySelector(`#socket-${name} [data-field="${field}"]`);
    const range = document.createRange();
    range.selectNodeContents(element);
    const r = range.getBoundingClientRect();
    out[`${name}.${field}`] = {text: element.textContent, box: [r.left, r.top, r.right, r.bottom]};
  }
}
return out;
"""


def check_screenshot(driver, checks: Checks, path: str, expected_texts: dict[str, str]):
    """The screenshot shows the values: each value's DOM text is what the driver expects, its box
    lies inside the viewport, and that box in the PNG holds the text's ink, which disappears when
    only the text is made transparent (so the ink is the text, not a border or the background)."""
    from PIL import Image

    driver.save_screenshot(path)
    image = Image.open(path).convert("RGB")
    viewport = tuple(driver.execute_script("return [window.innerWidth, window.innerHeight]"))
    colours = image.getcolors(maxcolors=1 << 16)
    checks.check(image.size == viewport and (colours is None or len(colours) > 8),
                 f"screenshot {os.path.basename(path)}: {image.size[0]}x{image.size[1]}, not blank",
                 f"size {image.size} (viewport {viewport}), {len(colours or [])} colours")
    boxes = driver.execute_script(VALUE_BOXES_JS, list(VALUE_FIELDS))
    driver.execute_script("for (const e of document.querySelectorAll('dd')) e.style.color = 'transparent';")
    blank = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
    driver.execute_script("for (const e of document.querySelectorAll('dd')) e.style.color = '';")
    for key, expected in expected_texts.items():
        shown = boxes[key]
        left, top, right, bottom = (round(v) for v in shown["box"])
        inside = 0 <= left < right <= viewport[0] and 0 <= top < bottom <= viewport[1]
        box = (left, top, right, bottom)
        with_text = ink_pixels(image, box) if inside else 0
        without = ink_pixels(blank, box) if inside else -1
        # Bold 30 px monospace: a glyph has well over 20 dark pixels.
        checks.check(shown["text"] == expected and inside and with_text >= 20 * len(expected) and without == 0,
                     f"screenshot shows {key} = {expected}",
                     f"DOM text {shown['text']!r}, box {box} (viewport {viewport}), "
                     f"{with_text} ink pixels with the text, {without} without")


# --- the run -------------------------------------------------------------------------------------

@dataclasses.dataclass
class Session:
    """What a run has started so far: its `stop` stops just that, whatever failed."""
    bridge_process: Bridge | None = None
    page_server: PageServer | None = None
    driver: object = None

    def stop(self, report_dir: str):
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception as error:  # a crashed chromium: the run's checks already say what failed
                print(f"browser-test: chromedriver quit: {error}", file=sys.stderr)
        if self.page_server is not None:
            self.page_server.stop()
            with open(os.path.join(report_dir, "page-server.log"), "w") as handle:
                handle.write("\n".join(self.page_server.requests) + "\n")
        if self.bridge_process is not None:
            self.bridge_process.stop()


def run(report_dir: str, bridge: str | None = None, positions: int = 20, bridge_arguments=()) -> dict:
    """One browser run; writes report_dir/report.json and returns the same dict:
    {"passed", "checks": [{"name", "passed", "detail", "skipped"}], "screenshot", "chromium",
    "seconds"}. `bridge_arguments` are added to `tmm-bridge run` (the tests that show a broken
    bridge fails this test use them)."""
    os.makedirs(report_dir, exist_ok=True)
    checks = Checks()
    screenshot = os.path.join(report_dir, "screenshot.png")
    result = {"passed": False, "checks": [], "screenshot": None}
    missing = missing_tools()
    scratch = tempfile.mkdtemp(prefix="tmm-browser-")
    # Started as root, the bridge drops to `nobody` before it writes its registry in the state
    # directory below: it must be able to get there (docs/security.md, "Privileges").
    os.chmod(scratch, 0o755)
    started = time.monotonic()
    session = Session()
    try:
        if not checks.check(not missing, "chromium, chromedriver, certutil, selenium, PIL and the page's font are installed",
                            f"missing Debian packages: {' '.join(missing)}; {INSTALL_HINT}"):
            return result
        run_page(session, checks, result, report_dir, screenshot, scratch, bridge, positions, bridge_arguments)
    except BenchError as error:
        checks.check(False, "the bench ran", error)
    except Exception as error:  # selenium's, chromium's: a failed check with the reason, never a traceback alone
        hint = " (chromedriver.log in the report has chromium's side)" if session.driver is None else ""
        checks.check(False, "the bench ran", f"{type(error).__name__}: {error}{hint}")
    finally:
        session.stop(report_dir)
        shutil.rmtree(scratch, ignore_errors=True)
        result["checks"] = [dataclasses.asdict(c) for c in checks.items]
        result["passed"] = bool(checks.items) and all(c.passed for c in checks.items)
        result["seconds"] = round(time.monotonic() - started, 1)
        with open(os.path.join(report_dir, "report.json"), "w") as handle:
            json.dump(result, handle, indent=1)
    return result


def run_page(session: Session, checks: Checks, result: dict, report_dir: str, screenshot: str, scratch: str,
             bridge: str | None, positions: int, bridge_arguments):
    """The bridge, the page server and chromium started (into `session`), the page loaded, and
    the checks of what it saw, in order."""
    application_id, ports, context, plain_v2, version = start_bench(session, checks, result, report_dir, scratch,
                                                                    bridge, bridge_arguments)
    driver = session.driver
    api = f"https://{tmmclient.TMM_HOST}:{ports['apiSecurePort']}"
    secure_v2 = f"wss://{tmmclient.TMM_HOST}:{ports['locationV2SecurePort']}/locationV2"
    query = urllib.parse.urlencode({
        "api": api, "ws": plain_v2,
        "wss": secure_v2,
        "app": application_id, "limit": positions, "put": 1})
    page = f"http://localhost:{session.page_server.port}"
    driver.get(f"{page}/index.html?{query}")
    state = check_page_finished(driver, checks, report_dir, version, page, api)
    exchanges = check_rest(driver, checks, report_dir, state, page, api, application_id, context)
    expected_texts = check_positions(checks, state, positions)
    check_websocket_handshakes(checks, exchanges, page, plain_v2, secure_v2)
    check_console_and_screenshot(driver, checks, report_dir, screenshot, expected_texts)
    result["screenshot"] = screenshot


def start_bench(session: Session, checks: Checks, result: dict, report_dir: str, scratch: str, bridge: str | None,
                bridge_arguments):
    """The bridge (checked locked), its CA trusted, the page server and chromium; returns the
    application id, the ports, the bridge's context, the ws:// URL and chromium's version."""
    application_id = str(uuid.uuid4())
    session.bridge_process = Bridge(bridge or bridge_binary(), scratch, application_id,
                                    os.path.join(report_dir, "bridge.log"), bridge_arguments)
    ports = session.bridge_process.ports
    context = session.bridge_process.context()
    plain_v2 = f"ws://127.0.0.1:{ports['locationV2Port']}/locationV2"
    locked = tmmclient.ws_handshake_status(plain_v2)
    checks.check(locked == 401, "before the page runs LocationV2 is locked (401): only its registration can unlock it",
                 f"handshake status {locked}")

    trust_ca(scratch, os.path.join(session.bridge_process.state_dir, "tls", "ca.pem"))
    session.page_server = PageServer()
    session.driver = driver = start_chromium(scratch, os.path.join(report_dir, "chromedriver.log"))
    driver.set_page_load_timeout(30)
    version = driver.capabilities.get("browserVersion", "?")
    result["chromium"] = version
    return application_id, ports, context, plain_v2, version


def check_page_finished(driver, checks: Checks, report_dir: str, version: str, page: str, api: str):
    """Waits for the page's own end and checks it; returns the page's state (window.tmm)."""
    # The page's own end: every socket got its positions, or an error. (The demo receiver
    # plays at 10 Hz; 20 positions take about 2 s once gpsd reads the pty.)
    def finished():
        return driver.execute_script("return window.tmm && (window.tmm.done || window.tmm.error !== null)")
    try:
        wait_for(finished, 60, what="the page to receive its positions or fail")
    except BenchError as error:
        checks.check(False, "the page finished", error)
    state = driver.execute_script("return window.tmm")
    with open(os.path.join(report_dir, "page-state.json"), "w") as handle:
        json.dump(state, handle, indent=1)
    checks.check(state and state["done"] and state["error"] is None,
                 f"the page ran the web sample's flow to the end (Chromium {version})",
                 f"phase {state and state['phase']!r}, error {state and state['error']!r}")
    checks.check(driver.execute_script("return window.location.origin") == page and not api.startswith(page),
                 f"the page came from its own origin ({page}), cross-origin to the bridge ({api})",
                 driver.execute_script("return window.location.origin"))
    return state


def preflight_allows(preflight: dict, page: str) -> bool:
    """A preflight answered 2xx that allows the page's origin, its headers and GET and PUT."""
    headers = preflight.get("headers", {})
    allowed_headers = headers.get("access-control-allow-headers", "").lower()
    return (preflight.get("type") == "Preflight" and 200 <= preflight.get("status", 0) < 300
            and headers.get("access-control-allow-origin") in ("*", page)
            and "authorization" in allowed_headers and "content-type" in allowed_headers
            and {"GET", "PUT"} <= {m.strip() for m in headers.get("access-control-allow-methods", "").split(",")})


def check_rest(driver, checks: Checks, report_dir: str, state, page: str, api: str, application_id: str,
               context: dict) -> list[dict]:
    """REST, as the page saw it and as the network did; returns the network's exchanges."""
    calls = [(c["method"], c["path"], c["status"]) for c in (state or {}).get("rest", [])]
    checks.check(calls == [("GET", "/api/v1/publicKey/", 200), ("GET", "/api/v1/receiver/", 200),
                           ("PUT", "/api/v1/receiver/", 200)],
                 "REST over https from the page: publicKey, GET receiver (registers), PUT isConnected: all 200",
                 repr(calls))
    performance = driver.get_log("performance")
    with open(os.path.join(report_dir, "devtools.json"), "w") as handle:
        json.dump(performance, handle)
    exchanges = network_exchanges(performance)
    with open(os.path.join(report_dir, "network.json"), "w") as handle:
        json.dump(exchanges, handle, indent=1)
    # Chromium keeps a preflight's answer for its Max-Age (per origin and URL): the GET's answer
    # allows PUT and Content-Type too, so the PUT goes without one of its own. Whatever
    # Chromium chooses, every preflight must have been answered and allow what the page sends.
    preflights = [e for e in exchanges if e.get("method") == "OPTIONS" and e.get("url", "").startswith(api)]
    checks.check(preflights and all(e["url"] == api + "/api/v1/receiver/" and preflight_allows(e, page)
                                    for e in preflights),
                 f"CORS preflight (OPTIONS /api/v1/receiver/, {len(preflights)} sent): "
                 f"{', '.join(str(e.get('status')) for e in preflights)}, allowing the page's origin, "
                 "Authorization and Content-Type, GET and PUT",
                 repr(preflights) if preflights else
                 "no OPTIONS request in the DevTools events: " + repr([(e.get("method"), e.get("url")) for e in exchanges]))
    actual = [e for e in exchanges if e.get("method") in ("GET", "PUT") and e.get("url", "").startswith(api)]
    checks.check(len(actual) == 3 and all(e.get("status") == 200 and e.get("headers", {}).get("access-control-allow-origin")
                                          in ("*", page) for e in actual),
                 "the network saw the three REST answers: 200 with Access-Control-Allow-Origin",
                 repr([(e.get("method"), e.get("url"), e.get("status")) for e in actual]))
    checks.check(polling.wait_until(lambda: application_id in tmmclient.registered_ids(context)),
                 "the page's Access Code V2 registered the application (registry file)",
                 repr(tmmclient.registered_ids(context)))
    return exchanges


def check_positions(checks: Checks, state, positions: int) -> dict[str, str]:
    """The positions over ws:// and wss://; returns the texts the screenshot must show."""
    epochs = tmmclient.capture_epochs(CAPTURE)
    expected_texts = {}
    for name in ("ws", "wss"):
        socket_state = ((state or {}).get("sockets") or {}).get(name) or {"messages": [], "count": 0}
        messages = [json.loads(text) for text in socket_state["messages"]]
        problems = []
        for message in messages:
            problems += tmmclient.position_problems(message, epochs)
            epoch = epochs.get(round(message.get("utcTime") or 0, 2), {})
            expected_type = verify.SOLUTION_TYPE.get(QUALITY_NAMES.get(epoch.get("quality")))
            if message.get("solutionType") != expected_type:
                problems.append(f"solutionType {message.get('solutionType')!r} != {expected_type!r} "
                                f"for GGA quality {epoch.get('quality')}")
        times = [m.get("utcTime") for m in messages]
        checks.check(socket_state["count"] == positions == len(messages) and not problems
                     and len(set(times)) == len(times),
                     f"{name}: {positions} LocationV2 positions, each the capture's epoch "
                     f"(latitude, longitude, heights, solutionType, ...), none repeated",
                     f"{socket_state['count']} positions; {problems[:3]}; url {socket_state.get('url')}")
        if messages:
            last = messages[-1]
            expected_texts.update({
                f"{name}.count": str(positions), f"{name}.latitude": f"{last['latitude']:.8f}",
                f"{name}.longitude": f"{last['longitude']:.8f}", f"{name}.solutionType": str(last["solutionType"]),
                f"{name}.utcTime": f"{last['utcTime']:.2f}"})
    return expected_texts


def check_websocket_handshakes(checks: Checks, exchanges: list[dict], page: str, plain_v2: str, secure_v2: str):
    """The ws:// and wss:// handshakes as the network saw them."""
    for name, url in (("ws", plain_v2), ("wss", secure_v2)):
        handshake = next((e for e in exchanges if e.get("method") == "WebSocket" and e.get("url") == url), {})
        checks.check(handshake.get("status") == 101 and handshake.get("request_headers", {}).get("origin") == page,
                     f"{name}: the WebSocket handshake (Origin {page}) answered 101"
                     + (f": TLS to {tmmclient.TMM_HOST} verified by Chromium against the local CA in its "
                        "NSS store (chain and name)" if name == "wss" else ""), repr(handshake))


def check_console_and_screenshot(driver, checks: Checks, report_dir: str, screenshot: str, expected_texts: dict):
    """No console errors; the screenshot shows the values."""
    console = driver.get_log("browser")
    with open(os.path.join(report_dir, "console.json"), "w") as handle:
        json.dump(console, handle, indent=1)
    errors = [entry for entry in console if entry.get("level") == "SEVERE"]
    checks.check(not errors, "no console errors", repr(errors[:5]))
    if expected_texts:
        check_screenshot(driver, checks, screenshot, expected_texts)
    else:  # nothing to look for, but the page's error text is worth seeing
        driver.save_screenshot(screenshot)


def main() -> int:
    parser = argparse.ArgumentParser(prog="browser_test", description=__doc__.split("\n\n")[0])
    parser.add_argument("--report", help="report directory (default hwtests/reports/browser-<UTC timestamp>)")
    parser.add_argument("--bridge", help="the tmm-bridge binary (default: as tmmtools/harness/bench.py finds it)")
    parser.add_argument("--positions", type=int, default=20, help="positions to receive over each socket")
    parser.add_argument("--bridge-arg", action="append", default=[], metavar="ARG",
                        help="an argument added to `tmm-bridge run` (repeatable), e.g. --bridge-arg=--allowed-origins=https://other.example")
    parser.add_argument("--check-tools", action="store_true",
                        help="only check that the browser packages are installed (exit 0), else name them (exit 1)")
    args = parser.parse_args()
    if args.check_tools:
        missing = missing_tools()
        if missing:
            print(f"browser-test: missing Debian packages: {' '.join(missing)}; {INSTALL_HINT}", file=sys.stderr)
        return 1 if missing else 0
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    report_dir = os.path.abspath(args.report or os.path.join(HWTESTS, "reports", f"browser-{stamp}"))
    result = run(report_dir, args.bridge, args.positions, args.bridge_arg)
    failed = [c for c in result["checks"] if not c["passed"]]
    print(f"browser-test: {'PASSED' if result['passed'] else 'FAILED'} "
          f"({len(result['checks']) - len(failed)} of {len(result['checks'])} checks passed, {result['seconds']} s)")
    print(report_dir)
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
