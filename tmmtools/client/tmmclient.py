"""What Trimble's sample apps do, in Python: the shared half of the end-to-end scripts.

Each script in this folder drives a running `tmm-bridge run` the way a TMM client app does:
registration through `tmm-bridge open URL --print` (the Linux stand-in for the OS hand-off),
REST with Access Code V1 (TMM-API.md §4.2, with the MAUI client's retry), WebSocket V1/V2 with
Debian's `python3-websockets` (a strict RFC 6455 client). Standard library plus `websockets`
only, for /usr/bin/python3 on Debian 12 (websockets 10.4: the asyncio API).

The Swift side (Tests/CLITests/EndToEndTests.swift) starts the daemon and passes a JSON context
as the only argument:

    {"bridge": ".../tmm-bridge", "runtimeDir": ..., "stateDir": ..., "host": "127.0.0.1",
     "ports": {"locationPort": N, ...}, "allowedIds": [...], "capture": ".../nmea-rtk.log", ...}

Every check prints `ok: <what>`; the first failure prints `FAIL: <what>: <details>` and exits 1.
The last line is `all N checks passed`.
"""

import base64
import calendar
import hashlib
import http.client
import json
import socket
import ssl
import subprocess
import sys
import time
import urllib.parse

PORT_KEYS = ["locationPort", "locationSecurePort", "apiPort", "apiSecurePort", "locationV2Port",
             "locationV2SecurePort"]


class CheckFailed(Exception):
    pass


class Checks:
    """Counts passed checks; `check` raises on the first failure."""

    def __init__(self, name):
        self.name = name
        self.passed = 0

    def check(self, condition, what, details=""):
        if not condition:
            raise CheckFailed(f"{what}: {details}" if details else what)
        self.passed += 1
        print(f"ok: {what}", flush=True)

    def equal(self, actual, expected, what):
        self.check(actual == expected, what, f"expected {expected!r}, got {actual!r}")


def main(run):
    """Runs `run(context, checks)` with the context from argv[1]; exit status 0 only if all passed."""
    context = json.loads(sys.argv[1])
    checks = Checks(sys.argv[0])
    try:
        run(context, checks)
    except CheckFailed as failure:
        print(f"FAIL: {failure}", flush=True)
        sys.exit(1)
    print(f"all {checks.passed} checks passed", flush=True)


# ---------------------------------------------------------------------------------------------
# Access Code V1 (§4.2)

def timestamp(unix_seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(unix_seconds))


def access_code_v1(application_id, unix_seconds):
    """Base64(SHA-256(lowercase(id) + yyyy-MM-ddTHH:mm:ssZ)), 44 characters."""
    text = application_id.lower() + timestamp(unix_seconds)
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def wait_for_second_start(margin=0.05):
    """Sleeps until `margin` s past the next whole second, so a request sent now is answered
    within the same second (makes window-edge checks deterministic)."""
    now = time.time()
    fraction = now - int(now)
    if fraction > margin + 0.3 or fraction < margin:
        time.sleep((1 - fraction + margin) % 1.0)


# The §8.4 test vector, so a broken code function here cannot make the suite pass vacuously.
assert access_code_v1("12345678-1234-1234-1234-123456789ABC",
                      calendar.timegm((2024, 2, 22, 18, 0, 0))) == "/T6VQF4SQ/Ix/H8ZfFOrSEzj8qpHsFmA3ug569bPpV0="


# ---------------------------------------------------------------------------------------------
# REST

class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case name -> value (last one wins)
        self.header_list = []
        self.body = body

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        return f"HTTP {self.status} {self.headers} {self.body[:300]!r}"


TMM_HOST = "tmm-api-local.fieldsystems.trimble.com"


def free_ports(count):
    """`count` ports free now on 127.0.0.1 (all held at once, so they differ). The bridge reports
    the ports it really took, so a port taken in between costs nothing but the fallback."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def tls_context(cafile):
    """What a strict client checks (iOS, browsers): the chain to `cafile` and the Trimble name."""
    context = ssl.create_default_context(cafile=cafile)
    context.set_alpn_protocols(["http/1.1"])
    return context


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """https://tmm-api-local.fieldsystems.trimble.com:PORT with the name resolved to `address`
    (curl's --resolve): SNI and the certificate check use the Trimble name."""

    def __init__(self, address, port, context, timeout):
        super().__init__(TMM_HOST, port, context=context, timeout=timeout)
        self._address = address

    def connect(self):
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=TMM_HOST)


