"""The largest gap a healthy LocationV2 client sees while the daemon does slow work.

Runs the real `tmm-bridge run` (private gpsd) on a pty receiver that sends GGA + RMC at --rate Hz,
keeps one WebSocket client on /locationV2, and records when each frame arrives: first for
--quiet seconds with nothing else going on (the floor of this machine and run), then while
--registrations applications register one after another through `tmm-bridge open` (each a
registry write with its fsync). Prints, per phase, the largest and the 99th-percentile
inter-frame gap, and a RESULT line for scripts/bench.sh. The target (issue 10) is a largest gap
of at most one period + 5 ms in the registration phase.

`--flood hellos|keyupdates` replaces the registrations by hostile TLS clients
(tmmtools/client/tlsflood.py): `hellos` opens --flood-count connections to locationSecurePort that
each send --hello-sent bytes of a ClientHello declaring --hello-declared bytes and then stall;
`keyupdates` runs --flood-count TLS 1.3 clients (same port) that send KeyUpdate(update_requested) and never
read, each replaced when the daemon closes it. The flood lasts --flood-seconds, then the
connections close and a quiet phase follows. Per phase it prints the V2 frame rate and largest
gap, the latency of `GET /api/v1/publicKey` on the plain REST port (a new connection every
--rest-interval s) at p50/max, and the daemon's resident memory (VmRSS) before the flood, at its
peak and at the end of the quiet phase after it.

`--handshakers N` (issue 11) replaces the registrations by TLS handshakes: after the quiet phase,
N concurrent `openssl s_time -new` loops (full handshakes, one connection after another each,
spread over the three secure ports) run for --handshake-seconds, then a second quiet phase
follows (`--handshakers-nice 19` runs the loops niced: a control that tells CPU contention on the
machine from a stall of the daemon's loop; `--handshakers-idle` runs them SCHED_IDLE, the stronger
control). Per phase it also prints the run-queue wait of the daemon's io thread (ready to run but
not running: CPU contention, from /proc/PID/task/PID/schedstat), the epoch-to-client latency (the frame's arrival minus the
write of that epoch into the pty, matched by `utcTime`) at p50/p99/max, the handshakes the
loops completed, and the daemon's CPU. The same target applies to the handshake phase.

    /usr/bin/python3 -m tmmtools.bench.gap --bridge .build/release/tmm-bridge
    /usr/bin/python3 -m tmmtools.bench.gap --bridge .build/release/tmm-bridge --handshakers 50
    /usr/bin/python3 -m tmmtools.bench.gap --bridge .build/release/tmm-bridge --flood hellos --flood-count 2000
    /usr/bin/python3 -m tmmtools.bench.gap --bridge .build/release/tmm-bridge --flood keyupdates --flood-count 4 \
        --flood-seconds 90

Run with Debian's python3 (python3-websockets).
"""

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import websockets

from tmmtools import checkout, polling
from tmmtools.client import tmmclient
from tmmtools.sim.nmea import sentence  # the one NMEA writer of the Python tools: $body*hh CR LF


class Receiver(threading.Thread):
    """A pty that sends one GGA + RMC cycle every 1/rate s, times advancing with it."""

    def __init__(self, rate):
        super().__init__(daemon=True)
        self.rate = rate
        self.master, self.slave = os.openpty()
        self.path = os.ttyname(self.slave)
        os.chmod(self.path, 0o666)  # gpsd runs as the daemon's unprivileged user
        self.stopping = threading.Event()
        # Monotonic time of each epoch's write, by epoch number (the list only grows).
        self.written = []

    def run(self):
        period = 1.0 / self.rate
        start = time.monotonic()
        n = 0
        while not self.stopping.is_set():
            centiseconds = 12 * 360000 + n * int(100 / self.rate)
            h, rest = divmod(centiseconds, 360000)
            m, rest = divmod(rest, 6000)
            s, cs = divmod(rest, 100)
            t = f"{h:02d}{m:02d}{s:02d}.{cs:02d}"
            lat = f"4730.{(n % 10000):04d}"
            burst = sentence(f"GPGGA,{t},{lat},N,00730.0000,E,4,12,0.8,500.0,M,48.0,M,1.0,0001") + \
                sentence(f"GPRMC,{t},A,{lat},N,00730.0000,E,0.1,90.0,021226,,,D")
            try:
                self.written.append(time.monotonic())
                os.write(self.master, burst)
            except OSError:
                return
            n += 1
            delay = start + n * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)  # pacing the receiver is the point

    def stop(self):
        self.stopping.set()


