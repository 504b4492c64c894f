"""A WebSocket client that reports each opening handshake's status
(Tests/BridgeTests/ServerOriginTests.swift: Origin refusals as python3-websockets sees them).

    python3 -m tmmtools.peers.ws_handshakes URL ORIGIN [URL ORIGIN]...

For each (URL, ORIGIN) pair prints `URL ORIGIN STATUS`: 101 when the upgrade succeeded, else the
refusal's HTTP status. ORIGIN `-` sends no Origin header. websockets 10 (Debian 12) has the
asyncio client only; it raises InvalidStatusCode for a refused handshake.
"""

import asyncio
import sys

import websockets
import websockets.exceptions


async def status(url, origin):
    try:
        async with websockets.connect(url, origin=origin, open_timeout=5, ping_interval=None, close_timeout=2):
            return 101
    except websockets.exceptions.InvalidStatusCode as refused:
        return refused.status_code


async def main(arguments):
    for url, origin in zip(arguments[0::2], arguments[1::2]):
        print(url, origin, await status(url, None if origin == "-" else origin))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
