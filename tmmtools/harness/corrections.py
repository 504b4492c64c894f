"""RTK corrections in the hardware-in-the-loop runs (issue 23): the caster of a scenario's
[corrections] section, the bridge configured through REST, its status and /events watched, and
the checks (hwtests/README.md, "Corrections").

The chain under test: a caster (RTKLIB's str2str, NTRIP Rev 1, or tmmtools.peers.ntrip_caster,
Rev 2) → the bridge's NTRIP client (configured with `PUT /api/v1/correctionSource`) → the served
receiver's device (tmm-sim's pty, written by gpsd or directly) → tmm-sim's corrections input,
whose RTK fix follows the frames it validates (sim/corrections.py) → gpsd → the bridge → V2.

Everything the runner assumes about the bridge's side is named in the first section below and
nowhere else: the status object and its keys, the states, the /events names, the REST body.
Key names are looked up leniently (case, '-', '_' ignored) until the bridge's side is settled.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import subprocess
import threading
import time

from tmmtools import checkout, polling
from tmmtools.client import tmmclient
from tmmtools.harness.bench import BenchError, stop_process
from tmmtools.harness.verify import DIFF_STATUS, SOLUTION_TYPE, Check, gpsd_reported_quality, match, utc_key
from tmmtools.peers.str2str_caster import STR2STR, Str2strCaster
from tmmtools.sim.corrections import Limits

# --- what the runner expects of the bridge: the one place these names are written -----------------
REST_PATH = "/api/v1/correctionSource"
STATUS_OBJECT = "corrections"  # `tmm-bridge status --json`: {"corrections": {...}}
STATUS_KEYS = {  # our name → the bridge's key
    "state": "state", "caster": "caster", "mount": "mountPoint", "bytes": "bytes", "frames": "frames",
    "dropped": "framesDropped", "damaged": "damagedFrames", "age": "lastFrameAge", "gga": "ggaSent",
    "since": "since", "revision": "revision", "station": "stationID",
}
STATE_STREAMING = "streaming"
STATE_LOGIN_REFUSED = "login-refused"
EVENT_CONNECTED = "correctionsConnected"
EVENT_LOST = "correctionsLost"
EVENT_LOGIN_REFUSED = "correctionsLoginRefused"
V2_AGE, V2_STATION = "diffAge", "diffID"  # LocationV2 (docs/TMM-API.md §6.4): seconds; "-1" or 4 digits


def rest_body(host: str, port: int, source, password: str | None = None) -> dict:
    """The PUT body, spelled as TMM's samples spell it (PascalCase keys)."""
    return {"CorrectionSource": "ntrip", "ServerAddress": host, "ServerPort": port, "NtripMountPoint": source.mount,
            "NtripUserName": source.user, "NtripPassword": source.password if password is None else password}


def _normal(name) -> str:
    return "".join(c for c in str(name).lower() if c.isalnum())


def status_field(corrections: dict | None, name: str):
    """A field of the bridge's corrections status by our name (STATUS_KEYS), leniently matched."""
    if not isinstance(corrections, dict):
        return None
    wanted = _normal(STATUS_KEYS[name])
    return next((v for k, v in corrections.items() if _normal(k) == wanted), None)


def same_state(value, state: str) -> bool:
    return value is not None and _normal(value) == _normal(state)


def station_text(station: int) -> str:
    """LocationV2's diffID of a station id."""
    return f"{station:04d}"


# --- casters ---------------------------------------------------------------------------------------
class TestCaster:
    """tmmtools.peers.ntrip_caster as a child process (NTRIP Rev 2; Rev 1 to a Rev 1 request); its
    JSON log (every request, login and GGA) is kept at `log_path`. `start` again after `kill`
    serves the same port."""
    kind, revision = "test-caster", 2

    def __init__(self, source, log_path: str, port: int = 0):
        self.source = source
        self.log_path = log_path
        self.port = port
        self.process = None
        self.starts = 0

    def start(self, seconds: float = 10) -> "TestCaster":
        if self.running():
            return self
        s = self.source
        arguments = checkout.module_command("peers.ntrip_caster", "--port", str(self.port), "--mount", s.mount,
                                            "--user", s.user, "--password", s.password,
                                            "--station-id", str(s.station_id), "--log", self.log_path)
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        def said_something():
            return self.process.poll() is not None or select.select([self.process.stdout], [], [], 0)[0]
        polling.wait_until(said_something, seconds, what="the test caster's port")
        line = self.process.stdout.readline()
        if not line.startswith("listening "):
            raise polling.TimedOut(f"the test caster did not start ({self.process.wait()}): {line!r}")
        self.port = int(line.split()[1])
        self.starts += 1
        return self

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, sig: int = signal.SIGTERM):
        if self.process is not None:
            stop_process(self.process, 10, sig)
            self.process.stdout.close()
        self.process = None

    def kill(self):
        self.stop(signal.SIGKILL)

    def records(self) -> list[dict]:
        try:
            with open(self.log_path, encoding="utf-8") as handle:
                return [json.loads(line) for line in handle if line.strip()]
        except OSError:
            return []


