"""Autobahn|Testsuite's fuzzingclient cases (categories 1-7 and 9 at reduced sizes), re-created in
Python 3 with the standard library only, against tmm-bridge's WebSocket server.

Autobahn itself needs Python 2.7, which Debian 12 lacks. Each case here mirrors the case class of
crossbario/autobahn-testsuite (autobahntestsuite/case/case*.py): the same numbering, frames,
timers (killAfter, closeAfter, continueLater), expected event lists and expected close
behaviour, and the same verdict rules (Case.onConnectionLost). The client is our own: raw
sockets and a client-side framer with masking, so every bit on the wire is chosen here.

Usage (/usr/bin/python3 -m tmmtools.conformance.autobahn, from the repository root):
  autobahn --echo BINARY [--report DIR] [--cases PREFIX,...]   start tmm-wsecho itself (twice:
                                                               the daemon's 64 KiB limit for
                                                               1-7, 1 MiB for 9)
  autobahn --port N [--report DIR] [--cases PREFIX,...]        a server already listening
Writes DIR/index.md and DIR/index.json; exits 1 when a case FAILED. `make conformance` runs it.

For tools (tmmtools/hwtest.py): run_suite(echo_binary, report_dir) -> summary dict
{"cases", "ok", "non_strict", "informational", "failed"}.
"""

import argparse
import base64
import hashlib
import json
import os
import select
import socket
import ssl
import struct
import subprocess
import sys
import time

OK = "OK"
NON_STRICT = "NON-STRICT"
INFORMATIONAL = "INFORMATIONAL"
FAILED = "FAILED"
# Autobahn's close behaviours (Case.behaviorClose), folded into the verdict by `verdict`.
UNCLEAN = "UNCLEAN"
WRONG_CODE = "WRONG CODE"
FAILED_BY_CLIENT = "FAILED BY CLIENT"

NORMAL, GOING_AWAY, PROTOCOL_ERROR, INVALID_PAYLOAD = 1000, 1001, 1002, 1007
# Autobahn's protocol defaults: how long we wait for the server's Close after ours, and for the
# server to drop TCP once the closing handshake is done, before dropping it ourselves.
CLOSE_HANDSHAKE_TIMEOUT = 1.0
SERVER_DROP_TIMEOUT = 1.0
# Cap on any case (Autobahn's own waits are longer, but nothing here should take more).
CASE_CAP = 30.0

# Category 9 at reduced sizes: every Autobahn size divided by 16 (16 MiB -> 1 MiB), so the echo
# needs a 1 MiB limit (`--ws-max-message 1M`) instead of 16 MiB, and the category stays in seconds.
CAT9_SCALE = 16
CAT9_LIMIT = "1M"


class CaseAbort(Exception):
    """The server broke the protocol as seen from the client (we fail the connection)."""


# --- the client protocol (Autobahn's FuzzingClientProtocol, reduced to what the cases use) ---

