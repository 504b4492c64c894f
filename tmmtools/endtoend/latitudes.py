"""Prints the latitude of every LocationV1 message as it arrives (`latitude 48.117...`), one per
line, until the server closes the connection or the Swift side ends the script: the receivers
test (CLITests/ReceiversTests.swift) reads which receiver's positions a plain TMM client gets.
"""

import asyncio
import json

import websockets

from tmmtools.client import tmmclient


async def follow(url):
    async with websockets.connect(url, open_timeout=5, ping_interval=None, close_timeout=5) as ws:
        print("connected", flush=True)
        try:
            while True:
                message = json.loads(await ws.recv())
                print(f"latitude {message['latitude']}", flush=True)
        except websockets.exceptions.ConnectionClosed:
            pass


def run(context, checks):
    asyncio.run(follow(tmmclient.ws_url(context, "locationPort")))


if __name__ == "__main__":
    tmmclient.main(run)
