"""Dashboard pages that never say hello, as a hostile local user would open them
(Tests/BridgeTests/DashboardSocketTests.swift, run under setpriv as nobody).

    python3 -m tmmtools.peers.silent_dashboard_pages URL COUNT SECONDS

Opens COUNT WebSockets to URL (ws://HOST:PORT/dashboard/socket) at once, sends nothing on any,
and waits up to SECONDS for the daemon to close them. Prints one line:
`opened N refused N closed1008 N other N open N` (refused: the handshake failed, e.g. while the
daemon's descriptor table was full; closed1008: closed by the daemon's hello time-out; other: any
other end; open: still open at the deadline). websockets 10 (Debian 12): the asyncio client.
"""

import asyncio
import sys

import websockets
import websockets.exceptions


async def page(url, deadline):
    try:
        connection = await websockets.connect(url, open_timeout=5, ping_interval=None, close_timeout=2,
                                              max_size=None)
    except (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException):
        return "refused"
    try:
        await asyncio.wait_for(connection.wait_closed(), max(0.1, deadline - asyncio.get_running_loop().time()))
    except asyncio.TimeoutError:
        await connection.close()
        return "open"
    return "closed1008" if connection.close_code == 1008 else "other"


async def main(url, count, seconds):
    deadline = asyncio.get_running_loop().time() + seconds
    results = await asyncio.gather(*(page(url, deadline) for _ in range(count)))
    opened = count - results.count("refused")
    print(f"opened {opened} refused {results.count('refused')} closed1008 {results.count('closed1008')} "
          f"other {results.count('other')} open {results.count('open')}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
