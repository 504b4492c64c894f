"""What one open operator dashboard page costs the daemon (issue 25: < 1 % of a core at 10 Hz).

Measures a running `tmm-bridge run` (started by scripts/bench-dashboard.sh on a 10 Hz receiver)
in rounds of windows, the phases in rotating order within each round:

  none      no dashboard page open: the daemon serving the receiver (the baseline);
  socket    one WebSocket client on /dashboard/socket that sends the page's hello
            ({"type":"hello","token":null}) and reads every snapshot (counted, with their bytes);
  chromium  (--chromium) Debian's headless chromium showing the real page (GET /), driven by
            selenium; only the daemon's CPU is measured, not the browser's.

Each window starts --settle seconds after the phase's page opened (and after `tmm-bridge status
--json` confirmed the number of dashboard pages the phase should have: 0 or 1; that control
request is outside the window) and lasts --seconds. The daemon's CPU over the window is read from
its process CPU clock (all threads, nanoseconds) and, as a cross-check, from utime + stime in
/proc/PID/stat (clock ticks). Prints a RESULT line per window and a Markdown table of medians:
CPU % of one core per phase, the median of the per-round differences against the same round's
baseline (the dashboard's cost), snapshots and bytes per second, and CPU µs per snapshot.

    /usr/bin/python3 -m tmmtools.bench.dashboard --pid PID --port API_PORT --bridge BIN \
        --runtime-dir DIR [--rounds 5] [--seconds 12] [--chromium]

Run with Debian's python3 (python3-websockets; python3-selenium for --chromium).
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import websockets

from tmmtools import polling

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ns(pid):
    """The process's CPU clock (Linux MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)), all threads."""
    return time.clock_gettime_ns(((~pid) << 3) | 2)


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def status(bridge, runtime_dir):
    out = subprocess.run([bridge, "status", "--json", "--runtime-dir", runtime_dir],
                         capture_output=True, text=True, timeout=10, check=True).stdout
    return json.loads(out)


class SocketPage(threading.Thread):
    """One dashboard client: the hello, then every snapshot's arrival time and size."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.url = f"ws://127.0.0.1:{port}/dashboard/socket"
        self.arrivals = []  # (monotonic s, bytes)
        self.last = None
        self.error = None
        self.loop = asyncio.new_event_loop()
        self.stopping = None

    def run(self):
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self.main())
        except Exception as error:  # reported by the caller
            self.error = error

    async def main(self):
        self.stopping = asyncio.Event()
        async with websockets.connect(self.url, max_size=None, compression=None) as ws:
            await ws.send(json.dumps({"type": "hello", "token": None}))
            reader = asyncio.ensure_future(self.read(ws))
            await self.stopping.wait()
            reader.cancel()

    async def read(self, ws):
        async for message in ws:
            size = len(message.encode() if isinstance(message, str) else message)
            self.arrivals.append((time.monotonic(), size))
            self.last = message

    def stop(self):
        if self.stopping is not None:
            self.loop.call_soon_threadsafe(self.stopping.set)
        self.join(5)


def start_chromium(scratch):
    """The dashboard check's headless chromium (tmmtools/browser/dashboard_check.py), on a blank tab."""
    from tmmtools.browser import dashboard_check

    driver = dashboard_check.start_chromium(scratch)
    driver.get("about:blank")
    return driver


def wait_pages(args, expected, seconds=8.0):
    """Waits until the daemon reports `expected` dashboard pages; returns the last count."""
    last = {}

    def reached():
        last["pages"] = status(args.bridge, args.runtime_dir).get("clients", {}).get("dashboard")
        return last["pages"] == expected
    polling.wait_until(reached, seconds, interval=0.25)
    return last["pages"]


