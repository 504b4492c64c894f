"""Hostile TLS clients for the secure ports: stalled oversized ClientHellos, and TLS 1.3 clients
that request KeyUpdates without ever reading the replies.

Used by Tests/BridgeTests/ServerTLSLoadTests.swift (small counts, as the peer of one test each) and by
tmmtools/bench/gap.py (`--flood hellos|keyupdates`, the figures in docs/security.md); also runs
by hand against any daemon:

    /usr/bin/python3 -m tmmtools.client.tlsflood hellos --port 9638 --count 2000 --declared 122880 --sent 120000 --hold 30
    /usr/bin/python3 -m tmmtools.client.tlsflood keyupdates --port 9638 --connections 4 --seconds 90

Each prints one JSON line with what happened (`hellos`: first `{"holding": N}` once the hellos
are sent, then how many connected, were refused, were closed by the server while their hello was
being sent or during the hold; `keyupdates`: KeyUpdates sent, connections the server closed,
whether writing stalled because the server stopped reading).

Python's ssl module cannot send a KeyUpdate on demand, so `keyupdates` drives the system's
libssl directly (ctypes): SSL_connect, then SSL_key_update(SSL_KEY_UPDATE_REQUESTED) and
SSL_do_handshake (which writes it) in a loop, and never SSL_read. Standard library only.
"""

import argparse
import ctypes
import ctypes.util
import json
import os
import resource
import select
import socket
import struct
import time

RECORD_HANDSHAKE = 22
HANDSHAKE_CLIENT_HELLO = 1
MAX_RECORD = 16384


def crafted_hello(declared, sent):
    """A ClientHello whose handshake header declares `declared` bytes of body, of which the first
    `sent` follow (as a real client's would: version, random, then filler), cut into records of at
    most 16 KiB. The server cannot parse it before the rest comes, which never does."""
    body = bytearray(b"\x03\x03" + os.urandom(32))
    body += bytes((i * 7 + 3) & 0xFF for i in range(max(0, sent - len(body))))
    message = struct.pack(">B", HANDSHAKE_CLIENT_HELLO) + declared.to_bytes(3, "big") + bytes(body[:sent])
    stream = bytearray()
    for start in range(0, len(message), MAX_RECORD):
        fragment = message[start:start + MAX_RECORD]
        stream += struct.pack(">BHH", RECORD_HANDSHAKE, 0x0301, len(fragment)) + fragment
    return bytes(stream)


def socket_ready(sock, events, seconds):
    """Whether `sock` is ready for `events` (poll's: select's cannot watch descriptors past 1023)
    within `seconds`."""
    poller = select.poll()
    poller.register(sock, events)
    return bool(poller.poll(int(seconds * 1000)))


def raise_descriptor_limit(needed):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, needed), hard))


class StalledHellos:
    """`count` connections that each send `crafted_hello(declared, sent)` and then wait. All are
    connected first and the hellos then sent together (non-blocking, as fast as the server takes
    them), so the server meets the whole flood at once."""

    def __init__(self, host, port, count, declared, sent):
        raise_descriptor_limit(count + 256)
        stream = crafted_hello(declared, sent)
        self.sockets = []
        self.refused = 0  # connect failed
        self.closed_while_sending = 0  # the server closed before it took the whole hello
        for _ in range(count):
            sock = socket.socket()
            try:
                sock.settimeout(10)
                sock.connect((host, port))
                sock.setblocking(False)
                self.sockets.append(sock)
            except OSError:
                self.refused += 1
                sock.close()
        unsent = {sock.fileno(): [sock, 0] for sock in self.sockets}
        poller = select.poll()
        for fd in unsent:
            poller.register(fd, select.POLLOUT)
        deadline = time.monotonic() + 60
        while unsent and time.monotonic() < deadline:
            for fd, _ in poller.poll(1000):
                entry = unsent.get(fd)
                if entry is None:
                    continue
                sock, offset = entry
                try:
                    entry[1] += sock.send(stream[offset:offset + 65536])
                except BlockingIOError:
                    continue
                except OSError:
                    self.closed_while_sending += 1
                    entry[1] = len(stream)
                    self.sockets.remove(sock)
                    sock.close()
                if entry[1] >= len(stream):
                    poller.unregister(fd)
                    del unsent[fd]

    def closed_by_server(self):
        """How many of the held connections the server has closed (EOF or reset)."""
        closed = 0
        for sock in self.sockets:
            if not socket_ready(sock, select.POLLIN, 0):
                continue
            try:
                if not sock.recv(65536, socket.MSG_PEEK):
                    closed += 1
                    continue
                # An alert before the close: read past it.
                sock.setblocking(False)
                while sock.recv(65536):
                    pass
            except BlockingIOError:
                continue
            except OSError:
                closed += 1
                continue
            closed += 1
        return closed

    def close(self):
        for sock in self.sockets:
            sock.close()
        self.sockets = []


# ---------------------------------------------------------------------------------------------
# KeyUpdate through libssl (ctypes)

