"""A small NTRIP caster for tests: NTRIP Rev 2 and Rev 1, Basic login, a sourcetable, RTCM 3 at
1 Hz, and hostile modes (the other side of the bridge's NTRIP client tests and of `make hwtest`'s
corrections scenarios; hwtests/README.md, "Corrections").

    python3 -m tmmtools.peers.ntrip_caster [--port 0] [--mount RTCM3] [--user U --password P]
        [--station-id 1234] [--file RTCM_FILE] [--refuse-rev2] [--rev1-only] [--close-after S]
        [--mode MODE] [--drip-interval 2] [--log FILE] [--seconds S] [--host 127.0.0.1]

It listens on --host:--port (default 127.0.0.1:2101; --port 0 takes a free one) and prints
`listening PORT` as its first line, flushed. Then one JSON line per thing that happens (to
--log FILE, else standard output), each with `t` (Unix time) and `id` (the connection's number):
`connection` (`client`), `request` (`method`, `path`, `version`, `revision` 1 or 2, `headers` as
[name, value] pairs with the Authorization value replaced by `<hidden>`, `login`: `accepted`,
`refused`, `missing`, `malformed` or `not-required`, `user`), `answer` (`status`: the status line),
`gga` (`sentence`, `checksum`: `valid`, `invalid` or `missing`, `via`: `body` or `header`, for
each GGA the client sends, in an `Ntrip-GGA` header or as a line after its request),
`client-data` (other bytes the client sent: `bytes`, `text`), `closed` (`reason`, `epochs`,
`frames`, `bytes` of RTCM sent).

Answers (NTRIP 10410.1, Rev 2; 10410.0, Rev 1):
- a request with `Ntrip-Version: Ntrip/2.0` is answered in Rev 2 (`HTTP/1.1 200 OK`,
  `Ntrip-Version: Ntrip/2.0`, `Content-Type: gnss/data`, `Transfer-Encoding: chunked`, each
  second's frames one chunk), any other in Rev 1 (the line `ICY 200 OK`, then the raw frames at
  once, with no empty line between: what RTKLIB's caster sends and its client expects);
  --rev1-only answers every request in Rev 1 (as RTKLIB's str2str does); --refuse-rev2 answers a
  Rev 2 request `HTTP/1.1 400 Bad Request` (a Rev 1-only caster that checks the version);
- a path other than `/MOUNT` (`/` included) gets the sourcetable (`SOURCETABLE 200 OK` in Rev 1,
  `HTTP/1.1 200 OK` with `Content-Type: gnss/sourcetable` in Rev 2): one `STR;` line for the
  mount point, then `ENDSOURCETABLE`;
- with --user, a missing or wrong Basic login gets `401 Unauthorized` (`HTTP/1.0` in Rev 1);
- the RTCM is tmmtools.peers.rtcm.Station's (1006 and 1230 every 5 s, MSM7 of GPS, GLONASS and
  Galileo every second, station --station-id), each epoch at its whole second of the clock, or
  --file's frames an epoch a second (an epoch ends at an MSM whose multiple-message bit is clear),
  looping; --close-after S closes each stream after S seconds.

Hostile modes (--mode, for every request whatever its path and login):
  normal            the above
  endless-header    `HTTP/1.1 200 OK` and header lines for ever
  huge-line         `HTTP/1.1 200 OK`, then a 10 MiB header line, then nothing
  garbage           the 200 answer of the request's revision, then random bytes (no 0xD3: never a
                    valid RTCM frame; in chunks in Rev 2), 1 KiB every 0.1 s
  slow-drip         the normal answer, one byte every --drip-interval seconds (default 2)
  chunk-overflow    a Rev 2 200 answer, then the chunk size FFFFFFFFFFFFFFFFFFFFFFFF and RTCM
  chunk-never-ends  a Rev 2 200 answer, a chunk declared 1 MiB long, one epoch's frames, nothing more
  silent            reads the request and never answers
  close-at-once     closes each connection as soon as it is accepted

Runs until killed (SIGTERM) or --seconds. Started by the Swift tests as a peer
(Tests/Support/TestSupport/PythonTools.swift: `PythonTools.command("peers.ntrip_caster", [...])`,
the port read from the first line) and by the hwtest runner (tmmtools/harness/corrections.py).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import datetime as _dt
import json
import random
import socket
import sys
import threading
import time

from tmmtools.peers import rtcm
from tmmtools.sim.nmea import checksum as nmea_checksum

MODES = ("normal", "endless-header", "huge-line", "garbage", "slow-drip", "chunk-overflow", "chunk-never-ends",
         "silent", "close-at-once")
MAX_HEAD = 16384  # a request head longer than this is refused
SERVER = "NTRIP tmmtools-caster/2.0"
MSM_RANGES = [(first, first + 6) for first in (1071, 1081, 1091, 1101, 1111, 1121, 1131)]


class Log:
    """JSON lines, one per record, thread-safe, flushed."""

    def __init__(self, handle):
        self.handle = handle
        self.lock = threading.Lock()

    def write(self, event: str, **fields):
        line = json.dumps({"t": round(time.time(), 3), "event": event, **fields}, sort_keys=True)
        with self.lock:
            self.handle.write(line + "\n")
            self.handle.flush()


class Closed(Exception):
    """The client went away, or the caster stops this connection."""


def gga_checksum(sentence: str) -> str:
    """`valid`, `invalid` or `missing`: the `*hh` of an NMEA sentence against its body."""
    body, star, given = sentence.lstrip("$").partition("*")
    if not star:
        return "missing"
    return "valid" if given.strip().upper() == nmea_checksum(body) else "invalid"


def epoch_ends(payload: bytes) -> bool:
    """Whether a frame closes its epoch: an MSM with the multiple-message bit (bit 54) clear."""
    number = rtcm.message_number(payload)
    if number is None or not any(low <= number <= high for low, high in MSM_RANGES) or len(payload) < 7:
        return False
    return not payload[6] >> 1 & 1


def file_epochs(path: str) -> list[bytes]:
    """A file's RTCM frames grouped into epochs (one frame each when it holds no MSM)."""
    with open(path, "rb") as handle:
        payloads = rtcm.split(handle.read())
    if not payloads:
        raise SystemExit(f"ntrip_caster: {path}: no RTCM 3 frame in it")
    if not any(epoch_ends(p) for p in payloads):
        return [rtcm.frame(p) for p in payloads]
    epochs, current = [], b""
    for payload in payloads:
        current += rtcm.frame(payload)
        if epoch_ends(payload):
            epochs.append(current)
            current = b""
    if current:
        epochs.append(current)
    return epochs


