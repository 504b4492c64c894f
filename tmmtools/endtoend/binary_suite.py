"""Binary receivers end to end: is what reaches a LocationV2 client exactly what gpsd decoded?

For each log of gpsd 3.22's regression suite whose driver is binary (u-blox UBX, SiRF, TSIP,
GREIS, SkyTraq, NavCom, ...: `scripts/fetch-gpsd-suite.sh` puts them in
`.build/gpsd-suite/binary/` with gpsd's golden output `NAME.log.chk`):

1. a pty is made (raw, at the `# Serial:` speed or 38400 as gpsd's regress-driver uses), and our
   own gpsd is started the way the bridge starts its private one (`gpsd -N -n -b -S PORT`, plus
   `-F CONTROL`, made writable for the bridge, which drops root); a reference client watches it
   (`?WATCH={"enable":true,"json":true}`) from before the device is added, so it sees every
   object gpsd prints on this run;
2. `tmm-bridge run --device PTY --gpsd 127.0.0.1:PORT --gpsd-control CONTROL --no-discovery
   --registration open` on free ports; the bridge hands the pty to that gpsd, as it hands a
   receiver to its private one. The run starts once the bridge logs `reading PTY through its own
   gpsd watch` (nothing written before can be lost in the hand-off);
3. V2 is unlocked by a registration (`tmm-bridge open tmmregister://...`, any GUID under
   `--registration open`) and a client connects to `/locationV2`;
4. the log is written into the pty as gpsfake writes it: split into packets by gpsd's own lexer
   (`gps.fake.TestLoad`, so the `# Date:` comments that set gpsd's century and GPS week are
   written as packets, and `# EOF` last, which makes gpsd close the device), **paced by the
   receiver's time** (`feed` says why and how): one packet every `--packet-gap` seconds, each
   followed by a `?VERSION` round trip on the reference client so that the harness never writes
   ahead of what gpsd has printed; after the packet that made gpsd print the last TPV of a time
   (as many as the `.chk` has for it), a wait until that epoch is
   max(`--cycle-gap`, min(receiver time step, `--step-cap`) / `--speed-up`) old: 50 ms for a
   1 Hz receiver, 40 ms at least. Epochs so reach gpsd, and the bridge, as a receiver's do, one
   burst at a time and far enough apart that TCP does not deliver two in one segment (gpsd does
   not set TCP_NODELAY; its clients acknowledge within 40 ms), while the later TPVs of a time
   follow at once, within the bridge's hold; and, before the next epoch, until V2 has the
   epoch before this one (at most `--behind-limit`). Written back to back (gpsfake's pace), several
   epochs arrive together and the bridge's LocationV2 pacer, built for a live receiver, keeps
   only the freshest of such a backlog: the harness's fault, not the bridge's;
   once, when the first epoch has reached V2, `tmm-bridge status --json` (the bridge's
   `--runtime-dir`) must list the pty with `"epochSource": "gpsd-json"` (its epochs read from
   gpsd's JSON, docs/operations.md); a log whose fixes reach V2 is not exact otherwise;
5. the run ends when gpsd has closed the device and either every expected epoch reached V2 or
   V2 stayed silent for `--settle` seconds (conditions, no fixed sleep);
6. comparison, epoch by epoch, keyed by time: every time at which gpsd printed a TPV with
   mode >= 2 (gpsd's last TPV of that time) must reach V2 exactly once, with latitude and
   longitude equal to 1e-9 degree, `altitude` = altHAE, `mslHeight` = altMSL and `undulation`
   = geoidSep to 1 mm (without geoidSep: null, or altHAE - altMSL to 1 mm), `diffStatus`
   mapped from TPV `status` (gps.h of 3.22: absent or 1 GPS → 1, 2 DGPS → 2, 3 RTK fixed → 4, 4 RTK float → 5; 5/6 dead
   reckoning, 7 time only, 8 simulated, 9 P(Y) → 1, as docs/input.md and
   docs/protocol-choices.md say), and where gpsd printed a GST for that time hrms =
   sqrt(lat_err² + lon_err²) and vrms = alt_err (to gpsd's 3 decimals). A V2 fix at a time
   gpsd has no fix for is an extra. TPVs with a fix but no time cannot be matched: counted.

The reference is the gpsd of this run (the reference client's TPVs: what the bridge was told);
the table also says whether that gpsd printed the same fixes as the `.chk` (gpsfake's run). See
docs/input.md, "Binary receivers: exactness against gpsd's suite".

    /usr/bin/python3 -m tmmtools.endtoend.binary_suite .build/debug/tmm-bridge [--suite DIR]
        [--logs NAME,...] [--exclude NAME,...] [--json FILE] [--expect-exact] [--keep]
        [--packet-gap S] [--cycle-gap S] [--speed-up N] [--step-cap S] [--behind-limit S] [--settle S]

`--keep` keeps each log's work directory (printed in the JSON): bridge.log, gpsd.log, and the
reference client's objects (gpsd-watch.jsonl), V2's messages (v2.jsonl) and the pty writes
(writes.jsonl), each with its arrival time since the feed started.

Report-only by default (exit 0 unless the harness itself fails); with `--expect-exact` the exit
status is 1 when a log in which gpsd makes fixes is not exact. Standard library, Debian's
python3-gps (gpsd's packet lexer) and python3-websockets; run with /usr/bin/python3.
"""

import argparse
import asyncio
import calendar
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import termios
import threading
import time
import uuid

import websockets
from gps import fake as gpsfake  # Debian's python3-gps: gpsd's lexer, TestLoad

from tmmtools import checkout, polling
from tmmtools.client import tmmclient

# TPV "status" (gps.h, gpsd 3.22) -> LocationV2 diffStatus (docs/protocol-choices.md: 1/2/4/5;
# dead reckoning, time only and simulated fixes are reported as 1).
DIFF_STATUS = {None: 1, 1: 1, 2: 2, 3: 4, 4: 5, 5: 1, 6: 1, 7: 1, 8: 1, 9: 1}
DEGREES = 1e-9      # latitude/longitude tolerance
METRES = 1e-3       # heights
GST_TOLERANCE = 1.5e-3  # gpsd prints GST errors with 3 decimals
EARTH_RADIUS = 6371008.8
BAUD = {4800: termios.B4800, 9600: termios.B9600, 19200: termios.B19200, 38400: termios.B38400,
        57600: termios.B57600, 115200: termios.B115200, 230400: termios.B230400}


class HarnessError(Exception):
    pass