SSL_KEY_UPDATE_REQUESTED = 1
SSL_ERROR_WANT_READ = 2
SSL_ERROR_WANT_WRITE = 3
SSL_ERROR_ZERO_RETURN = 6
TLS1_3_VERSION = 0x0304
SSL_CTRL_SET_MIN_PROTO_VERSION = 123


def _libssl():
    library = ctypes.CDLL(ctypes.util.find_library("ssl") or "libssl.so.3", use_errno=True)
    pointer = ctypes.c_void_p
    for name, arguments, result in [
        ("TLS_client_method", [], pointer),
        ("SSL_CTX_new", [pointer], pointer),
        ("SSL_CTX_ctrl", [pointer, ctypes.c_int, ctypes.c_long, pointer], ctypes.c_long),
        ("SSL_CTX_free", [pointer], None),
        ("SSL_new", [pointer], pointer),
        ("SSL_free", [pointer], None),
        ("SSL_set_fd", [pointer, ctypes.c_int], ctypes.c_int),
        ("SSL_connect", [pointer], ctypes.c_int),
        ("SSL_key_update", [pointer, ctypes.c_int], ctypes.c_int),
        ("SSL_do_handshake", [pointer], ctypes.c_int),
        ("SSL_read", [pointer, pointer, ctypes.c_int], ctypes.c_int),
        ("SSL_write", [pointer, pointer, ctypes.c_int], ctypes.c_int),
        ("SSL_get_error", [pointer, ctypes.c_int], ctypes.c_int),
    ]:
        function = getattr(library, name)
        function.argtypes = arguments
        function.restype = result
    return library


