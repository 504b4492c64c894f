"""make hwtest: tmm-bridge in the loop, with a virtual receiver (default) or a real one.

  python3 -m tmmtools.hwtest [--target virtual]            scripted receivers (hwtests/scenarios), here and in CI
  python3 -m tmmtools.hwtest --device /dev/ttyUSB0         a receiver on this bench's serial port
  python3 -m tmmtools.hwtest --bluetooth AA:BB:CC:DD:EE:FF a paired Bluetooth SPP receiver

(/usr/bin/python3, from the repository root, as root.)

Each run writes a report directory (default hwtests/reports/<UTC timestamp>/: report.md,
report.json, PNG plots, logs) and prints its path as the last line. Exit status 0 only when every
scenario passed or was skipped. hwtests/README.md says what each scenario checks.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import signal
import subprocess
import sys
import time
import uuid

from tmmtools import checkout
from tmmtools.harness import corrections, device, fleet, gpsdcheck, reliability, verify
from tmmtools.harness.bench import (GPSD_PORT, HWTESTS, TMM_PORTS, Bench, BenchError, Simulator, bridge_binary,
                                    gpsd_release, running_bench, tmmclient, wait_for)
from tmmtools.harness.clients import Recorder, SlowClient
from tmmtools.harness.report import Report
from tmmtools.sim.scenario import load

SCENARIOS = os.path.join(HWTESTS, "scenarios")
# str2str (NTRIP Rev 1) to a Trimble; the test caster (Rev 2) with a wrong password; to a u-blox.
CORRECTION_SCENARIOS = ("rtk-ntrip", "rtk-ntrip-rev2", "rtk-ntrip-ubx")
# Fleet publishing (MQTT): a real mosquitto stopped and restarted under the bridge (harness/fleet.py).
FLEET_SCENARIOS = ("mqtt-outage",)


def ws(port_key: str, path: str) -> str:
    return f"ws://127.0.0.1:{TMM_PORTS[port_key]}{path}"


class Run:
    def __init__(self, report: Report, speed: float, keep: bool, ntrip_stand_in: bool = False):
        self.ntrip_stand_in = ntrip_stand_in
        self.report = report
        self.speed = speed
        self.keep = keep
        self.reconnects: dict[str, float] = {}
        self.plot_data: dict = {}

    # --- helpers ---------------------------------------------------------------------------------
    def scenario_dir(self, name: str) -> str:
        path = os.path.join(self.report.directory, name)
        os.makedirs(path, exist_ok=True)
        return path

    def streaming(self, bench: Bench, application_id: str, v1: bool = True):
        """V2, V1 and /events recorders, after registering (V2 is locked until then)."""
        bench.register(application_id)

        def reregister():
            bench.register(application_id)
        recorders = {"v2": Recorder(ws("locationV2Port", "/locationV2"), "v2", reregister).start(),
                     "events": Recorder(ws("locationV2Port", "/events"), "events", reregister).start()}
        if v1:
            recorders["v1"] = Recorder(ws("locationPort", "/"), "v1").start()
        wait_for(lambda: all(r.connects for r in recorders.values()), 10, what="the clients to connect")
        return recorders

    @staticmethod
    def stop(recorders: dict):
        for recorder in recorders.values():
            recorder.stop()

    def simulate(self, bench: Bench, scenario_file: str, out: str, on_event=lambda e: None) -> Simulator:
        simulator = Simulator(scenario_file, bench, out, speed=self.speed)
        bench.on_close.append(simulator.stop)
        first = simulator.next_event(15)
        if first.get("event") != "plugged" or "OK" not in first.get("gpsd", ""):
            raise BenchError(f"the virtual receiver was not handed to gpsd: {first}")
        return simulator

    def run_scenario(self, name: str, body):
        started = time.monotonic()
        print(f"== {name}", flush=True)
        try:
            checks, figures = body(self.scenario_dir(name))
        except BenchError as error:
            checks, figures = [verify.Check("the bench ran", False, str(error))], {}
        figures = dict(figures or {})
        notes = figures.pop("notes", [])
        for check in checks:
            print(f"   {'ok' if check.passed else 'FAIL'}: {check.name}" + (f" — {check.detail}" if check.detail else ""), flush=True)
        for note in notes:
            print(f"   note: {note}", flush=True)
        self.report.add(name, checks, seconds=time.monotonic() - started, figures=figures, notes=notes)

    def stream_scenario(self, scenario_name: str, extra=None, watch_gpsd: bool = False):
        """A scenario file played through gpsd into the bridge, checked against its timeline.
        `watch_gpsd`: also gpsd's own JSON, checked first (verify.gpsd_checks), so a failure is
        placed before or after gpsd. The fix qualities expected are what this run's gpsd reports
        of the receiver's (verify.gpsd_reported_quality; its release from the watch's VERSION,
        else `gpsd -V`), and the scenario's notes say what that changed. A scenario with a
        [corrections] section also gets its caster, the bridge configured over REST and the
        corrections checks (harness/corrections.py); one with an [mqtt] section its broker, the
        bridge publishing to it and the fleet checks (harness/fleet.py)."""
        scenario_file = os.path.join(SCENARIOS, scenario_name + ".toml")
        scenario = load(scenario_file)
        readonly = scenario.corrections is None or scenario.corrections.gpsd_readonly

        def body(out):
            if not scenario.mqtt:
                return stream_body(out, None)
            fleet_session = fleet.Session(scenario, out)
            try:  # the broker and its subscriber before the bridge, which connects as it starts
                fleet_session.start()
                return stream_body(out, fleet_session)
            finally:
                fleet_session.close()

        def stream_body(out, fleet_session):
            extra_arguments = fleet_session.bridge_arguments() if fleet_session else []
            with running_bench(out, keep=self.keep, gpsd_readonly=readonly, extra_arguments=extra_arguments) as bench:
                watch = gpsdcheck.Watch(GPSD_PORT) if watch_gpsd else None
                application_id = str(uuid.uuid4())
                recorders = self.streaming(bench, application_id)
                session = None
                if scenario.corrections:
                    session = corrections.Session(scenario, out, bench, application_id, TMM_PORTS["apiPort"],
                                                  stand_in=self.ntrip_stand_in).start()
                    bench.on_close.insert(0, session.close)
                if fleet_session:
                    fleet_session.attach(bench)
                sessions = [s for s in (session, fleet_session) if s]
                simulator, actions = self.play_stream(bench, scenario_file, scenario, out, recorders, sessions)
                timeline = verify.load_timeline(simulator.timeline_path)
                if fleet_session:  # the spool drained, the bridge stopped cleanly: its retained status
                    fleet_session.finish(bench, timeline.truths[-1].get("utc") if timeline.truths else None)
                for action in timeline.actions:
                    if action["action"] == "gpsd-kill":
                        action["recovery"] = 6.0
                if watch:
                    watch.close()
                release = (watch and verify.reported_release(watch.reports)) or gpsd_release()
                checks, figures = verify.stream_checks(timeline, recorders["v2"].messages, recorders["v1"].messages,
                                                       recorders["events"].messages, scenario.expect, release)
                notes = list(figures["notes"])
                if watch:
                    messages = scenario.receiver.ubx_messages
                    gpsd_expect = dict(scenario.expect, sky="SAT" in messages, hpposllh="HPPOSLLH" in messages)
                    gpsd_side, gpsd_figures = verify.gpsd_checks(timeline, watch.reports, gpsd_expect)
                    checks = gpsd_side + checks
                    notes += [n for n in gpsd_figures["notes"] if n not in notes]
                checks += self.connection_checks(scenario_name, recorders, actions)
                if session:
                    more, more_figures = session.checks(timeline, recorders["v2"].messages,
                                                        recorders["events"].messages, release)
                    checks += more
                    notes += [n for n in more_figures.pop("notes") if n not in notes]
                    self.report.figures.update({f"{scenario_name}: {k}": v for k, v in more_figures.items()
                                                if not isinstance(v, dict)})
                if fleet_session:
                    more, more_figures = fleet_session.checks(timeline, scenario.rate)
                    checks += more
                    notes += [n for n in more_figures.pop("notes") if n not in notes]
                    self.report.figures.update({f"{scenario_name}: {k}": v for k, v in more_figures.items()})
                    plot = fleet_session.plot(self.report.directory)
                    if plot:
                        self.report.plots.append(plot)
                if extra:
                    checks += extra(bench, timeline, recorders)
                self.plot_data[scenario_name] = figures
                return checks, dict({k: v for k, v in figures.items() if k.startswith("latency_p")}, notes=notes)
        self.run_scenario(scenario_name, body)

    def play_stream(self, bench: Bench, scenario_file: str, scenario, out: str, recorders: dict, sessions: list):
        """The simulator played to its end (gpsd restarted when it is killed, caster and broker
        actions done by `sessions`: corrections.Session, fleet.Session), the last epoch awaited, the
        clients stopped and saved; (simulator, actions)."""
        actions = []

        def on_event(event):
            # What init would do on a box: restart a killed gpsd (the bridge must find it again).
            if event.get("action") == "gpsd-kill":
                wait_for(lambda: not bench.gpsd_alive(), 5, what="gpsd to die")
                killed = time.time()
                bench.start_gpsd()
                actions.append(("gpsd-kill", killed))
            elif event.get("event") == "plugged" and len(simulator.events) > 1:
                actions.append(("replug", event["wall"]))
            else:
                for session in sessions:
                    session.on_event(event)
        simulator = self.simulate(bench, scenario_file, out)
        for session in sessions:
            if isinstance(session, corrections.Session):  # plugged: point the bridge at the caster
                session.configure(device=simulator.events[0]["device"])
        simulator.run_to_end(on_event, timeout=scenario.duration / self.speed + 60)
        # The last epochs are on their way: wait until V2 has the final one (or 2 s).
        last = verify.load_timeline(simulator.timeline_path).truths[-1]
        try:
            last_key = verify.utc_key(last.get("utc"))
            wait_for(lambda: any(verify.utc_key(m.get("utcTimeStamp")) == last_key
                                 for _, m in recorders["v2"].messages if m.get("utcTimeStamp")),
                     2, what="the last epoch")
        except BenchError:
            pass
        self.stop(recorders)
        simulator.stop()
        for name, recorder in recorders.items():
            recorder.save(os.path.join(out, f"client-{name}.jsonl"))
        return simulator, actions

    def connection_checks(self, scenario_name: str, recorders: dict, actions: list) -> list:
        """The clients stayed connected; positions resumed after each gpsd kill or replug."""
        checks = [verify.Check("clients stayed connected (no reconnect needed)",
                               all(len(r.connects) == 1 for r in recorders.values()),
                               ", ".join(f"{k}: {len(r.connects)} connections" for k, r in recorders.items()))]
        for kind, at in actions:
            resumed = [arrival for arrival, m in recorders["v2"].messages
                       if arrival > at and m.get("latitude") is not None]
            seconds = (resumed[0] - at) if resumed else None
            self.reconnects[f"{scenario_name}: {kind}"] = seconds if seconds is not None else float("nan")
            checks.append(verify.Check(f"positions resume after {kind}", seconds is not None and seconds < 10,
                                       f"{seconds:.2f} s" if seconds is not None else "never"))
        return checks

    # --- scenarios that are more than one stream -------------------------------------------------
    def cold_start_extra(self, bench, timeline, recorders):
        first_fix = next((t for t in timeline.truths if t.get("quality") not in (None, "none")), None)
        received = [(a, m) for a, m in recorders["v2"].messages if m.get("latitude") is not None]
        if not first_fix or not received:
            return [verify.Check("time to first fix", False, "no fix received")]
        delay = received[0][0] - first_fix["wall"]
        self.report.figures["cold start: first fix, receiver to client (ms)"] = round(delay * 1000, 1)
        return [verify.Check("first fix reaches the client within 0.5 s of the receiver's", delay < 0.5, f"{delay * 1000:.1f} ms")]

    def daemon_restart(self):
        scenario_file = os.path.join(SCENARIOS, "steady.toml")

        def body(out):
            with running_bench(out, keep=self.keep) as bench:
                application_id = str(uuid.uuid4())
                recorders = self.streaming(bench, application_id)
                simulator = self.simulate(bench, scenario_file, out)
                wait_for(lambda: len(recorders["v2"].messages) >= 20, 10, what="positions before the restart")
                before = bench.bridge_status()
                killed = time.time()
                code = bench.stop_bridge(signal.SIGKILL)
                bench.start_bridge()
                wait_for(lambda: any(a > killed and m.get("latitude") is not None for a, m in recorders["v2"].messages),
                         20, what="positions after the restart")
                resumed = min(a for a, m in recorders["v2"].messages if a > killed and m.get("latitude") is not None)
                self.reconnects["daemon kill -9 + restart"] = resumed - killed
                simulator.run_to_end(timeout=60)
                self.stop(recorders)
                simulator.stop()
                registered = application_id.lower() in [i.lower() for i in tmmclient.registered_ids(bench.context())]
                return [
                    verify.Check("the daemon was killed with SIGKILL", code == -signal.SIGKILL, f"exit {code}"),
                    verify.Check("the registration survived the kill", registered),
                    verify.Check("V2, V1 and /events clients reconnected on their own",
                                 all(len(r.connects) >= 2 for r in recorders.values()),
                                 ", ".join(f"{k}: {len(r.connects)} connections" for k, r in recorders.items())),
                    verify.Check("positions flow again within 5 s of the kill", resumed - killed < 5, f"{resumed - killed:.2f} s"),
                ], {"bridge_before": before}
        self.run_scenario("daemon-restart", body)

    def many_clients(self, count: int = 100):
        scenario_file = os.path.join(SCENARIOS, "steady.toml")

        def body(out):
            with running_bench(out, keep=self.keep) as bench:
                bench.register(str(uuid.uuid4()))
                clients = [Recorder(ws("locationV2Port", "/locationV2"), f"v2-{i}", reconnect=False).start() for i in range(count)]
                wait_for(lambda: all(c.connects for c in clients), 30, what=f"{count} clients to connect")
                before = bench.bridge_status()
                simulator = self.simulate(bench, scenario_file, out)
                simulator.run_to_end(timeout=60)
                time.sleep(0.5)  # the last epoch's frames are in flight
                after = bench.bridge_status()
                for c in clients:
                    c.stop()
                simulator.stop()
                timeline = verify.load_timeline(simulator.timeline_path)
                windows = verify.exempt_windows(timeline)
                required = {verify.utc_key(t["utc"]) for t in timeline.truths if not verify.in_windows(t["t"], windows)}
                short = [c.name for c in clients if not required <= {verify.utc_key(m.get("utcTimeStamp")) for _, m in c.messages}]
                self.report.figures[f"{count} clients: bridge fds/threads/RSS KiB before → after"] = \
                    f"{before.get('fds')}/{before.get('threads')}/{before.get('rss_kib')} → {after.get('fds')}/{after.get('threads')}/{after.get('rss_kib')}"
                return [
                    verify.Check(f"{count} V2 clients connected at once", all(c.connects for c in clients)),
                    verify.Check(f"each of the {count} clients got every epoch ({len(required)})", not short,
                                 f"{len(short)} short, e.g. {short[:3]}"),
                    verify.Check("no client was dropped", all(not c.drops for c in clients),
                                 str([c.drops for c in clients if c.drops][:2])),
                ], {}
        self.run_scenario("100-clients", body)

    def slow_client(self):
        scenario_file = os.path.join(SCENARIOS, "steady.toml")

        def body(out):
            with running_bench(out, keep=self.keep) as bench:
                recorders = self.streaming(bench, str(uuid.uuid4()), v1=False)
                slow = SlowClient("127.0.0.1", TMM_PORTS["locationV2Port"])
                simulator = self.simulate(bench, scenario_file, out)
                simulator.run_to_end(timeout=60)
                time.sleep(0.3)
                self.stop(recorders)
                simulator.stop()
                timeline = verify.load_timeline(simulator.timeline_path)
                checks, _ = verify.stream_checks(timeline, recorders["v2"].messages, [], recorders["events"].messages, {})
                # The reading client is judged as in every scenario: every epoch, at its rate,
                # within the latency bound; the never-reading one beside it must change nothing.
                checks = [c for c in checks if c.name.startswith(("V2:", "receiver-to-client"))]
                arrivals = [a for a, _ in recorders["v2"].messages]
                gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
                self.report.figures["slow client: largest gap at the reading client (ms)"] = round(max(gaps) * 1000, 1) if gaps else None
                checks.append(verify.Check("the slow client's handshake succeeded", "101" in slow.status_line, slow.status_line))
                self.report.figures["slow client: closed by the bridge by the end"] = slow.closed_by_server()
                slow.close()
                return checks, {}
        self.run_scenario("slow-client", body)


# The sample apps' flows, as tmmtools/endtoend scripts them (each against a fresh bench, as in
# EndToEndTests.swift): iOS and Windows tmmregister, the 2026 TLS flow with Access Code V2, and
# the WebSocket streams. The receiver is the real capture those scripts compare positions with.
ALLOWED_IDS = [f"5f0c1a2b-3c4d-4e5f-8a9b-{n:012x}" for n in range(1, 9)]
UNKNOWN_ID = "0badc0de-0000-4000-8000-000000000000"
SAMPLE_FLOWS = {"registration.py": "iOS and Windows samples: tmmregister, allow-list, Unauthorized",
                "modern.py": "2026 samples: TLS ports, publicKey, Access Code V2",
                "websocket.py": "V1, V2 and /events streams as the samples read them"}


def sample_flows(run: "Run"):
    scenario_file = os.path.join(SCENARIOS, "replay-rtk.toml")
    capture = checkout.path("Tests", "Fixtures", "nmea", "nmea-rtk.log")
    for script, what in SAMPLE_FLOWS.items():
        def body(out, script=script, what=what):
            # As EndToEndTests.swift starts the daemon for each script.
            extra = ["--ws-ping-interval", "1", "--ws-pong-timeout", "1"] if script == "websocket.py" else []
            with running_bench(out, registration="allowlist", allowed_ids=ALLOWED_IDS, extra_arguments=extra, keep=run.keep) as bench:
                run.simulate(bench, scenario_file, out)
                context = dict(bench.context(), capture=capture, unknownId=UNKNOWN_ID)
                module = "endtoend." + script.removesuffix(".py")
                completed = subprocess.run(checkout.module_command(module, json.dumps(context), python="/usr/bin/python3"),
                                           capture_output=True, text=True, timeout=300)
                with open(os.path.join(out, script.replace(".py", ".log")), "w") as handle:
                    handle.write(completed.stdout + completed.stderr)
                passed = completed.stdout.count("\nok: ") + completed.stdout.startswith("ok: ")
                failure = next((line for line in completed.stdout.splitlines() if line.startswith("FAIL")), completed.stderr[-300:])
                return [verify.Check(f"{script} ({what}): exit {completed.returncode}, {passed} checks passed",
                                     completed.returncode == 0 and passed > 0,
                                     "" if completed.returncode == 0 else failure)], {}
        run.run_scenario(f"samples: {script}", body)


def self_test(run: "Run"):
    """tmm-sim's own tests and the checks' (tmmtools/tests): a wrong virtual receiver or a wrong
    expectation would make every check moot."""
    import io
    import unittest

    def body(out):
        suite = unittest.defaultTestLoader.discover(checkout.path("tmmtools", "tests"), top_level_dir=checkout.ROOT)
        stream = io.StringIO()
        result = unittest.TextTestRunner(stream=stream, verbosity=2).run(suite)
        with open(os.path.join(out, "unittest.log"), "w") as handle:
            handle.write(stream.getvalue())
        problems = [f"{test.id()}: {trace.strip().splitlines()[-1]}" for test, trace in result.failures + result.errors]
        return [verify.Check(f"tmm-sim self-test: {result.testsRun} tests (scenario validation table and fuzz, "
                             "checksums, determinism, decoded by tmm-bridge decode; the checks' gpsd quality map; "
                             "RTCM, the NTRIP casters and the corrections chain without the bridge; the MQTT brokers and "
                             "the fleet checks)",
                             result.wasSuccessful(),
                             "; ".join(problems[:2]))], {}
    run.run_scenario("tmm-sim self-test", body)


def reliability_scenarios(run: "Run", selected):
    """Cycles, kills and the soak; counts from the environment (hwtests/README.md)."""
    # gpsd takes ~0.8 s to open each new device (it hunts the serial speed, sleeping 200 ms per
    # try, on a pty as on a UART), so 1,000 plug cycles take ~14 minutes: the default run does 60
    # (under a minute, so that make hwtest fits CI's time beside the rest) and the reliability run
    # (make hwtest-reliability) 1,000.
    plug = int(os.environ.get("HW_PLUG_CYCLES", "40"))
    clients = int(os.environ.get("HW_CLIENT_CYCLES", "1000"))
    rounds = int(os.environ.get("HW_KILL_ROUNDS", "10"))
    soak_seconds = float(os.environ.get("SOAK_HOURS", "0")) * 3600 or float(os.environ.get("SOAK_SECONDS", "60"))

    def bench_body(action, with_receiver=True, **bench_options):
        def body(out):
            with running_bench(out, keep=run.keep, **bench_options) as bench:
                if with_receiver:
                    run.simulate(bench, os.path.join(SCENARIOS, "replay-rtk.toml"), out)
                return action(bench, out), {}
        return body

    if selected("plug-cycles"):
        run.run_scenario("plug-cycles", bench_body(lambda b, o: reliability.plug_cycles(b, plug, run.report.figures),
                                                   with_receiver=False))
    if selected("client-cycles"):
        run.run_scenario("client-cycles", bench_body(lambda b, o: reliability.client_cycles(b, clients, run.report.figures)))
    if selected("kill-9-registrations"):
        def kills(bench, out):
            checks, recoveries = reliability.kill_during_registrations(bench, rounds, run.report.figures)
            if recoveries:
                run.reconnects["kill -9 during registrations (median)"] = recoveries[len(recoveries) // 2]
            return checks
        run.run_scenario("kill-9-registrations", bench_body(kills))
    if selected("soak"):
        run.run_scenario("soak", bench_body(lambda b, o: reliability.soak(run, b, soak_seconds, o, run.report.figures),
                                            with_receiver=False))


def conformance(run: "Run"):
    """Autobahn|Testsuite's cases (tmmtools/conformance) against tmm-wsecho, the daemon's own
    server with an echo hook; the summary goes into report.json's "conformance"."""
    from tmmtools.conformance.autobahn import run_suite
    root = checkout.ROOT
    echo = next((p for p in (os.environ.get("TMM_WSECHO"), os.path.join(root, ".build/debug/tmm-wsecho"),
                             os.path.join(root, ".build/release/tmm-wsecho")) if p and os.access(p, os.X_OK)), None)

    def body(out):
        if echo is None:
            return [verify.Check("tmm-wsecho is built", False, "run `swift build --product tmm-wsecho` (make hwtest does)")], {}
        summary = run_suite(echo, out)
        run.report.conformance = summary
        return [verify.Check(f"WebSocket conformance: {summary['cases']} cases, {summary['ok']} OK, "
                             f"{summary['non_strict']} non-strict, {summary['informational']} informational",
                             summary["failed"] == 0 and summary["cases"] > 0,
                             f"{summary['failed']} failed (see conformance/index.md)")], {}
    run.run_scenario("conformance", body)