def read_until_closed(sock, size=65536):
    """Every byte `sock` receives until the server closes it (its timeout still applies)."""
    data = b""
    while chunk := sock.recv(size):
        data += chunk
    return data


def http_request(host, port, method, path, headers=None, body=None, timeout=15, cafile=None):
    """One request on a fresh connection (as HttpClient does for a new host); over TLS to the
    Trimble name at `host` when `cafile` is given."""
    if cafile:
        connection = _PinnedHTTPSConnection(host, port, tls_context(cafile), timeout)
    else:
        connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        raw = connection.getresponse()
        data = raw.read()
        response = Response(raw.status, {k.lower(): v for k, v in raw.getheaders()}, data)
        response.header_list = raw.getheaders()
        return response
    finally:
        connection.close()


class MauiClient:
    """The MAUI sample's REST client with Access Code V1: a code for the current second, and on
    any non-2xx one retry with the code for the previous second. `clock_offset` simulates a
    device whose clock is off."""

    def __init__(self, host, port, application_id, clock_offset=0):
        self.host = host
        self.port = port
        self.application_id = application_id
        self.clock_offset = clock_offset
        self.attempts = []  # statuses of every attempt, for checks on the retry

    def request(self, method, path, body=None, extra_headers=None):
        now = int(time.time()) + self.clock_offset
        response = None
        for second in (now, now - 1):
            headers = {"Authorization": "Basic " + access_code_v1(self.application_id, second),
                       "Accept": "application/json"}
            if body is not None:
                headers["Content-Type"] = "application/json"
            headers.update(extra_headers or {})
            response = http_request(self.host, self.port, method, path, headers,
                                    None if body is None else json.dumps(body).encode())
            self.attempts.append(response.status)
            if 200 <= response.status < 300:
                return response
        return response

    def get(self, path):
        return self.request("GET", path)

    def put(self, path, body):
        return self.request("PUT", path, body)


def https_get(host, port, path, cafile, headers=None, timeout=15):
    return http_request(host, port, "GET", path, headers, cafile=cafile, timeout=timeout)


# ---------------------------------------------------------------------------------------------
# Access Code V2 (§4.2), as the 2026 samples make it: RSA-OAEP(SHA-256, MGF1-SHA-256) of
# "<lower-case id> <yyyy-MM-ddTHH:mm:ssZ>" under the JWK of GET /api/v1/publicKey, standard Base64.

def public_key_from_jwk(jwk):
    from cryptography.hazmat.primitives.asymmetric import rsa

    def number(text):
        return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")
    return rsa.RSAPublicNumbers(number(jwk["e"]), number(jwk["n"])).public_key()


def access_code_v2(public_key, application_id, unix_seconds, plaintext=None):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    text = plaintext if plaintext is not None else application_id.lower() + " " + timestamp(unix_seconds)
    oaep = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
    return base64.b64encode(public_key.encrypt(text.encode("utf-8"), oaep)).decode("ascii")