class Str2str(Str2strCaster):
    """RTKLIB's str2str (tmmtools/peers/str2str_caster.py): NTRIP Rev 1 only, no request log."""
    kind, revision = "str2str", 1

    def __init__(self, source, log_path: str, port: int = 0):
        super().__init__(port, source.mount, source.user, source.password, source.station_id, log_path)
        self.source = source

    @staticmethod
    def records() -> list[dict]:
        return []


def make_caster(source, out_dir: str):
    """The caster a [corrections] section names, not started; its log in `out_dir`."""
    if source.caster == "str2str":
        return Str2str(source, os.path.join(out_dir, "str2str.log"))
    return TestCaster(source, os.path.join(out_dir, "caster.jsonl"))


class StandIn:
    """str2str's NTRIP client (Rev 1) writing a caster's frames straight to the receiver's pty, in
    place of the bridge's client, reconnecting every second (`-r 1000`)."""

    def __init__(self, log_path: str):
        self.log_path = log_path
        self.process = None

    def start(self, port: int, source, device: str, password: str | None = None):
        self.stop()
        login = f"{source.user}:{source.password if password is None else password}"
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([STR2STR, "-in", f"ntrip://{login}@127.0.0.1:{port}/{source.mount}",
                                             "-r", "1000", "-out", f"file://{device}"],
                                            stdout=log, stderr=log, stdin=subprocess.DEVNULL)

    def stop(self):
        if self.process is not None:
            stop_process(self.process, 10)
        self.process = None


# --- the bridge's status, polled ---------------------------------------------------------------------
class StatusWatch:
    """`tmm-bridge status --json` every `interval` s: (wall time, the `name` object (the
    corrections one unless told; harness/fleet.py watches "fleet") or None, the error) per poll."""

    def __init__(self, bridge: str, runtime_dir: str, interval: float = 0.5, name: str = STATUS_OBJECT):
        self.command = [bridge, "status", "--json", "--runtime-dir", runtime_dir]
        self.interval = interval
        self.name = name
        self.samples: list[tuple[float, dict | None, str]] = []
        self.whole: dict | None = None  # the last whole status document
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="status", daemon=True)

    def start(self) -> "StatusWatch":
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(self.interval):
            try:
                done = subprocess.run(self.command, capture_output=True, text=True, timeout=5)
                document = json.loads(done.stdout) if done.returncode == 0 else None
            except (OSError, subprocess.SubprocessError, ValueError) as error:
                self.samples.append((time.time(), None, str(error)))
                continue
            if document is None:
                self.samples.append((time.time(), None, (done.stderr or "").strip()[:200]))
                continue
            self.whole = document
            corrections = next((v for k, v in document.items() if _normal(k) == _normal(self.name)), None)
            self.samples.append((time.time(), corrections, "" if corrections is not None else
                                 f"no {self.name!r} in the status"))

    def stop(self):
        self._stop.set()
        self._thread.join(10)

    def save(self, path: str):
        with open(path, "w", encoding="utf-8") as handle:
            for wall, corrections, error in self.samples:
                record = {"wall": wall, self.name: corrections, "error": error}
                handle.write(json.dumps(record, sort_keys=True) + "\n")