def browser(run: "Run"):
    """A real browser (headless chromium, tmmtools/browser) runs the web sample's flow against its
    own bridge: CORS preflight, REST with Access Code V2, LocationV2 over ws and wss, screenshot."""
    from tmmtools.browser import browser_test

    def body(out):
        missing = browser_test.missing_tools()
        if missing:
            return [verify.Check("the browser packages are installed", False,
                                 f"missing {', '.join(missing)} (scripts/install-deps.sh --browser)")], {}
        result = browser_test.run(out)
        return [verify.Check(**c) for c in result["checks"]], {}
    run.run_scenario("browser", body)


def dashboard(run: "Run"):
    """The operator dashboard (GET / on apiPort) in headless chromium against its own bridge
    (tmmtools/browser/dashboard_check.py): the shown position against status --json, live
    updates, the canvases, no application id disclosed, keyboard, CSP, screenshots (also copied
    to docs/images/); and hostile /dashboard/socket clients (1009, 4401, 1008 after 10 s)."""
    from tmmtools.browser import browser_test, dashboard_check

    def body(out):
        missing = browser_test.missing_tools()
        if missing:
            return [verify.Check("the browser packages are installed", False,
                                 f"missing {', '.join(missing)} (scripts/install-deps.sh --browser)")], {}
        result = dashboard_check.run(out)
        return [verify.Check(**c) for c in result["checks"]], {"notes": result["notes"]}
    run.run_scenario("dashboard", body)


