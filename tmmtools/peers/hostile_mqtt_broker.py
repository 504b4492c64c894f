"""A hostile MQTT broker for tests: the other side of the daemon's fleet publishing (MQTT) when the
broker misbehaves. A real broker is Debian's mosquitto (Tests/Support/TestSupport/MosquittoBroker.swift).

    python3 -m tmmtools.peers.hostile_mqtt_broker --mode MODE [--port 0] [--host 127.0.0.1] [--pong]
        [--trickle-interval 0.1] [--trickle-bytes 16] [--seed N] [--seconds S]

It listens on --host:--port (--port 0, the default, takes a free one) and prints `PORT N` as its
first line, flushed. Then one JSON line per thing that happens, each with `t` (Unix time) and `id`
(the connection's number): `connection` (`client`), `connect` (the client's CONNECT: `protocol`
(`MQTT` or `MQIsdp`), `level` (3, 4 or 5), `client_id`, `username`), `sent` (`what`, `bytes`),
`packet` (`type`: the MQTT packet type's name, `length`: its remaining length; every packet read
after CONNECT), `closed` (`reason`, `received`: bytes from the client). On SIGTERM (or at
--seconds) the last line is `summary`: `connections`, `bytes_received`, `packets` (the count of
each packet type read); then it exits with status 0.

Modes (--mode, for every connection):
  garbage        reads the CONNECT, answers 256 random bytes (the first one 0x00: packet type 0
                 is reserved, so no client can take them for a CONNACK), then reads and discards
  huge-packet    a valid CONNACK (accepted), then a PUBLISH whose remaining length says 268435455
                 bytes (256 MB, the largest MQTT allows), then --trickle-bytes of it every
                 --trickle-interval seconds, for ever
  never-ack      a valid CONNACK (accepted), then reads and discards everything: no PUBACK, no
                 SUBACK; answers PINGREQ with PINGRESP only with --pong
  refuse         a CONNACK refusing the login (3.1.1: return code 5, not authorised; MQTT 5:
                 reason code 0x87), then closes
  silent         accepts and reads, never answers (no CONNACK)
  close-at-once  closes each connection as soon as it is accepted

A CONNACK is in the client's protocol version (MQTT 5's has its empty properties). Runs until
SIGTERM or --seconds. Started by the Swift tests through HostileMQTTBroker
(Tests/Support/TestSupport/MosquittoBroker.swift), tested by tmmtools/tests/test_hostile_mqtt.py.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import socket
import sys
import threading
import time

MODES = ("garbage", "huge-packet", "never-ack", "refuse", "silent", "close-at-once")
PACKET_TYPES = {1: "CONNECT", 2: "CONNACK", 3: "PUBLISH", 4: "PUBACK", 5: "PUBREC", 6: "PUBREL", 7: "PUBCOMP",
                8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE", 11: "UNSUBACK", 12: "PINGREQ", 13: "PINGRESP",
                14: "DISCONNECT", 15: "AUTH"}
MAX_REMAINING = 268_435_455  # 0xFF 0xFF 0xFF 0x7F: the largest remaining length MQTT can say
PINGRESP = b"\xd0\x00"


class Closed(Exception):
    """The client went away, or the broker stops this connection."""


class Log:
    """JSON lines on standard output, one per record, thread-safe, flushed; and the totals."""

    def __init__(self, handle=None):
        self.handle = handle or sys.stdout
        self.lock = threading.RLock()  # SIGTERM's summary may interrupt a write of the main thread
        self.connections = 0
        self.bytes_received = 0
        self.packets: dict[str, int] = {}

    def write(self, event: str, **fields):
        line = json.dumps({"t": round(time.time(), 3), "event": event, **fields}, sort_keys=True)
        with self.lock:
            self.handle.write(line + "\n")
            self.handle.flush()

    def count(self, received: int = 0, packet: str | None = None, connection: bool = False):
        with self.lock:
            self.bytes_received += received
            self.connections += 1 if connection else 0
            if packet:
                self.packets[packet] = self.packets.get(packet, 0) + 1

    def summary(self):
        with self.lock:
            totals = {"connections": self.connections, "bytes_received": self.bytes_received,
                      "packets": dict(self.packets)}
        self.write("summary", **totals)


def encode_length(length: int) -> bytes:
    """MQTT's variable byte integer (1 to 4 bytes)."""
    encoded = bytearray()
    while True:
        byte, length = length % 128, length // 128
        encoded.append(byte | (0x80 if length else 0))
        if not length:
            return bytes(encoded)