# --- one scenario's session ---------------------------------------------------------------------------
class Session:
    """A corrections scenario's side of the run: its caster, the REST configuration, the caster
    actions the simulator announces (`caster-kill`, `caster-restart`, `wrong-password`,
    `restore-password`), the status watch; then `checks`. Every action is recorded with its wall
    time: {"kind", "wall", "status" (the PUT's HTTP status) or "port"}."""

    def __init__(self, scenario, out_dir: str, bench, application_id: str, api_port: int, stand_in: bool = False):
        self.scenario = scenario
        self.source = scenario.corrections
        self.out_dir = out_dir
        self.caster = make_caster(self.source, out_dir)
        self.client = tmmclient.MauiClient("127.0.0.1", api_port, application_id)
        self.status = StatusWatch(bench.bridge_path, bench.runtime_dir)
        self.actions: list[dict] = []
        # --ntrip-stand-in: str2str's NTRIP client writes the caster's RTCM to the receiver's device
        # as the bridge will, so the rest of the chain can be checked before the bridge streams.
        self.stand_in = StandIn(os.path.join(out_dir, "stand-in.log")) if stand_in else None
        self.device: str | None = None

    def start(self) -> "Session":
        try:
            self.caster.start()
        except (polling.TimedOut, OSError) as error:
            raise BenchError(f"the {self.source.caster} caster did not start: {error}") from None
        self.status.start()
        return self

    def configure(self, kind: str = "configure", password: str | None = None, device: str | None = None) -> dict:
        """PUT /api/v1/correctionSource at the caster (with `password` instead of the right one);
        `device`: the receiver's (for the stand-in)."""
        self.device = device or self.device
        if self.stand_in and self.device:
            self.stand_in.start(self.caster.port, self.source, self.device, password)
        body = rest_body("127.0.0.1", self.caster.port, self.source, password)
        wall = time.time()
        try:
            response = self.client.put(REST_PATH, body)
            action = {"kind": kind, "wall": wall, "status": response.status,
                      "body": response.body[:300].decode("utf-8", "replace")}
        except (OSError, http.client.HTTPException) as error:
            action = {"kind": kind, "wall": wall, "status": None, "body": str(error)}
        self.actions.append(action)
        return action

    def on_event(self, event: dict):
        """The simulator's console events: the caster actions are carried out here."""
        kind = event.get("action")
        if kind == "caster-kill":
            self.actions.append({"kind": kind, "wall": time.time()})
            self.caster.kill()
        elif kind == "caster-restart":
            try:
                self.caster.start()
                self.actions.append({"kind": kind, "wall": time.time(), "port": self.caster.port})
            except (polling.TimedOut, OSError) as error:  # the checks after it fail, and say why here
                self.actions.append({"kind": kind, "wall": time.time(), "error": str(error)})
        elif kind == "wrong-password":
            self.configure(kind, password=self.source.password + "-wrong")
        elif kind == "restore-password":
            self.configure(kind)

    def close(self):
        if self.stand_in:
            self.stand_in.stop()
        self.status.stop()
        self.status.save(os.path.join(self.out_dir, "status.jsonl"))
        with open(os.path.join(self.out_dir, "actions.jsonl"), "w", encoding="utf-8") as handle:
            for action in self.actions:
                handle.write(json.dumps(action, sort_keys=True) + "\n")
        self.caster.stop()

    def checks(self, timeline, v2: list, events: list, release: str | None) -> tuple[list, dict]:
        """The corrections checks (below) of this run; (checks, figures with "notes")."""
        limits = next((p.limits for p in self.scenario.phases if p.limits), Limits())
        run = Observed(timeline, v2, events, self.status.samples, self.actions, release,
                       self.scenario.receiver.protocol, limits, self.scenario.expect)
        checks = [received_check(run, self.source.station_id), first_fix_check(run)]
        checks += v2_fix_checks(run, self.source.station_id)
        for index, action in enumerate(self.actions):
            if action["kind"] != "configure":
                checks += ACTION_CHECKS[action["kind"]](run, action, run.window_end(index))
        checks += status_checks(run, self.source, self.caster)
        checks += caster_log_checks(self.caster.records(), self.source)
        figures = dict(run.figures, notes=run.notes)
        return checks, figures


