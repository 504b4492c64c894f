"""The NTRIP casters of the corrections tests, proven before the bridge's client exists: the test
caster (tmmtools/peers/ntrip_caster.py) answer by answer over raw sockets, its hostile modes, its
command line as the Swift tests start it; RTKLIB's str2str as client of it and as caster
(tmmtools/peers/str2str_caster.py); and the whole chain without the bridge (harness/ntripcheck.py):
caster → str2str's NTRIP client → tmm-sim's pty → RTK fixed, lost, fixed again.

Run: /usr/bin/python3 -m tmmtools.tests from the repository root.
"""

import argparse
import base64
import os
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from tmmtools import checkout
from tmmtools.harness import ntripcheck
from tmmtools.peers import ntrip_caster, rtcm
from tmmtools.peers.str2str_caster import STR2STR, Str2strCaster
from tmmtools.sim.nmea import sentence

HAS_STR2STR = os.access(STR2STR, os.X_OK)
LOGIN = "Basic " + base64.b64encode(b"rover:secret").decode()


class Records:
    """ntrip_caster.Log's interface, kept in memory."""

    def __init__(self):
        self.records = []

    def write(self, event, **fields):
        self.records.append(dict(fields, event=event))

    def of(self, event):
        return [r for r in self.records if r["event"] == event]


def options(**changes):
    defaults = dict(mount="RTCM3", user="rover", password="secret", station_id=2345, file=None, refuse_rev2=False,
                    rev1_only=False, close_after=None, mode="normal", drip_interval=2.0)
    return argparse.Namespace(**dict(defaults, **changes))


def request(path="/RTCM3", revision=2, login=LOGIN, extra=""):
    version = "HTTP/1.1" if revision == 2 else "HTTP/1.0"
    lines = [f"GET {path} {version}", "Host: 127.0.0.1", "User-Agent: NTRIP tmmtools-test/1.0"]
    lines += ["Ntrip-Version: Ntrip/2.0"] if revision == 2 else []
    lines += [f"Authorization: {login}"] if login else []
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


def dechunk(body: bytes) -> bytes:
    """The data of a chunked body (whole chunks only)."""
    data = b""
    while b"\r\n" in body:
        size_text, rest = body.split(b"\r\n", 1)
        size = int(size_text, 16)
        if size == 0 or len(rest) < size + 2:
            break
        data, body = data + rest[:size], rest[size + 2:]
    return data