def connack(level: int, code: int) -> bytes:
    """A CONNACK (session present 0) in the client's protocol level: 3.1/3.1.1 or 5 (empty properties)."""
    return b"\x20\x03\x00" + bytes([code]) + b"\x00" if level == 5 else b"\x20\x02\x00" + bytes([code])


def parse_connect(body: bytes) -> dict:
    """The fields of a CONNECT's variable header and payload that the log shows (best effort)."""
    def string(offset: int) -> tuple[str, int]:
        size = int.from_bytes(body[offset:offset + 2], "big")
        return body[offset + 2:offset + 2 + size].decode("utf-8", "replace"), offset + 2 + size

    try:
        protocol, offset = string(0)
        level, flags = body[offset], body[offset + 1]
        offset += 4  # level, flags, keep alive
        if level == 5:
            size, used = decode_length(body, offset)
            offset += used + size
        client_id, offset = string(offset)
        if flags & 0x04:  # a will: (MQTT 5: its properties,) topic and message
            if level == 5:
                size, used = decode_length(body, offset)
                offset += used + size
            offset = string(string(offset)[1])[1]
        username = string(offset)[0] if flags & 0x80 else None
        return {"protocol": protocol, "level": level, "client_id": client_id, "username": username}
    except (IndexError, ValueError):
        return {"protocol": None, "level": None, "client_id": None, "username": None}


def decode_length(data: bytes, offset: int) -> tuple[int, int]:
    """(value, bytes used) of the variable byte integer at `offset`."""
    value, used = 0, 0
    while True:
        byte = data[offset + used]
        value |= (byte & 0x7F) << (7 * used)
        used += 1
        if not byte & 0x80:
            return value, used
        if used == 4:
            raise ValueError("malformed variable byte integer")