# --- the checks ----------------------------------------------------------------------------------------
class Observed:
    """What one run saw, with the helpers the checks share: the receiver's timeline, V2 and /events
    messages ((arrival, message) pairs), the status samples, the runner's actions."""

    def __init__(self, timeline, v2, events, statuses, actions, release, protocol, limits, expect):
        self.timeline, self.v2, self.events, self.statuses = timeline, v2, events, statuses
        self.actions, self.release, self.protocol = actions, release, protocol
        self.limits, self.expect = limits, expect
        self.truths = [t for t in timeline.truths if t.get("corrections")]
        self.end = max([t["wall"] for t in timeline.truths if t.get("wall")] or [time.time()])
        self.figures: dict = {}
        self.notes: list[str] = []
        fixed = gpsd_reported_quality("fixed", protocol, release)
        self.v2_fixed = DIFF_STATUS[fixed]  # what V2 says of an RTK fixed receiver through this gpsd
        self.fixed_name = SOLUTION_TYPE[fixed]
        if fixed != "fixed":
            self.notes.append(f"gpsd {release} reports UBX RTK fixed as {SOLUTION_TYPE[fixed]}: V2 checked for that")
        self.ages = protocol == "nmea"  # gpsd reads no correction age or station from UBX NAV-PVT (3.26+: age only)
        if not self.ages:
            self.notes.append(f"gpsd {release} reports no diffAge/diffID for a UBX receiver (it reads no station and, "
                              "before 3.26, no age from NAV-PVT): V2's diffAge and diffID are the bridge's (last frame written, "
                              "station of the last 1006), checked while streaming, not against the receiver")

    def window_end(self, index: int) -> float:
        """When the runner's `index`th action stops being the latest: the next action, or the end."""
        later = [a["wall"] for a in self.actions[index + 1:]]
        return later[0] if later else self.end

    def first_truth(self, after: float, before: float, quality: str):
        return next((t for t in self.truths if after <= t["wall"] <= before and t["quality"] == quality), None)

    def first_event(self, after: float, before: float, name: str):
        return next((a for a, e in self.events if after <= a <= before and e.get("event") == name), None)

    def first_state(self, after: float, before: float, state: str):
        return next((w for w, c, _ in self.statuses
                     if after <= w <= before and same_state(status_field(c, "state"), state)), None)

    def received(self) -> dict:
        notes = [n for n in self.timeline.notes if n.get("note") == "received"]
        return notes[-1] if notes else {}


def _seconds(start: float, end) -> str:
    return f"{end - start:.1f} s" if end is not None else "never"


def received_check(run: Observed, station: int) -> Check:
    """The receiver read valid RTCM from the bridge, none damaged, from the right station."""
    got = run.received()
    run.figures["received by the receiver"] = {k: got.get(k) for k in ("bytes", "frames", "damaged", "other_bytes",
                                                                      "station", "messages")}
    passed = bool(got.get("frames")) and got.get("damaged") == 0 and got.get("station") == station
    return Check(f"the receiver read valid RTCM 3 from the bridge (station {station}), no damaged frame", passed,
                 f"{got.get('frames')} frames, {got.get('damaged')} damaged, {got.get('other_bytes')} other bytes "
                 f"(gpsd's probes), station {got.get('station')}, messages {got.get('messages')}")


def first_fix_check(run: Observed) -> Check:
    """RTK fixed on the bridge's corrections, within `rtk-fixed-within` s of the PUT."""
    put = next((a for a in run.actions if a["kind"] == "configure"), None)
    if put is None:
        return Check("PUT /api/v1/correctionSource", False, "never sent")
    limit = run.expect.get("rtk-fixed-within", 20)
    fixed = run.first_truth(put["wall"], run.window_end(run.actions.index(put)), "fixed")
    seconds = fixed["wall"] - put["wall"] if fixed else None
    run.figures["PUT correctionSource → receiver RTK fixed (s)"] = round(seconds, 2) if fixed else None
    ok = put["status"] is not None and 200 <= put["status"] < 300
    return Check(f"PUT {REST_PATH} answered 2xx and the receiver went RTK fixed within {limit} s",
                 ok and fixed is not None and seconds <= limit,
                 f"HTTP {put['status']}; RTK fixed {_seconds(put['wall'], fixed and fixed['wall'])} after the PUT")