def gaps(times, begin, end):
    inside = [t for t in times if begin <= t <= end]
    return [b - a for a, b in zip(inside, inside[1:])]


def epoch_of(frame, rate):
    """The epoch number of a LocationV2 frame, from its utcTime (hhmmss.ff), or None."""
    try:
        value = json.loads(frame)["utcTime"]
    except (ValueError, KeyError, TypeError):
        return None
    hhmmss = int(value)
    centiseconds = (hhmmss // 10000) * 360000 + (hhmmss // 100 % 100) * 6000 + (hhmmss % 100) * 100 \
        + round((value - hhmmss) * 100)
    step = int(100 / rate)
    n, rest = divmod(centiseconds - 12 * 360000, step)
    return n if rest == 0 and n >= 0 else None


def latencies(samples, written, begin, end):
    """Epoch-to-client latencies (s) of the frames that arrived in [begin, end]."""
    return [arrived - written[n] for arrived, n in samples if begin <= arrived <= end and n is not None
            and n < len(written)]


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else float("nan")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_queue_wait(pid):
    """Seconds the daemon's io thread (its main thread) has waited on a run queue: ready to run,
    not running (/proc/PID/task/PID/schedstat, second field, ns)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return float("nan")


def handshake_loops(count, ports, seconds, nice, idle):
    """`count` openssl s_time -new loops, round robin over `ports`, for `seconds` (at `nice`, or
    SCHED_IDLE)."""
    prefix = ["chrt", "--idle", "0"] if idle else ["nice", "-n", str(nice)]
    return [subprocess.Popen(prefix + ["openssl", "s_time", "-connect", f"127.0.0.1:{ports[i % len(ports)]}", "-new",
                              "-time", str(seconds)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for i in range(count)]


def handshakes_done(loops):
    """Total connections the s_time loops reported, and how many loops failed to report."""
    total, failed = 0, 0
    for loop in loops:
        output, _ = loop.communicate()
        counts = [int(line.split()[0]) for line in output.splitlines() if "real seconds" in line]
        if counts:
            total += counts[0]
        else:
            failed += 1
    return total, failed


def resident_bytes(pid):
    """The daemon's resident memory now (VmRSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class Probe(threading.Thread):
    """Samples the daemon's VmRSS every 0.1 s and times `GET /api/v1/publicKey` on the plain REST
    port (a new connection each, every `interval` s): (monotonic time, value) lists."""

    def __init__(self, pid, api_port, interval):
        super().__init__(daemon=True)
        self.pid, self.api_port, self.interval = pid, api_port, interval
        self.memory = []
        self.rest = []  # (start, seconds, or None when it failed)
        self.stopping = threading.Event()

    def run(self):
        next_rest = time.monotonic()
        while not self.stopping.is_set():
            now = time.monotonic()
            self.memory.append((now, resident_bytes(self.pid)))
            if now >= next_rest:
                next_rest = now + self.interval
                try:
                    response = tmmclient.http_request("127.0.0.1", self.api_port, "GET", "/api/v1/publicKey", timeout=30)
                    self.rest.append((now, time.monotonic() - now if response.status == 200 else None))
                except OSError:
                    self.rest.append((now, None))
            self.stopping.wait(0.1)  # the sampling period

    def stop(self):
        self.stopping.set()
        self.join()

    def rest_in(self, begin, end):
        return [seconds for start, seconds in self.rest if begin <= start <= end]

    def memory_in(self, begin, end):
        return [value for at, value in self.memory if begin <= at <= end]


def summary(values):
    """The largest and the p99 of `values`; NaN for a phase too short to have two frames (a run
    with few registrations), which the table prints as nan rather than failing."""
    if not values:
        return float("nan"), float("nan")
    ordered = sorted(values)
    return ordered[-1], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def listen_v2(v2_port, rate, arrivals, samples):
    """The /locationV2 client: each frame's arrival, and (arrival, epoch number) in `samples`."""
    async with websockets.connect(f"ws://127.0.0.1:{v2_port}/locationV2", max_size=None) as ws:
        async for frame in ws:
            now = time.monotonic()
            arrivals.append(now)
            samples.append((now, epoch_of(frame, rate)))


async def wait_until_streaming(arrivals, rate, context):
    """Until two seconds of frames arrived (at most 10 s)."""
    deadline = time.monotonic() + 10
    while len(arrivals) < 2 * rate:  # streaming steadily before anything is measured
        if time.monotonic() > deadline:
            raise SystemExit("gap: no LocationV2 frames arrived; the daemon's log:\n"
                             + open(os.path.join(context["runtimeDir"], "..", "daemon.log")).read())
        await asyncio.sleep(0.05)


async def measure(args, context, v2_port, secure_ports, daemon_pid, probe):
    arrivals = []
    samples = []  # (arrival, epoch number)
    phases = {}
    extra = {"probe": probe}

    listener = asyncio.ensure_future(listen_v2(v2_port, args.rate, arrivals, samples))
    await wait_until_streaming(arrivals, args.rate, context)

    begin = time.monotonic()
    waited = run_queue_wait(daemon_pid)
    await asyncio.sleep(args.quiet)
    phases["quiet"] = (begin, time.monotonic())
    extra["wait quiet"] = run_queue_wait(daemon_pid) - waited

    if args.flood:
        await flood_phases(args, secure_ports, daemon_pid, phases, extra)
        failures = 0
    elif args.handshakers:
        failures = await handshake_phases(args, secure_ports, daemon_pid, phases, extra)
    else:
        failures = await registration_phase(args, context, phases)
    listener.cancel()
    return arrivals, samples, phases, failures, extra


def flood(args, secure_ports):
    """--flood-processes tlsflood processes sharing --flood-count; their figures added up."""
    outcome = {}
    # Processes of their own, so that the flood's Python does not share a GIL with the
    # measuring clients; --flood-processes of them share the count, for a faster flood.
    share = args.flood_count // args.flood_processes
    if args.flood == "hellos":
        command = ["hellos", "--port", str(secure_ports[0]), "--count", str(share),
                   "--declared", str(args.hello_declared), "--sent", str(args.hello_sent),
                   "--hold", str(args.flood_seconds)]
    else:
        command = ["keyupdates", "--port", str(secure_ports[0]), "--connections", str(share),
                   "--seconds", str(args.flood_seconds), "--reconnect"]
    runs = [subprocess.Popen(checkout.module_command("client.tlsflood", *command), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True) for _ in range(args.flood_processes)]
    for run in runs:
        output, _ = run.communicate()
        try:
            for key, value in json.loads(output.strip().splitlines()[-1]).items():
                outcome[key] = outcome.get(key, 0) + value
        except (IndexError, ValueError):
            outcome["error"] = output[-500:]
    return outcome


async def flood_phases(args, secure_ports, daemon_pid, phases, extra):
    """The flood, then a quiet phase."""
    loop = asyncio.get_running_loop()
    begin = time.monotonic()
    extra["cpu before"] = cpu_seconds(daemon_pid)
    outcome = await loop.run_in_executor(None, flood, args, secure_ports)
    phases["flood"] = (begin, time.monotonic())
    extra["flood cpu"] = cpu_seconds(daemon_pid) - extra["cpu before"]
    extra["flood"] = outcome
    begin = time.monotonic()
    await asyncio.sleep(args.quiet)
    phases["quiet after"] = (begin, time.monotonic())


async def handshake_phases(args, secure_ports, daemon_pid, phases, extra):
    """The TLS handshake loops, then a quiet phase; returns how many loops failed."""
    loop = asyncio.get_running_loop()
    cpu = cpu_seconds(daemon_pid)
    waited = run_queue_wait(daemon_pid)
    begin = time.monotonic()
    loops = handshake_loops(args.handshakers, secure_ports, args.handshake_seconds, args.handshakers_nice,
                            args.handshakers_idle)
    total, failed = await loop.run_in_executor(None, handshakes_done, loops)
    phases["handshakes"] = (begin, time.monotonic())
    extra["handshakes"] = total
    extra["handshake_cpu"] = cpu_seconds(daemon_pid) - cpu
    extra["wait handshakes"] = run_queue_wait(daemon_pid) - waited
    waited = run_queue_wait(daemon_pid)
    begin = time.monotonic()
    await asyncio.sleep(args.quiet)
    phases["quiet after"] = (begin, time.monotonic())
    extra["wait quiet after"] = run_queue_wait(daemon_pid) - waited
    return failed


async def registration_phase(args, context, phases):
    """--registrations registrations one after another; returns how many failed."""
    loop = asyncio.get_running_loop()
    begin = time.monotonic()
    failures = 0
    for _ in range(args.registrations):
        url = tmmclient.ios_register_url(tmmclient.ios_register_json(str(uuid.uuid4()), "gapbench://response"))
        result = await loop.run_in_executor(None, tmmclient.tmm_open, context, url)
        if result.status != 0:
            failures += 1
    phases["registrations"] = (begin, time.monotonic() + 1.0 / args.rate)
    await asyncio.sleep(2.0 / args.rate)
    return failures


def parse_arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", default=".build/release/tmm-bridge")
    parser.add_argument("--rate", type=int, default=10)
    parser.add_argument("--quiet", type=float, default=10.0)
    parser.add_argument("--registrations", type=int, default=20)
    parser.add_argument("--flood", choices=["hellos", "keyupdates"],
                        help="instead of registrations: hostile TLS clients (tmmtools/client/tlsflood.py)")
    parser.add_argument("--flood-count", type=int, default=2000, help="connections of the flood")
    parser.add_argument("--flood-seconds", type=float, default=20.0)
    parser.add_argument("--flood-processes", type=int, default=1, help="flooding processes sharing --flood-count")
    parser.add_argument("--hello-declared", type=int, default=122880, help="hellos: the declared ClientHello length")
    parser.add_argument("--hello-sent", type=int, default=120000, help="hellos: bytes of it sent before stalling")
    parser.add_argument("--rest-interval", type=float, default=0.1)
    parser.add_argument("--daemon-args", default="", help="more arguments for tmm-bridge run (space-separated)")
    parser.add_argument("--handshakers", type=int, default=0,
                        help="instead of registrations: this many concurrent TLS handshake loops")
    parser.add_argument("--handshake-seconds", type=int, default=10)
    parser.add_argument("--handshakers-idle", action="store_true",
                        help="run the handshake loops as SCHED_IDLE (chrt --idle): the stronger control")
    parser.add_argument("--handshakers-nice", type=int, default=0,
                        help="run the handshake loops at this nice value (19: the machine's CPU goes to the "
                             "daemon, gpsd and the measuring client first; a control for CPU contention)")
    return parser.parse_args()


def main():
    args = parse_arguments()

    scratch = tempfile.mkdtemp(prefix="tmm-gap-")
    os.chmod(scratch, 0o755)  # run as root, the daemon drops to its user, who must reach its directories
    receiver = Receiver(args.rate)
    receiver.start()
    arrivals, samples, phases, failures, extra = run_daemon_and_measure(args, scratch, receiver)
    period_ms = 1000.0 / args.rate
    results = print_phase_table(args, period_ms, arrivals, samples, phases, extra, receiver)
    target = period_ms + 5
    if args.flood:
        print_flood(args, arrivals, phases, results, extra)
    elif args.handshakers:
        print_handshakes(args, phases, results, extra, failures, target)
    else:
        print_registrations(args, results, failures, target)
    shutil.rmtree(scratch, ignore_errors=True)


def run_daemon_and_measure(args, scratch, receiver):
    """`tmm-bridge run` on the receiver, V2 unlocked, the phases measured; then the daemon and
    the receiver stopped."""
    location, location_secure, api, api_secure, v2, v2_secure = tmmclient.free_ports(6)
    log = open(os.path.join(scratch, "daemon.log"), "w")
    daemon = subprocess.Popen(
        [args.bridge, "run", "--device", receiver.path, "--registration", "open", "--no-discovery",
         "--listen", "127.0.0.1", "--state-dir", scratch + "/state", "--runtime-dir", scratch + "/run",
         "--location-port", str(location), "--location-secure-port", str(location_secure),
         "--api-port", str(api), "--api-secure-port", str(api_secure),
         "--location-v2-port", str(v2), "--location-v2-secure-port", str(v2_secure),
         "--fallback-port-start", str(tmmclient.free_ports(1)[0])] + args.daemon_args.split(),
        stdout=log, stderr=subprocess.STDOUT)
    context = {"bridge": args.bridge, "runtimeDir": scratch + "/run"}
    try:
        def started():
            with open(os.path.join(scratch, "daemon.log")) as text:
                return "ready" in text.read() or daemon.poll() is not None
        if not polling.wait_until(started, 20, 0.05) or daemon.poll() is not None:
            raise SystemExit("gap: the daemon did not start:\n" + open(os.path.join(scratch, "daemon.log")).read())
        # One registration unlocks V2 (TMM-API.md §6.2).
        first = tmmclient.tmm_open(context, tmmclient.ios_register_url(
            tmmclient.ios_register_json(str(uuid.uuid4()), "gapbench://response")))
        if first.status != 0:
            raise SystemExit(f"gap: registration failed: {first}")
        probe = Probe(daemon.pid, api, args.rest_interval)
        probe.start()
        try:
            arrivals, samples, phases, failures, extra = asyncio.run(
                measure(args, context, v2, [location_secure, api_secure, v2_secure], daemon.pid, probe))
        finally:
            probe.stop()
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        receiver.stop()
        log.close()
    return arrivals, samples, phases, failures, extra


def print_phase_table(args, period_ms, arrivals, samples, phases, extra, receiver):
    """Gaps and latencies of every phase; returns each phase's (largest gap, p99 gap, latency
    p50, p99, max)."""
    print(f"gap: {args.rate} Hz receiver (period {period_ms:.0f} ms), one /locationV2 client, {len(arrivals)} frames")
    print("| phase | frames | largest gap ms | p99 gap ms | latency p50 ms | p99 ms | max ms | io thread run-queue wait ms/s "
          "| largest pty write gap ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    results = {}
    for name, (begin, end) in phases.items():
        values = gaps(arrivals, begin, end)
        largest, p99 = summary(values)
        delays = latencies(samples, receiver.written, begin, end)
        results[name] = (largest, p99, percentile(delays, 0.5), percentile(delays, 0.99), max(delays, default=float("nan")))
        print(f"| {name} | {len(values) + 1} | {largest * 1000:.1f} | {p99 * 1000:.1f} | "
              f"{results[name][2] * 1000:.2f} | {results[name][3] * 1000:.2f} | {results[name][4] * 1000:.2f} | "
              + (f"{extra['wait ' + name] * 1000 / (end - begin):.1f} |" if "wait " + name in extra else " |")
              # The harness's own pacing: a late receiver write shows as a gap at the client too.
              + f" {max(gaps(receiver.written, begin, end), default=float('nan')) * 1000:.1f} |")
    return results


def print_flood(args, arrivals, phases, results, extra):
    probe = extra["probe"]
    print("| phase | V2 frames/s | largest gap ms | REST p50 ms | REST max ms | REST failed | RSS MB (end; peak) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    figures = {}
    for name, (begin, end) in phases.items():
        frames = len([t for t in arrivals if begin <= t <= end])
        rest = probe.rest_in(begin, end)
        answered = sorted(value for value in rest if value is not None)
        memory = probe.memory_in(begin, end)
        figures[name] = {
            "rate": frames / (end - begin), "gap_ms": results[name][0] * 1000,
            "rest_p50_ms": percentile(answered, 0.5) * 1000, "rest_max_ms": max(answered, default=float("nan")) * 1000,
            "rest_failed": len(rest) - len(answered),
            "rss_end_mb": (memory[-1] if memory else 0) / 1e6, "rss_peak_mb": max(memory, default=0) / 1e6}
        f = figures[name]
        print(f"| {name} | {f['rate']:.1f} | {f['gap_ms']:.1f} | {f['rest_p50_ms']:.1f} | {f['rest_max_ms']:.1f} | "
              f"{f['rest_failed']} | {f['rss_end_mb']:.1f}; {f['rss_peak_mb']:.1f} |")
    seconds = phases["flood"][1] - phases["flood"][0]
    print(f"flood {args.flood}: {json.dumps(extra['flood'])}; daemon CPU {extra['flood cpu'] / seconds * 100:.0f}% "
          f"of a core over {seconds:.1f} s")
    print(f"RESULT flood_{args.flood} count={args.flood_count} "
          f"rss_before_mb={figures['quiet']['rss_end_mb']:.1f} rss_peak_mb={figures['flood']['rss_peak_mb']:.1f} "
          f"rss_after_mb={figures['quiet after']['rss_end_mb']:.1f} "
          f"v2_rate_hz={figures['flood']['rate']:.1f} v2_max_gap_ms={figures['flood']['gap_ms']:.1f} "
          f"rest_p50_ms={figures['flood']['rest_p50_ms']:.1f} rest_max_ms={figures['flood']['rest_max_ms']:.1f} "
          f"rest_failed={figures['flood']['rest_failed']} daemon_cpu_pct={extra['flood cpu'] / seconds * 100:.0f}")


def print_handshakes(args, phases, results, extra, failures, target):
    seconds = phases["handshakes"][1] - phases["handshakes"][0]
    largest = results["handshakes"][0] * 1000
    how = "SCHED_IDLE" if args.handshakers_idle else f"nice {args.handshakers_nice}"
    print(f"handshakes: {args.handshakers} concurrent s_time -new loops ({how}) for "
          f"{args.handshake_seconds} s: "
          f"{extra['handshakes']} handshakes ({extra['handshakes'] / seconds:.0f}/s; {failures} loops failed), "
          f"daemon CPU {extra['handshake_cpu'] / seconds * 100:.0f}% of a core; "
          f"target: largest gap <= {target:.0f} ms: " + ("met" if largest <= target and failures == 0 else "NOT met"))
    print(f"RESULT gap_handshakes quiet_max_ms={results['quiet'][0] * 1000:.1f} "
          f"quiet_latency_p50_ms={results['quiet'][2] * 1000:.2f} quiet_latency_p99_ms={results['quiet'][3] * 1000:.2f} "
          f"handshakes_max_ms={largest:.1f} handshakes_p99_gap_ms={results['handshakes'][1] * 1000:.1f} "
          f"handshakes_latency_p50_ms={results['handshakes'][2] * 1000:.2f} "
          f"handshakes_latency_p99_ms={results['handshakes'][3] * 1000:.2f} "
          f"handshakes_latency_max_ms={results['handshakes'][4] * 1000:.2f} "
          f"after_max_ms={results['quiet after'][0] * 1000:.1f} handshakes={extra['handshakes']} "
          f"handshakes_per_s={extra['handshakes'] / seconds:.0f} loop_failures={failures} "
          f"daemon_cpu_pct={extra['handshake_cpu'] / seconds * 100:.0f} "
          f"io_wait_ms_per_s={extra['wait handshakes'] * 1000 / seconds:.1f} "
          f"sched={'idle' if args.handshakers_idle else 'nice' + str(args.handshakers_nice)}")


def print_registrations(args, results, failures, target):
    largest = results["registrations"][0] * 1000
    print(f"registrations: {args.registrations} ({failures} failed); target: largest gap <= {target:.0f} ms: "
          + ("met" if largest <= target and failures == 0 else "NOT met"))
    print(f"RESULT gap_quiet_max_ms={results['quiet'][0] * 1000:.1f} gap_quiet_p99_ms={results['quiet'][1] * 1000:.1f} "
          f"gap_registrations_max_ms={largest:.1f} gap_registrations_p99_ms={results['registrations'][1] * 1000:.1f} "
          f"gap_registration_failures={failures}")




if __name__ == "__main__":
    main()