class ModernClient:
    """A 2026 sample's REST client: the public key first (1 s time-out), then every request with
    `Authorization: AccessCodeV2 <code>` over https. `fresh_code_per_request`: the Android, iOS
    and MAUI samples make a new code per request; the web sample makes one and reuses it."""

    def __init__(self, host, port, cafile, application_id, fresh_code_per_request=True, origin=None):
        self.host, self.port, self.cafile = host, port, cafile
        self.application_id = application_id
        self.fresh = fresh_code_per_request
        self.origin = origin
        key = https_get(host, port, "/api/v1/publicKey", cafile, timeout=1)
        if key.status != 200:
            raise CheckFailed(f"Failed to get public key: {key!r}")
        self.jwk = key.json()
        self.public_key = public_key_from_jwk(self.jwk)
        self.code = None

    def request(self, method, path, body=None):
        if self.fresh or self.code is None:
            self.code = access_code_v2(self.public_key, self.application_id, int(time.time()))
        headers = {"Authorization": "AccessCodeV2 " + self.code, "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.origin:
            headers["Origin"] = self.origin
        return http_request(self.host, self.port, method, path, headers,
                            None if body is None else json.dumps(body).encode(), cafile=self.cafile)

    def get(self, path):
        return self.request("GET", path)

    def put(self, path, body):
        return self.request("PUT", path, body)


# ---------------------------------------------------------------------------------------------
# Registration (§3.2, §3.3) through `tmm-bridge open URL --print`

def ios_register_url(payload_text, prefix="tmmregister://?"):
    return prefix + base64.b64encode(payload_text.encode("utf-8")).decode("ascii")


def ios_register_json(application_id, returl, key="returl"):
    return json.dumps({"application_id": application_id, key: returl}, separators=(",", ":"))


def windows_register_url(application_id, callback, encode_callback=False, scheme="trimblemobilemanager"):
    value = urllib.parse.quote(callback, safe="") if encode_callback else callback
    return f"{scheme}://request/tmmRegister?applicationId={application_id}&callback={value}"


class OpenResult:
    def __init__(self, status, stdout, stderr):
        self.status = status
        self.stdout = stdout
        self.stderr = stderr

    @property
    def reply(self):
        return self.stdout.strip()

    def __repr__(self):
        return f"exit {self.status}, stdout {self.stdout!r}, stderr {self.stderr!r}"


def tmm_open(context, url, timeout=15):
    completed = subprocess.run([context["bridge"], "open", url, "--print", "--runtime-dir", context["runtimeDir"]],
                               capture_output=True, text=True, timeout=timeout)
    return OpenResult(completed.returncode, completed.stdout, completed.stderr)


def decode_ios_reply(reply, returl):
    """The JSON object of `<returl>?<Base64 JSON>`, decoded as Data(base64Encoded:) and .NET's
    Convert.FromBase64String(uri.Query[1..]) would: strict standard Base64 of the raw query."""
    prefix = returl + "?"
    if not reply.startswith(prefix):
        raise CheckFailed(f"reply {reply!r} does not start with {prefix!r}")
    query = reply[len(prefix):]
    try:
        raw = base64.b64decode(query, validate=True)
    except Exception as error:
        raise CheckFailed(f"reply query {query!r} is not strict standard Base64: {error}")
    return json.loads(raw.decode("utf-8"))


def parse_windows_reply(reply, callback):
    """The query of `<callback>?id=...` as HttpUtility.ParseQueryString reads it (ordered pairs)."""
    prefix = callback + "?"
    if not reply.startswith(prefix):
        raise CheckFailed(f"reply {reply!r} does not start with {prefix!r}")
    return urllib.parse.parse_qsl(reply[len(prefix):], keep_blank_values=True, strict_parsing=True)


def read_registry(context):
    """The registry file's bytes, or None when it does not exist."""
    try:
        with open(context["stateDir"] + "/registry.json", "rb") as file:
            return file.read()
    except FileNotFoundError:
        return None


def registered_ids(context):
    data = read_registry(context)
    if data is None:
        return []
    return [entry["applicationId"] for entry in json.loads(data)["applications"]]


# ---------------------------------------------------------------------------------------------
# The capture, decoded independently of the bridge (the expected values of the positions)

def _nmea_degrees(value, hemisphere):
    degrees_width = 2 if hemisphere in "NS" else 3
    degrees = int(value[:degrees_width]) + float(value[degrees_width:]) / 60.0
    return -degrees if hemisphere in "SW" else degrees


def capture_epochs(path):
    """{utcTime (hhmmss.ss as float, 2 decimals): expected values} from the GGA/RMC pairs."""
    epochs = {}
    with open(path, "r", encoding="ascii") as file:
        for line in file:
            line = line.strip()
            if not line.startswith("$"):
                continue
            body = line[1:line.index("*")]
            fields = body.split(",")
            kind = fields[0][2:]
            key = round(float(fields[1]), 2)
            epoch = epochs.setdefault(key, {})
            if kind == "GGA":
                epoch.update(latitude=_nmea_degrees(fields[2], fields[3]),
                             longitude=_nmea_degrees(fields[4], fields[5]),
                             quality=int(fields[6]), satellitesInUse=int(fields[7]), hdop=float(fields[8]),
                             mslHeight=float(fields[9]), undulation=float(fields[11]),
                             diffAge=float(fields[13]) if fields[13] else None,
                             diffID=fields[14] if fields[14] else None)
            elif kind == "RMC":
                epoch.update(speed=float(fields[7]) * 1852.0 / 3600.0, bearing=float(fields[8]),
                             date=fields[9])
    return epochs


# GGA quality -> LocationV2 diffStatus (docs/protocol-choices.md; this capture has 2 and 4).
DIFF_STATUS = {1: 1, 2: 2, 4: 4, 5: 5}


def position_problems(message, epochs):
    """What differs between one LocationV1/V2 message and the capture epoch with its utcTime
    (an empty list when it matches)."""
    utc_time = message.get("utcTime")
    if not isinstance(utc_time, float):
        return [f"utcTime {utc_time!r} is not a JSON number with a point"]
    epoch = epochs.get(round(utc_time, 2))
    if epoch is None or "latitude" not in epoch:
        return [f"utcTime {utc_time} is no epoch of the capture"]
    problems = []

    def near(name, expected, tolerance):
        actual = message.get(name)
        if not isinstance(actual, (int, float)) or isinstance(actual, bool) or abs(actual - expected) > tolerance:
            problems.append(f"{name} {actual!r} != {expected!r}")

    near("latitude", epoch["latitude"], 1e-9)
    near("longitude", epoch["longitude"], 1e-9)
    near("mslHeight", epoch["mslHeight"], 1e-4)
    near("undulation", epoch["undulation"], 1e-4)
    near("altitude", epoch["mslHeight"] + epoch["undulation"], 2e-4)
    near("hdop", epoch["hdop"], 0.005)
    if "speed" in epoch:
        near("speed", epoch["speed"], 0.001)
        near("bearing", epoch["bearing"], 0.001)
    if epoch["diffAge"] is not None:
        near("diffAge", epoch["diffAge"], 0.005)
    if message.get("diffStatus") != DIFF_STATUS[epoch["quality"]]:
        problems.append(f"diffStatus {message.get('diffStatus')!r} for GGA quality {epoch['quality']}")
    if epoch["diffID"] is not None and message.get("diffID") != epoch["diffID"]:
        problems.append(f"diffID {message.get('diffID')!r} != {epoch['diffID']!r}")
    if "date" in epoch:
        d = epoch["date"]
        seconds = int(round(utc_time * 1000)) // 1000
        hh, mm, ss = seconds // 10000, seconds // 100 % 100, seconds % 100
        expected_prefix = f"20{d[4:6]}-{d[2:4]}-{d[0:2]}T{hh:02d}:{mm:02d}:{ss:02d}"
        stamp = message.get("utcTimeStamp")
        if not (isinstance(stamp, str) and stamp.startswith(expected_prefix) and stamp.endswith("Z")):
            problems.append(f"utcTimeStamp {stamp!r} is not {expected_prefix}[.mmm]Z")
    return problems


# ---------------------------------------------------------------------------------------------
# WebSocket (websockets 10.4, asyncio API)

import asyncio  # noqa: E402  (kept next to its only users)

import websockets  # noqa: E402
import websockets.exceptions  # noqa: E402


def ws_url(context, port_key, path="/"):
    return f"ws://{context['host']}:{context['ports'][port_key]}{path}"


async def handshake_status(url):
    """101 when the upgrade succeeds (the connection is closed again at once), else the HTTP
    status the server refused it with."""
    try:
        async with websockets.connect(url, open_timeout=5, ping_interval=None, close_timeout=2):
            return 101
    except websockets.exceptions.InvalidStatusCode as refused:
        return refused.status_code


def ws_handshake_status(url):
    return asyncio.run(handshake_status(url))


async def collect(url, seconds, limit=None, **options):
    """(monotonic arrival time, message) for every message in `seconds` (or until `limit`)."""
    frames = []
    loop = asyncio.get_running_loop()
    async with websockets.connect(url, open_timeout=5, ping_interval=None, close_timeout=2, **options) as ws:
        end = loop.time() + seconds
        while limit is None or len(frames) < limit:
            remaining = end - loop.time()
            if remaining <= 0:
                break
            try:
                message = await asyncio.wait_for(ws.recv(), remaining)
            except asyncio.TimeoutError:
                break
            frames.append((time.monotonic(), message))
    return frames


async def close_code_when_closed(ws, timeout):
    """Reads (and drops) messages until the server closes `ws`; returns its close code. Each read
    waits at most `timeout` seconds (asyncio.TimeoutError beyond it: the server never closed)."""
    try:
        while True:
            await asyncio.wait_for(ws.recv(), timeout)
    except websockets.exceptions.ConnectionClosed:
        pass
    return ws.close_code


def ws_collect(url, seconds, limit=None, **options):
    return asyncio.run(collect(url, seconds, limit, **options))


def wss_collect(host, port, path, cafile, seconds, limit=None):
    """wss://tmm-api-local.fieldsystems.trimble.com:PORT/PATH with the name resolved to `host`."""
    return ws_collect(f"wss://{TMM_HOST}:{port}{path}", seconds, limit, ssl=tls_context(cafile), host=host)