def v2_fix_checks(run: Observed, station: int) -> list:
    """V2 reaches RTK fixed (as gpsd reports it) with a small diffAge and the station's diffID, and
    every differential epoch's diffAge and diffID are the receiver's."""
    fixed = [m for _, m in run.v2 if m.get("diffStatus") == run.v2_fixed and m.get("solutionType") == run.fixed_name]
    checks = [Check(f"V2: solutionType {run.fixed_name!r} reached", bool(fixed), f"{len(fixed)} epochs")]
    limit = run.expect.get("diff-age-max", 3.0)
    steady = [m for m in fixed if not isinstance(m.get(V2_AGE), (int, float)) or m.get(V2_AGE) >= limit
              or m.get(V2_STATION) != station_text(station)]
    # While the caster streams: the epochs of RTK fixed before the first action that stops it.
    stops = [a["wall"] for a in run.actions if a["kind"] in ("caster-kill", "wrong-password")]
    streaming = [(a, m) for a, m in run.v2 if m in fixed and (not stops or a < stops[0])]
    steady = [m for a, m in streaming if m in steady]
    checks.append(Check(f"V2: while RTK fixed on a streaming caster, diffAge under {limit:g} s and diffID "
                        f"{station_text(station)!r}", bool(streaming) and not steady,
                        f"{len(streaming)} epochs" + (f"; first off: diffAge {steady[0].get(V2_AGE)!r}, diffID "
                                                      f"{steady[0].get(V2_STATION)!r}" if steady else "")))
    if not run.ages:
        # gpsd says nothing of them for a UBX receiver: what V2 carries is the bridge's own (the age
        # of the last frame it wrote, the station of the last 1005/1006), checked above.
        return checks
    matched, _ = match([t for t in run.truths if "diff_age" in t], run.v2)
    wrong = [f"{t['utc']}: diffAge {m.get(V2_AGE)!r} diffID {m.get(V2_STATION)!r}, receiver {t['diff_age']} "
             f"{station_text(t['station'])}" for t, _, m in (matched[k] for k in sorted(matched))
             if not isinstance(m.get(V2_AGE), (int, float)) or abs(m[V2_AGE] - t["diff_age"]) > 0.051
             or m.get(V2_STATION) != station_text(t["station"])]
    checks.append(Check("V2: diffAge and diffID equal the receiver's GGA (age of corrections, station) in every "
                        "differential epoch", bool(matched) and not wrong,
                        f"{len(matched)} epochs" + (f", {len(wrong)} differ; first: {wrong[0]}" if wrong else "")))
    return checks


def after_kill_checks(run: Observed, action: dict, until: float) -> list:
    """caster-kill: the receiver's corrections age past the limit and its fix falls back; the
    bridge says so (/events, status)."""
    wall, limits = action["wall"], run.limits
    before = [t for t in run.truths if t["wall"] < wall]
    was_fixed = bool(before) and before[-1]["quality"] == "fixed"
    fallen = None
    if was_fixed:
        fallen = run.first_truth(wall, until, "float") or run.first_truth(wall, until, "autonomous")
    ages = [m.get(V2_AGE) for a, m in run.v2 if wall <= a <= until and isinstance(m.get(V2_AGE), (int, float))]
    checks = [Check(f"caster-kill: the receiver, RTK fixed, fell back (age over {limits.age_limit:g} s)",
                    fallen is not None and fallen["wall"] - wall <= limits.age_limit + 3,
                    f"{fallen['quality']} {_seconds(wall, fallen['wall'])} after" if fallen else
                    f"{'no fall-back' if was_fixed else 'not RTK fixed at the kill'}")]
    if run.ages:
        checks.append(Check("caster-kill: V2's diffAge grew past the age limit",
                            bool(ages) and max(ages) > limits.age_limit, f"largest {max(ages) if ages else None!r}"))
    checks.append(_event_check(run, "caster-kill", EVENT_LOST, wall, until))
    lost = next((w for w, c, _ in run.statuses if wall <= w <= until and c is not None
                 and not same_state(status_field(c, "state"), STATE_STREAMING)), None)
    checks.append(Check(f"caster-kill: status state no longer {STATE_STREAMING!r} within 10 s",
                        lost is not None and lost - wall <= 10, _seconds(wall, lost)))
    return checks


def fixed_again_checks(run: Observed, action: dict, until: float) -> list:
    """caster-restart / restore-password: streaming again, and RTK fixed again."""
    wall, kind = action["wall"], action["kind"]
    limit = run.expect.get("rtk-fixed-within", 20)
    fixed = run.first_truth(wall, until, "fixed")
    run.figures[f"{kind} → receiver RTK fixed again (s)"] = round(fixed["wall"] - wall, 2) if fixed else None
    streaming = run.first_state(wall, until, STATE_STREAMING)
    checks = [Check(f"{kind}: the receiver is RTK fixed again within {limit} s", fixed is not None
                    and fixed["wall"] - wall <= limit, _seconds(wall, fixed and fixed["wall"])),
              _event_check(run, kind, EVENT_CONNECTED, wall, until),
              Check(f"{kind}: status state {STATE_STREAMING!r} again", streaming is not None,
                    _seconds(wall, streaming))]
    if "status" in action:
        checks.insert(0, _put_check(action))
    return checks