class KeyUpdater:
    """A TLS 1.3 client (no certificate check: it attacks, it does not trust) that, once
    connected, only sends KeyUpdate(update_requested) and never reads."""

    library = None

    def __init__(self, host, port, small_buffers=False):
        if KeyUpdater.library is None:
            KeyUpdater.library = _libssl()
        ssl = KeyUpdater.library
        self.context = ssl.SSL_CTX_new(ssl.TLS_client_method())
        ssl.SSL_CTX_ctrl(self.context, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_3_VERSION, None)
        self.sock = socket.socket()
        if small_buffers:
            # Set before connecting, so the window it advertises stays small: the kernel holds
            # little of what the server sends and of what this client has not got sent yet.
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        self.sock.settimeout(10)
        self.sock.connect((host, port))
        # Blocking for libssl (a Python timeout makes the descriptor non-blocking underneath); a
        # server that never answers the hello is cut off by SO_RCVTIMEO.
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 10, 0))
        self.ssl = ssl.SSL_new(self.context)
        ssl.SSL_set_fd(self.ssl, self.sock.fileno())
        if ssl.SSL_connect(self.ssl) != 1:
            self.close()
            raise OSError("TLS handshake failed")
        self.sock.setblocking(False)
        self.sent = 0
        self.pending = False  # a KeyUpdate is written partly: the socket would not take the rest

    def send(self, count, stall_seconds):
        """Sends up to `count` more KeyUpdates. Returns "sent" when all went out, "stalled" when
        the socket took nothing for `stall_seconds` (the server stopped reading), "closed" when
        the server closed the connection."""
        ssl = KeyUpdater.library
        target = self.sent + count
        while self.sent < target:
            if not self.pending and ssl.SSL_key_update(self.ssl, SSL_KEY_UPDATE_REQUESTED) != 1:
                return "closed"
            result = ssl.SSL_do_handshake(self.ssl)
            if result == 1:
                self.sent += 1
                self.pending = False
                continue
            error = ssl.SSL_get_error(self.ssl, result)
            if error != SSL_ERROR_WANT_WRITE:
                return "closed"
            self.pending = True
            if self.server_closed():
                return "closed"
            if not socket_ready(self.sock, select.POLLOUT, stall_seconds):
                return "stalled"
        return "closed" if self.server_closed() else "sent"

    def server_closed(self):
        """The server ended the connection (FIN or reset), whatever unread data is before it."""
        poller = select.poll()
        poller.register(self.sock, select.POLLRDHUP)
        events = poller.poll(0)
        return any(mask & (select.POLLRDHUP | select.POLLHUP | select.POLLERR) for _, mask in events)

    def request(self, path, seconds):
        """Catches up: reads what the server sent (its KeyUpdates) while sending `GET path`, and
        returns the response's status line (None when none came within `seconds`)."""
        ssl = KeyUpdater.library
        text = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        request = ctypes.create_string_buffer(text, len(text))
        chunk = ctypes.create_string_buffer(65536)
        written, received = False, b""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not written:
                result = ssl.SSL_write(self.ssl, request, len(text))
                if result > 0:
                    written = True
                elif ssl.SSL_get_error(self.ssl, result) not in (SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE):
                    return None
            result = ssl.SSL_read(self.ssl, chunk, len(chunk))
            if result > 0:
                received += chunk.raw[:result]
                if b"\r\n" in received:
                    return received.split(b"\r\n", 1)[0].decode("latin-1")
                continue
            if ssl.SSL_get_error(self.ssl, result) not in (SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE):
                return None
            socket_ready(self.sock, select.POLLIN | (0 if written else select.POLLOUT), 0.1)
        return None

    def wait_closed(self, seconds):
        """Waits up to `seconds` for the server to end the connection."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.server_closed():
                return True
            poller = select.poll()
            poller.register(self.sock, select.POLLRDHUP)
            poller.poll(max(1, int((deadline - time.monotonic()) * 1000)))
        return self.server_closed()

    def close(self):
        ssl = KeyUpdater.library
        if self.ssl:
            ssl.SSL_free(self.ssl)
            self.ssl = None
        if self.context:
            ssl.SSL_CTX_free(self.context)
            self.context = None
        self.sock.close()


def keyupdate_flood(host, port, connections, seconds, burst, reconnect, stop=None):
    """`connections` KeyUpdaters sending `burst` KeyUpdates each in turn for `seconds` (or until
    `stop()` is true); a closed one is replaced when `reconnect`. Returns the totals."""
    totals = {"keyUpdatesSent": 0, "closedByServer": 0, "stalls": 0, "handshakes": 0, "handshakeFailures": 0}

    def connect():
        try:
            updater = KeyUpdater(host, port)
            totals["handshakes"] += 1
            return updater
        except OSError:
            totals["handshakeFailures"] += 1
            return None

    clients = [connect() for _ in range(connections)]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not (stop and stop()):
        for index, client in enumerate(clients):
            if client is None:
                if reconnect:
                    clients[index] = connect()
                continue
            before = client.sent
            outcome = client.send(burst, 0.05)
            totals["keyUpdatesSent"] += client.sent - before
            if outcome == "stalled":
                totals["stalls"] += 1
            elif outcome == "closed":
                totals["closedByServer"] += 1
                client.close()
                clients[index] = connect() if reconnect else None
        if not reconnect and all(client is None for client in clients):
            break
    for client in clients:
        if client is not None:
            client.close()
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    hellos = commands.add_parser("hellos", help="stalled ClientHellos")
    hellos.add_argument("--host", default="127.0.0.1")
    hellos.add_argument("--port", type=int, required=True)
    hellos.add_argument("--count", type=int, default=100)
    hellos.add_argument("--declared", type=int, default=122880, help="the ClientHello length its header declares")
    hellos.add_argument("--sent", type=int, default=120000, help="how much of it is sent")
    hellos.add_argument("--hold", type=float, default=5.0, help="seconds to hold the connections open")
    updates = commands.add_parser("keyupdates", help="KeyUpdate(update_requested) without reading")
    updates.add_argument("--host", default="127.0.0.1")
    updates.add_argument("--port", type=int, required=True)
    updates.add_argument("--connections", type=int, default=1)
    updates.add_argument("--count", type=int, default=0,
                         help="send this many per connection, then report (0: flood for --seconds)")
    updates.add_argument("--stall", type=float, default=1.0,
                         help="with --count: seconds without progress that count as the server no longer reading")
    updates.add_argument("--seconds", type=float, default=10.0)
    updates.add_argument("--reconnect", action="store_true", help="replace connections the server closes")
    updates.add_argument("--small-buffers", action="store_true",
                         help="with --count: 4 KiB kernel buffers, so a server that stops reading stalls it sooner")
    updates.add_argument("--then-request", metavar="PATH",
                         help="with --count: then read what the server sent and GET this path (is it read again?)")
    args = parser.parse_args()

    if args.command == "hellos":
        started = time.monotonic()
        flood = StalledHellos(args.host, args.port, args.count, args.declared, args.sent)
        held = len(flood.sockets)
        print(json.dumps({"holding": held}), flush=True)  # a caller measures the server now
        time.sleep(args.hold)  # holding the connections open is the point
        result = {"connected": held + flood.closed_while_sending, "refused": flood.refused,
                  "closedWhileSending": flood.closed_while_sending, "closedByServer": flood.closed_by_server(),
                  "seconds": round(time.monotonic() - started, 3)}
        flood.close()
    elif args.count:
        results = []
        for _ in range(args.connections):
            client = KeyUpdater(args.host, args.port, args.small_buffers)
            outcome = client.send(args.count, args.stall)
            if outcome == "sent" and client.wait_closed(args.stall):
                outcome = "closed"
            result = {"sent": client.sent, "outcome": outcome}
            if args.then_request and outcome != "closed":
                # The server first works through every KeyUpdate the client got in (thousands, a
                # key derivation each): seconds alone, tens of seconds beside a whole test run.
                result["response"] = client.request(args.then_request, 60)
            results.append(result)
            client.close()
        result = {"connections": results}
    else:
        result = keyupdate_flood(args.host, args.port, args.connections, args.seconds, 64, args.reconnect)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