def hardware_only(report: Report, target: str):
    needs = {
        "udev tagging and stable names": "a udevd and a USB receiver (hwtests/udev.md)",
        "service started by plugging a receiver": "systemd as PID 1 and a USB receiver (hwtests/service.md)",
        "Bluetooth rfcomm bind and re-bind": "a Bluetooth adapter and a paired SPP receiver (hwtests/bluetooth.md)",
    }
    for name, need in needs.items():
        if target == "virtual" or (target == "device" and "Bluetooth" in name):
            report.add(name, [], skipped=f"needs {need}")


def parse_arguments():
    parser = argparse.ArgumentParser(prog="hwtest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=("virtual", "device", "bluetooth"))
    parser.add_argument("--device", help="a real receiver's tty (target device)")
    parser.add_argument("--bluetooth", help="a paired receiver's address (target bluetooth)")
    parser.add_argument("--report-dir", help="where to write the report (default hwtests/reports/<UTC timestamp>)")
    parser.add_argument("--speed", type=float, default=1.0, help="play scenarios faster than real time")
    parser.add_argument("--only", action="append", help="run only these scenarios (repeatable)")
    parser.add_argument("--keep", action="store_true", help="keep each bench's scratch folder")
    parser.add_argument("--ntrip-stand-in", action="store_true",
                        help="corrections scenarios: str2str's NTRIP client feeds the receiver in the bridge's place "
                             "(the rest of the chain checked before the bridge streams; its own checks then fail)")
    parser.add_argument("--in-namespace", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> int:
    args = parse_arguments()
    target = args.target or ("device" if args.device else "bluetooth" if args.bluetooth else "virtual")

    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    report_dir = os.path.abspath(args.report_dir or os.path.join(HWTESTS, "reports", stamp))

    if os.geteuid() != 0:
        print("hwtest: run it as root (a network namespace, a private gpsd on port 2947, the receiver's tty)",
              file=sys.stderr)
        return 77
    if target in ("virtual", "device") and not args.in_namespace:
        return rerun_in_namespace(report_dir)

    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    report = Report(report_dir, target)
    run = Run(report, args.speed, args.keep, args.ntrip_stand_in)
    wanted = set(args.only or [])

    def selected(name):
        return not wanted or name in wanted

    if target == "virtual":
        virtual_scenarios(run, selected)
    else:
        device.run_bench_target(run, target, args.device, args.bluetooth, selected)
    hardware_only(report, target)
    return finish_report(report, run, started, args.speed, report_dir)


def rerun_in_namespace(report_dir: str) -> int:
    """This run again in its own network namespace; its exit status."""
    # Its own network namespace: TMM's ports and gpsd's are free (even beside a running
    # service), nothing else can connect. Not for Bluetooth: the kernel allows AF_BLUETOOTH
    # sockets only in the initial network namespace.
    passed_on, arguments = [], iter(sys.argv[1:])
    for argument in arguments:  # all but --report-dir DIR / --report-dir=DIR, given absolute below
        if argument == "--report-dir":
            next(arguments, None)
        elif not argument.startswith("--report-dir="):
            passed_on.append(argument)
    command = ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$0" "$@"',
               *checkout.module_command("hwtest", "--in-namespace", "--report-dir", report_dir, *passed_on)]
    return subprocess.call(command)


def virtual_scenarios(run: Run, selected):
    """The virtual bench's scenarios, in order, those `selected(name)` accepts."""
    if selected("self-test"):
        self_test(run)
    if selected("rtk-cold-start"):
        run.stream_scenario("rtk-cold-start", run.cold_start_extra)
    # A u-blox writing UBX, read through gpsd's JSON; gpsd's own reports are checked first. Its
    # fix qualities are expected as the run's gpsd reports them: gpsd 3.22 (Debian 12) reports
    # RTK float and fixed from UBX as DGPS (verify.gpsd_reported_quality), the report says so.
    if selected("rtk-cold-start-ubx"):
        run.stream_scenario("rtk-cold-start-ubx", watch_gpsd=True)
    for name in ("faults-and-rates", "unplug-replug", "gpsd-killed"):
        if selected(name):
            run.stream_scenario(name)
    # RTK corrections (issue 23): a caster, the bridge's NTRIP client configured over REST, the
    # receiver's fix following the RTCM it gets (harness/corrections.py).
    for name in CORRECTION_SCENARIOS:
        if selected(name):
            run.stream_scenario(name)
    # Fleet publishing (MQTT, issue 24): the broker stopped 20 s and restarted; the spool drained.
    for name in FLEET_SCENARIOS:
        if selected(name):
            run.stream_scenario(name)
    if selected("samples"):
        sample_flows(run)
    if selected("daemon-restart"):
        run.daemon_restart()
    if selected("100-clients"):
        run.many_clients()
    if selected("slow-client"):
        run.slow_client()
    reliability_scenarios(run, selected)
    if selected("conformance"):
        conformance(run)
    if selected("browser"):
        browser(run)
    if selected("dashboard"):
        dashboard(run)


def finish_report(report: Report, run: Run, started: str, speed: float, report_dir: str) -> int:
    """The plots, the reconnect figures, the report written and its verdict printed; the exit
    status."""
    cold = run.plot_data.get("rtk-cold-start", {})
    rates = run.plot_data.get("faults-and-rates", {})
    latency = [x for figures in run.plot_data.values() for x in figures.get("latency_ms", [])]
    report.plot(latency, cold.get("quality_series", []),
                [(t, q) for t, q in cold.get("truth_quality", [])], rates.get("arrivals", []), run.reconnects)
    for name, seconds in run.reconnects.items():
        report.figures[f"reconnect: {name} (s)"] = round(seconds, 3)
    finished = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    report.write(started, finished, {"bridge": bridge_binary(), "host": platform.node(),
                                     "kernel": platform.release(), "speed": speed})
    print("hwtest: " + ("PASSED" if report.passed else "FAILED") + f" ({sum(s['passed'] for s in report.scenarios)} passed, "
          f"{sum(s['skipped'] for s in report.scenarios)} skipped, "
          f"{sum(not s['passed'] and not s['skipped'] for s in report.scenarios)} failed)")
    print(report_dir)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