def measure(args, phase, round_number, driver):
    page = None
    if phase == "socket":
        page = SocketPage(args.port)
        page.start()
    elif phase == "chromium":
        # A tab of its own, closed after the window: navigating away (about:blank) leaves the
        # page's socket open in chromium 1xx (the page is frozen, stops reading, and the daemon
        # closes it ~30 s later as a slow client).
        home = driver.current_window_handle
        driver.switch_to.new_window("tab")
        driver.get(f"http://127.0.0.1:{args.port}/")
    expected = 0 if phase == "none" else 1
    pages = wait_pages(args, expected)
    if pages != expected:
        print(f"dashboard: {phase}: the daemon reports {pages} dashboard pages, expected {expected}",
              file=sys.stderr)
    time.sleep(args.settle)
    begin, before, ticks_before = time.monotonic(), cpu_ns(args.pid), cpu_ticks(args.pid)
    time.sleep(args.seconds)
    end, after, ticks_after = time.monotonic(), cpu_ns(args.pid), cpu_ticks(args.pid)
    row = {"phase": phase, "round": round_number, "pages": pages,
           "cpu_pct": (after - before) / 1e7 / (end - begin),
           "tick_pct": (ticks_after - ticks_before) * 100 / TICKS / (end - begin),
           "seconds": end - begin}
    if page is not None:
        inside = [size for t, size in page.arrivals if begin <= t <= end]
        row["snapshots_per_s"] = len(inside) / (end - begin)
        row["bytes_per_s"] = sum(inside) / (end - begin)
        try:
            row["track_points"] = len(json.loads(page.last)["track"])
        except (TypeError, ValueError, KeyError):
            row["track_points"] = None
        page.stop()
        if page.error is not None:
            print(f"dashboard: socket client: {page.error!r}", file=sys.stderr)
    elif phase == "chromium":
        driver.close()  # the tab, and with it the page's socket
        driver.switch_to.window(home)
    row["load"] = open("/proc/loadavg").read().split()[0]
    print("RESULT " + " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
          flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pid", type=int, required=True, help="the daemon's process id")
    parser.add_argument("--port", type=int, required=True, help="its apiPort (the dashboard's port)")
    parser.add_argument("--bridge", required=True, help="the tmm-bridge binary (for status --json)")
    parser.add_argument("--runtime-dir", required=True, help="the daemon's --runtime-dir")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=12.0, help="measured seconds per window")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds between opening a page and its window")
    parser.add_argument("--chromium", action="store_true", help="add the headless chromium phase")
    args = parser.parse_args()

    phases = ["none", "socket"] + (["chromium"] if args.chromium else [])
    driver, scratch = None, tempfile.mkdtemp(prefix="tmm-bench-dashboard-chromium-")
    if args.chromium:
        try:
            driver = start_chromium(scratch)
        except Exception as error:
            print(f"dashboard: chromium did not start ({error!r}); its phase is skipped", file=sys.stderr)
            phases.remove("chromium")
    rows = []
    try:
        for r in range(1, args.rounds + 1):
            shift = (r - 1) % len(phases)
            for phase in phases[shift:] + phases[:shift]:
                rows.append(measure(args, phase, r, driver))
    finally:
        if driver is not None:
            driver.quit()
        subprocess.run(["rm", "-rf", scratch])

    def med(phase, key):
        values = [row[key] for row in rows if row["phase"] == phase and row.get(key) is not None]
        return statistics.median(values) if values else None

    def delta(phase, key="cpu_pct"):
        base = {row["round"]: row[key] for row in rows if row["phase"] == "none"}
        return statistics.median(row[key] - base[row["round"]] for row in rows if row["phase"] == phase)

    base = med("none", "cpu_pct")
    print()
    print(f"Medians of {args.rounds} rounds of {args.seconds:g} s windows (the daemon's process CPU clock, % of"
          " one core; cost = median of the per-round differences against the same round's baseline):")
    print()
    print("| phase | CPU % | cost % (vs no page) | CPU % from /proc ticks | snapshots/s | bytes/s | CPU µs per snapshot | track points |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    labels = {"none": "no page (baseline)", "socket": "one page: WebSocket client (Python)",
              "chromium": "one page: headless chromium"}
    for phase in phases:
        cpu, ticks = med(phase, "cpu_pct"), med(phase, "tick_pct")
        cost = "" if phase == "none" else f"**{delta(phase):.3f}**"
        rate, size, points = med(phase, "snapshots_per_s"), med(phase, "bytes_per_s"), med(phase, "track_points")
        per_snapshot = f"{delta(phase) / 100 * 1e6 / rate:.0f}" if rate else ""
        print(f"| {labels[phase]} | {cpu:.3f} | {cost} | {ticks:.2f} | {'' if rate is None else f'{rate:.2f}'} |"
              f" {'' if size is None else f'{size:,.0f}'} | {per_snapshot} | {'' if points is None else f'{points:.0f}'} |")
    worst = max(delta(phase) for phase in phases if phase != "none")
    verdict = "met" if worst < 1.0 else "NOT met"
    print()
    print(f"Target (issue 25): one open page costs < 1 % of a core at 10 Hz: {verdict} "
          f"(largest median cost {worst:.3f} % against a baseline of {base:.3f} %)")
    print(f"RESULT summary baseline_pct={base:.3f} " + " ".join(
        f"{phase}_pct={med(phase, 'cpu_pct'):.3f} {phase}_cost_pct={delta(phase):.3f}" for phase in phases if phase != "none")
        + f" snapshots_per_s={med('socket', 'snapshots_per_s'):.2f} bytes_per_s={med('socket', 'bytes_per_s'):.0f}")


if __name__ == "__main__":
    main()