class Connection:
    """One client, served in the broker's mode."""

    def __init__(self, sock: socket.socket, number: int, options, log: Log):
        self.sock = sock
        self.id = number
        self.options = options
        self.log = log
        self.received = 0
        self.level = 4

    # --- the wire --------------------------------------------------------------------------------
    def recv_exactly(self, count: int) -> bytes:
        data = b""
        while len(data) < count:
            try:
                chunk = self.sock.recv(min(count - len(data), 65536))
            except OSError as error:
                raise Closed(f"receive failed: {error.strerror or error}") from None
            if not chunk:
                raise Closed("closed by the client")
            self.received += len(chunk)
            self.log.count(received=len(chunk))
            data += chunk
        return data

    def read_packet(self) -> tuple[int, bytes]:
        """(packet type, body) of the next packet; its body is read and dropped past 64 KiB."""
        first = self.recv_exactly(1)[0]
        length, shift = 0, 0
        for _ in range(4):
            byte = self.recv_exactly(1)[0]
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        else:
            raise Closed("malformed remaining length")
        body = self.recv_exactly(min(length, 65536))
        left = length - len(body)
        while left:
            left -= len(self.recv_exactly(min(left, 65536)))
        kind = first >> 4
        self.log.count(packet=PACKET_TYPES.get(kind, f"reserved-{kind}"))
        return kind, body

    def send(self, data: bytes, what: str):
        try:
            self.sock.sendall(data)
        except OSError as error:
            raise Closed(f"send failed: {error.strerror or error}") from None
        self.log.write("sent", id=self.id, what=what, bytes=len(data))

    # --- the modes -------------------------------------------------------------------------------
    def read_connect(self):
        kind, body = self.read_packet()
        if kind != 1:
            raise Closed(f"first packet is {PACKET_TYPES.get(kind, kind)}, not CONNECT")
        fields = parse_connect(body)
        self.level = fields["level"] or 4
        self.log.write("connect", id=self.id, **fields)

    def discard(self, pong: bool = False):
        """Reads packets until the client goes away; with `pong`, answers each PINGREQ."""
        while True:
            kind, body = self.read_packet()
            self.log.write("packet", id=self.id, type=PACKET_TYPES.get(kind, f"reserved-{kind}"), length=len(body))
            if kind == 12 and pong:
                self.send(PINGRESP, "PINGRESP")

    def huge_packet(self):
        self.send(connack(self.level, 0), "CONNACK")
        self.send(b"\x30" + encode_length(MAX_REMAINING) + b"\x00\x05fleet", "PUBLISH header (268435455 bytes)")
        rng = random.Random(self.options.seed + self.id)
        while True:
            time.sleep(self.options.trickle_interval)
            try:
                self.sock.sendall(rng.randbytes(self.options.trickle_bytes))
            except OSError as error:
                raise Closed(f"send failed: {error.strerror or error}") from None

    def serve(self):
        mode = self.options.mode
        if mode == "close-at-once":
            raise Closed("closed at once (--mode close-at-once)")
        if mode == "silent":
            self.discard()
        self.read_connect()
        if mode == "garbage":
            rng = random.Random(self.options.seed + self.id)
            self.send(b"\x00" + rng.randbytes(255), "garbage")
            self.discard()
        if mode == "refuse":
            self.send(connack(self.level, 0x87 if self.level == 5 else 5), "CONNACK refused")
            raise Closed("refused")
        if mode == "huge-packet":
            self.huge_packet()
        self.send(connack(self.level, 0), "CONNACK")
        self.discard(pong=self.options.pong)

    def run(self):
        try:
            self.serve()
            reason = "served"
        except Closed as closed:
            reason = str(closed)
        finally:
            try:
                self.sock.close()
            except OSError:
                pass
        self.log.write("closed", id=self.id, reason=reason, received=self.received)


def listen(host: str, port: int) -> socket.socket:
    server = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, port))
    server.listen(64)
    return server


def serve(server: socket.socket, options, log: Log, seconds: float | None = None, stop: threading.Event | None = None):
    """Accepts connections until `seconds` pass or `stop` is set, each served on its own thread."""
    server.settimeout(0.2)
    end = None if seconds is None else time.monotonic() + seconds
    number = 0
    while (end is None or time.monotonic() < end) and not (stop and stop.is_set()):
        try:
            sock, address = server.accept()
        except socket.timeout:
            continue
        except OSError:  # closed under it (a test's clean-up)
            return
        number += 1
        log.count(connection=True)
        log.write("connection", id=number, client=f"{address[0]}:{address[1]}")
        threading.Thread(target=Connection(sock, number, options, log).run, daemon=True).start()


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hostile_mqtt_broker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=MODES, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port (printed)")
    parser.add_argument("--pong", action="store_true", help="never-ack: answer PINGREQ with PINGRESP")
    parser.add_argument("--trickle-interval", type=float, default=0.1, help="huge-packet: seconds between sends")
    parser.add_argument("--trickle-bytes", type=int, default=16, help="huge-packet: bytes per send")
    parser.add_argument("--seed", type=int, default=0, help="of the random bytes (garbage, huge-packet)")
    parser.add_argument("--seconds", type=float, help="stop after this many seconds (default: until SIGTERM)")
    return parser


def main() -> int:
    options = argument_parser().parse_args()
    server = listen(options.host, options.port)
    print(f"PORT {server.getsockname()[1]}", flush=True)
    log = Log()

    def terminate(_signal, _frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, terminate)
    try:
        serve(server, options, log, options.seconds)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        log.summary()
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