class CasterAnswers(unittest.TestCase):
    """The test caster in this process, each test with its options."""

    def start(self, **changes):
        self.log = Records()
        server = ntrip_caster.listen("127.0.0.1", 0)
        self.port = server.getsockname()[1]
        stop = threading.Event()
        threading.Thread(target=ntrip_caster.serve, args=(server, options(**changes), self.log, None, stop),
                         daemon=True).start()
        self.addCleanup(server.close)
        self.addCleanup(stop.set)

    def exchange(self, data: bytes, seconds: float = 0.5, limit: int = 1 << 20, after=b"") -> bytes:
        """What the caster answers `data` (then `after`) within `seconds` or until it closes."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(data)
            if after:
                sock.sendall(after)
            answer, end = b"", time.monotonic() + seconds
            sock.settimeout(0.1)
            while time.monotonic() < end and len(answer) < limit:
                try:
                    chunk = sock.recv(65536)
                except socket.timeout:
                    continue
                except ConnectionResetError:  # closed with our request unread: a reset
                    return answer + b"<closed>"
                if not chunk:
                    return answer + b"<closed>"
                answer += chunk
            return answer

    def test_rev2_streams_chunked_rtcm_of_the_station(self):
        self.start()
        answer = self.exchange(request(), seconds=2.6)
        head, _, body = answer.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 200 OK\r\n"), head)
        for header in (b"Ntrip-Version: Ntrip/2.0", b"Transfer-Encoding: chunked", b"Content-Type: gnss/data"):
            self.assertIn(header, head)
        payloads = rtcm.split(dechunk(body))
        self.assertGreaterEqual(len(payloads), 6)  # two epochs at least
        self.assertEqual({rtcm.station_id(p) for p in payloads}, {2345})
        self.assertEqual(rtcm.Reader().feed(dechunk(body)), payloads)

    def test_rev1_answers_icy_then_raw_frames(self):
        self.start()
        answer = self.exchange(request(revision=1), seconds=1.6)
        self.assertTrue(answer.startswith(b"ICY 200 OK\r\n\xd3"), answer[:20])
        reader = rtcm.Reader()
        self.assertGreaterEqual(len(reader.feed(answer[len(b"ICY 200 OK\r\n"):])), 3)
        self.assertEqual((reader.damaged, reader.other_bytes), (0, 0))

    def test_sourcetable_login_refusals_and_revisions(self):
        self.start(refuse_rev2=False)
        cases = [  # (what, request, the answer's start, what it must hold)
            ("sourcetable rev 1", request("/", 1), b"SOURCETABLE 200 OK\r\n", b"STR;RTCM3;"),
            ("unknown mount rev 2", request("/NOPE", 2), b"HTTP/1.1 200 OK\r\n", b"Content-Type: gnss/sourcetable"),
            ("wrong password rev 2", request(login="Basic " + base64.b64encode(b"rover:x").decode()),
             b"HTTP/1.1 401 Unauthorized\r\n", b'WWW-Authenticate: Basic realm="/RTCM3"'),
            ("no login rev 1", request(revision=1, login=None), b"HTTP/1.0 401 Unauthorized\r\n", b"<closed>"),
            ("malformed login", request(login="Basic !!!"), b"HTTP/1.1 401 Unauthorized\r\n", b"<closed>"),
            ("not a GET", request().replace(b"GET", b"POST", 1), b"HTTP/1.1 405", b"Allow: GET"),
        ]
        for what, data, start, holds in cases:
            with self.subTest(what):
                answer = self.exchange(data)
                self.assertTrue(answer.startswith(start), answer[:80])
                self.assertIn(holds, answer)
        self.assertIn(b"ENDSOURCETABLE\r\n<closed>", self.exchange(request("/", 1)))
        logins = [r["login"] for r in self.log.of("request")]
        self.assertEqual(logins[2:5], ["refused", "missing", "malformed"])

    def test_refuse_rev2_and_rev1_only(self):
        self.start(refuse_rev2=True)
        self.assertTrue(self.exchange(request()).startswith(b"HTTP/1.1 400 Bad Request\r\n"))
        self.assertTrue(self.exchange(request(revision=1), seconds=0.2).startswith(b"ICY 200 OK\r\n"))
        self.start(rev1_only=True)
        self.assertTrue(self.exchange(request(), seconds=0.2).startswith(b"ICY 200 OK\r\n"))

    def test_the_log_hides_the_password_and_checks_the_client_gga(self):
        self.start()
        good = sentence("GPGGA,100000.00,3954.0000,N,10506.6000,W,1,12,0.9,1650.0,M,-16.5,M,,").decode().strip()
        bad = good[:-2] + ("00" if good[-2:] != "00" else "01")
        self.exchange(request(extra=f"Ntrip-GGA: {good}\r\n"), seconds=0.3, after=(bad + "\r\nhello\r\n").encode())
        time.sleep(0.2)
        req = self.log.of("request")[0]
        self.assertIn(["Authorization", "<hidden>"], req["headers"])
        self.assertNotIn("secret", repr(self.log.records))
        self.assertNotIn(base64.b64encode(b"rover:secret").decode(), repr(self.log.records))
        self.assertEqual((req["login"], req["user"], req["revision"]), ("accepted", "rover", 2))
        gga = [(r["via"], r["checksum"]) for r in self.log.of("gga")]
        self.assertEqual(gga, [("header", "valid"), ("body", "invalid")])
        self.assertEqual(self.log.of("client-data")[0]["text"], "hello")

    def test_hostile_modes(self):
        cases = {  # mode: (seconds to read, a check of what came)
            "endless-header": (1.0, lambda a: a.startswith(b"HTTP/1.1 200 OK\r\n") and len(a) > 100_000
                               and b"\r\n\r\n" not in a),
            "huge-line": (3.0, lambda a: a.startswith(b"HTTP/1.1 200 OK\r\nX-Huge: xxx") and len(a) >= 10 << 20),
            "garbage": (1.5, lambda a: a.startswith(b"ICY 200 OK\r\n") and len(a) > 5000
                        and rtcm.split(a) == [] and b"\xd3" not in a),
            "chunk-overflow": (0.5, lambda a: b"\r\n\r\nFFFFFFFFFFFFFFFFFFFFFFFF\r\n\xd3" in a),
            "chunk-never-ends": (1.5, lambda a: b"\r\n\r\n100000\r\n\xd3" in a and not a.endswith(b"<closed>")
                                 and len(a) < 0x100000),
            "silent": (1.0, lambda a: a == b""),
            "close-at-once": (1.0, lambda a: a == b"<closed>"),
        }
        for mode, (seconds, good) in cases.items():
            with self.subTest(mode):
                self.start(mode=mode)
                revision = 1 if mode == "garbage" else 2
                answer = self.exchange(request(revision=revision), seconds=seconds, limit=11 << 20)
                self.assertTrue(good(answer), f"{len(answer)} bytes: {answer[:80]!r} ... {answer[-40:]!r}")

    def test_slow_drip_sends_a_byte_at_a_time(self):
        self.start(mode="slow-drip", drip_interval=0.1)
        answer = self.exchange(request(revision=1), seconds=1.05)
        self.assertTrue(b"ICY 200 OK\r\n"[:len(answer)] == answer and 8 <= len(answer) <= 12, answer)

    def test_a_file_is_streamed_an_epoch_a_second(self):
        with tempfile.NamedTemporaryFile(suffix=".rtcm3", delete=False) as handle:
            for second in range(3):
                handle.write(b"".join(rtcm.Station(99).epoch(1_400_000_000 + second)))
        self.addCleanup(os.unlink, handle.name)
        epochs = ntrip_caster.file_epochs(handle.name)
        self.assertEqual([len(rtcm.split(e)) for e in epochs], [5, 3, 3])
        self.start(file=handle.name, user=None)
        answer = self.exchange(request(revision=1, login=None), seconds=1.5)
        self.assertEqual(rtcm.split(answer[12:])[:5], rtcm.split(epochs[0]))


class CasterCommandLine(unittest.TestCase):
    def test_the_first_line_is_the_port_and_the_log_is_json(self):
        with tempfile.TemporaryDirectory() as scratch:
            log = os.path.join(scratch, "caster.jsonl")
            process = subprocess.Popen(checkout.module_command("peers.ntrip_caster", "--port", "0", "--log", log,
                                                               "--seconds", "5"), stdout=subprocess.PIPE, text=True)
            try:
                line = process.stdout.readline()
                self.assertRegex(line, r"^listening \d+\n$")
                with socket.create_connection(("127.0.0.1", int(line.split()[1])), timeout=5) as sock:
                    sock.sendall(request("/", 1, login=None))
                    self.assertTrue(sock.recv(100).startswith(b"SOURCETABLE 200 OK"))
            finally:
                process.terminate()
                process.wait(10)
                process.stdout.close()
            with open(log) as handle:
                self.assertIn('"event": "request"', handle.read())


@unittest.skipUnless(HAS_STR2STR, "str2str (Debian's rtklib) is not installed")
class Str2str(unittest.TestCase):
    def client(self, port: int, seconds: float, password="secret") -> rtcm.Reader:
        """str2str's NTRIP client for `seconds`: what it wrote, read back."""
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "got.rtcm3")
            try:
                subprocess.run([STR2STR, "-in", f"ntrip://rover:{password}@127.0.0.1:{port}/RTCM3", "-out",
                                f"file://{path}"], capture_output=True, timeout=seconds)
            except subprocess.TimeoutExpired:
                pass
            reader = rtcm.Reader()
            if os.path.exists(path):
                with open(path, "rb") as handle:
                    reader.feed(handle.read())
            return reader

    def test_str2str_reads_the_test_caster(self):
        caster = CasterAnswers()
        caster.start()
        reader = self.client(caster.port, 3.5)
        caster.doCleanups()
        self.assertGreaterEqual(reader.frames, 6)
        self.assertEqual((reader.damaged, reader.other_bytes), (0, 0))
        self.assertIn(reader.station_id, (None, 2345))  # its 1006 comes every 5 s
        self.assertEqual([r["revision"] for r in caster.log.of("request")], [1])

    def test_str2str_serves_the_generator_and_restarts_on_its_port(self):
        caster = Str2strCaster(station_id=321).start()
        self.addCleanup(caster.stop)
        reader = self.client(caster.port, 3.5)
        self.assertGreaterEqual(reader.frames, 6)
        self.assertEqual((reader.damaged, reader.other_bytes), (0, 0))
        refused = self.client(caster.port, 1.5, password="wrong")
        self.assertEqual(refused.bytes, 0)
        port = caster.port
        caster.kill()
        self.assertFalse(caster.running())
        caster.start()
        self.assertEqual(caster.port, port)
        self.assertGreaterEqual(self.client(caster.port, 2.5).frames, 3)