class Source:
    """The RTCM a stream sends: each second's epoch of the generated station, or a file's epochs."""

    def __init__(self, options):
        self.station = rtcm.Station(options.station_id)
        self.file_epochs = file_epochs(options.file) if options.file else None

    def epoch(self, index: int, gps_second: int) -> bytes:
        if self.file_epochs:
            return self.file_epochs[index % len(self.file_epochs)]
        return b"".join(self.station.epoch(gps_second))


class Connection:
    """One client: its request, then the answer of the caster's mode."""

    def __init__(self, sock: socket.socket, number: int, options, log: Log, source: Source):
        self.sock = sock
        self.id = number
        self.options = options
        self.log = log
        self.source = source
        self.sent = {"epochs": 0, "frames": 0, "bytes": 0}
        self.chunked = False

    # --- sending ---------------------------------------------------------------------------------
    def send(self, data: bytes):
        try:
            if self.options.mode == "slow-drip":
                for index in range(len(data)):
                    self.sock.sendall(data[index:index + 1])
                    time.sleep(self.options.drip_interval)
            else:
                self.sock.sendall(data)
        except OSError as error:
            raise Closed(f"send failed: {error.strerror or error}") from None

    def answer(self, status: str, headers: list, body: bytes = b""):
        self.log.write("answer", id=self.id, status=status)
        # Rev 1's stream answer is the one line `ICY 200 OK` and then the data, no empty line (as
        # RTKLIB's caster writes it and its client reads it).
        end = "" if status == "ICY 200 OK" and not headers else "\r\n"
        head = status + "\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers) + end
        self.send(head.encode("latin-1") + body)

    def data(self, payload: bytes):
        """RTCM (or garbage) in the stream's framing: a chunk in Rev 2, raw in Rev 1."""
        self.send(b"%X\r\n%s\r\n" % (len(payload), payload) if self.chunked else payload)

    # --- the request -----------------------------------------------------------------------------
    def read_head(self) -> tuple[bytes, bytes]:
        """The request head (up to the empty line) and what came after it."""
        buffer = b""
        self.sock.settimeout(10)
        while b"\r\n\r\n" not in buffer and b"\n\n" not in buffer:
            if len(buffer) > MAX_HEAD:
                raise Closed("request head too long")
            try:
                chunk = self.sock.recv(4096)
            except OSError as error:
                raise Closed(f"no request: {error}") from None
            if not chunk:
                raise Closed("closed before its request was complete")
            buffer += chunk
        self.sock.settimeout(None)
        separator = b"\r\n\r\n" if b"\r\n\r\n" in buffer else b"\n\n"
        head, _, rest = buffer.partition(separator)
        return head, rest

    def parse(self, head: bytes) -> dict:
        lines = head.decode("latin-1").replace("\r\n", "\n").split("\n")
        parts = lines[0].split()
        method, path, version = (parts + ["", "", ""])[:3]
        headers = [tuple(s.strip() for s in line.split(":", 1)) for line in lines[1:] if ":" in line]
        names = {name.lower(): value for name, value in headers}
        revision = 2 if "ntrip/2.0" in names.get("ntrip-version", "").lower() else 1
        login, user = self.login(names.get("authorization"))
        shown = [[name, "<hidden>" if name.lower() == "authorization" else value] for name, value in headers]
        self.log.write("request", id=self.id, method=method, path=path, version=version, revision=revision,
                       headers=shown, login=login, user=user)
        if "ntrip-gga" in names:
            self.log_gga(names["ntrip-gga"], "header")
        return {"method": method, "path": path, "revision": revision, "login": login}

    def login(self, authorization: str | None) -> tuple[str, str | None]:
        """(accepted | refused | missing | malformed | not-required, the user name sent)."""
        if authorization is None:
            return ("not-required" if self.options.user is None else "missing"), None
        scheme, _, token = authorization.partition(" ")
        try:
            user, colon, password = base64.b64decode(token.strip(), validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return "malformed", None
        if scheme.lower() != "basic" or not colon:
            return "malformed", None
        if self.options.user is None:
            return "not-required", user
        accepted = (user, password) == (self.options.user, self.options.password)
        return ("accepted" if accepted else "refused"), user

    def log_gga(self, sentence: str, via: str):
        self.log.write("gga", id=self.id, sentence=sentence, checksum=gga_checksum(sentence), via=via)

    def read_client(self, pending: bytes):
        """What the client sends after its request (GGA lines), logged until it closes."""
        buffer = pending
        while True:
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                text = line.strip(b"\r").decode("latin-1")
                if text.startswith("$") and text[3:6] == "GGA":
                    self.log_gga(text, "body")
                elif text:
                    self.log.write("client-data", id=self.id, bytes=len(line) + 1, text=text[:200])
            try:
                chunk = self.sock.recv(4096)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            if len(buffer) > MAX_HEAD:  # no line end in sight: report and forget it
                self.log.write("client-data", id=self.id, bytes=len(buffer), text=buffer[:200].decode("latin-1"))
                buffer = b""

    # --- the answers -----------------------------------------------------------------------------
    def ok_headers(self, revision: int) -> tuple[str, list]:
        if revision == 1:
            return "ICY 200 OK", []
        date = _dt.datetime.now(_dt.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")
        return "HTTP/1.1 200 OK", [("Ntrip-Version", "Ntrip/2.0"), ("Server", SERVER), ("Date", date),
                                   ("Cache-Control", "no-store, no-cache, max-age=0"), ("Pragma", "no-cache"),
                                   ("Connection", "close"), ("Content-Type", "gnss/data"),
                                   ("Transfer-Encoding", "chunked")]

    def sourcetable(self, revision: int):
        o = self.options
        table = (f"STR;{o.mount};tmmtools;RTCM 3.3;1006(5),1230(5),1077(1),1087(1),1097(1);2;GPS+GLO+GAL;TMM;USA;"
                 f"39.95;-105.05;0;0;tmmtools caster;none;B;N;5600;station {o.station_id}\r\n"
                 "ENDSOURCETABLE\r\n").encode()
        if revision == 2:
            self.answer("HTTP/1.1 200 OK", [("Ntrip-Version", "Ntrip/2.0"), ("Server", SERVER),
                                            ("Connection", "close"), ("Content-Type", "gnss/sourcetable"),
                                            ("Content-Length", len(table))], table)
        else:
            self.answer("SOURCETABLE 200 OK", [("Server", SERVER), ("Content-Type", "text/plain"),
                                               ("Content-Length", len(table))], table)

    def refuse(self, revision: int, status: str, extra: list = ()):
        body = f"{status}\r\n".encode()
        version = "HTTP/1.1" if revision == 2 else "HTTP/1.0"
        headers = ([("Ntrip-Version", "Ntrip/2.0")] if revision == 2 else []) + [
            ("Server", SERVER), *extra, ("Connection", "close"), ("Content-Type", "text/plain"),
            ("Content-Length", len(body))]
        self.answer(f"{version} {status}", headers, body)

    def stream(self, revision: int):
        """The 200 answer, then an epoch at each whole second until the client goes (or --close-after)."""
        status, headers = self.ok_headers(revision)
        self.answer(status, headers)
        self.chunked = revision == 2
        started = time.monotonic()
        while self.options.close_after is None or time.monotonic() - started < self.options.close_after:
            second = rtcm.gps_second_now() + 1
            time.sleep(max(0.0, second - rtcm.LEAP_SECONDS + rtcm.GPS_EPOCH_UNIX - time.time()))
            epoch = self.source.epoch(self.sent["epochs"], second)
            self.data(epoch)
            self.sent["epochs"] += 1
            self.sent["frames"] += len(rtcm.split(epoch))
            self.sent["bytes"] += len(epoch)
        if self.chunked:
            self.send(b"0\r\n\r\n")
        raise Closed(f"--close-after {self.options.close_after:g} s")

    def normal(self, request: dict):
        o = self.options
        revision = 1 if o.rev1_only else request["revision"]
        if request["revision"] == 2 and o.refuse_rev2:
            return self.refuse(2, "400 Bad Request")
        if request["method"] != "GET":
            return self.refuse(revision, "405 Method Not Allowed", [("Allow", "GET")])
        if request["path"].split("?")[0].strip("/") != o.mount:
            return self.sourcetable(revision)
        if request["login"] in ("refused", "missing", "malformed"):
            return self.refuse(revision, "401 Unauthorized", [("WWW-Authenticate", f'Basic realm="/{o.mount}"')])
        threading.Thread(target=self.read_client, args=(self.pending,), daemon=True).start()
        self.stream(revision)

    def hold(self, seconds: float = 600):
        """Keeps the connection open, reading nothing, until the client closes it (or `seconds`)."""
        end = time.monotonic() + seconds
        self.sock.settimeout(1)
        while time.monotonic() < end:
            try:
                if not self.sock.recv(65536):
                    raise Closed("the client closed")
            except socket.timeout:
                continue
            except OSError as error:
                raise Closed(f"receive failed: {error}") from None
        raise Closed("held long enough")

    def hostile(self, request: dict):
        """The answer of a hostile --mode (see the module's docstring)."""
        mode, rng = self.options.mode, random.Random(self.id)
        if mode == "silent":
            self.hold()
        if mode == "endless-header":
            self.log.write("answer", id=self.id, status="HTTP/1.1 200 OK", note="header lines for ever")
            self.send(b"HTTP/1.1 200 OK\r\nNtrip-Version: Ntrip/2.0\r\n")
            for number in range(10 ** 12):
                self.send(f"X-Header-{number}: {'x' * 60}\r\n".encode())
        if mode == "huge-line":
            self.send(b"HTTP/1.1 200 OK\r\nX-Huge: " + b"x" * (10 * 1024 * 1024) + b"\r\n\r\n")
            self.log.write("answer", id=self.id, status="HTTP/1.1 200 OK", note="10 MiB header line")
            self.hold()
        if mode == "garbage":
            status, headers = self.ok_headers(request["revision"])
            self.answer(status, headers)
            self.chunked = request["revision"] == 2
            while True:
                self.data(bytes(b if b != rtcm.PREAMBLE else 0x00 for b in rng.randbytes(1024)))
                time.sleep(0.1)
        status, headers = self.ok_headers(2)
        self.answer(status, headers)
        epoch = self.source.epoch(0, rtcm.gps_second_now())
        if mode == "chunk-overflow":
            self.send(b"FFFFFFFFFFFFFFFFFFFFFFFF\r\n")
            while True:
                self.send(self.source.epoch(0, rtcm.gps_second_now()))
                time.sleep(1)
        if mode == "chunk-never-ends":
            self.send(b"100000\r\n" + epoch)
            self.hold()

    def run(self):
        try:
            if self.options.mode == "close-at-once":
                raise Closed("closed at once (--mode close-at-once)")
            head, self.pending = self.read_head()
            request = self.parse(head)
            if self.options.mode in ("normal", "slow-drip"):
                self.normal(request)
                reason = "answered"
            else:
                self.hostile(request)
                reason = "answered"
        except Closed as closed:
            reason = str(closed)
        finally:
            try:
                self.sock.close()
            except OSError:
                pass
        self.log.write("closed", id=self.id, reason=reason, **self.sent)


def listen(host: str, port: int) -> socket.socket:
    server = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # restarted on the same port at once
    server.bind((host, port))
    server.listen(64)
    return server


def serve(server: socket.socket, options, log: Log, seconds: float | None = None, stop: threading.Event | None = None):
    """Accepts connections until `seconds` pass or `stop` is set, each served on its own thread."""
    source = Source(options)
    server.settimeout(0.2)
    end = None if seconds is None else time.monotonic() + seconds
    number = 0
    while (end is None or time.monotonic() < end) and not (stop and stop.is_set()):
        try:
            sock, address = server.accept()
        except socket.timeout:
            continue
        number += 1
        log.write("connection", id=number, client=f"{address[0]}:{address[1]}")
        connection = Connection(sock, number, options, log, source)
        threading.Thread(target=connection.run, daemon=True).start()


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ntrip_caster", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2101, help="0: a free port (printed)")
    parser.add_argument("--mount", default="RTCM3", help="the mount point (default RTCM3)")
    parser.add_argument("--user", help="the login's user (default: no login needed)")
    parser.add_argument("--password", default="", help="the login's password")
    parser.add_argument("--station-id", type=int, default=1234, help="DF003 of the generated RTCM (0-4095)")
    parser.add_argument("--file", help="stream this file's RTCM frames instead of generated ones")
    parser.add_argument("--refuse-rev2", action="store_true", help="answer a Rev 2 request 400 Bad Request")
    parser.add_argument("--rev1-only", action="store_true", help="answer every request in Rev 1 (ICY 200 OK)")
    parser.add_argument("--close-after", type=float, help="close each stream after this many seconds")
    parser.add_argument("--mode", choices=MODES, default="normal")
    parser.add_argument("--drip-interval", type=float, default=2.0, help="slow-drip: seconds between bytes")
    parser.add_argument("--log", help="write the JSON log here instead of standard output")
    parser.add_argument("--seconds", type=float, help="stop after this many seconds (default: until killed)")
    return parser


def main() -> int:
    options = argument_parser().parse_args()
    if not 0 <= options.station_id <= 4095:
        raise SystemExit("ntrip_caster: --station-id is 12 bits: 0-4095")
    server = listen(options.host, options.port)
    print(f"listening {server.getsockname()[1]}", flush=True)
    log = Log(open(options.log, "a", encoding="utf-8") if options.log else sys.stdout)
    try:
        serve(server, options, log, options.seconds)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
