"""The bench targets: a real receiver on a serial/USB tty, or a paired Bluetooth receiver.

Nothing scripts a real receiver, so the reference for what clients must see is gpsd itself: a
`gpspipe -w` watch on the same gpsd records its TPV reports, and every V2 position must equal
gpsd's TPV for the same time (gpsd and the bridge read the same sentences). Steps that need a
person (unplugging, switching the receiver off) ask on the terminal, and are skipped with
"needs an operator" when the run is not interactive.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid

from tmmtools.harness import reliability, verify
from tmmtools.harness.bench import TMM_PORTS, Bench, BenchError, wait_for
from tmmtools.harness.clients import Recorder

# diffStatus → the solutionType it must come with (verify's two tables, keyed by diffStatus).
SOLUTION = {verify.DIFF_STATUS[q]: verify.SOLUTION_TYPE[q] for q in verify.DIFF_STATUS if q != "none"}


class GpsdWatch:
    """gpspipe -w on the bench's gpsd: TPV reports by time."""

    def __init__(self, port: int = 2947):
        self.process = subprocess.Popen(["gpspipe", "-w", f"127.0.0.1:{port}"], stdout=subprocess.PIPE, text=True)
        self.tpv: dict[int, dict] = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if report.get("class") == "TPV" and report.get("time"):
                self.tpv[verify.utc_key(report["time"])] = report

    def stop(self):
        self.process.terminate()
        self.process.wait(5)


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def ask(prompt: str) -> None:
    input(f"\n>>> {prompt} Press Enter when done. ")


def _start(run, device: str | None, bluetooth: str | None, out: str) -> Bench:
    extra = []
    if bluetooth:
        config = os.path.join(out, "bluetooth.conf")
        with open(config, "w") as handle:
            handle.write(f"bluetooth = {bluetooth}\n")
        extra = ["--config", config]
    bench = Bench(keep=run.keep, extra_arguments=extra)
    bench.start_gpsd()
    bench.start_bridge()
    if device:
        answer = bench.gpsd_command("+" + device)
        if "OK" not in answer:
            raise BenchError(f"gpsd would not open {device}: {answer} (is it in group dialout, or owned by gpsd?)")
        bench.devices = [device]
    return bench


def streaming(run, device: str | None, bluetooth: str | None, seconds: float = 60.0):
    """Positions from the real receiver against gpsd's own reports, rates, /events."""
    def body(out):
        bench = _start(run, device, bluetooth, out)
        watch = GpsdWatch()
        try:
            started = time.time()
            recorders = run.streaming(bench, str(uuid.uuid4()))
            try:
                wait_for(lambda: any(m.get("latitude") is not None for _, m in recorders["v2"].messages), 120,
                         what="a first fix from the receiver (is the antenna outside?)")
                first_fix = min(a for a, m in recorders["v2"].messages if m.get("latitude") is not None) - started
            except BenchError as error:
                run.stop(recorders)
                return [verify.Check("the receiver delivers a fix", False, str(error))], {}
            time.sleep(seconds)  # a fixed observation window: the receiver sets the pace here
            run.stop(recorders)
            for name, recorder in recorders.items():
                recorder.save(os.path.join(out, f"client-{name}.jsonl"))
            v2 = [m for _, m in recorders["v2"].messages]
            compared, differ = 0, []
            for message in v2:
                tpv = watch.tpv.get(verify.utc_key(message.get("utcTimeStamp")))
                if tpv is None or message.get("latitude") is None or "lat" not in tpv:
                    continue
                compared += 1
                if abs(tpv["lat"] - message["latitude"]) > 1e-7 or abs(tpv["lon"] - message["longitude"]) > 1e-7:
                    differ.append(f"{message['utcTimeStamp']}: ({message['latitude']}, {message['longitude']}) vs gpsd "
                                  f"({tpv['lat']}, {tpv['lon']})")
            times = sorted(verify.utc_key(m.get("utcTimeStamp")) for m in v2 if m.get("utcTimeStamp"))
            steps = [b - a for a, b in zip(times, times[1:]) if b > a]
            rate = 100 / statistics.median(steps) if steps else 0
            arrivals = [a for a, _ in recorders["v2"].messages]
            gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
            typed = [m for m in v2 if SOLUTION.get(m.get("diffStatus")) != m.get("solutionType")]
            events = [e.get("event") for _, e in recorders["events"].messages]
            run.report.figures["device: first fix after start (s)"] = round(first_fix, 2)
            run.report.figures["device: receiver rate (Hz)"] = round(rate, 2)
            run.report.figures["device: solution types seen"] = sorted({str(m.get("solutionType")) for m in v2})
            return [
                verify.Check("V2 positions equal gpsd's own TPV for the same epoch", compared > 0 and not differ,
                             f"{compared} compared" + (f"; first difference {differ[0]}" if differ else "")),
                verify.Check("no epoch delivered twice", len(times) == len(set(times))),
                verify.Check("epochs arrive at the receiver's rate (largest gap under 2.5 periods)",
                             bool(gaps) and rate > 0 and max(gaps) < 2.5 / rate,
                             f"{rate:.2f} Hz, largest gap {max(gaps) * 1000:.0f} ms" if gaps else "no data"),
                verify.Check("diffStatus and solutionType agree in every message", not typed, f"{len(typed)} disagree"),
                verify.Check("/events starts with status", events[:1] == ["status"], str(events[:3])),
                verify.Check("V1: one position a second", len(recorders["v1"].messages) >= seconds * 0.8,
                             f"{len(recorders['v1'].messages)} in {seconds:g} s"),
            ], {}
        finally:
            watch.stop()
            bench.close(out)
    return body


