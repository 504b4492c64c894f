"""A LocationV2/V1 WebSocket client for the Swift tests (Python's websockets, Debian 12's 10.4).

    python3 -m tmmtools.peers.ws_client hold URL
        connects, prints `connected`, and holds the connection (reading) until killed
        (Tests/CLITests/StatusCommandTests.swift: a client the status counts)
    python3 -m tmmtools.peers.ws_client frames URL COUNT
        prints the length of each of the first COUNT messages, 10 s at most each
        (Tests/CLITests/PrivilegeDropTests.swift: positions flow after the drop)
    python3 -m tmmtools.peers.ws_client stall URL GPSD_PID
        after 5 messages SIGSTOPs gpsd for 2 s, SIGCONTs it, and prints one JSON line of what
        came in the next 1.5 s: {"frames", "burst" (within 100 ms of the first), "stamps"}
        (Tests/CLITests/StallTests.swift: the pacer does not flush a backlog)
"""

import asyncio
import json
import os
import signal
import sys
import time

import websockets


async def hold(url: str) -> None:
    async with websockets.connect(url, ping_interval=None) as ws:
        print("connected", flush=True)
        while True:
            await ws.recv()


async def frames(url: str, count: int) -> None:
    async with websockets.connect(url) as ws:
        for _ in range(count):
            print(len(await asyncio.wait_for(ws.recv(), 10)))


async def drain(ws, quiet: float) -> None:
    """Reads until nothing came for `quiet` seconds (what was in flight)."""
    try:
        while True:
            await asyncio.wait_for(ws.recv(), quiet)
    except asyncio.TimeoutError:
        pass


async def arrivals(ws, seconds: float) -> list:
    """(arrival, utcTimeStamp) of every message in the next `seconds`."""
    received = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            message = await asyncio.wait_for(ws.recv(), end - time.monotonic())
        except asyncio.TimeoutError:
            break
        received.append((time.monotonic(), json.loads(message)["utcTimeStamp"]))
    return received


async def stall(url: str, gpsd: int) -> None:
    # The client stops gpsd itself, so the stall starts after frames are flowing (a condition,
    # not a guess), and timestamps every frame that comes after SIGCONT.
    async with websockets.connect(url) as ws:
        for _ in range(5):
            await asyncio.wait_for(ws.recv(), 10)
        os.kill(gpsd, signal.SIGSTOP)
        await drain(ws, 0.3)
        await asyncio.sleep(2)  # 20 epochs pile up in the pty
        os.kill(gpsd, signal.SIGCONT)
        after = await arrivals(ws, 1.5)
        first = after[0][0] if after else 0
        print(json.dumps({"frames": len(after), "burst": sum(1 for t, _ in after if t - first < 0.1),
                          "stamps": [s for _, s in after]}))


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "hold":
        asyncio.run(hold(arguments[0]))
    elif command == "frames":
        asyncio.run(frames(arguments[0], int(arguments[1])))
    elif command == "stall":
        asyncio.run(stall(arguments[0], int(arguments[1])))
    else:
        sys.exit(f"ws_client: unknown command {command!r} (hold, frames or stall)")