def log_line(text):
    print(text, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Times

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$")


def iso_ms(text):
    """Milliseconds since 1970 of an ISO 8601 UTC time (gpsd's TPV time, V2's utcTimeStamp)."""
    match = _ISO.match(text or "")
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction = match.group(7) or "0"
    millis = int((fraction + "000")[:3])
    return calendar.timegm((year, month, day, hour, minute, second)) * 1000 + millis


def iso_text(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)


def v2_time_ms(message):
    """(ms since 1970 or None, ms of day or None) of a V2 message."""
    full = iso_ms(message.get("utcTimeStamp"))
    if full is not None:
        return full, full % 86_400_000
    utc = message.get("utcTime")
    if isinstance(utc, (int, float)) and not isinstance(utc, bool):
        whole = int(utc)
        millis = int(round((utc - whole) * 1000))
        day_ms = ((whole // 10000) * 3600 + (whole // 100 % 100) * 60 + whole % 100) * 1000 + millis
        return None, day_ms
    return None, None


# ---------------------------------------------------------------------------------------------
# gpsd's JSON: the .chk file and the reference client's stream

def json_objects(lines):
    for line in lines:
        line = line.strip()
        if not line.startswith(b"{"):
            # gpsd 3.22 sometimes leaves a pseudo-NMEA $GPGSV unfinished (no checksum, no line
            # end) and the next report follows on the same line (oncore-binary-pos-hold.log.chk,
            # 3 TPVs): the report is gpsd's all the same.
            start = line.find(b'{"class":')
            if start < 0:
                continue
            line = line[start:]
        try:
            yield json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            continue


def read_chk(path):
    with open(path, "rb") as file:
        return list(json_objects(file))


def fixes_of(objects):
    """gpsd's fixes by time: {ms: {"tpv": last TPV with mode >= 2 of that time, "gst": last GST
    of that time or None, "tpvs": how many TPVs with mode >= 2 had that time}}, and the number of
    TPVs with mode >= 2 but no time."""
    fixes = {}
    gsts = {}
    untimed = 0
    for obj in objects:
        kind = obj.get("class")
        if kind == "TPV" and (obj.get("mode") or 0) >= 2:
            ms = iso_ms(obj.get("time"))
            if ms is None:
                untimed += 1
                continue
            entry = fixes.setdefault(ms, {"tpv": None, "gst": None, "tpvs": 0})
            entry["tpv"] = obj
            entry["tpvs"] += 1
        elif kind == "GST":
            ms = iso_ms(obj.get("time"))
            if ms is not None:
                gsts[ms] = obj
    for ms, entry in fixes.items():
        entry["gst"] = gsts.get(ms)
    return fixes, untimed


def stream_facts(objects):
    """What gpsd printed, for the Swift side: classes, TPV keys, drivers, SKY/TPV order."""
    classes = {}
    tpv_keys = set()
    drivers = []
    order = []  # "T" and "S" in the order printed
    statuses = {}
    for obj in objects:
        kind = obj.get("class")
        classes[kind] = classes.get(kind, 0) + 1
        if kind == "TPV":
            tpv_keys.update(obj.keys())
            statuses[str(obj.get("status"))] = statuses.get(str(obj.get("status")), 0) + 1
            order.append("T")
        elif kind == "SKY":
            order.append("S")
        devices = obj.get("devices", []) if kind == "DEVICES" else [obj] if kind == "DEVICE" else []
        for device in devices:
            driver = device.get("driver")
            if driver and (not drivers or drivers[-1] != driver):
                drivers.append(driver)
    pattern = "".join(order)
    return {
        "classes": classes,
        "tpvKeys": sorted(tpv_keys - {"class", "device"}),
        "drivers": drivers,
        "tpvStatus": statuses,
        "skyBeforeTpv": pattern.count("ST"),
        "tpvBeforeSky": pattern.count("TS"),
        "orderHead": pattern[:24],
    }


def same_fixes(a, b):
    """How two fix tables (fixes_of) differ: None when they are the same."""
    only_a = sorted(set(a) - set(b))
    only_b = sorted(set(b) - set(a))
    values = 0
    for ms in set(a) & set(b):
        x, y = a[ms]["tpv"], b[ms]["tpv"]
        if any(x.get(k) != y.get(k) for k in ("lat", "lon", "altHAE", "altMSL", "status", "mode")):
            values += 1
    if not only_a and not only_b and not values:
        return None
    return {"onlyFirst": len(only_a), "onlySecond": len(only_b), "valuesDiffer": values}


class GPSDWatch:
    """A JSON client of gpsd on its own thread: every object, with its arrival time; `ping`
    says when everything gpsd wrote to it before has arrived."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.lock = threading.Lock()
        self.answered = threading.Condition(self.lock)
        self.objects = []
        self.arrivals = []  # monotonic arrival time of each object
        self.tpvs = 0
        self.banner = None  # gpsd's VERSION at the connect; `?VERSION` answers the same
        self.pings = 0
        self.pongs = 0
        self.last_arrival = time.monotonic()
        self.closed = threading.Event()
        self.buffer = b""
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.sock.sendall(b'?WATCH={"enable":true,"json":true};\n')

    def _run(self):
        self.sock.settimeout(0.2)
        while not self.closed.is_set():
            try:
                # Acknowledge at once (Linux clears the flag, so it is set before every read):
                # gpsd does not set TCP_NODELAY, and with our delayed ACKs its small writes wait
                # up to 40 ms and arrive together, too late for the feed to pace by them.
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            if not data:
                break
            self.buffer += data
            *lines, self.buffer = self.buffer.split(b"\n")
            now = time.monotonic()
            for obj in json_objects(lines):
                with self.lock:
                    if obj.get("class") == "VERSION":
                        if self.banner is None:
                            self.banner = obj
                        elif obj == self.banner and self.pongs < self.pings:
                            # The answer to `ping` (a VERSION that is not gpsd's own, e.g. one
                            # its JSON slave driver relays from navisys-gr701w.log, is kept).
                            self.pongs += 1
                            self.answered.notify_all()
                            continue
                    self.objects.append(obj)
                    self.arrivals.append(now)
                    self.last_arrival = now
                    if obj.get("class") == "TPV":
                        self.tpvs += 1
        self.closed.set()
        with self.lock:
            self.answered.notify_all()

    def ping(self, seconds=5.0):
        """Sends `?VERSION;` and waits for gpsd's answer. gpsd answers a client's commands after
        it has polled its devices in the same round (gpsd.c main loop), and TCP keeps the order:
        when the answer is here, so is every report gpsd printed for what it had read before."""
        with self.lock:
            self.pings += 1
            target = self.pings
        self.sock.sendall(b"?VERSION;\n")
        with self.lock:
            if not self.answered.wait_for(lambda: self.pongs >= target or self.closed.is_set(), seconds):
                raise HarnessError(f"gpsd did not answer ?VERSION within {seconds} s")

    def snapshot(self):
        with self.lock:
            return list(self.objects)

    def count(self, predicate):
        with self.lock:
            return sum(1 for obj in self.objects if predicate(obj))

    def close(self):
        self.closed.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # the reader's recv returns at once
            self.sock.close()
        except OSError:
            pass
        self.thread.join(2)


class V2Client:
    """A LocationV2 client on /locationV2, on its own thread (asyncio): every message."""

    def __init__(self, url):
        self.url = url
        self.lock = threading.Lock()
        self.messages = []
        self.times = set()  # each message's time: ms since 1970, and ("day", ms of day)
        self.last_arrival = None
        self.connected = threading.Event()
        self.error = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self.thread.start()

    async def _run(self):
        try:
            async with websockets.connect(self.url, open_timeout=5, ping_interval=None, close_timeout=2,
                                          max_size=None) as ws:
                self.connected.set()
                while not self.stop.is_set():
                    try:
                        text = await asyncio.wait_for(ws.recv(), 0.02)
                    except asyncio.TimeoutError:
                        continue
                    now = time.monotonic()
                    message = json.loads(text)
                    full, day = v2_time_ms(message)
                    with self.lock:
                        self.messages.append((now, message))
                        self.last_arrival = now
                        self.times.update(t for t in (full, ("day", day) if day is not None else None)
                                          if t is not None)
        except Exception as error:  # noqa: BLE001  (reported, never swallowed)
            self.error = repr(error)
            self.connected.set()

    def snapshot(self):
        with self.lock:
            return list(self.messages)

    def has_time(self, ms):
        """Whether a message of this time (ms since 1970) arrived."""
        with self.lock:
            return ms in self.times or ("day", ms % 86_400_000) in self.times

    def close(self):
        self.stop.set()
        self.thread.join(5)


class StatusProbe:
    """`tmm-bridge status --json` once, on its own thread, as soon as the first epoch (any V2
    message) reached the client while the log plays: the pty's entry in `receivers[]` must say
    `"epochSource": "gpsd-json"` (its epochs are read from gpsd's JSON reports, docs/operations.md)."""

    def __init__(self, run):
        self.run = run
        self.result = {"checked": False}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            if self.run.v2.snapshot():
                self.result = self.ask()
                return
            time.sleep(0.005)
        self.result = {"checked": False, "why": "no epoch reached V2 while the log played"}

    def ask(self):
        arguments = [self.run.bridge_path, "status", "--json", "--runtime-dir", self.run.runtime_dir]
        try:
            done = subprocess.run(arguments, capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired) as error:
            return {"checked": True, "ok": False, "why": f"tmm-bridge status: {error}"}
        if done.returncode != 0:
            return {"checked": True, "ok": False,
                    "why": f"tmm-bridge status exited {done.returncode}: {done.stderr.decode(errors='replace')[-300:]}"}
        try:
            document = json.loads(done.stdout)
        except ValueError:
            return {"checked": True, "ok": False, "why": f"not JSON: {done.stdout[:200]!r}"}
        entry = next((r for r in document.get("receivers") or [] if r.get("path") == self.run.device), None)
        if entry is None:
            return {"checked": True, "ok": False, "why": f"no receivers[] entry for {self.run.device}"}
        source = entry.get("epochSource")
        return {"checked": True, "ok": source == "gpsd-json", "epochSource": source,
                "gpsdDriver": entry.get("gpsdDriver"), "epochs": entry.get("epochs")}

    def finish(self):
        """Waits for a probe under way; stops waiting for a first epoch."""
        self.stop.set()
        self.thread.join(15)
        return self.result


# ---------------------------------------------------------------------------------------------
# One log

def make_pty(speed):
    master, slave = os.openpty()
    name = os.ttyname(slave)
    iflag, oflag, cflag, lflag, ispeed, ospeed, cc = termios.tcgetattr(slave)
    cc[termios.VMIN] = 1
    cflag &= ~(termios.PARENB | termios.PARODD | termios.CRTSCTS | termios.CSIZE | termios.CSTOPB)
    cflag |= termios.CREAD | termios.CLOCAL | termios.CS8
    iflag = oflag = lflag = 0
    ispeed = ospeed = BAUD.get(speed, termios.B38400)
    termios.tcsetattr(slave, termios.TCSANOW, [iflag, oflag, cflag, lflag, ispeed, ospeed, cc])
    os.chmod(name, 0o666)  # gpsd reads it after dropping root, as gpsfake allows
    return master, slave, name


def write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class Run:
    """Everything one log needs, stopped in `close` whatever happened."""

    def __init__(self, bridge, work, speed):
        self.bridge_path = bridge
        self.work = work
        self.master, self.slave, self.device = make_pty(speed)
        self.gpsd = self.bridge = self.watch = self.v2 = None
        self.bridge_log_path = os.path.join(work, "bridge.log")
        self.gpsd_log_path = os.path.join(work, "gpsd.log")

    def start_gpsd(self):
        self.gpsd_port, = tmmclient.free_ports(1)
        self.control = os.path.join(self.work, "gpsd.sock")
        with open(self.gpsd_log_path, "wb") as log:
            self.gpsd = subprocess.Popen(["gpsd", "-N", "-n", "-b", "-S", str(self.gpsd_port), "-F", self.control],
                                         stdout=log, stderr=log, stdin=subprocess.DEVNULL)

        def answers():
            if self.gpsd.poll() is not None:
                raise HarnessError(f"gpsd exited: {open(self.gpsd_log_path, errors='replace').read()}")
            if not os.path.exists(self.control):
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.gpsd_port), timeout=1) as probe:
                    return probe.recv(200).startswith(b'{"class":"VERSION"')
            except OSError:
                return False
        if not polling.wait_until(answers, 10, 0.02):
            raise HarnessError("gpsd did not answer within 10 s")
        # gpsd (started as root) makes its control socket root's, mode 0755; the bridge drops root
        # (to nobody) before or after its first hand-off, so it must be able to write the socket,
        # as it can write /run/gpsd.sock or its private gpsd's (docs/configuration.md).
        os.chmod(self.control, 0o666)
        self.watch = GPSDWatch(self.gpsd_port)
        if not polling.wait_until(lambda: self.watch.count(lambda o: o.get("class") == "WATCH"), 5, 0.01):
            raise HarnessError("gpsd did not answer the reference WATCH")

    def start_bridge(self):
        ports = tmmclient.free_ports(7)
        options = ["location-port", "location-secure-port", "api-port", "api-secure-port", "location-v2-port",
                   "location-v2-secure-port", "fallback-port-start"]
        self.state_dir = os.path.join(self.work, "state")
        self.runtime_dir = os.path.join(self.work, "runtime")
        arguments = [self.bridge_path, "run", "--device", self.device, "--no-discovery", "--registration", "open",
                     "--gpsd", f"127.0.0.1:{self.gpsd_port}", "--gpsd-control", self.control,
                     "--state-dir", self.state_dir, "--runtime-dir", self.runtime_dir, "--listen", "127.0.0.1"]
        for option, port in zip(options, ports):
            arguments += ["--" + option, str(port)]
        self.bridge_log = open(self.bridge_log_path, "wb")
        try:
            self.bridge = subprocess.Popen(arguments, stdout=self.bridge_log, stderr=self.bridge_log,
                                           stdin=subprocess.DEVNULL)
        except OSError as error:  # e.g. ETXTBSY: the binary is being rebuilt
            raise HarnessError(f"cannot start {self.bridge_path}: {error}") from error
        reading = f"reading {self.device} through its own gpsd watch"

        def ready():
            text = self.bridge_text()
            if self.bridge.poll() is not None:
                raise HarnessError(f"tmm-bridge exited ({self.bridge.returncode}):\n{text}")
            return "tmm-bridge: ready\n" in text and reading in text
        if not polling.wait_until(ready, 20, 0.02):
            raise HarnessError(f"tmm-bridge did not log ready and `{reading}` within 20 s:\n{self.bridge_text()}")
        line = next(l for l in self.bridge_text().splitlines() if l.startswith("tmm-bridge: ports: "))
        self.ports = {k: int(v) for k, v in (pair.split("=") for pair in line[len("tmm-bridge: ports: "):].split())}

    def bridge_text(self):
        with open(self.bridge_log_path, "rb") as file:
            return file.read().decode("utf-8", "replace")

    def unlock_and_listen(self):
        context = {"bridge": self.bridge_path, "runtimeDir": self.runtime_dir}
        returl = "tmmapiossample://response/register"
        result = tmmclient.tmm_open(context, tmmclient.ios_register_url(
            tmmclient.ios_register_json(str(uuid.uuid4()), returl)))
        if result.status != 0 or tmmclient.decode_ios_reply(result.reply, returl).get("registrationResult") != "OK":
            raise HarnessError(f"registration did not unlock V2: {result!r}")
        self.v2 = V2Client(f"ws://127.0.0.1:{self.ports['locationV2Port']}/locationV2")
        if not self.v2.connected.wait(10) or self.v2.error:
            raise HarnessError(f"V2 /locationV2: {self.v2.error or 'no connection within 10 s'}")

    def save_streams(self):
        """--keep: the reference client's objects and V2's messages, one JSON line each with the
        arrival time (seconds since the feed started), for a look at a log that is not exact."""
        origin = getattr(self, "feed_started", 0.0)
        if self.watch:
            with open(os.path.join(self.work, "gpsd-watch.jsonl"), "w") as file:
                with self.watch.lock:
                    pairs = list(zip(self.watch.arrivals, self.watch.objects))
                for at, obj in pairs:
                    file.write(json.dumps({"at": round(at - origin, 4), "object": obj}) + "\n")
        with open(os.path.join(self.work, "writes.jsonl"), "w") as file:
            for at, size in getattr(self, "writes", []):
                file.write(json.dumps({"at": round(at - origin, 4), "bytes": size}) + "\n")
        if self.v2:
            with open(os.path.join(self.work, "v2.jsonl"), "w") as file:
                for at, message in self.v2.snapshot():
                    file.write(json.dumps({"at": round(at - origin, 4), "message": message}) + "\n")

    def close(self):
        if self.v2:
            self.v2.close()
        if self.bridge and self.bridge.poll() is None:
            self.bridge.send_signal(signal.SIGTERM)
            try:
                self.bridge.wait(15)
            except subprocess.TimeoutExpired:
                self.bridge.kill()
                self.bridge.wait()
        if self.watch:
            self.watch.close()
        if self.gpsd and self.gpsd.poll() is None:
            self.gpsd.terminate()
            try:
                self.gpsd.wait(5)
            except subprocess.TimeoutExpired:
                self.gpsd.kill()
                self.gpsd.wait()
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
        if getattr(self, "bridge_log", None):
            self.bridge_log.close()


class Pacer:
    """The pacing of `feed` (its docstring says why): counts the TPVs gpsd printed for each
    time, and after the packet that completed a time waits the epoch's gap and, at most
    `behind_limit`, for V2 to have the epoch before."""

    def __init__(self, options, tpvs_per_time, started):
        self.options = options
        self.tpvs_per_time = tpvs_per_time
        self.epoch = None  # receiver time (ms) of the newest TPV time gpsd printed
        self.previous = None  # the time gpsd printed before it
        self.epoch_seen = started  # when its first TPV arrived
        self.printed_of = {}  # TPVs gpsd printed so far for each time
        self.gap = options.cycle_gap
        self.epochs = 0
        self.waited = 0.0
        self.behind = {"waits": 0, "seconds": 0.0, "timeouts": 0}

    def completes_a_time(self, fresh):
        """Counts the TPVs in `fresh` ((arrival, object) pairs gpsd printed for the last packet);
        True when the last of them completed its time."""
        options = self.options
        complete = False
        for at, obj in fresh:
            if obj.get("class") != "TPV":
                continue
            ms = iso_ms(obj.get("time"))
            if ms is None:
                continue
            self.printed_of[ms] = self.printed_of.get(ms, 0) + 1
            if ms != self.epoch:
                step = abs(ms - self.epoch) / 1000 if self.epoch is not None else options.step_cap
                self.previous, self.epoch, self.epoch_seen = self.epoch, ms, at
                self.gap = max(options.cycle_gap, min(step, options.step_cap) / options.speed_up)
                self.epochs += 1
            complete = self.printed_of[ms] >= self.tpvs_per_time.get(ms, 0)
        return complete

    def wait_for_next_epoch(self, v2):
        # The next epoch starts no sooner than `gap` after this one's first TPV.
        delay = self.epoch_seen + self.gap - time.monotonic()
        if delay > 0:
            time.sleep(delay)
            self.waited += delay
        # ... and not before the bridge has sent V2 the epoch before this one (it serves a
        # time when the next time's TPV arrives), unless that takes `behind_limit`: a bridge
        # slowed by a busy machine must not be handed two epochs in one read either.
        previous = self.previous
        if previous is not None and not v2.has_time(previous):
            self.behind["waits"] += 1
            begun = time.monotonic()
            if not polling.wait_until(lambda: v2.has_time(previous), self.options.behind_limit, 0.002):
                self.behind["timeouts"] += 1
            self.behind["seconds"] += time.monotonic() - begun

    def figures(self):
        return {"epochs": self.epochs, "pacingWaitSeconds": round(self.waited, 3),
                "v2BehindWaits": self.behind["waits"], "v2BehindSeconds": round(self.behind["seconds"], 3),
                "v2BehindTimeouts": self.behind["timeouts"]}


def feed(run, load, options, tpvs_per_time):
    """Writes the packets as gpsfake does, paced by the receiver's time; returns (packets,
    seconds, the pacing figures).

    gpsfake writes as fast as gpsd reads; a receiver sends one burst of packets per epoch and
    then waits for the next (1 s for most of these logs). Written back to back, several epochs
    reach gpsd, and from it the bridge, in one TCP segment: gpsd does not set TCP_NODELAY and
    its clients acknowledge late (up to 40 ms), so Nagle holds its small writes together. The
    bridge serves a time's fix when the next time's TPV arrives (or its hold ends), so one such
    segment yields two epochs at once, and its LocationV2 pacer sends only the freshest of
    epochs waiting together that are more than 250 ms of receiver time apart (the rule for a
    backlog after a stall; a live receiver never makes one). The reference client is slowed the
    same way, so a harness pacing by what it sees writes epochs ahead unseen. So the harness
    paces by the receiver's time as gpsd prints it:

    - one packet every `packet_gap`, then `?VERSION` on the reference client (`GPSDWatch.ping`):
      when gpsd's answer is there, so is every TPV gpsd printed for the packet, however late
      TCP or a busy machine brings it (no blind writing ahead of gpsd);
    - after the packet that made gpsd print the last TPV of a time (the `.chk` says how many
      TPVs gpsd prints for each time: TSIP up to 6, u-blox 2; a time the `.chk` lacks counts as
      complete at once), the feed waits until `gap` after gpsd's first TPV of that time:
      gap = max(cycle_gap, min(step, step_cap) / speed_up), step being the receiver time since
      the previous time gpsd printed (step_cap for the first). Two epochs thus reach gpsd no
      closer than the receiver's period shortened `speed_up` times, and never closer than
      `cycle_gap` (defaults: 1 Hz 50 ms, anything faster 40 ms, which also covers TSIP's odd
      times 438 ms apart), while the later TPVs of a time follow at once (within the bridge's
      hold, a quarter period of at most 100 ms, as a receiver's burst does); packets written
      within an epoch count towards its gap;
    - then, if V2 has not yet received the epoch before this one (the bridge serves a time when
      the next time's TPV arrives, so it normally has), a wait for it of at most
      `behind_limit` (0.3 s): a bridge slowed by a busy machine is not handed the next epoch
      while two are still unread (seen once in ~4,000 1 Hz epochs without it: hpg1.11, 1
      missing). It waits only where the bridge is behind or has lost the epoch (navisys-gr701w
      once, oncore-binary-pos-hold 3 times: those time out).

    What a replay 20 times faster than the receiver cannot keep: where gpsd prints a time's
    last TPV only with the next epoch's first packet (its u-blox driver when NAV-DOP comes
    before NAV-PVT, hwtests/README.md), a live receiver makes that TPV a period late, past the
    bridge's short hold, and the bridge then waits a period for every time (docs/input.md, "A
    stream that re-reports times late"); replayed, it would come within the hold. No u-blox log
    here has that order (each epoch starts with NAV-SOL, NAV-PVT or, hpg1.11, NAV-CLOCK), so
    this suite exercises the short hold only.

    Measured (2026-12-06, debug bridge; 8 logs with 1 Hz epochs, a fixed gap after each
    epoch's last TPV): none lost at 30 or 40 ms; at 15 ms ublox-zed-f9t-rtcm3 lost 4 epochs and
    hpg1.11 3; with no gap 4 of the 8 logs lost 4-22. So the defaults leave a margin of about
    twice the least gap that worked, and cost ~50 ms a 1 Hz epoch (hpg1.11, 654 epochs: ~35 s)."""
    started = time.monotonic()
    run.feed_started = started
    run.writes = []
    seen = len(run.watch.snapshot())
    pacer = Pacer(options, tpvs_per_time, started)
    for packet in load.sentences:
        if b"%Delay:" in packet:
            time.sleep(int(packet.split()[1]))
        run.writes.append((time.monotonic(), len(packet)))
        write_all(run.master, packet)
        time.sleep(max(options.packet_gap, load.delay))
        run.watch.ping()
        with run.watch.lock:
            fresh = list(zip(run.watch.arrivals[seen:], run.watch.objects[seen:]))
        seen += len(fresh)
        if pacer.completes_a_time(fresh):
            pacer.wait_for_next_epoch(run.v2)
    return len(load.sentences), time.monotonic() - started, pacer.figures()


def match_times(reference, messages):
    """Which time of gpsd's fixes each V2 message with a position is: its full time, else its
    time of day when that is unique, else one within 10 ms (a time rounded on the way). Returns
    (the messages of each matched time, the times of the extra messages, how many were matched
    by rounding, messages with a position, messages without)."""
    by_full = {}
    by_day = {}
    for ms in reference:
        by_full[ms] = ms
        by_day.setdefault(ms % 86_400_000, []).append(ms)
    arrivals = {}
    extras = []
    time_off = 0
    fix_messages = 0
    no_fix_messages = 0
    for _, message in messages:
        if message.get("latitude") is None or message.get("longitude") is None:
            no_fix_messages += 1
            continue
        fix_messages += 1
        full, day = v2_time_ms(message)
        key = None
        if full is not None and full in by_full:
            key = full
        elif day is not None and len(by_day.get(day, [])) == 1:
            key = by_day[day][0]
        if key is None and (full is not None or day is not None):
            # A time gpsd has, but rounded on the way (pseudo-NMEA has centiseconds).
            probe = full if full is not None else None
            candidates = [ms for ms in reference
                          if (abs(ms - probe) <= 10 if probe is not None else abs(ms % 86_400_000 - day) <= 10)]
            if len(candidates) == 1:
                key = candidates[0]
                time_off += 1
        if key is None:
            extras.append(message.get("utcTimeStamp") or message.get("utcTime"))
            continue
        arrivals.setdefault(key, []).append(message)
    return arrivals, extras, time_off, fix_messages, no_fix_messages


class ValueErrors:
    """compare's check of each matched time's first V2 message against gpsd's TPV (and GST):
    the problems counted by field, up to five examples, the largest errors."""

    def __init__(self):
        self.horizontal = 0.0
        self.height = 0.0
        self.worst = {"lat": 0.0, "lon": 0.0, "altitude": 0.0, "mslHeight": 0.0, "undulation": 0.0}
        self.problems = {"position": 0, "altitude": 0, "mslHeight": 0, "undulation": 0, "diffStatus": 0, "hrms": 0,
                         "vrms": 0}
        self.examples = []
        self.hrms_without_gst = 0
        self.gst_epochs = 0
        self.gst_ok = 0

    def check(self, ms, tpv, gst, message):
        issues = []
        self.check_position(tpv, message, issues)
        self.check_heights(tpv, message, issues)
        self.check_diff_status(tpv, message, issues)
        self.check_gst(gst, message, issues)
        if issues and len(self.examples) < 5:
            self.examples.append(f"{iso_text(ms)}: " + "; ".join(issues))

    def check_position(self, tpv, message, issues):
        """Latitude and longitude to 1e-9 degrees."""
        dlat = message["latitude"] - tpv["lat"]
        dlon = message["longitude"] - tpv["lon"]
        self.worst["lat"] = max(self.worst["lat"], abs(dlat))
        self.worst["lon"] = max(self.worst["lon"], abs(dlon))
        metres = math.hypot(math.radians(dlat) * EARTH_RADIUS,
                            math.radians(dlon) * EARTH_RADIUS * math.cos(math.radians(tpv["lat"])))
        self.horizontal = max(self.horizontal, metres)
        if abs(dlat) > DEGREES or abs(dlon) > DEGREES:
            self.problems["position"] += 1
            issues.append(f"lat {message['latitude']!r} lon {message['longitude']!r} != {tpv['lat']!r} {tpv['lon']!r}")

    def check_heights(self, tpv, message, issues):
        """altitude, mslHeight and undulation to 1 mm: altHAE, altMSL and geoidSep."""
        hae = tpv.get("altHAE")
        if hae is None and tpv.get("altMSL") is not None and tpv.get("geoidSep") is not None:
            hae = tpv["altMSL"] + tpv["geoidSep"]
        separation = tpv.get("geoidSep")
        implied = None
        if separation is None and tpv.get("altHAE") is not None and tpv.get("altMSL") is not None:
            implied = tpv["altHAE"] - tpv["altMSL"]  # TSIP, SkyTraq, ublox-8-time: no geoidSep printed
        for name, expected in (("altitude", hae), ("mslHeight", tpv.get("altMSL")), ("undulation", separation)):
            actual = message.get(name)
            if expected is None and actual is None:
                continue
            if name == "undulation" and expected is None and implied is not None:
                # gpsd printed no geoidSep: null, or altHAE - altMSL to 1 mm, are both its word.
                if not isinstance(actual, (int, float)) or abs(actual - implied) > METRES:
                    self.problems[name] += 1
                    issues.append(f"undulation {actual!r}: gpsd printed none, altHAE - altMSL = {implied:.4f}")
                continue
            if expected is None or actual is None:
                self.problems[name] += 1
                issues.append(f"{name} {actual!r}, gpsd {expected!r}")
                continue
            error = abs(actual - expected)
            self.worst[name] = max(self.worst[name], error)
            if name != "undulation":
                self.height = max(self.height, error)
            if error > METRES:
                self.problems[name] += 1
                issues.append(f"{name} {actual!r} != {expected!r}")

    def check_diff_status(self, tpv, message, issues):
        expected_status = DIFF_STATUS.get(tpv.get("status"), 1)
        if message.get("diffStatus") != expected_status:
            self.problems["diffStatus"] += 1
            issues.append(f"diffStatus {message.get('diffStatus')!r} for TPV status {tpv.get('status')!r}")

    def check_gst(self, gst, message, issues):
        """hrms and vrms from a GST of that time, when gpsd printed one."""
        if gst is not None and gst.get("lat") is not None and gst.get("lon") is not None:
            self.gst_epochs += 1
            expected_h = math.hypot(gst["lat"], gst["lon"])
            expected_v = gst.get("alt")
            ok = True
            if not isinstance(message.get("hrms"), (int, float)) or abs(message["hrms"] - expected_h) > GST_TOLERANCE:
                self.problems["hrms"] += 1
                ok = False
                issues.append(f"hrms {message.get('hrms')!r} != {expected_h:.4f}")
            if expected_v is not None and (not isinstance(message.get("vrms"), (int, float))
                                           or abs(message["vrms"] - expected_v) > GST_TOLERANCE):
                self.problems["vrms"] += 1
                ok = False
                issues.append(f"vrms {message.get('vrms')!r} != {expected_v!r}")
            self.gst_ok += ok
        elif message.get("hrms") is not None:
            self.hrms_without_gst += 1


def compare(reference, messages):
    """The bridge's V2 messages against gpsd's fixes (fixes_of). Returns the figures."""
    arrivals, extras, time_off, fix_messages, no_fix_messages = match_times(reference, messages)
    errors = ValueErrors()
    for ms, messages_at in arrivals.items():
        errors.check(ms, reference[ms]["tpv"], reference[ms]["gst"], messages_at[0])
    reached = len(arrivals)
    once = sum(1 for v in arrivals.values() if len(v) == 1)
    duplicates = sum(len(v) - 1 for v in arrivals.values())
    missing = sorted(set(reference) - set(arrivals))
    values_exact = not any(errors.problems.values()) and time_off == 0
    return {
        "expected": len(reference),
        "reached": reached,
        "once": once,
        "duplicates": duplicates,
        "missing": len(missing),
        "missingExamples": [iso_text(ms) for ms in missing[:5]],
        "extras": len(extras),
        "extraExamples": [str(e) for e in extras[:5]],
        "timeRounded": time_off,
        "v2FixMessages": fix_messages,
        "v2NoFixMessages": no_fix_messages,
        "horizontalErrorMaxMetres": errors.horizontal,
        "heightErrorMaxMetres": errors.height,
        "worst": errors.worst,
        "problems": errors.problems,
        "examples": errors.examples,
        "gstEpochs": errors.gst_epochs,
        "gstExact": errors.gst_ok,
        "hrmsWithoutGST": errors.hrms_without_gst,
        "exact": bool(reference) and reached == len(reference) and once == reached and not extras and values_exact,
    }


def tpvs_per_time_of(chk_objects):
    """How many TPVs the `.chk` has for each time (ms)."""
    tpvs_per_time = {}
    for obj in chk_objects:
        ms = iso_ms(obj.get("time")) if obj.get("class") == "TPV" else None
        if ms is not None:
            tpvs_per_time[ms] = tpvs_per_time.get(ms, 0) + 1
    return tpvs_per_time


def run_log(bridge, suite, name, options):
    log_path = os.path.join(suite, "binary", name)
    if not (os.path.isfile(log_path) and os.path.isfile(log_path + ".chk")):
        return {"log": name, "seconds": 0.0,
                "harnessError": f"{log_path} or its .chk is not in the suite (scripts/fetch-gpsd-suite.sh; captures.tsv says why)"}
    chk_objects = read_chk(log_path + ".chk")
    chk_fixes, chk_untimed = fixes_of(chk_objects)
    tpvs_per_time = tpvs_per_time_of(chk_objects)
    load = gpsfake.TestLoad(log_path, oneshot=True)
    speed = load.serial[0] if load.serial else 38400
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="binary-suite-")
    os.chmod(work, 0o755)  # the bridge drops root (to nobody) and must reach its directories
    run = Run(bridge, work, speed)
    result = {"log": name}
    try:
        replay(run, load, options, tpvs_per_time, chk_fixes, chk_untimed, started, result)
    except HarnessError as error:
        result["harnessError"] = str(error)[-3000:]
    finally:
        run.close()
        result["seconds"] = time.monotonic() - started
        if options.keep:
            run.save_streams()
            result["workDirectory"] = work
        else:
            shutil.rmtree(work, ignore_errors=True)
    return result


def replay(run, load, options, tpvs_per_time, chk_fixes, chk_untimed, started, result):
    """gpsd, the bridge and V2 started, the log fed, the end awaited; the figures go into
    `result` as they are known (a HarnessError leaves those known before it)."""
    run.start_gpsd()
    run.start_bridge()
    run.unlock_and_listen()
    ready = time.monotonic()
    probe = StatusProbe(run)
    packets, feeding, pacing = feed(run, load, options, tpvs_per_time)
    wait_until_gpsd_closed_device(run, options)
    status = probe.finish()
    live_fixes, live_untimed = fixes_of(run.watch.snapshot())
    end_of_input = time.monotonic()
    wait_until_v2_settled(run, options, live_fixes, end_of_input)
    # A few ms more, so that a duplicate right behind the last expected epoch is counted.
    time.sleep(0.05)
    messages = run.v2.snapshot()
    objects = run.watch.snapshot()
    result.update(compare(live_fixes, messages))
    result["status"] = status
    # The receiver's epochs must be read from gpsd's JSON (a binary driver has no NMEA of
    # its own); a log whose epochs reached V2 is not exact unless `status` says so.
    if not status.get("ok") and (status.get("checked") or result["expected"]):
        result["exact"] = False
    facts = stream_facts(objects)
    result.update({
        "driver": facts["drivers"][-1] if facts["drivers"] else None,
        "gpsd": facts,
        "chkFixes": len(chk_fixes),
        "chkUntimedFixes": chk_untimed,
        "liveUntimedFixes": live_untimed,
        "tpvsPerFixTimeMax": max((entry["tpvs"] for entry in live_fixes.values()), default=0),
        "liveDiffersFromChk": same_fixes(live_fixes, chk_fixes),
        "againstChk": {k: v for k, v in compare(chk_fixes, messages).items()
                       if k in ("reached", "once", "extras", "horizontalErrorMaxMetres", "heightErrorMaxMetres",
                                "exact")},
        "packets": packets,
        "pacing": pacing,
        "startSeconds": ready - started,
        "feedSeconds": feeding,
        "settleSeconds": time.monotonic() - end_of_input,
        "bridgeWarnings": [l for l in run.bridge_text().splitlines()
                           if "warning" in l.lower() or "error" in l.lower()][:5],
    })


def wait_until_gpsd_closed_device(run, options):
    # gpsd closes the device on `# EOF` (DEVICE with "activated":0); then wait for the bridge.
    polling.wait_until(lambda: run.watch.count(lambda o: o.get("class") == "DEVICE" and o.get("path") == run.device
                                               and o.get("activated") == 0)
                       or time.monotonic() - run.watch.last_arrival > options.settle, 30, 0.02)


def wait_until_v2_settled(run, options, live_fixes, end_of_input):
    """Until every time gpsd printed a fix for has reached V2, or V2 was silent for `settle`
    since the end of the input."""
    def settled():
        messages = run.v2.snapshot()
        times = {v2_time_ms(m)[0] for _, m in messages if m.get("latitude") is not None}
        if live_fixes and set(live_fixes) <= times:
            return True
        last = run.v2.last_arrival or end_of_input
        return time.monotonic() - max(last, end_of_input) > options.settle
    polling.wait_until(settled, 60, 0.02)


# ---------------------------------------------------------------------------------------------
# Report

def centimetres(metres):
    if metres == 0:
        return "0"
    if metres < 1e-3:
        return f"{metres * 1000:.2g} mm"
    if metres < 1:
        return f"{metres * 100:.1f} cm"
    return f"{metres:.2f} m"


def verdict(result):
    if "harnessError" in result:
        return "harness error"
    if result["expected"] == 0:
        problem = "".join(f"; {p}" for p in status_problem(result))
        if result["liveUntimedFixes"]:
            return f"gpsd's fixes have no time ({result['liveUntimedFixes']} TPVs): nothing to match" + problem
        return ("gpsd makes no fix" + (" (.chk: none either)" if result["chkFixes"] == 0 else f" (.chk: {result['chkFixes']})")
                + problem)
    if result["exact"]:
        return "**exact**"
    reasons = []
    if result["reached"] < result["expected"]:
        reasons.append(f"{result['expected'] - result['reached']} missing")
    if result["duplicates"]:
        reasons.append(f"{result['duplicates']} duplicates")
    if result["extras"]:
        reasons.append(f"{result['extras']} extra")
    if result["timeRounded"]:
        reasons.append(f"{result['timeRounded']} times rounded")
    for key, count in result["problems"].items():
        if count:
            reasons.append(f"{key} {count}")
    reasons += status_problem(result)
    return "not exact: " + ", ".join(reasons)


def status_problem(result):
    """The `tmm-bridge status` check, as a reason a log is not exact (empty when it passed)."""
    status = result.get("status") or {}
    if status.get("ok"):
        return []
    if not status.get("checked"):
        return [f"status not checked ({status.get('why', '?')})"] if result.get("expected") else []
    if "epochSource" in status:
        return [f"status epochSource {status['epochSource']!r}, not 'gpsd-json'"]
    return [f"status: {status.get('why')}"]


def table(results):
    lines = ["| log (driver) | gpsd fixes (mode>=2) | reached V2 | once each | horizontal error max | "
             "height error max | hrms/vrms | gpsd on pty = .chk | verdict | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "harnessError" in r:
            lines.append(f"| {r['log']} | | | | | | | | harness error: {r['harnessError'][:80]!r} | {r['seconds']:.1f} |")
            continue
        fixes = str(r["expected"]) + (f" (.chk {r['chkFixes']})" if r["chkFixes"] != r["expected"] else "")
        if r["liveUntimedFixes"]:
            fixes += f" + {r['liveUntimedFixes']} untimed"
        if r["gstEpochs"]:
            gst = f"{r['gstExact']}/{r['gstEpochs']} GST epochs exact"
        else:
            gst = "no GST" + (f" (hrms sent {r['hrmsWithoutGST']}×)" if r["hrmsWithoutGST"] else "")
        same = "yes" if r["liveDiffersFromChk"] is None else "no: " + ", ".join(
            f"{k} {v}" for k, v in r["liveDiffersFromChk"].items() if v)
        reached = r["reached"] if r["expected"] else "-"
        once = (f"{r['once']}" + (f" (+{r['duplicates']} dup)" if r["duplicates"] else "")) if r["expected"] else "-"
        horizontal = centimetres(r["horizontalErrorMaxMetres"]) if r["reached"] else "-"
        height = centimetres(r["heightErrorMaxMetres"]) if r["reached"] else "-"
        lines.append(f"| {r['log']} ({r['driver']}) | {fixes} | {reached} | {once} | {horizontal} | {height} | {gst} | "
                     f"{same} | {verdict(r)} | {r['seconds']:.1f} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bridge", help="the tmm-bridge binary, e.g. .build/debug/tmm-bridge")
    parser.add_argument("--suite", default=None,
                        help="the fetched suite (default $GPSD_SUITE_DIR, else .build/gpsd-suite next to this repo)")
    parser.add_argument("--logs", default="", help="comma-separated log names (default: every log in SUITE/binary)")
    parser.add_argument("--exclude", default="", help="comma-separated log names to leave out")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--expect-exact", action="store_true",
                        help="exit 1 when a log in which gpsd makes fixes is not exact (default: report only)")
    parser.add_argument("--packet-gap", type=float, default=0.002, help="seconds after each packet (default 0.002)")
    parser.add_argument("--cycle-gap", type=float, default=0.04,
                        help="least seconds between two epochs (gpsd's first TPV of each time) (default 0.04)")
    parser.add_argument("--speed-up", type=float, default=20.0,
                        help="epochs reach gpsd no closer than the receiver's time step divided by this (default 20)")
    parser.add_argument("--behind-limit", type=float, default=0.3,
                        help="most seconds to wait for V2 to get the epoch before the one just printed (default 0.3)")
    parser.add_argument("--step-cap", type=float, default=1.0,
                        help="receiver time steps longer than this many seconds count as this (default 1)")
    parser.add_argument("--settle", type=float, default=2.5,
                        help="seconds of V2 silence after the input that end a log whose epochs did not all arrive")
    parser.add_argument("--keep", action="store_true", help="keep each log's work directory (bridge.log, gpsd.log)")
    options = parser.parse_args()

    suite = options.suite or os.environ.get("GPSD_SUITE_DIR") or checkout.path(".build", "gpsd-suite")
    suite = os.path.abspath(suite)
    binary = os.path.join(suite, "binary")
    if not os.path.isdir(binary):
        print(f"binary_suite: no {binary}: run scripts/fetch-gpsd-suite.sh first", file=sys.stderr)
        return 2
    bridge = os.path.abspath(options.bridge)
    if not os.access(bridge, os.X_OK):
        print(f"binary_suite: {bridge} is not an executable", file=sys.stderr)
        return 2
    if shutil.which("gpsd") is None and not os.path.exists("/usr/sbin/gpsd"):
        print("binary_suite: gpsd not found (apt-get install gpsd)", file=sys.stderr)
        return 2
    os.environ["PATH"] = os.environ.get("PATH", "") + ":/usr/sbin"
    names = [n for n in options.logs.split(",") if n] or sorted(n for n in os.listdir(binary) if n.endswith(".log"))
    excluded = {n for n in options.exclude.split(",") if n}
    names = [n for n in names if n not in excluded]
    results = []
    total = time.monotonic()
    for name in names:
        result = run_log(bridge, suite, name, options)
        results.append(result)
        log_line(f"binary_suite: {name}: {verdict(result)} ({result['seconds']:.1f} s)")
    elapsed = time.monotonic() - total
    print(table(results))
    print(f"\n{len(results)} logs in {elapsed:.1f} s")
    checked = [r for r in results if (r.get("status") or {}).get("checked")]
    sources = {}
    for r in checked:
        sources[str(r["status"].get("epochSource"))] = sources.get(str(r["status"].get("epochSource")), 0) + 1
    print(f"tmm-bridge status --json: {len(checked)} logs checked while playing, epochSource "
          + (", ".join(f"{k} {v}" for k, v in sorted(sources.items())) or "-")
          + f"; not checked (no epoch reached V2 while the log played): {len(results) - len(checked)}")
    if options.json:
        with open(options.json, "w") as file:
            json.dump({"bridge": bridge, "suite": suite, "packetGap": options.packet_gap,
                       "cycleGap": options.cycle_gap, "speedUp": options.speed_up, "stepCap": options.step_cap,
                       "seconds": elapsed, "logs": results}, file, indent=1)
    harness_failed = any("harnessError" in r for r in results)
    not_exact = [r["log"] for r in results if "harnessError" not in r and r["expected"] and not r["exact"]]
    if harness_failed:
        return 2
    if options.expect_exact and not_exact:
        print(f"not exact: {', '.join(not_exact)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
