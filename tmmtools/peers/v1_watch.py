"""Prints every V1 WebSocket message of ws://127.0.0.1:PORT/ as one line, until killed; a
`closed: ...` line for each lost connection, then it reconnects (Tests/CLITests/GPSDTrustTests.swift:
positions before and after the bridge's gpsd is replaced).

    python3 -m tmmtools.peers.v1_watch PORT
"""

import asyncio
import sys

import websockets


async def main(port: str) -> None:
    while True:
        try:
            async with websockets.connect(f"ws://127.0.0.1:{port}/", open_timeout=5, ping_interval=None) as ws:
                while True:
                    print(await ws.recv(), flush=True)
        except Exception as error:
            print("closed:", error, flush=True)
            await asyncio.sleep(0.1)  # reconnect pace while the bridge restarts


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
