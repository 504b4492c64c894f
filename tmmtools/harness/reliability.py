"""Reliability figures (issue 13): plug/unplug and connect/disconnect cycles with no growth,
SIGKILL during registrations with the registry intact, and a soak.

Growth is judged on the bridge's own /proc figures (descriptors, threads, resident memory) taken
after a warm-up and again at the end, so one-time allocations (first client, first receiver,
caches) are not counted as a leak.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import time
import uuid

import websockets

from tmmtools import checkout
from tmmtools.client import tmmclient
from tmmtools.harness import verify
from tmmtools.harness.bench import HWTESTS, TMM_PORTS, Bench, BenchError, Simulator, wait_for
from tmmtools.harness.clients import Recorder
from tmmtools.sim.driver import Pty

# Memory may move a little with allocator caches; descriptors and threads must not move at all.
RSS_TOLERANCE_KIB = 2048


def _growth_checks(what: str, before: dict, after: dict) -> list:
    return [
        verify.Check(f"{what}: no descriptor growth", before["fds"] == after["fds"], f"{before['fds']} → {after['fds']}"),
        verify.Check(f"{what}: no thread growth", before["threads"] == after["threads"],
                     f"{before['threads']} → {after['threads']}"),
        verify.Check(f"{what}: resident memory within {RSS_TOLERANCE_KIB} KiB", after["rss_kib"] - before["rss_kib"] <= RSS_TOLERANCE_KIB,
                     f"{before['rss_kib']} → {after['rss_kib']} KiB"),
    ]


def _settled(bench: Bench, seconds: float = 5.0) -> dict:
    """The bridge's figures once its thread count has stopped changing (a receiver's watch
    thread ends shortly after the receiver goes)."""
    last = bench.bridge_status()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.1)
        now = bench.bridge_status()
        if now["threads"] == last["threads"] and now["fds"] == last["fds"]:
            return now
        last = now
    return last


def plug_cycles(bench: Bench, cycles: int, figures: dict) -> list:
    """A pty receiver plugged into gpsd and unplugged `cycles` times; each cycle waits until the
    bridge has told /events about both, so every cycle really went through the bridge."""
    bench.register(str(uuid.uuid4()))
    events = Recorder(f"ws://127.0.0.1:{TMM_PORTS['locationV2Port']}/events", "events").start()
    wait_for(lambda: events.connects, 10, what="/events")
    epoch = (b"$GPGGA,120000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*4B\r\n"
             b"$GPRMC,120000.00,A,4807.038,N,01131.000,E,0.0,0.0,021226,,,A*5F\r\n")

    def count(kind):
        return sum(1 for _, e in events.messages if e.get("event") == kind)

    def cycle(index):
        pty = Pty()
        try:
            connected = count("receiverConnected")  # before the add: gpsd may open it at once
            answer = bench.gpsd_command("+" + pty.path)
            if "OK" not in answer:
                raise BenchError(f"cycle {index}: gpsd refused {pty.path}: {answer}")
            # gpsd activates a device when it first reads from it.
            wait_for(lambda: pty.write(epoch) is not None and count("receiverConnected") > connected, 10,
                     what=f"cycle {index}: receiverConnected", interval=0.01)
            disconnected = count("receiverDisconnected")
            bench.gpsd_command("-" + pty.path)
            wait_for(lambda: count("receiverDisconnected") > disconnected, 10, what=f"cycle {index}: receiverDisconnected",
                     interval=0.005)
        finally:
            pty.close()

    warmup = min(50, cycles // 10)
    started = time.monotonic()
    for index in range(warmup):
        cycle(index)
    before = _settled(bench)
    for index in range(warmup, cycles):
        cycle(index)
    after = _settled(bench)
    elapsed = time.monotonic() - started
    events.stop()
    figures[f"plug/unplug: {cycles} cycles (s)"] = round(elapsed, 1)
    figures["plug/unplug: bridge fds/threads/RSS KiB after warm-up → end"] = \
        f"{before['fds']}/{before['threads']}/{before['rss_kib']} → {after['fds']}/{after['threads']}/{after['rss_kib']}"
    return [verify.Check(f"{cycles} plug/unplug cycles, each seen by /events", True,
                         f"{elapsed:.1f} s, {elapsed / cycles * 1000:.1f} ms a cycle")] + _growth_checks("plug/unplug", before, after)


def client_cycles(bench: Bench, cycles: int, figures: dict) -> list:
    """`cycles` V2 clients, one after another: connect, read a position, close."""
    bench.register(str(uuid.uuid4()))
    url = f"ws://127.0.0.1:{TMM_PORTS['locationV2Port']}/locationV2"
    failures = []

    async def one(index):
        try:
            async with websockets.connect(url, open_timeout=5, ping_interval=None, close_timeout=2) as ws:
                json.loads(await asyncio.wait_for(ws.recv(), 5))
        except Exception as error:  # counted and reported, the run goes on
            failures.append(f"client {index}: {type(error).__name__}: {error}")

    async def many(first, last, lanes=10):
        # Ten clients at a time, each connecting, reading and closing in turn.
        async def lane(start):
            for index in range(start, last, lanes):
                await one(index)
        await asyncio.gather(*(lane(first + k) for k in range(lanes)))

    warmup = min(50, cycles // 10)
    started = time.monotonic()
    asyncio.run(many(0, warmup))
    before = _settled(bench)
    asyncio.run(many(warmup, cycles))
    after = _settled(bench)
    elapsed = time.monotonic() - started
    figures[f"connect/disconnect: {cycles} V2 clients (s)"] = round(elapsed, 1)
    figures["connect/disconnect: bridge fds/threads/RSS KiB after warm-up → end"] = \
        f"{before['fds']}/{before['threads']}/{before['rss_kib']} → {after['fds']}/{after['threads']}/{after['rss_kib']}"
    return [verify.Check(f"{cycles} V2 clients connected, got a position and closed", not failures,
                         f"{len(failures)} failed; first: {failures[0]}" if failures else f"{elapsed:.1f} s")] + \
        _growth_checks("connect/disconnect", before, after)


def kill_during_registrations(bench: Bench, rounds: int, figures: dict) -> list:
    """register_loop.py registers as fast as it can while the daemon is SIGKILLed at random
    moments and restarted; after every kill the registry must parse and hold every id whose OK
    the client received. A V2 client (re-registering on 401 as an app would) measures how long
    positions take to come back."""
    ack_file = os.path.join(bench.scratch, "acknowledged.txt")
    stop_file = os.path.join(bench.scratch, "stop")
    context = dict(bench.context(), ackFile=ack_file, stopFile=stop_file, seconds=rounds * 5 + 30)
    loop = subprocess.Popen(checkout.module_command("endtoend.register_loop", json.dumps(context), python="/usr/bin/python3"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    application_id = str(uuid.uuid4())
    bench.register(application_id)
    v2 = Recorder(f"ws://127.0.0.1:{TMM_PORTS['locationV2Port']}/locationV2", "v2",
                  reregister=lambda: bench.register(application_id)).start()

    def acknowledged():
        try:
            with open(ack_file) as handle:
                return handle.read().split("\n")[:-1]  # a last line without its newline is not acknowledged yet
        except FileNotFoundError:
            return []

    problems, recoveries, mid_write = [], [], 0
    rng = random.Random(13)
    try:
        for round_number in range(1, rounds + 1):
            wait_for(lambda: len(acknowledged()) >= round_number * 3, 15, what=f"round {round_number}: registrations")
            time.sleep(rng.uniform(0, 0.3))  # a random moment is the point of the test
            killed = time.time()
            bench.stop_bridge(signal.SIGKILL)
            if os.path.exists(os.path.join(bench.state_dir, "registry.json.tmp")):
                mid_write += 1
            acked = set(acknowledged())
            try:
                registered = set(tmmclient.registered_ids(bench.context()))
            except (ValueError, KeyError) as error:
                problems.append(f"round {round_number}: registry.json does not parse: {error}")
                registered = set()
            missing = acked - registered
            if missing:
                problems.append(f"round {round_number}: acknowledged but not registered: {sorted(missing)[:3]}")
            bench.start_bridge()
            wait_for(lambda: any(a > killed and m.get("latitude") is not None for a, m in v2.messages), 20,
                     what=f"round {round_number}: positions after the restart")
            recoveries.append(min(a for a, m in v2.messages if a > killed and m.get("latitude") is not None) - killed)
    finally:
        open(stop_file, "w").close()
        loop.wait(30)
        v2.stop()
    ordered = sorted(recoveries)
    figures["kill -9: rounds, registry writes in flight at the kill"] = f"{rounds}, {mid_write}"
    figures["kill -9: registrations acknowledged"] = len(acknowledged())
    if ordered:
        figures["kill -9: kill → positions at a reconnecting client, median / max (s)"] = \
            f"{ordered[len(ordered) // 2]:.2f} / {ordered[-1]:.2f}"
    return [
        verify.Check(f"{rounds} SIGKILLs during registrations: registry intact, every acknowledged id kept",
                     not problems, "; ".join(problems[:3]) if problems else f"{len(acknowledged())} acknowledged"),
        verify.Check("a V2 client is streaming again within 5 s of every kill", ordered and ordered[-1] < 5,
                     f"max {ordered[-1]:.2f} s" if ordered else "no recovery"),
    ], ordered


def soak(run, bench: Bench, seconds: float, out: str, figures: dict) -> list:
    """The steady scenario for `seconds`: memory and thread/descriptor counts sampled every
    few seconds, the epoch rate per window, and every epoch at the healthy client."""
    application_id = str(uuid.uuid4())
    bench.register(application_id)
    v2 = Recorder(f"ws://127.0.0.1:{TMM_PORTS['locationV2Port']}/locationV2", "v2").start()
    wait_for(lambda: v2.connects, 10, what="the soak client")
    simulator = Simulator(os.path.join(HWTESTS, "scenarios", "steady.toml"), bench, out, duration=seconds)
    bench.on_close.append(simulator.stop)
    samples = []
    started = time.monotonic()
    simulator.next_event(15)
    interval = max(2.0, seconds / 60)
    while simulator.process.poll() is None and time.monotonic() - started < seconds + 30:
        samples.append((time.monotonic() - started, bench.bridge_status()))
        try:
            event = simulator.next_event(interval)
            if event.get("event") == "done":
                break
        except BenchError:
            pass  # no console line in this interval: sample again
    time.sleep(0.3)
    v2.stop()
    simulator.stop()
    timeline = verify.load_timeline(simulator.timeline_path)
    matched, repeats = verify.match(timeline.truths, v2.messages)
    windows = verify.exempt_windows(timeline)
    required = [t for t in timeline.truths if not verify.in_windows(t["t"], windows)]
    missing = [t for t in required if verify.utc_key(t["utc"]) not in matched]
    # Rate per window at the client (10 s, shorter for a short soak).
    arrivals = sorted(a for _, a, _ in matched.values())
    window = min(10.0, seconds / 6)
    rates = []
    if arrivals:
        start = arrivals[0]
        buckets = {}
        for a in arrivals:
            index = int((a - start) // window)
            buckets[index] = buckets.get(index, 0) + 1
        rates = [count / window for index, count in sorted(buckets.items())][1:-1]  # whole windows only
    steady = samples[len(samples) // 4:] or samples
    rss = [s["rss_kib"] for _, s in steady if s.get("rss_kib")]
    growth = (rss[-1] - rss[0]) if len(rss) > 1 else 0
    figures[f"soak: {seconds:g} s, RSS first quarter → end (KiB)"] = f"{rss[0] if rss else None} → {rss[-1] if rss else None}"
    figures[f"soak: epoch rate per {window:g} s window, min / max (Hz)"] = f"{min(rates):.2f} / {max(rates):.2f}" if rates else None
    run.plot_data["soak"] = {"samples": [(t, s.get("rss_kib")) for t, s in samples]}
    return [
        verify.Check("soak: the healthy client got every epoch", not missing and not repeats,
                     f"{len(required) - len(missing)}/{len(required)}" + (f", first missing {missing[0]['utc']}" if missing else "")),
        verify.Check(f"soak: no drift in epoch rate (every {window:g} s window at 10 Hz ± 1 epoch)",
                     bool(rates) and all(abs(r - 10) * window <= 1 for r in rates), f"windows: {', '.join(f'{r:.2f}' for r in rates[:12])}"),
        verify.Check(f"soak: steady memory (growth after the first quarter ≤ {RSS_TOLERANCE_KIB} KiB)",
                     growth <= RSS_TOLERANCE_KIB, f"{growth} KiB"),
        verify.Check("soak: steady descriptors and threads",
                     len({(s['fds'], s['threads']) for _, s in steady}) == 1,
                     f"{sorted({(s['fds'], s['threads']) for _, s in steady})[:4]} (fds, threads)"),
    ]
