"""TMM clients that record what they receive, as the sample apps would see it.

A `Recorder` holds one WebSocket (V1 `/`, V2 `/locationV2`, `/events`) open in a background
thread, stamps every message with the wall clock when it arrived, and reconnects when the
connection drops, as the samples do (re-registering first when the V2 port answers 401, as an app
restarted against a restarted TMM would). Reconnect times are recorded.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import websockets


class Recorder:
    def __init__(self, url: str, name: str, reregister=None, reconnect: bool = True):
        self.url = url
        self.name = name
        self.reregister = reregister
        self.reconnect = reconnect
        self.messages: list[tuple[float, dict]] = []
        self.connects: list[float] = []  # wall time of every established connection
        self.drops: list[tuple[float, str]] = []  # wall time and reason of every lost connection
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)

    def save(self, path: str):
        """Every message with its arrival time, JSON lines: what the client saw, for diffing."""
        with open(path, "w", encoding="utf-8") as handle:
            for arrived, message in self.messages:
                handle.write(json.dumps({"arrived": arrived, "message": message}, sort_keys=True) + "\n")

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(15)

    def _main(self):
        asyncio.run(self._run())

    async def _run(self):
        delay = 0.05
        while not self._stop.is_set():
            try:
                async with websockets.connect(self.url, open_timeout=5, ping_interval=None, close_timeout=1,
                                              max_size=2 ** 22) as ws:
                    self.connects.append(time.time())
                    delay = 0.05
                    while not self._stop.is_set():
                        try:
                            text = await asyncio.wait_for(ws.recv(), 0.2)
                        except asyncio.TimeoutError:
                            continue
                        arrived = time.time()
                        try:
                            self.messages.append((arrived, json.loads(text)))
                        except (TypeError, ValueError):
                            self.errors.append(f"not JSON: {text[:80]!r}")
            except websockets.exceptions.InvalidStatusCode as error:
                self.drops.append((time.time(), f"HTTP {error.status_code}"))
                if error.status_code == 401 and self.reregister:
                    try:
                        await asyncio.get_running_loop().run_in_executor(None, self.reregister)
                    except Exception as failure:  # the next attempt says more
                        self.errors.append(f"re-registration failed: {failure}")
            except (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException) as error:
                self.drops.append((time.time(), type(error).__name__))
            if not self.reconnect:
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)


class SlowClient:
    """A V2 client that completes the handshake and then never reads: what a stuck phone does.
    The bridge must neither block nor grow without bound for it (docs/websocket.md, slow clients)."""

    def __init__(self, host: str, port: int, path: str = "/locationV2"):
        self.sock = socket.create_connection((host, port), timeout=5)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        key = "dGhlIHNhbXBsZSBub25jZQ=="
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise OSError("closed during the handshake")
            head += chunk
        self.status_line = head.split(b"\r\n")[0].decode()

    def closed_by_server(self) -> bool:
        """Drains what is buffered; True once the server has closed the connection."""
        self.sock.setblocking(False)
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return True
        except BlockingIOError:
            return False
        except OSError:
            return True
        finally:
            self.sock.setblocking(True)

    def close(self):
        self.sock.close()