def unplug(run, device: str | None, bluetooth: str | None):
    """The operator unplugs (or switches off) the receiver and plugs it back."""
    def body(out):
        bench = _start(run, device, bluetooth, out)
        try:
            recorders = run.streaming(bench, str(uuid.uuid4()))
            wait_for(lambda: any(m.get("latitude") is not None for _, m in recorders["v2"].messages), 120, what="a fix")
            ask("Unplug the receiver (or switch it off for Bluetooth), wait 5 s, plug it back (switch on).")
            plugged_back = time.time()
            if device and not bluetooth:
                # Without udevd+gpsdctl here the new tty must be handed to gpsd again.
                wait_for(lambda: os.path.exists(device), 30, what=f"{device} to come back")
                bench.gpsd_command("+" + device)
            wait_for(lambda: any(a > plugged_back and m.get("latitude") is not None for a, m in recorders["v2"].messages),
                     120, what="positions after plugging back")
            run.stop(recorders)
            kinds = [e.get("event") for _, e in recorders["events"].messages]
            wanted = ["receiverDisconnected", "inputLost", "receiverConnected", "inputRestored"]
            return [verify.Check(f"/events: {' → '.join(wanted)}", verify._subsequence(wanted, kinds), str(kinds)),
                    verify.Check("clients stayed connected", all(len(r.connects) == 1 for r in recorders.values()))], {}
        finally:
            bench.close(out)
    return body


def run_bench_target(run, target: str, device: str | None, bluetooth: str | None, selected):
    if target == "device" and not (device and os.path.exists(device)):
        run.report.add("bench", [verify.Check("the receiver's tty exists", False, f"{device!r}: no such device")])
        return
    seconds = float(os.environ.get("HW_OBSERVE_SECONDS", "60"))
    if selected("streaming"):
        run.run_scenario(f"{target}: streaming against gpsd", streaming(run, device, bluetooth, seconds))
    if selected("unplug"):
        if interactive():
            run.run_scenario(f"{target}: unplug and plug back", unplug(run, device, bluetooth))
        else:
            run.report.add(f"{target}: unplug and plug back", [], skipped="needs an operator (run it from a terminal)")

    def with_bench(action):
        def body(out):
            bench = _start(run, device, bluetooth, out)
            try:
                return action(bench), {}
            finally:
                bench.close(out)
        return body
    if selected("client-cycles"):
        cycles = int(os.environ.get("HW_CLIENT_CYCLES", "1000"))
        run.run_scenario(f"{target}: client-cycles", with_bench(lambda b: reliability.client_cycles(b, cycles, run.report.figures)))
    if selected("kill-9-registrations"):
        rounds = int(os.environ.get("HW_KILL_ROUNDS", "10"))
        run.run_scenario(f"{target}: kill-9-registrations",
                         with_bench(lambda b: reliability.kill_during_registrations(b, rounds, run.report.figures)[0]))