@unittest.skipUnless(HAS_STR2STR, "str2str (Debian's rtklib) is not installed")
@unittest.skipUnless(os.environ.get("TMMTOOLS_SLOW"), "35 s; the rtk-ntrip scenarios of make hwtest run the same "
                     "chain through the bridge (TMMTOOLS_SLOW=1 runs it)")
class ChainWithoutTheBridge(unittest.TestCase):
    """harness/ntripcheck.py: str2str's caster → str2str's client → tmm-sim's pty (25 s)."""

    def test_the_receiver_goes_rtk_fixed_loses_it_and_fixes_again(self):
        with tempfile.TemporaryDirectory() as out:
            timeline, events, actions = ntripcheck.play("str2str", out)
            results = ntripcheck.checks(timeline, events, actions)
        self.assertEqual(len(results), 5)
        for check in results:
            self.assertTrue(check.passed, f"{check.name}: {check.detail}")

    @unittest.skipUnless(os.access(ntripcheck.GPSD, os.X_OK) and os.geteuid() == 0, "needs gpsd and root")
    def test_through_gpsd_control_socket_from_the_test_caster(self):
        """gpsd (not read-only) hands the RTCM to the pty it holds (`&DEVICE=hex`), its probes beside."""
        with tempfile.TemporaryDirectory() as out:
            timeline, events, actions = ntripcheck.play("test-caster", out, via="gpsd", duration=10, kill_at=None,
                                                        restart_at=None)
            results = ntripcheck.checks(timeline, events, actions)
        for check in results:
            self.assertTrue(check.passed, f"{check.name}: {check.detail}")
        forwarded = next(e["answers"] for e in events if e.get("event") == "gpsd-forwarded")
        self.assertEqual(set(forwarded), {"OK"})


if __name__ == "__main__":
    unittest.main()
