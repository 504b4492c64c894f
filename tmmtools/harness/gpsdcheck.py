"""A scenario played into a private gpsd, and gpsd's own JSON checked against the timeline
(verify.gpsd_checks): does gpsd read this receiver as it should, before the bridge is involved?

  /usr/bin/python3 -m tmmtools.harness.gpsdcheck hwtests/scenarios/rtk-cold-start-ubx.toml [--speed 2] [--out DIR]

Starts `gpsd -N -n -b` on a free port with its own control socket, `tmm-sim` (which hands its pty
to gpsd), and a JSON watch (`?WATCH={"enable":true,"json":true}`, what `gpspipe -w` prints);
waits for the scenario's end and for gpsd's report of the last epoch; prints one line per check,
and a `note:` line for what the checks expect differently because of gpsd's release (e.g. gpsd
3.22 reports UBX RTK float/fixed as DGPS). Exit status 0 when every check passed. Needs /usr/sbin/gpsd (Debian's gpsd), as root or a user
that may run it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from tmmtools import checkout
from tmmtools.harness import verify
from tmmtools.harness.bench import BenchError, stop_process, wait_for
from tmmtools.sim.scenario import load

GPSD = "/usr/sbin/gpsd"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Watch:
    """gpsd's JSON stream (as gpspipe -w), each report stamped with its arrival time."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.sendall(b'?WATCH={"enable":true,"json":true};\n')
        self.reports: list[tuple[float, dict]] = []
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buffer = b""
        self.sock.settimeout(None)
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                text = line.decode(errors="replace").strip()
                if not text:
                    continue
                self.lines.append(text)
                try:
                    self.reports.append((time.time(), json.loads(text)))
                except ValueError:
                    pass

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def play(scenario_path: str, out_dir: str, speed: float = 1.0, protocol: str | None = None,
         duration: float | None = None, seed: int | None = None, gpsd_debug: int = 1):
    """Plays the scenario through a fresh gpsd; (Timeline, [(arrival, report)]). `out_dir` gets
    timeline.jsonl, receiver.bin (every byte written), gpsd.json (the watch) and gpsd.log."""
    if not os.access(GPSD, os.X_OK):
        raise BenchError(f"{GPSD} not found (apt-get install gpsd)")
    os.makedirs(out_dir, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="tmm-gpsdcheck-")
    control = os.path.join(scratch, "gpsd.sock")
    port = free_port()
    log = open(os.path.join(out_dir, "gpsd.log"), "wb")
    gpsd = subprocess.Popen([GPSD, "-N", "-n", "-b", "-D", str(gpsd_debug), "-S", str(port), "-F", control],
                            stdout=log, stderr=subprocess.STDOUT)
    watch = simulator = None
    try:
        def listening():
            if gpsd.poll() is not None:
                raise BenchError(f"gpsd exited ({gpsd.returncode}): see {log.name}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    return os.path.exists(control)
            except OSError:
                return False
        wait_for(listening, 10, what="gpsd to listen")
        watch = Watch(port)
        wait_for(lambda: any(r.get("class") == "WATCH" for _, r in watch.reports), 5, what="gpsd's WATCH answer")
        timeline_path = os.path.join(out_dir, "timeline.jsonl")
        arguments = checkout.module_command("sim", scenario_path, "--timeline", timeline_path,
                                            "--out", os.path.join(out_dir, "receiver.bin"), "--gpsd-control", control,
                                            "--speed", str(speed), "--hold")
        for option, value in (("--protocol", protocol), ("--duration", duration), ("--seed", seed)):
            if value is not None:
                arguments += [option, str(value)]
        simulator = subprocess.Popen(arguments, stdout=subprocess.PIPE, text=True)
        events = []
        for line in simulator.stdout:
            event = json.loads(line)
            event["wall"] = time.time()
            events.append(event)
            if event.get("event") == "done":
                break
        else:
            raise BenchError(f"tmm-sim exited ({simulator.wait()}) before the end: {events[-1:] or 'no output'}")
        timeline = verify.load_timeline(timeline_path)
        timeline.plugs = [e for e in events if e.get("event") in ("plugged", "unplugged")] or timeline.plugs
        last = timeline.truths[-1]["utc"] if timeline.truths else None
        try:  # gpsd's report of the last epoch is on its way (or never comes: then the checks say so)
            wait_for(lambda: any(r.get("class") == "TPV" and verify.utc_key(r.get("time")) == verify.utc_key(last)
                                 for _, r in list(watch.reports)), 2, what="gpsd's report of the last epoch")
        except BenchError:
            pass
        with open(os.path.join(out_dir, "gpsd.json"), "w") as handle:
            handle.write("\n".join(watch.lines) + "\n")
        return timeline, list(watch.reports)
    finally:
        if simulator is not None:
            stop_process(simulator, 10)
            simulator.stdout.close()
        if watch is not None:
            watch.close()
        stop_process(gpsd, 10)
        log.close()
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(prog="gpsdcheck", description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario")
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--protocol", choices=("nmea", "ubx"))
    parser.add_argument("--duration", type=float)
    parser.add_argument("--out", help="keep the timeline, bytes, gpsd's JSON and log here")
    parser.add_argument("--json", action="store_true", help="print the checks and figures as JSON")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="tmm-gpsdcheck-out-")
    scenario = load(args.scenario)
    protocol = args.protocol or scenario.receiver.protocol
    messages = scenario.receiver.ubx_messages if protocol == "ubx" else ()
    expect = dict(scenario.expect, sky=protocol != "ubx" or "SAT" in messages, hpposllh="HPPOSLLH" in messages)
    try:
        timeline, reports = play(args.scenario, out, args.speed, args.protocol, args.duration)
    except BenchError as error:
        print(f"gpsdcheck: {error}", file=sys.stderr)
        return 1
    checks, figures = verify.gpsd_checks(timeline, reports, expect)
    if args.json:
        print(json.dumps({"checks": [vars(c) for c in checks], "figures": figures, "out": out}, indent=1))
    else:
        for check in checks:
            print(f"{'ok' if check.passed else 'FAIL'}: {check.name}" + (f" — {check.detail}" if check.detail else ""))
        for note in figures["notes"]:
            print(f"note: {note}")
        print(f"figures: {json.dumps(figures)}")
        print(out)
    return 0 if all(c.passed for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
