"""Holds a V2, a V1 and an /events connection until the server closes them, then prints their
close codes as one JSON line. The Swift side stops the daemon with SIGTERM once `holding` is
printed: a stopping daemon says goodbye with 1001 (going away) on every WebSocket.
"""

import asyncio
import json

import websockets

from tmmtools.client import tmmclient


async def hold(url, first_message):
    async with websockets.connect(url, open_timeout=5, ping_interval=None, close_timeout=5) as ws:
        await first_message(ws)
        return await tmmclient.close_code_when_closed(ws, 20)


def run(context, checks):
    ready = []

    async def first(ws):
        await asyncio.wait_for(ws.recv(), 5)
        ready.append(ws)
        if len(ready) == 3:
            print("holding", flush=True)

    async def main():
        return await asyncio.wait_for(asyncio.gather(
            hold(tmmclient.ws_url(context, "locationV2Port", "/locationV2"), first),
            hold(tmmclient.ws_url(context, "locationPort", "/"), first),
            hold(tmmclient.ws_url(context, "locationV2Port", "/events"), first)), 30)

    v2, v1, events = asyncio.run(main())
    print(json.dumps({"v2": v2, "v1": v1, "events": events}), flush=True)
    checks.equal((v2, v1, events), (1001, 1001, 1001), "every WebSocket was closed with 1001 by the stopping daemon")


if __name__ == "__main__":
    tmmclient.main(run)