class Peer:
    """One WebSocket client connection driving one case: frames out (masked), frames in,
    Autobahn's timers, and the facts its verdict needs (closedByMe, wasClean, ...)."""

    def __init__(self, host, port, case, tls=False):
        self.case = case
        self.sock = socket.create_connection((host, port), timeout=5)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls:
            # The framing over the daemon's TLS transport is under test, not its certificate
            # (tmm-wsecho makes a throwaway CA per run): no verification.
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            self.sock = context.wrap_socket(self.sock, server_hostname=host)
        self.state = "CONNECTING"
        self.connection_was_open = False
        self.closed_by_me = False
        self.failed_by_me = False
        self.dropped_by_me = False
        self.was_clean = False
        self.not_clean_reason = ""
        self.remote_close_code = None
        self.remote_close_reason = b""
        self.lost = False
        self.out = []            # chunks, each written with its own send calls (Autobahn's chops)
        self.pending = b""       # frames not sent 'sync': coalesced into one write at the turn's end
        self.inbuf = bytearray()
        self.fragments = None    # (opcode, [payloads]) of a message the server fragments
        self.timers = []         # (due, sequence, callback)
        self.sequence = 0
        self.stream_key = None   # 6.4.3/6.4.4: one frame whose payload is written in parts
        self.stream_offset = 0
        self._handshake(host, port)

    # handshake
    def _handshake(self, host, port):
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                   f"User-Agent: tmm-bridge-conformance\r\n\r\n")
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("server closed during the opening handshake")
            head += chunk
        head, rest = head.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        if not lines[0].startswith("HTTP/1.1 101"):
            raise ConnectionError(f"handshake refused: {lines[0]}")
        headers = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        if headers.get("sec-websocket-accept") != accept:
            raise ConnectionError("wrong Sec-WebSocket-Accept")
        self.inbuf += rest
        self.sock.setblocking(False)
        self.state = "OPEN"
        self.connection_was_open = True

    # framing (client to server: always masked, as RFC 6455 §5.1 requires of clients)
    @staticmethod
    def mask(payload, key, offset=0):
        n = len(payload)
        if n == 0:
            return b""
        rotated = key[offset % 4:] + key[:offset % 4]
        stream = (rotated * (n // 4 + 1))[:n]
        return (int.from_bytes(payload, "big") ^ int.from_bytes(stream, "big")).to_bytes(n, "big")

    @staticmethod
    def header(opcode, length, fin=True, rsv=0, key=b""):
        first = (0x80 if fin else 0) | (rsv & 7) << 4 | (opcode & 15)
        if length < 126:
            head = struct.pack("!BB", first, 0x80 | length)
        elif length < 65536:
            head = struct.pack("!BBH", first, 0x80 | 126, length)
        else:
            head = struct.pack("!BBQ", first, 0x80 | 127, length)
        return head + key

    def send_frame(self, opcode, payload=b"", fin=True, rsv=0, payload_len=None, chopsize=None, sync=False):
        """Autobahn's sendFrame: payload repeated up to payload_len; chopsize writes the frame in
        pieces of that many octets, sync in one write of its own."""
        if payload_len is not None:
            payload = (payload * (payload_len // max(len(payload), 1) + 1))[:payload_len]
        key = os.urandom(4)
        frame = self.header(opcode, len(payload), fin, rsv, key) + self.mask(payload, key)
        if chopsize or sync:
            self._flush_pending()
            size = chopsize or len(frame)
            self.out.extend(frame[i:i + size] for i in range(0, len(frame), size))
        else:
            self.pending += frame

    def send_message(self, payload, binary=False, fragment_size=None):
        opcode = 2 if binary else 1
        if not fragment_size or len(payload) <= fragment_size:
            self.send_frame(opcode, payload)
            return
        pieces = [payload[i:i + fragment_size] for i in range(0, len(payload), fragment_size)]
        for index, piece in enumerate(pieces):
            self.send_frame(opcode if index == 0 else 0, piece, fin=index == len(pieces) - 1)

    def begin_frame(self, opcode, length):
        """beginMessage + beginMessageFrame: the header now, the payload in later parts."""
        self.stream_key = os.urandom(4)
        self.stream_offset = 0
        self._flush_pending()
        self.out.append(self.header(opcode, length, True, 0, self.stream_key))

    def send_frame_data(self, data):
        self.out.append(self.mask(data, self.stream_key, self.stream_offset))
        self.stream_offset += len(data)

    def send_close_frame(self, code=None, reason=b"", is_reply=False):
        """Autobahn's sendCloseFrame: any code and reason bytes, valid or not."""
        if self.state != "OPEN":
            return
        payload = (struct.pack("!H", code) if code is not None else b"") + reason
        self.send_frame(8, payload)
        self.state = "CLOSING"
        self.closed_by_me = not is_reply
        if not is_reply:
            self.call_later(CLOSE_HANDSHAKE_TIMEOUT, self._close_handshake_timeout)

    def send_close(self, code=NORMAL, reason=b""):
        self.send_close_frame(code, reason)

    # timers
    def call_later(self, seconds, callback):
        self.sequence += 1
        self.timers.append((time.monotonic() + seconds, self.sequence, callback))

    def kill_after(self, seconds):
        def kill():
            if not self.lost:
                self.drop("I dropped the TCP connection (killAfter)")
        self.call_later(seconds, kill)

    def close_after(self, seconds):
        def close():
            if self.state == "OPEN":
                self.send_close(NORMAL)
        self.call_later(seconds, close)

    def continue_later(self, seconds, callback):
        self.call_later(seconds, callback)

    def _close_handshake_timeout(self):
        if not self.lost and self.state == "CLOSING":
            self.drop("the server did not answer our Close in time")

    def _server_drop_timeout(self):
        if not self.lost:
            self.was_clean = False
            self.drop("the server did not drop the TCP connection in time")

    def drop(self, reason):
        self.dropped_by_me = True
        self.was_clean = False
        if not self.not_clean_reason:
            self.not_clean_reason = reason
        self._lose()

    def _lose(self):
        self.lost = True
        self.state = "CLOSED"
        try:
            self.sock.close()
        except OSError:
            pass

    # I/O
    def _flush_pending(self):
        if self.pending:
            self.out.append(self.pending)
            self.pending = b""

    def _write_some(self):
        while self.out:
            chunk = self.out[0]
            try:
                sent = self.sock.send(chunk)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return
            except OSError:
                # The server closed on us while we still had bytes for it (e.g. after failing).
                self.out.clear()
                return
            if sent < len(chunk):
                self.out[0] = chunk[sent:]
                return
            self.out.pop(0)

    def run(self, deadline):
        """The case's event loop until the TCP connection is gone."""
        self._flush_pending()
        self._process_input()
        while not self.lost:
            now = time.monotonic()
            if now >= deadline:
                self.drop("the case ran past its time limit")
                break
            due = [t for t in self.timers if t[0] <= now]
            if due:
                self.timers = [t for t in self.timers if t[0] > now]
                for _, _, callback in sorted(due):
                    if not self.lost:
                        callback()
                        self._flush_pending()
                continue
            wait = min([t[0] for t in self.timers] + [deadline]) - now
            writers = [self.sock] if self.out else []
            try:
                readable, writable, _ = select.select([self.sock], writers, [], max(wait, 0))
            except (OSError, ValueError):
                self._lose()
                break
            if writable:
                self._write_some()
            if readable:
                try:
                    data = self.sock.recv(1 << 20)
                    # TLS: records already decrypted are not seen by select; take them now.
                    while data and isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
                        data += self.sock.recv(self.sock.pending())
                except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    self._server_dropped()
                    break
                self.inbuf += data
                self._process_input()
                self._flush_pending()

    def _server_dropped(self):
        if not self.not_clean_reason and not self.was_clean:
            self.not_clean_reason = "the server dropped the TCP connection without a closing handshake"
        self._lose()

    # frames from the server
    def _process_input(self):
        try:
            while not self.lost:
                frame = self._next_frame()
                if frame is None:
                    return
                self._handle(*frame)
        except CaseAbort as error:
            self.failed_by_me = True
            self.not_clean_reason = f"client failed the connection: {error}"
            if self.state == "OPEN":
                self.send_close_frame(PROTOCOL_ERROR)
                self._flush_pending()
            self.case.client_failure = str(error)

    def _next_frame(self):
        buf = self.inbuf
        if len(buf) < 2:
            return None
        fin, rsv, opcode = buf[0] >> 7, (buf[0] >> 4) & 7, buf[0] & 15
        masked, length, at = buf[1] >> 7, buf[1] & 127, 2
        if length == 126:
            if len(buf) < 4:
                return None
            length, at = struct.unpack("!H", buf[2:4])[0], 4
        elif length == 127:
            if len(buf) < 10:
                return None
            length, at = struct.unpack("!Q", buf[2:10])[0], 10
        if masked:
            raise CaseAbort("the server masked a frame (RFC 6455 §5.1)")
        if rsv:
            raise CaseAbort(f"the server set RSV bits {rsv}")
        if len(buf) < at + length:
            return None
        payload = bytes(buf[at:at + length])
        del buf[:at + length]
        return fin, opcode, payload

    def _handle(self, fin, opcode, payload):
        if opcode >= 8:
            if not fin or len(payload) > 125:
                raise CaseAbort("the server fragmented a control frame or made it too long")
            if opcode == 8:
                self._received_close(payload)
            elif opcode == 9:
                self.case.on_ping(payload)
                if self.state == "OPEN":
                    self.send_frame(10, payload)
            elif opcode == 10:
                self.case.on_pong(payload)
            else:
                raise CaseAbort(f"the server sent reserved opcode {opcode}")
            return
        if opcode in (1, 2):
            if self.fragments is not None:
                raise CaseAbort("the server started a message inside another")
            self.fragments = (opcode, [payload])
        elif opcode == 0:
            if self.fragments is None:
                raise CaseAbort("the server sent a continuation without a message")
            self.fragments[1].append(payload)
        else:
            raise CaseAbort(f"the server sent reserved opcode {opcode}")
        if fin:
            kind, parts = self.fragments
            self.fragments = None
            message = b"".join(parts)
            if kind == 1:
                try:
                    message.decode("utf-8")
                except UnicodeDecodeError:
                    raise CaseAbort("the server sent a text message that is not UTF-8")
            self.case.on_message(message, kind == 2)

    def _received_close(self, payload):
        if len(payload) >= 2:
            self.remote_close_code = struct.unpack("!H", payload[:2])[0]
            self.remote_close_reason = payload[2:]
        if self.state == "OPEN":
            # The server closes first: echo its code (Autobahn's reply), then wait for it to drop TCP.
            self.send_close_frame(self.remote_close_code, b"", is_reply=True)
        # Both Close frames have passed: clean, if the server drops TCP now (its job, §7.1.1).
        self.was_clean = True
        self.state = "CLOSING"
        self.call_later(SERVER_DROP_TIMEOUT, self._server_drop_timeout)


# --- cases (Autobahn's Case class: expected events, expected close, verdict) ---

class Case:
    description = ""
    expectation = ""
    report_time = False
    suppress_close = False

    def __init__(self, cid):
        self.id = cid
        self.received = []
        self.expected = {}
        self.expected_close = {}
        self.behavior = FAILED
        self.behavior_close = FAILED
        self.result = "Actual events differ from any expected."
        self.result_close = "TCP connection was dropped without close handshake"
        self.client_failure = None
        self.p = None

    def open(self, p):
        raise NotImplementedError

    def on_message(self, payload, binary):
        self.received.append(("message", payload, binary))
        self.finish_when_done()

    def on_ping(self, payload):
        self.received.append(("ping", payload))
        self.finish_when_done()

    def on_pong(self, payload):
        self.received.append(("pong", payload))
        self.finish_when_done()

    def finish_when_done(self):
        # Autobahn: once what arrived matches every expectation, we start the closing handshake.
        if any(self.received != events for events in self.expected.values()):
            return
        if self.expected_close["closedByMe"] and not self.suppress_close:
            self.p.send_close(self.expected_close["closeCode"][0])

    def connection_lost(self):
        p = self.p
        for behavior, events in self.expected.items():
            if self.received == events:
                self.behavior = behavior
                self.result = "Actual events match at least one expected."
                break
        if p.connection_was_open:
            expected = self.expected_close
            if expected["closedByMe"] != p.closed_by_me:
                self.behavior_close = FAILED
                self.result_close = "The connection was failed by the wrong endpoint"
            elif expected["requireClean"] and not p.was_clean:
                self.behavior_close = UNCLEAN
                self.result_close = "The spec requires the connection to be failed cleanly here"
            elif p.remote_close_code is not None and p.remote_close_code not in expected["closeCode"]:
                self.behavior_close = WRONG_CODE
                self.result_close = "The close code should have been %s or empty" % ",".join(map(str, expected["closeCode"]))
            elif p.dropped_by_me:
                self.behavior_close = FAILED_BY_CLIENT
                self.result_close = "It is preferred that the server close the TCP connection"
            else:
                self.behavior_close = OK
                self.result_close = "Connection was properly closed"
            if expected.get("closedByWrongEndpointIsFatal") and expected["closedByMe"] != p.closed_by_me:
                self.behavior = FAILED
        else:
            self.behavior_close = FAILED
            self.result_close = "The WebSocket opening handshake was never completed!"


def close_spec(by_me, codes, clean, fatal=False):
    spec = {"closedByMe": by_me, "closeCode": codes, "requireClean": clean}
    if fatal:
        spec["closedByWrongEndpointIsFatal"] = True
    return spec


NORMAL_CLOSE = close_spec(True, [NORMAL], True)
FAIL_PROTOCOL = close_spec(False, [PROTOCOL_ERROR], False)
FAIL_UTF8 = close_spec(False, [INVALID_PAYLOAD], False, fatal=True)


class Scripted(Case):
    """Most cases: fixed expectations and a script of frames and timers."""

    def __init__(self, cid, description, expectation, expected, close, script, suppress_close=False):
        super().__init__(cid)
        self.description, self.expectation = description, expectation
        self._expected, self._close, self.script = expected, close, script
        self.suppress_close = suppress_close

    def open(self, p):
        self.expected = dict(self._expected)
        self.expected_close = self._close
        self.script(self, p)


class CloseCase(Scripted):
    """Category 7: a wrong close code counts as a failure (Autobahn's 7.x onConnectionLost)."""

    def connection_lost(self):
        super().connection_lost()
        if self.behavior_close == WRONG_CODE:
            self.behavior = FAILED
            self.result = self.result_close


class InformationalClose(Scripted):
    """7.1.6, 7.13.x: outcome undefined by the spec, recorded as informational."""

    def connection_lost(self):
        super().connection_lost()
        if self.behavior == OK:
            self.result = "Text message was processed before close." if self.id == "7.1.6" else "Actual events are undefined by the spec."
        elif self.behavior == NON_STRICT:
            self.result = "Close was processed before text message could be returned."
        else:
            self.result = "Actual events are undefined by the spec."
        self.result += f" (server close code {self.p.remote_close_code})"
        self.behavior = INFORMATIONAL
        self.behavior_close = INFORMATIONAL


class Echo9(Case):
    """Category 9.1-9.6: one large message (possibly fragmented or chopped), echo timed."""
    report_time = True

    def __init__(self, cid, description, opcode, pattern, length, fragment=None, chop=None, wait=100):
        super().__init__(cid)
        self.description = description
        self.expectation = "Receive echo'ed %s message (with payload as sent)." % ("text" if opcode == 1 else "binary")
        self.opcode, self.pattern, self.length, self.fragment, self.chop, self.wait = opcode, pattern, length, fragment, chop, wait

    def open(self, p):
        self.expected_close = NORMAL_CLOSE
        self.result = "Did not receive message within %d seconds." % self.wait
        if self.fragment:
            payload = (self.pattern * (self.length // len(self.pattern) + 1))[:self.length]
            p.send_message(payload, self.opcode == 2, fragment_size=self.fragment)
        else:
            p.send_frame(self.opcode, self.pattern, payload_len=self.length, chopsize=self.chop)
        p.close_after(self.wait)

    def on_message(self, payload, binary):
        kind = "binary" if self.opcode == 2 else "text"
        if binary != (self.opcode == 2):
            self.result = f"Expected {kind} message with payload, but got the other kind."
        elif len(payload) != self.length:
            self.result = f"Expected {kind} message with payload of length {self.length}, but got {len(payload)}."
        else:
            self.behavior = OK
            self.result = f"Received {kind} message of length {len(payload)}."
        self.p.send_close(NORMAL)


class RoundTrips9(Case):
    """Category 9.7/9.8: COUNT messages one after the other, each sent when the last echo came."""
    report_time = True

    def __init__(self, cid, binary, length, count, wait):
        super().__init__(cid)
        kind = "binary" if binary else "text"
        self.description = f"Send {count} {kind} messages of payload size {length} to measure implementation/network RTT (round trip time) / latency."
        self.expectation = f"Receive echo'ed {kind} messages (with payload as sent). Timeout case after {wait} secs."
        self.binary, self.length, self.count, self.wait = binary, length, count, wait

    def open(self, p):
        self.expected_close = NORMAL_CLOSE
        self.result = "Case did not finish within %d seconds." % self.wait
        p.close_after(self.wait)
        self.sent = 0
        self.send_one()

    def send_one(self):
        self.p.send_frame(2 if self.binary else 1, b"\xfe" if self.binary else b"*", payload_len=self.length)
        self.sent += 1

    def on_message(self, payload, binary):
        if binary != self.binary or len(payload) != self.length:
            self.behavior = FAILED
            self.result = f"Echo'ed message type or length differs from what I sent (got binary = {binary}, payload length = {len(payload)})."
            self.p.send_close(NORMAL)
        elif self.sent < self.count:
            self.send_one()
        else:
            self.behavior = OK
            self.result = "Ok, received all echo'ed messages in time."
            self.p.send_close(NORMAL)


# ---------------------------------------------------------------------------------------------
# The cases, category by category. `add(cls, *args)` appends a maker of one case; the script
# builders below are shared by several categories.

HELLO = b"Hello, world!"
KOSME = b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5"  # "κόσμε", valid UTF-8
INVALID_UTF8 = KOSME + b"\xed\xa0\x80" + b"edited"       # a UTF-16 surrogate in the middle
ECHO_OR_NOTHING = {OK: [("message", HELLO, False)], NON_STRICT: []}


def single(opcode, payload, rsv):
    """One frame, then the connection is killed after 1 s."""
    def script(c, p):
        p.send_frame(opcode, payload, rsv=rsv)
        p.kill_after(1)
    return script


def message_then(rsv=0, opcode=1, payload=HELLO, sync=False, chop=None):
    """A good text message, then the frame under test, then a Ping; killed after 1 s."""
    def script(c, p):
        p.send_frame(1, HELLO, sync=sync, chopsize=chop)
        p.send_frame(opcode, payload, rsv=rsv, sync=sync, chopsize=chop)
        p.send_frame(9, sync=sync, chopsize=chop)
        p.kill_after(1)
    return script


def frames(spec, after, kill=False):
    """Frames (opcode, fin, payload, how: "" one chop, "sync" frame-wise, "chop" octet-wise),
    then close (or kill) after `after` seconds."""
    def script(c, p):
        for opcode, fin, payload, how in spec:
            p.send_frame(opcode, payload, fin=fin, sync=how == "sync", chopsize=1 if how == "chop" else None)
        (p.kill_after if kill else p.close_after)(after)
    return script


def text_message(payload, fragment=None, kill=None):
    """A text message (in fragments of `fragment` octets), then close after 1 s or kill after `kill`."""
    def script(c, p):
        p.send_message(payload, False, fragment_size=fragment)
        if kill is None:
            p.close_after(1)
        else:
            p.kill_after(kill)
    return script


def steps(*actions, kill=1):
    """Each action on the peer in turn, then killed after `kill` seconds (category 7)."""
    def script(c, p):
        for action in actions:
            action(p)
        p.kill_after(kill)
    return script


def framing_cases(add):
    """1: text and binary messages of the boundary lengths, and one sent in 997-octet chops."""
    lengths = [0, 125, 126, 127, 128, 65535, 65536]
    for n, (kind, opcode, byte, binary) in enumerate([("text", 1, b"*", False), ("binary", 2, b"\xfe", True)], 1):
        for i, length in enumerate(lengths, 1):
            def script(c, p, opcode=opcode, payload=byte * length):
                p.send_frame(opcode, payload)
                p.kill_after(1)
            add(Scripted, f"1.{n}.{i}", f"Send {kind} message with payload {length}.",
                f"Receive echo'ed {kind} message (with payload as sent). Clean close with normal code.",
                {OK: [("message", byte * length, binary)]}, NORMAL_CLOSE, script)

        def chopped(c, p, opcode=opcode, payload=byte * 65536):
            p.send_frame(opcode, payload, chopsize=997)
            p.kill_after(10)
        add(Scripted, f"1.{n}.8", f"Send {kind} message message with payload of length 65536. Sent out data in chops of 997 octets.",
            f"Receive echo'ed {kind} message (with payload as sent). Clean close with normal code.",
            {OK: [("message", byte * 65536, binary)]}, NORMAL_CLOSE, chopped)


def ping(payload, chop=None, after=1):
    def script(c, p):
        p.send_frame(9, payload, chopsize=chop)
        p.close_after(after)
    return script


def too_long_ping(c, p):
    p.send_frame(9, b"\xfe" * 126)
    p.kill_after(1)


def unsolicited_pong(payload):
    def script(c, p):
        p.send_frame(10, payload)
        p.send_close(NORMAL)
        p.close_after(1)
    return script


def pong_then_ping(c, p):
    p.send_frame(10, b"unsolicited pong payload")
    p.send_frame(9, b"ping payload")
    p.close_after(1)


def ten_pings(chop):
    def script(c, p):
        for i in range(10):
            p.send_frame(9, b"payload-%d" % i, chopsize=chop)
        p.close_after(3)
    return script


PONG_ECHOED = "Pong with payload echo'ed is sent in reply to Ping. Clean close with normal code."
TEN_PONGS = ("Pongs for our Pings with all the payloads. Note: This is not required by the Spec .. but we check for this "
             "behaviour anyway. Clean close with normal code.")
# 2: (id, description, expectation, expected events, close, script)
PING_CASES = [
    ("2.1", "Send ping without payload.", PONG_ECHOED, {OK: [("pong", b"")]}, NORMAL_CLOSE, ping(b"")),
    ("2.2", "Send ping with small text payload.", PONG_ECHOED, {OK: [("pong", b"Hello, world!")]}, NORMAL_CLOSE,
     ping(b"Hello, world!")),
    ("2.3", "Send ping with small binary (non UTF-8) payload.", PONG_ECHOED,
     {OK: [("pong", b"\x00\xff\xfe\xfd\xfc\xfb\x00\xff")]}, NORMAL_CLOSE, ping(b"\x00\xff\xfe\xfd\xfc\xfb\x00\xff")),
    ("2.4", "Send ping with binary payload of 125 octets.", PONG_ECHOED, {OK: [("pong", b"\xfe" * 125)]}, NORMAL_CLOSE,
     ping(b"\xfe" * 125)),
    ("2.5", "Send ping with binary payload of 126 octets.",
     "Connection is failed immediately (1002/Protocol Error), since control frames are only allowed to have payload up to and including 125 octets.",
     {OK: []}, FAIL_PROTOCOL, too_long_ping),
    ("2.6", "Send ping with binary payload of 125 octets, send in octet-wise chops.", PONG_ECHOED,
     {OK: [("pong", b"\xfe" * 125)]}, NORMAL_CLOSE, ping(b"\xfe" * 125, chop=1, after=2)),
    ("2.7", "Send unsolicited pong without payload. Verify nothing is received. Clean close with normal code.",
     "Nothing.", {OK: []}, NORMAL_CLOSE, unsolicited_pong(b"")),
    ("2.8", "Send unsolicited pong with payload. Verify nothing is received. Clean close with normal code.",
     "Nothing.", {OK: []}, NORMAL_CLOSE, unsolicited_pong(b"unsolicited pong payload")),
    ("2.9", "Send unsolicited pong with payload. Send ping with payload. Verify pong for ping is received.",
     "Nothing in reply to own Pong, but Pong with payload echo'ed in reply to Ping. Clean close with normal code.",
     {OK: [("pong", b"ping payload")]}, NORMAL_CLOSE, pong_then_ping),
    ("2.10", "Send 10 Pings with payload.", TEN_PONGS, {OK: [("pong", b"payload-%d" % i) for i in range(10)]},
     NORMAL_CLOSE, ten_pings(None)),
    ("2.11", "Send 10 Pings with payload. Send out octets in octet-wise chops.", TEN_PONGS,
     {OK: [("pong", b"payload-%d" % i) for i in range(10)]}, NORMAL_CLOSE, ten_pings(1)),
]

RSV_FAILS_NOW = ("The connection is failed immediately (1002/protocol error), since RSV must be 0, when no extension "
                 "defining RSV meaning has been negotiated.")
RSV_AFTER_ECHO = ("Echo for first message is received, but then connection is failed immediately, since RSV must be 0, "
                  "when no extension defining RSV meaning has been negotiated. The Pong is not received.")
RSV_MUST_BE_0 = "The connection is failed immediately, since RSV must be 0."
# 3: (id, description, expectation, expected events, close, script)
RESERVED_BIT_CASES = [
    ("3.1", "Send small text message with RSV = 1.", RSV_FAILS_NOW, {OK: []}, FAIL_PROTOCOL, single(1, HELLO, 1)),
    ("3.2", "Send small text message, then send again with RSV = 2, then send Ping.", RSV_AFTER_ECHO,
     ECHO_OR_NOTHING, FAIL_PROTOCOL, message_then(rsv=2)),
    ("3.3", "Send small text message, then send again with RSV = 3, then send Ping. Octets are sent in frame-wise chops.",
     RSV_AFTER_ECHO, ECHO_OR_NOTHING, FAIL_PROTOCOL, message_then(rsv=3, sync=True)),
    ("3.4", "Send small text message, then send again with RSV = 4, then send Ping. Octets are sent in octet-wise chops.",
     RSV_AFTER_ECHO, ECHO_OR_NOTHING, FAIL_PROTOCOL, message_then(rsv=4, chop=1)),
    ("3.5", "Send small binary message with RSV = 5.", RSV_MUST_BE_0, {OK: []}, FAIL_PROTOCOL,
     single(2, b"\x00\xff\xfe\xfd\xfc\xfb\x00\xff", 5)),
    ("3.6", "Send Ping with RSV = 6.", RSV_MUST_BE_0, {OK: []}, FAIL_PROTOCOL,
     single(2, HELLO, 6)),  # Autobahn's 3.6 sends opcode 2, as here
    ("3.7", "Send Close with RSV = 7.", RSV_MUST_BE_0, {OK: []}, FAIL_PROTOCOL, single(8, b"", 7)),
]


def opcode_cases(add):
    """4: reserved non-control (3-7) and control (11-15) opcodes, alone or after a good message."""
    for group, opcodes, kind in [(1, [3, 4, 5, 6, 7], "non-control"), (2, [11, 12, 13, 14, 15], "control")]:
        for i, opcode in enumerate(opcodes, 1):
            if i <= 2:
                payload = b"" if i == 1 else b"reserved opcode payload"
                add(Scripted, f"4.{group}.{i}",
                    f"Send frame with reserved {kind} Opcode = {opcode}" + (" and non-empty payload." if i == 2 else "."),
                    "The connection is failed immediately.", {OK: []}, FAIL_PROTOCOL, single(opcode, payload, 0))
            else:
                payload = b"" if i == 3 else HELLO
                add(Scripted, f"4.{group}.{i}",
                    f"Send small text message, then send frame with reserved {kind} Opcode = {opcode}"
                    + (" and non-empty payload" if i > 3 else "") + ", then send Ping." + (" Octets are sent in octet-wise chops." if i == 5 else ""),
                    "Echo for first message is received, but then connection is failed immediately, since reserved opcode frame is used. A Pong is not received.",
                    ECHO_OR_NOTHING, FAIL_PROTOCOL, message_then(opcode=opcode, payload=payload, chop=1 if i == 5 else None))


def fragmented_with_pings(sync):
    """5.19/5.20: two text fragments, a Ping, 1 s, two more fragments, a Ping, the last fragment."""
    def script(c, p):
        p.send_frame(1, b"fragment1", fin=False, sync=sync)
        p.send_frame(0, b"fragment2", fin=False, sync=sync)
        p.send_frame(9, b"pongme 1!", sync=sync)

        def part2():
            p.send_frame(0, b"fragment3", fin=False, sync=sync)
            p.send_frame(0, b"fragment4", fin=False, sync=sync)
            p.send_frame(9, b"pongme 2!", sync=sync)
            p.send_frame(0, b"fragment5", sync=sync)
            p.close_after(1)
        p.continue_later(1, part2)
    return script


def fragmentation_cases(add):
    """5: fragmented control frames, fragmented messages with and without Pings in between,
    continuations with nothing to continue."""
    no_continue = "The connection is failed immediately, since there is no message to continue."
    control = "Connection is failed immediately, since control message MUST NOT be fragmented."
    add(Scripted, "5.1", "Send Ping fragmented into 2 fragments.", control,
        {OK: []}, FAIL_PROTOCOL, frames([(9, False, b"fragment1", ""), (0, True, b"fragment2", "")], 1, kill=True))
    add(Scripted, "5.2", "Send Pong fragmented into 2 fragments.", control,
        {OK: []}, FAIL_PROTOCOL, frames([(10, False, b"fragment1", ""), (0, True, b"fragment2", "")], 1, kill=True))
    for cid, how, note in [("5.3", "", ""), ("5.4", "sync", ", octets are sent in frame-wise chops"), ("5.5", "chop", ", octets are sent in octet-wise chops")]:
        add(Scripted, cid, f"Send text Message fragmented into 2 fragments{note}.", "Message is processed and echo'ed back to us.",
            {OK: [("message", b"fragment1fragment2", False)]}, NORMAL_CLOSE,
            frames([(1, False, b"fragment1", how), (0, True, b"fragment2", how)], 1))
    for cid, how, note in [("5.6", "", ""), ("5.7", "sync", " Octets are sent in frame-wise chops."), ("5.8", "chop", " Octets are sent in octet-wise chops.")]:
        add(Scripted, cid, f"Send text Message fragmented into 2 fragments, one ping with payload in-between.{note}",
            "A pong is received, then the message is echo'ed back to us.",
            {OK: [("pong", b"ping payload"), ("message", b"fragment1fragment2", False)]}, NORMAL_CLOSE,
            frames([(1, False, b"fragment1", how), (9, True, b"ping payload", how), (0, True, b"fragment2", how)], 1))
    for number, fin in [(9, True), (12, False)]:
        for offset, (how, note) in enumerate([("", "sent in one chop"), ("sync", "sent in per-frame chops"), ("chop", "sent in octet-wise chops")]):
            add(Scripted, f"5.{number + offset}",
                f"Send unfragmented Text Message after Continuation Frame with FIN = {str(fin).lower()}, where there is nothing to continue, {note}.",
                no_continue, {OK: []}, FAIL_PROTOCOL,
                frames([(0, fin, b"non-continuation payload", how), (1, True, HELLO, how)], 1, kill=True))
    add(Scripted, "5.15", "Send text Message fragmented into 2 fragments, then Continuation Frame with FIN = false where there is nothing to continue, then unfragmented Text Message, all sent in one chop.",
        no_continue, {OK: [("message", b"fragment1fragment2", False)], NON_STRICT: []}, FAIL_PROTOCOL,
        frames([(1, False, b"fragment1", ""), (0, True, b"fragment2", ""), (0, False, b"fragment3", ""), (1, True, b"fragment4", "")], 1, kill=True))
    for cid, fin in [("5.16", False), ("5.17", True)]:
        add(Scripted, cid, f"Repeated 2x: Continuation Frame with FIN = {str(fin).lower()} (where there is nothing to continue), then text Message fragmented into 2 fragments.",
            no_continue, {OK: []}, FAIL_PROTOCOL,
            frames([(0, fin, b"fragment1", ""), (1, False, b"fragment2", ""), (0, True, b"fragment3", "")] * 2, 1, kill=True))
    add(Scripted, "5.18", "Send text Message fragmented into 2 fragments, with both frame opcodes set to text, sent in one chop.",
        "The connection is failed immediately, since all data frames after the initial data frame must have opcode 0.",
        {OK: []}, FAIL_PROTOCOL, frames([(1, False, b"fragment1", ""), (1, True, b"fragment2", "")], 1, kill=True))
    for cid, sync in [("5.19", False), ("5.20", True)]:
        add(Scripted, cid, ("A fragmented text message is sent in multiple frames. After sending the first 2 frames of the text message, a Ping is sent. "
                            "Then we wait 1s, then we send 2 more text fragments, another Ping and then the final text fragment. Everything is legal."
                            if not sync else "Same as Case 5.19, but send all frames with SYNC = True."),
            "The peer immediately answers the first Ping before it has received the last text message fragment. The peer pong's back the Ping's payload exactly, and echo's the payload of the fragmented message back to us.",
            {OK: [("pong", b"pongme 1!"), ("pong", b"pongme 2!"), ("message", b"fragment1fragment2fragment3fragment4fragment5", False)]},
            NORMAL_CLOSE, fragmented_with_pings(sync))


def utf8_valid_cases(add):
    """6.1-6.3: empty and valid UTF-8 messages whole and in fragments, an invalid one."""
    echoed = "A message is echo'ed back to us"
    add(Scripted, "6.1.1", "Send text message of length 0.", echoed + " (with empty payload).",
        {OK: [("message", b"", False)]}, NORMAL_CLOSE, frames([(1, True, b"", "")], 1))
    add(Scripted, "6.1.2", "Send fragmented text message, 3 fragments each of length 0.", echoed + " (with empty payload).",
        {OK: [("message", b"", False)]}, NORMAL_CLOSE, frames([(1, False, b"", ""), (0, False, b"", ""), (0, True, b"", "")], 1))
    add(Scripted, "6.1.3", "Send fragmented text message, 3 fragments, first and last of length 0, middle non-empty.",
        echoed + " (with payload = payload of middle fragment).", {OK: [("message", b"middle frame payload", False)]}, NORMAL_CLOSE,
        frames([(1, False, b"", ""), (0, False, b"middle frame payload", ""), (0, True, b"", "")], 1))
    mixed = "Hello-µ@ßöäüàá-UTF-8!!".encode()
    add(Scripted, "6.2.1", "Send a valid UTF-8 text message in one fragment. MESSAGE: " + mixed.hex(), "The message is echo'ed back to us.",
        {OK: [("message", mixed, False)]}, NORMAL_CLOSE, text_message(mixed))
    first, second = "Hello-µ@ßöä".encode(), "üàá-UTF-8!!".encode()
    add(Scripted, "6.2.2", "Send a valid UTF-8 text message in two fragments, fragmented on UTF-8 code point boundary.",
        "The message is echo'ed back to us.", {OK: [("message", first + second, False)]}, NORMAL_CLOSE,
        frames([(1, False, first, ""), (0, True, second, "")], 1))
    add(Scripted, "6.2.3", "Send a valid UTF-8 text message in fragments of 1 octet, resulting in frames ending on positions which are not code point ends. MESSAGE: " + mixed.hex(),
        "The message is echo'ed back to us.", {OK: [("message", mixed, False)]}, NORMAL_CLOSE, text_message(mixed, fragment=1))
    add(Scripted, "6.2.4", "Send a valid UTF-8 text message in fragments of 1 octet, resulting in frames ending on positions which are not code point ends. MESSAGE: " + KOSME.hex(),
        "The message is echo'ed back to us.", {OK: [("message", KOSME, False)]}, NORMAL_CLOSE, text_message(KOSME, fragment=1))
    add(Scripted, "6.3.1", "Send invalid UTF-8 text message unfragmented. MESSAGE: " + INVALID_UTF8.hex(),
        "The connection is failed immediately, since the payload is not valid UTF-8.", {OK: []}, FAIL_UTF8, text_message(INVALID_UTF8, kill=1))
    add(Scripted, "6.3.2", "Send invalid UTF-8 text message in fragments of 1 octet, resulting in frames ending on positions which are not code point ends. MESSAGE: " + INVALID_UTF8.hex(),
        "The connection is failed immediately, since the payload is not valid UTF-8.", {OK: []}, FAIL_UTF8,
        text_message(INVALID_UTF8, fragment=1, kill=1))


def fail_fast(parts, as_frames):
    """6.4: the part that makes the payload invalid goes out after a 1 s wait; a server that fails
    at once never lets the second wait ("timeout B") happen."""
    def script(c, p):
        def send(index):
            if as_frames:
                p.send_frame(1 if index == 0 else 0, parts[index], fin=index == 2)
            else:
                if index == 0:
                    p.begin_frame(1, sum(len(x) for x in parts))
                p.send_frame_data(parts[index])

        def part2():
            if p.state == "OPEN":
                c.received.append(("timeout", "A"))
                send(1)
                p.continue_later(1, part3)

        def part3():
            if p.state == "OPEN":
                c.received.append(("timeout", "B"))
                send(2)
                p.kill_after(1)
        send(0)
        p.continue_later(1, part2)
    return script


def utf8_fail_fast_cases(add):
    """6.4: fail fast on UTF-8, in frames or in chops of one frame."""
    whole = KOSME + b"\xf4\x90\x80\x80" + b"edited"
    fast = "The first frame is accepted, we expect to timeout on the first wait. The 2nd frame should be rejected immediately (fail fast on UTF-8). If we timeout, we expect the connection is failed at least then, since the complete message payload is not valid UTF-8."
    for cid, parts, as_frames, description in [
        ("6.4.1", (KOSME, b"\xf4\x90\x80\x80", b"edited"), True, "Send invalid UTF-8 text message in 3 fragments (frames). First frame payload is valid, then wait, then 2nd frame which contains the payload making the sequence invalid, then wait, then 3rd frame with rest."),
        ("6.4.2", (whole[:12], whole[12:13], whole[13:]), True, "Same as Case 6.4.1, but in 2nd frame, we send only up to and including the octet making the complete payload invalid."),
        ("6.4.3", (KOSME, b"\xf4\x90\x80\x80", b"edited"), False, "Same as Case 6.4.1, but we send message not in 3 frames, but in 3 chops of the same message frame."),
        ("6.4.4", (whole[:12], whole[12:13], whole[13:]), False, "Same as Case 6.4.2, but we send message not in 3 frames, but in 3 chops of the same message frame."),
    ]:
        add(Scripted, cid, description, fast, {OK: [("timeout", "A")], NON_STRICT: [("timeout", "A"), ("timeout", "B")]},
            FAIL_UTF8, fail_fast(parts, as_frames))


def utf8_stress_cases(add):
    """6.5-6.23: Markus Kuhn's UTF-8 decoder stress cases, as Autobahn's case6_x_x.py lists them."""
    for number, (title, sequences) in enumerate(utf8_sequences(), 5):
        for j, (valid, payload) in enumerate(sequences, 1):
            if valid:
                add(Scripted, f"6.{number}.{j}", f"{title}: send a text message with payload which is valid UTF-8 in one fragment. Payload: 0x{payload.hex()}",
                    "The message is echo'ed back to us.", {OK: [("message", payload, False)]}, NORMAL_CLOSE, text_message(payload, kill=0.5))
            else:
                add(Scripted, f"6.{number}.{j}", f"{title}: send a text message with payload which is not valid UTF-8 in one fragment. Payload: 0x{payload.hex()}",
                    "The connection is failed immediately, since the payload is not valid UTF-8.", {OK: []}, FAIL_UTF8, text_message(payload, kill=0.5))


CLEAN_NORMAL = "Clean close with normal code."
# 7.1-7.5: (class, id, description, expectation, expected events, close, script, suppress_close)
CLOSE_CASES = [
    (CloseCase, "7.1.1", "Send a message followed by a close frame", "Echoed message followed by clean close with normal code.",
     {OK: [("message", b"Hello World!", False)]}, NORMAL_CLOSE, steps(lambda p: p.send_frame(1, b"Hello World!")), False),
    (CloseCase, "7.1.2", "Send two close frames", "Clean close with normal code. Second close frame ignored.", {OK: []}, NORMAL_CLOSE,
     steps(lambda p: p.send_close(NORMAL), lambda p: p.send_frame(8)), True),
    (CloseCase, "7.1.3", "Send a ping after close message", "Clean close with normal code, no pong.", {OK: []}, NORMAL_CLOSE,
     steps(lambda p: p.send_close(NORMAL), lambda p: p.send_frame(9)), True),
    (CloseCase, "7.1.4", "Send text message after sending a close frame.", "Clean close with normal code. Text message ignored.",
     {OK: []}, NORMAL_CLOSE, steps(lambda p: p.send_close(NORMAL), lambda p: p.send_frame(1, b"Hello World!")), True),
    (CloseCase, "7.1.5", "Send message fragment1 followed by close then fragment", CLEAN_NORMAL, {OK: []}, NORMAL_CLOSE,
     steps(lambda p: p.send_frame(1, b"fragment1", fin=False), lambda p: p.send_close(NORMAL),
           lambda p: p.send_frame(0, b"fragment2")), True),
    (InformationalClose, "7.1.6", "Send 256K message followed by close then a ping",
     "Case outcome depends on implementation defined close behavior. Message and close frame are sent back to back. If the close frame is processed before the text message write is complete (as can happen in asynchronous processing models) the close frame is processed first and the text message may not be received or may only be partially received.",
     {OK: [("message", b"Hello World!", False)], NON_STRICT: []}, NORMAL_CLOSE,
     steps(lambda p: p.send_frame(1, b"BAsd7&jh23", payload_len=256 * 1024), lambda p: p.send_frame(1, b"Hello World!"),
           lambda p: p.send_close(NORMAL), lambda p: p.send_frame(9)), True),
    (CloseCase, "7.3.1", "Send a close frame with payload length 0 (no close code, no close reason)", CLEAN_NORMAL,
     {OK: []}, NORMAL_CLOSE, steps(lambda p: p.send_close_frame()), True),
    (CloseCase, "7.3.2", "Send a close frame with payload length 1", "Clean close with protocol error or drop TCP.",
     {OK: []}, close_spec(True, [PROTOCOL_ERROR], False), steps(lambda p: p.send_close_frame(None, b"a")), True),
    (CloseCase, "7.3.3", "Send a close frame with payload length 2 (regular close with a code)", CLEAN_NORMAL,
     {OK: []}, NORMAL_CLOSE, steps(lambda p: p.send_close(NORMAL)), True),
    (CloseCase, "7.3.4", "Send a close frame with close code and close reason", CLEAN_NORMAL,
     {OK: []}, NORMAL_CLOSE, steps(lambda p: p.send_close(NORMAL, b"Hello World!")), True),
    (CloseCase, "7.3.5", "Send a close frame with close code and close reason of maximum length (123)", CLEAN_NORMAL,
     {OK: []}, NORMAL_CLOSE, steps(lambda p: p.send_close(NORMAL, b"*" * 123)), True),
    (CloseCase, "7.3.6", "Send a close frame with close code and close reason which is too long (124) - total frame payload 126 octets",
     "Clean close with protocol error code or dropped TCP connection.", {OK: []}, close_spec(True, [PROTOCOL_ERROR], False),
     steps(lambda p: p.send_close_frame(NORMAL, b"*" * 124)), True),
    (CloseCase, "7.5.1", "Send a close frame with invalid UTF8 payload", "Clean close with protocol error or invalid utf8 code or dropped TCP.",
     {OK: []}, close_spec(True, [PROTOCOL_ERROR, INVALID_PAYLOAD], False),
     steps(lambda p: p.send_close_frame(NORMAL, INVALID_UTF8)), True),
]
VALID_CLOSE_CODES = [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999]  # 7.7.x
INVALID_CLOSE_CODES = [0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999]  # 7.9.x


def close_cases(add):
    """7: close handling, the table above and the close codes."""
    for cls, cid, description, expectation, expected, close, script, suppress in CLOSE_CASES:
        add(cls, cid, description, expectation, expected, close, script, **({"suppress_close": True} if suppress else {}))
    for i, code in enumerate(VALID_CLOSE_CODES, 1):
        add(CloseCase, f"7.7.{i}", f"Send close with valid close code {code}", "Clean close with normal or echoed code",
            {OK: []}, close_spec(True, [NORMAL, code], True), steps(lambda p, code=code: p.send_close_frame(code)))
    for i, code in enumerate(INVALID_CLOSE_CODES, 1):
        add(CloseCase, f"7.9.{i}", f"Send close with invalid close code {code}", "Clean close with protocol error code or drop TCP",
            {OK: []}, close_spec(True, [PROTOCOL_ERROR], False), steps(lambda p, code=code: p.send_close_frame(code)))
    for cid, code in [("7.13.1", 5000), ("7.13.2", 65535)]:
        add(InformationalClose, cid, f"Send close with close code {code}", "Actual events are undefined by the spec.",
            {OK: []}, close_spec(True, [NORMAL, code, PROTOCOL_ERROR], False), steps(lambda p, code=code: p.send_close_frame(code)),
            suppress_close=True)


def size(n):
    """Autobahn's way of writing a size: 64k, 1M, 125."""
    return f"{n >> 20}M" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n >> 10}k" if n >= 1024 else str(n)


def limit_cases(add):
    """9: limits and performance, every size divided by CAT9_SCALE (Autobahn's in the description)."""
    big = [64 << 10, 256 << 10, 1 << 20, 4 << 20, 8 << 20, 16 << 20]
    for group, opcode, pattern, kind in [(1, 1, b"BAsd7&jh23", "text"), (2, 2, b"\x00\xfe\x23\xfa\xf0", "binary")]:
        for i, n in enumerate(big, 1):
            add(Echo9, f"9.{group}.{i}", f"Send {kind} message with payload of length {size(n // CAT9_SCALE)} (Autobahn: {size(n)}).",
                opcode, pattern, n // CAT9_SCALE)
    fragments = [64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20]
    for group, opcode, pattern, kind in [(3, 1, b"*", "text"), (4, 2, b"\xfe", "binary")]:
        for i, fragment in enumerate(fragments, 1):
            n = (4 << 20) // CAT9_SCALE
            add(Echo9, f"9.{group}.{i}", f"Send fragmented {kind} message with message payload of length {size(n)} (Autobahn: 4M). Sent out in fragments of {size(fragment)}.",
                opcode, pattern, n, fragment=fragment)
    for group, opcode, pattern, kind in [(5, 1, b"BAsd7&jh23", "text"), (6, 2, b"\x00\xfe\x23\xfa\xf0", "binary")]:
        for i, chop in enumerate([64, 128, 256, 512, 1024, 2048], 1):
            n = (1 << 20) // CAT9_SCALE
            add(Echo9, f"9.{group}.{i}", f"Send {kind} message with payload of length {size(n)} (Autobahn: 1M). Sent out data in chops of {chop} octets.",
                opcode, pattern, n, chop=chop)
    for group, binary in [(7, False), (8, True)]:
        for i, (length, wait) in enumerate([(0, 60), (16, 60), (64, 60), (256, 120), (1024, 240), (4096, 480)], 1):
            add(RoundTrips9, f"9.{group}.{i}", binary, length, 1000, wait)


def build_cases():
    """Every case, in Autobahn's order, each as a maker (a fresh case object for each run)."""
    cases = []

    def add(cls, *args, **kwargs):
        cases.append(lambda: cls(*args, **kwargs))

    framing_cases(add)
    for row in PING_CASES:
        add(Scripted, *row)
    for row in RESERVED_BIT_CASES:
        add(Scripted, *row)
    opcode_cases(add)
    fragmentation_cases(add)
    utf8_valid_cases(add)
    utf8_fail_fast_cases(add)
    utf8_stress_cases(add)
    close_cases(add)
    limit_cases(add)
    return cases


def utf8_sequences():
    """Autobahn's createUtf8TestSequences (case6_x_x.py), in Python 3 bytes: (title, [(valid, payload)])."""
    vss = b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5"

    def valid(b):
        try:
            b.decode("utf-8")
            return True
        except UnicodeDecodeError:
            return False
    out = [("Some valid UTF-8 sequences", [(True, b"hello\x24world"), (True, b"hello\xc2\xa2world"),
                                           (True, b"hello\xe2\x82\xacworld"), (True, b"hello\xf0\xa4\xad\xa2world"), (True, vss)]),
           # Autobahn marks a prefix valid when it decodes and ends on a code point: a strict decode.
           ("All prefixes of a valid UTF-8 string that contains multi-byte code points",
            [(valid(vss[:i]), vss[:i]) for i in range(1, len(vss) + 1)]),
           ("First possible sequence of a certain length", [(True, b"\x00"), (True, b"\xc2\x80"), (True, b"\xe0\xa0\x80"), (True, b"\xf0\x90\x80\x80")]),
           ("First possible sequence length 5/6 (invalid codepoints)", [(False, b"\xf8\x88\x80\x80\x80"), (False, b"\xfc\x84\x80\x80\x80\x80")]),
           ("Last possible sequence of a certain length", [(True, b"\x7f"), (True, b"\xdf\xbf"), (True, b"\xef\xbf\xbf"), (True, b"\xf4\x8f\xbf\xbf")]),
           ("Last possible sequence length 4/5/6 (invalid codepoints)",
            [(False, b"\xf7\xbf\xbf\xbf"), (False, b"\xfb\xbf\xbf\xbf\xbf"), (False, b"\xfd\xbf\xbf\xbf\xbf\xbf")]),
           ("Other boundary conditions", [(True, b"\xed\x9f\xbf"), (True, b"\xee\x80\x80"), (True, b"\xef\xbf\xbd"),
                                          (True, b"\xf4\x8f\xbf\xbf"), (False, b"\xf4\x90\x80\x80")]),
           ("Unexpected continuation bytes", [(False, b"\x80"), (False, b"\xbf"), (False, b"\x80\xbf"), (False, b"\x80\xbf\x80"),
                                              (False, b"\x80\xbf\x80\xbf"), (False, b"\x80\xbf\x80\xbf\x80"),
                                              (False, b"\x80\xbf\x80\xbf\x80\xbf"), (False, bytes(range(0x80, 0xbf)))]),
           ("Lonely start characters", [(False, b"".join(bytes([i, 0x20]) for i in range(a, b)))
                                        for a, b in [(0xc0, 0xdf), (0xe0, 0xef), (0xf0, 0xf7), (0xf8, 0xfb), (0xfc, 0xfd)]])]
    missing = [b"\xc0", b"\xe0\x80", b"\xf0\x80\x80", b"\xf8\x80\x80\x80", b"\xfc\x80\x80\x80\x80",
               b"\xdf", b"\xef\xbf", b"\xf7\xbf\xbf", b"\xfb\xbf\xbf\xbf", b"\xfd\xbf\xbf\xbf\xbf"]
    out.append(("Sequences with last continuation byte missing", [(False, k) for k in missing]))
    out.append(("Concatenation of incomplete sequences", [(False, b"".join(missing))]))
    out.append(("Impossible bytes", [(False, b"\xfe"), (False, b"\xff"), (False, b"\xfe\xfe\xff\xff")]))
    out.append(("Examples of an overlong ASCII character", [(False, b"\xc0\xaf"), (False, b"\xe0\x80\xaf"), (False, b"\xf0\x80\x80\xaf"),
                                                            (False, b"\xf8\x80\x80\x80\xaf"), (False, b"\xfc\x80\x80\x80\x80\xaf")]))
    out.append(("Maximum overlong sequences", [(False, b"\xc1\xbf"), (False, b"\xe0\x9f\xbf"), (False, b"\xf0\x8f\xbf\xbf"),
                                               (False, b"\xf8\x87\xbf\xbf\xbf"), (False, b"\xfc\x83\xbf\xbf\xbf\xbf")]))
    out.append(("Overlong representation of the NUL character", [(False, b"\xc0\x80"), (False, b"\xe0\x80\x80"), (False, b"\xf0\x80\x80\x80"),
                                                                 (False, b"\xf8\x80\x80\x80\x80"), (False, b"\xfc\x80\x80\x80\x80\x80")]))
    out.append(("Single UTF-16 surrogates", [(False, bytes.fromhex(h)) for h in ["eda080", "edadbf", "edae80", "edafbf", "edb080", "edbe80", "edbfbf"]]))
    out.append(("Paired UTF-16 surrogates", [(False, bytes.fromhex(h)) for h in [
        "eda080edb080", "eda080edbfbf", "edadbfedb080", "edadbfedbfbf", "edae80edb080", "edae80edbfbf", "edafbfedb080", "edafbfedbfbf"]]))
    nonchars = [(True, b"\xef\xbf\xbe"), (True, b"\xef\xbf\xbf")]
    for z1 in b"\xf0\xf1\xf2\xf3\xf4":
        for z2 in b"\x8f\x9f\xaf\xbf":
            if not (z1 == 0xf4 and z2 != 0x8f):  # those encode code points above U+10FFFF
                for z3 in b"\xbe\xbf":
                    zz = bytes([z1, z2, 0xbf, z3])
                    if zz not in (b"\xf0\x8f\xbf\xbe", b"\xf0\x8f\xbf\xbf"):  # overlong
                        nonchars.append((True, zz))
    out.append(("Non-character code points (valid UTF-8)", nonchars))
    out.append(("Unicode specials (i.e. replacement char)", [(True, bytes([0xef, 0xbf, b])) for b in range(0xb9, 0xc0)]))
    return out


# --- running and reporting ---

def verdict(case):
    """One verdict from Autobahn's two (behavior, behaviorClose). A close that went wrong (the
    wrong endpoint, or unclean where the spec needs clean) fails the case; a close code outside
    the expected list (outside category 7, where it already failed) or a TCP drop left to the
    client is NON-STRICT, as Autobahn's report colours them."""
    if case.client_failure or case.behavior == FAILED:
        return FAILED
    if case.behavior_close in (FAILED, UNCLEAN):
        return FAILED
    if case.behavior == INFORMATIONAL:
        return INFORMATIONAL
    if case.behavior == NON_STRICT or case.behavior_close in (WRONG_CODE, FAILED_BY_CLIENT):
        return NON_STRICT
    return OK


def describe(events):
    def one(e):
        if e[0] == "message":
            body = e[1] if len(e[1]) <= 24 else e[1][:24] + b"..."
            return f"{'binary' if e[2] else 'text'}({len(e[1])}:{body.hex() if e[2] else body.decode('utf-8', 'replace')})"
        if e[0] == "timeout":
            return f"timeout {e[1]}"
        return f"{e[0]}({len(e[1])})"
    return "[" + ", ".join(one(e) for e in events) + "]"


def run_case(case, host, port, tls=False):
    started = time.monotonic()
    try:
        p = Peer(host, port, case, tls)
    except (OSError, ConnectionError) as error:
        case.behavior, case.behavior_close = FAILED, FAILED
        case.result, case.result_close = f"no connection: {error}", "The WebSocket opening handshake was never completed!"
        return {"case": case.id, "verdict": FAILED, "detail": case.result, "duration_ms": 0}
    case.p = p
    case.open(p)
    p.run(started + CASE_CAP)
    case.connection_lost()
    duration = (time.monotonic() - started) * 1000
    result = verdict(case)
    detail = f"{case.result} {case.result_close}."
    if case.client_failure:
        detail = f"client failed the connection: {case.client_failure}. " + detail
    if result != OK or case.behavior != OK:
        detail += f" Received {describe(case.received)}; server close code {p.remote_close_code}; " \
                  f"closed by {'us' if p.closed_by_me else 'the server'}; {'clean' if p.was_clean else 'not clean: ' + p.not_clean_reason}."
    if case.report_time:
        detail += f" {duration:.0f} ms."
    return {"case": case.id, "description": case.description, "expectation": case.expectation, "verdict": result,
            "behavior": case.behavior, "behavior_close": case.behavior_close, "remote_close_code": p.remote_close_code,
            "detail": detail, "duration_ms": round(duration, 1)}


def case_key(cid):
    return tuple(int(x) for x in cid.split("."))


def selected(cid, prefixes):
    return not prefixes or any(cid == x or cid.startswith(x + ".") for x in prefixes)


def start_echo(binary, extra=(), tls=False):
    """Starts tmm-wsecho and returns (process, port) once it prints `listening PORT`; with tls,
    the port of the same server over TLS (its `secure PORT` line)."""
    process = subprocess.Popen([binary, *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 30
    secure = None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if line.startswith("secure "):
            secure = int(line.split()[1])
        if line.startswith("listening "):
            return process, secure if tls else int(line.split()[1])
    process.kill()
    process.wait()
    raise RuntimeError(f"{binary} did not print 'listening PORT' (exit status {process.poll()})")


def stop_echo(process):
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_cases(host, port, prefixes, results, progress, tls=False):
    for make in build_cases():
        case = make()
        if not selected(case.id, prefixes):
            continue
        results.append(run_case(case, host, port, tls))
        if progress:
            r = results[-1]
            print(f"{r['case']:>8} {r['verdict']:<13} {r['duration_ms']:8.1f} ms", file=sys.stderr, flush=True)


def summarize(results):
    count = {v: sum(1 for r in results if r["verdict"] == v) for v in (OK, NON_STRICT, INFORMATIONAL, FAILED)}
    return {"cases": len(results), "ok": count[OK], "non_strict": count[NON_STRICT],
            "informational": count[INFORMATIONAL], "failed": count[FAILED]}


CATEGORIES = {"1": "Framing", "2": "Pings/Pongs", "3": "Reserved Bits", "4": "Opcodes", "5": "Fragmentation",
              "6": "UTF-8 Handling", "7": "Close Handling", "9": "Limits/Performance (reduced sizes)"}


def write_report(results, summary, report_dir, server):
    os.makedirs(report_dir, exist_ok=True)
    results = sorted(results, key=lambda r: case_key(r["case"]))
    with open(os.path.join(report_dir, "index.json"), "w") as f:
        json.dump({"server": server, "summary": summary, "cases": results}, f, indent=1)
    lines = ["# WebSocket conformance (Autobahn|Testsuite cases, re-created)", "",
             f"Server: {server}", "",
             f"**{summary['cases']} cases: {summary['ok']} OK, {summary['non_strict']} NON-STRICT, "
             f"{summary['informational']} INFORMATIONAL, {summary['failed']} FAILED**", "",
             "Verdicts as Autobahn's: OK; NON-STRICT (a SHOULD not followed, or a close code Autobahn allows "
             "but does not prefer); INFORMATIONAL (behaviour the spec leaves open; recorded); FAILED. "
             "Category 9 runs at 1/16 of Autobahn's sizes; its timings are informational.", ""]
    for number, title in CATEGORIES.items():
        rows = [r for r in results if r["case"].split(".")[0] == number]
        if not rows:
            continue
        lines += [f"## {number}. {title}", "", "| Case | Description | Verdict | Detail |", "|---|---|---|---|"]
        for r in rows:
            cells = [r["case"], r.get("description", ""), r["verdict"], r["detail"]]
            lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        lines.append("")
    with open(os.path.join(report_dir, "index.md"), "w") as f:
        f.write("\n".join(lines))


def run_suite(echo_binary, report_dir, cases=None, progress=False, tls=False):
    """Starts tmm-wsecho (the daemon's limits for categories 1-7, a 1 MiB limit for category 9),
    runs the cases (all, or those under the ids in `cases`; over its TLS port with tls), writes
    index.md and index.json to report_dir, and returns the summary
    {"cases", "ok", "non_strict", "informational", "failed"}."""
    prefixes = list(cases or [])
    results = []
    runs = [([], [p for p in prefixes if not p.startswith("9")] if prefixes else [str(c) for c in range(1, 8)]),
            (["--ws-max-message", CAT9_LIMIT], [p for p in prefixes if p.startswith("9")] if prefixes else ["9"])]
    for extra, wanted in runs:
        if not wanted:
            continue
        process, port = start_echo(echo_binary, extra, tls)
        try:
            run_cases("127.0.0.1", port, wanted, results, progress, tls)
        finally:
            stop_echo(process)
    summary = summarize(results)
    write_report(results, summary, report_dir,
                 f"{os.path.basename(echo_binary)} (the daemon's BridgeServer, WebSocket V1 route{' over TLS' if tls else ''}, echoing data messages): "
                 f"64 KiB limit for 1-7, {CAT9_LIMIT} for 9")
    return summary


def main():
    parser = argparse.ArgumentParser(description="Autobahn|Testsuite fuzzingclient cases against tmm-bridge's WebSocket server")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--echo", metavar="BINARY", help="start this tmm-wsecho binary (recommended)")
    source.add_argument("--port", type=int, help="an echo server already listening on 127.0.0.1:PORT")
    parser.add_argument("--report", metavar="DIR", default=None, help="where index.md and index.json go")
    parser.add_argument("--cases", default="", help="comma-separated case ids or prefixes (e.g. 1,6.4,7.9.2)")
    parser.add_argument("--quiet", action="store_true", help="no line per case on stderr")
    parser.add_argument("--tls", action="store_true", help="over TLS (wss): tmm-wsecho's secure port, or --port's server")
    args = parser.parse_args()
    prefixes = [x for x in args.cases.split(",") if x]
    report = args.report or time.strftime("conformance-%Y%m%dT%H%M%SZ", time.gmtime())
    if args.echo:
        summary = run_suite(args.echo, report, prefixes, progress=not args.quiet, tls=args.tls)
    else:
        results = []
        run_cases("127.0.0.1", args.port, prefixes, results, not args.quiet, args.tls)
        summary = summarize(results)
        write_report(results, summary, report, f"{'wss' if args.tls else 'ws'}://127.0.0.1:{args.port}/")
    print(f"{summary['cases']} cases: {summary['ok']} OK, {summary['non_strict']} NON-STRICT, "
          f"{summary['informational']} INFORMATIONAL, {summary['failed']} FAILED")
    print(os.path.abspath(report))
    return 1 if summary["failed"] or not summary["cases"] else 0


if __name__ == "__main__":
    sys.exit(main())
