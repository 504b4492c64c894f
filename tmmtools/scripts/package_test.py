"""The Python steps of scripts/package-test.sh, which runs them against the installed daemon:

    python3 -m tmmtools.scripts.package_test ports COUNT
        COUNT ports free now on 127.0.0.1 (all held at once, so they differ), on one line
    python3 -m tmmtools.scripts.package_test position URL
        one LocationV1 message from the WebSocket URL (V1 needs no registration): exit 0 and its
        first 120 characters when it has a latitude; else a traceback, whose last line says why
"""

import asyncio
import json
import sys

from tmmtools.client import tmmclient


def print_free_ports(count: int) -> None:
    print(" ".join(str(port) for port in tmmclient.free_ports(count)))


async def read_position(url: str) -> None:
    import websockets  # Debian's python3-websockets, which package-test.sh installs

    async with websockets.connect(url, open_timeout=5) as ws:
        message = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert isinstance(message.get("latitude"), (int, float)), message
        print(json.dumps(message)[:120])


def main(argv: list) -> None:
    command, arguments = (argv[0], argv[1:]) if argv else ("", [])
    if command == "ports":
        print_free_ports(int(arguments[0]))
    elif command == "position":
        asyncio.run(read_position(arguments[0]))
    else:
        sys.exit("usage: python3 -m tmmtools.scripts.package_test ports COUNT | position URL")


if __name__ == "__main__":
    main(sys.argv[1:])