def login_refused_checks(run: Observed, action: dict, until: float) -> list:
    """wrong-password: the PUT is taken, the caster refuses the login, the bridge says so."""
    wall = action["wall"]
    refused = run.first_state(wall, until, STATE_LOGIN_REFUSED)
    return [_put_check(action),
            Check(f"wrong-password: status state {STATE_LOGIN_REFUSED!r} within 15 s", refused is not None
                  and refused - wall <= 15, _seconds(wall, refused)),
            _event_check(run, "wrong-password", EVENT_LOGIN_REFUSED, wall, until)]


ACTION_CHECKS = {"caster-kill": after_kill_checks, "caster-restart": fixed_again_checks,
                 "wrong-password": login_refused_checks, "restore-password": fixed_again_checks}


def _put_check(action: dict) -> Check:
    ok = action.get("status") is not None and 200 <= action["status"] < 300
    return Check(f"{action['kind']}: PUT {REST_PATH} answered 2xx", ok,
                 f"HTTP {action.get('status')} {action.get('body', '')}")


def _event_check(run: Observed, kind: str, name: str, wall: float, until: float) -> Check:
    seen = run.first_event(wall, until, name)
    return Check(f"{kind}: /events {name}", seen is not None, _seconds(wall, seen))


def status_checks(run: Observed, source, caster) -> list:
    """The bridge's status while streaming names the caster, mount point, station and revision, and
    counts frames; no damaged frame at the end."""
    streaming = [c for _, c, _ in run.statuses
                 if c is not None and same_state(status_field(c, "state"), STATE_STREAMING)]
    errors = sorted({e for _, c, e in run.statuses if c is None and e})
    if not streaming:
        return [Check(f"status: a {STATUS_OBJECT!r} object in state {STATE_STREAMING!r}", False,
                      f"{len(run.statuses)} polls; {'; '.join(errors[:2]) or 'never streaming'}")]
    last = streaming[-1]
    run.figures["status while streaming (last)"] = last
    wanted = {"mount": source.mount, "station": source.station_id, "revision": caster.revision}
    wrong = [f"{STATUS_KEYS[k]} {status_field(last, k)!r}, expected {v!r}" for k, v in wanted.items()
             if status_field(last, k) != v]
    if str(caster.port) not in str(status_field(last, "caster")):
        wrong.append(f"{STATUS_KEYS['caster']} {status_field(last, 'caster')!r} does not name port {caster.port}")
    frames, damaged = status_field(last, "frames"), status_field(last, "damaged")
    if not isinstance(frames, int) or frames <= 0 or damaged != 0:
        wrong.append(f"{STATUS_KEYS['frames']} {frames!r}, {STATUS_KEYS['damaged']} {damaged!r}")
    return [Check(f"status: {STATUS_OBJECT} while streaming names the caster, mount point, station and NTRIP "
                  f"revision {caster.revision}, counts frames, none damaged", not wrong, "; ".join(wrong) or
                  f"{frames} frames, GGA sent {status_field(last, 'gga')!r}")]


def caster_log_checks(records: list, source) -> list:
    """The test caster's log: the bridge asked in NTRIP Rev 2 as an NTRIP client, with the right
    login (but after wrong-password), and every GGA it sent has a valid checksum."""
    requests = [r for r in records if r.get("event") == "request"]
    if not records:
        return []
    mount = [r for r in requests if r.get("path", "").strip("/") == source.mount]
    agents = {next((v for k, v in r.get("headers", []) if k.lower() == "user-agent"), "") for r in mount}
    wrong = [f"{r.get('method')} {r.get('path')} {r.get('version')} revision {r.get('revision')}" for r in mount
             if r.get("revision") != 2 or r.get("method") != "GET"]
    gga = [r for r in records if r.get("event") == "gga"]
    bad_gga = [r["sentence"] for r in gga if r.get("checksum") != "valid"]
    return [Check("caster: the bridge's requests are NTRIP Rev 2 GETs of the mount point (Ntrip-Version: Ntrip/2.0) "
                  "with a User-Agent starting 'NTRIP'", bool(mount) and not wrong
                  and all(a.startswith("NTRIP") for a in agents),
                  f"{len(mount)} requests, User-Agent {sorted(agents)}"
                  + (f"; first off: {wrong[0]}" if wrong else "")),
            Check("caster: logins accepted (refused only while the password was wrong)",
                  any(r.get("login") == "accepted" for r in mount),
                  ", ".join(f"{r.get('login')}" for r in mount[:12])),
            Check("caster: every GGA the bridge sent has a valid checksum", not bad_gga,
                  f"{len(gga)} GGA" + (f"; first bad: {bad_gga[0]}" if bad_gga else ""))]
