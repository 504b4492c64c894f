"""HTTP behaviour checked with curl, the client that shows it most plainly: status codes,
headers, 404/405/501, connection reuse, 100-continue, chunked bodies, the WebSocket handshake
vector, and the secure ports, which speak TLS only.

Context: `allowedIds[0]` is registered already (the Swift side did it), a pty receiver is
connected, and the daemon runs with `--http-request-timeout 1 --http-idle-timeout 2`.
"""

import email.utils
import json
import socket
import subprocess
import time

from tmmtools.client import tmmclient


# Requests with a method the resource does not have: (method, path, what Allow must list).
NOT_ALLOWED = (("DELETE", "/api/v1/receiver", {"GET", "HEAD", "PUT", "OPTIONS"}),
               ("POST", "/api/v1/receiver", {"GET", "HEAD", "PUT", "OPTIONS"}),
               ("POST", "/api/v1/tmmInfo", {"GET", "HEAD", "OPTIONS"}),
               ("PUT", "/api/v1/test/ping", {"GET", "HEAD", "OPTIONS"}))

# What is sent before the client goes silent: (what, bytes, the status expected in the answer,
# the shortest and longest time to the close in seconds). The daemon runs with a 1 s request and
# a 2 s idle time-out.
TIMEOUT_CASES = (("an unfinished request head", b"GET /api/v1/test/ping HTTP/1.1\r\nHost: x\r\n", b"408", 0.9, 2.5),
                 ("an unfinished body", b"PUT /api/v1/receiver HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{",
                  b"408", 0.9, 2.5),
                 ("an idle connection", b"", b"", 1.9, 3.5))


def curl(*arguments, timeout=20):
    completed = subprocess.run(["curl", "--silent", "--show-error", "--max-time", "10", *arguments],
                               capture_output=True, timeout=timeout)
    return completed.returncode, completed.stdout, completed.stderr.decode("utf-8", "replace")


def parse_head(raw):
    """Status code, headers (lower-case names -> list of values) and body of `curl -i` output
    (the last response when curl printed interim ones)."""
    while raw.startswith(b"HTTP/1.1 100") or raw.startswith(b"HTTP/1.0 100"):
        raw = raw.split(b"\r\n\r\n", 1)[1]
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return lines[0], int(lines[0].split()[1]), headers, body


def base_url(context):
    return f"http://{context['host']}:{context['ports']['apiPort']}"


def auth(context):
    """The Authorization header with an Access Code V1 of this second."""
    return "Authorization: Basic " + tmmclient.access_code_v1(context["allowedIds"][0], int(time.time()))


def run(context, checks):
    check_plain_get(context, checks)
    check_404_405_501(context, checks)
    check_head(context, checks)
    check_keep_alive(context, checks)
    check_request_bodies(context, checks)
    check_location_ports_websocket_only(context, checks)
    check_connection_close_and_timeouts(context, checks)
    check_secure_ports_tls_only(context, checks)


def check_plain_get(context, checks):
    """A plain authenticated GET: status line and headers."""
    base = base_url(context)
    status, out, err = curl("-i", "-H", auth(context), base + "/api/v1/test/ping")
    line, code, headers, body = parse_head(out)
    checks.check(status == 0 and line == "HTTP/1.1 200 OK", "GET test/ping: HTTP/1.1 200 OK", repr(out[:200]) + err)
    checks.equal(headers.get("content-type"), ["application/json"], "Content-Type: application/json")
    checks.equal(headers.get("content-length"), [str(len(body))], "Content-Length is the body's length")
    date = headers.get("date", [""])[0]
    parsed = email.utils.parsedate_to_datetime(date) if date else None
    checks.check(parsed is not None and date.endswith(" GMT") and abs(parsed.timestamp() - time.time()) < 5,
                 f"Date is a current IMF-fixdate ({date})")
    checks.equal(json.loads(body), {"result": "pong"}, "the body is {\"result\":\"pong\"}")


def check_404_405_501(context, checks):
    """404, 405 with Allow, 501."""
    base = base_url(context)
    for path in ("/api/v1/nothing", "/index.html", "/api/v2/receiver", "/api/v1/receiver/extra"):
        status, out, err = curl("-i", "-H", auth(context), base + path)
        _, code, headers, body = parse_head(out)
        ok = code == 404 and "error" in json.loads(body or b"{}")
        checks.check(ok, f"GET {path}: 404 with a JSON error", repr(out[:300]))
    # `/` is the operator dashboard's page (docs/dashboard.md), HTML under its own policy.
    status, out, err = curl("-i", base + "/")
    _, code, headers, body = parse_head(out)
    checks.check(code == 200 and headers.get("content-type") == ["text/html; charset=utf-8"]
                 and headers.get("content-security-policy", [""])[0].startswith("default-src 'none'"),
                 "GET /: the dashboard's page, text/html under a strict Content-Security-Policy", repr(out[:300]))
    for method, path, allow in NOT_ALLOWED:
        status, out, err = curl("-i", "-X", method, "-H", auth(context), base + path)
        _, code, headers, _ = parse_head(out)
        listed = {m.strip() for value in headers.get("allow", []) for m in value.split(",")}
        checks.check(code == 405 and listed == allow, f"{method} {path}: 405, Allow: {', '.join(sorted(allow))}",
                     repr(out[:300]))
    status, out, err = curl("-i", "-X", "FROBNICATE", "-H", auth(context), base + "/api/v1/receiver")
    checks.equal(parse_head(out)[1], 501, "an unknown method: 501 Not Implemented")


def check_head(context, checks):
    """HEAD (curl -I): the GET's headers, no body."""
    base = base_url(context)
    status, out, err = curl("-I", "-H", auth(context), base + "/api/v1/receiver")
    _, code, headers, body = parse_head(out)
    checks.check(code == 200 and body == b"" and int(headers.get("content-length", ["0"])[0]) > 100,
                 "HEAD /receiver (curl -I): 200, a Content-Length, no body", repr(out))


def check_keep_alive(context, checks):
    """Keep-alive: three URLs, one connection; HTTP/1.0 closes after each response."""
    base = base_url(context)
    status, out, err = curl("-v", "-H", auth(context), "-w", "%{num_connects} %{http_code}\n",
                            "-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null",
                            base + "/api/v1/test/ping", base + "/api/v1/nothing", base + "/api/v1/tmmInfo")
    results = out.decode().split()
    checks.equal(results, ["1", "200", "0", "404", "0", "200"],
                 "three URLs in one curl call: one connect, reused for the 404 and the next request")
    checks.check(err.count("Re-using existing connection") == 2, "curl -v reports re-using the connection twice", err[-600:])

    status, out, err = curl("-v", "-0", "-H", auth(context), "-o", "/dev/null", "-o", "/dev/null",
                            "-w", "%{num_connects}\n", base + "/api/v1/test/ping", base + "/api/v1/test/ping")
    checks.equal(out.decode().split(), ["1", "1"], "HTTP/1.0 without keep-alive: the server closes after each response")


def check_request_bodies(context, checks):
    """Request bodies: Expect: 100-continue, chunked; a request head too large."""
    base = base_url(context)
    padded = json.dumps({"isConnected": True, "padding": "x" * 3000})
    status, out, err = curl("-v", "-i", "-X", "PUT", "-H", auth(context), "-H", "Content-Type: application/json",
                            "-H", "Expect: 100-continue", "--data-binary", padded, base + "/api/v1/receiver")
    _, code, _, body = parse_head(out)
    checks.check("HTTP/1.1 100 Continue" in err or out.startswith(b"HTTP/1.1 100"),
                 "PUT with Expect: 100-continue: the server sends 100 Continue", err[-500:])
    checks.check(code == 200 and json.loads(body)["isConnected"] is True,
                 "PUT after 100 Continue: 200, extra members ignored", repr(out[-300:]))
    status, out, err = curl("-i", "-X", "PUT", "-H", auth(context), "-H", "Content-Type: application/json",
                            "-H", "Transfer-Encoding: chunked", "--data-binary", '{"isConnected":true}',
                            base + "/api/v1/receiver")
    checks.equal(parse_head(out)[1], 200, "PUT with a chunked body: 200")
    status, out, err = curl("-i", "-H", auth(context), "-H", "X-Padding: " + "y" * 9000, base + "/api/v1/receiver")
    checks.check(parse_head(out)[1] in (400, 431), "a request head over 8 KiB: 431 (or 400)", repr(out[:200]))


def check_location_ports_websocket_only(context, checks):
    """The location ports speak only WebSocket."""
    host, ports = context["host"], context["ports"]
    status, out, err = curl("-i", f"http://{host}:{ports['locationV2Port']}/locationV2")
    _, code, headers, _ = parse_head(out)
    checks.check(code == 426 and headers.get("upgrade") == ["websocket"],
                 "plain GET on the V2 port: 426 Upgrade Required, Upgrade: websocket", repr(out[:300]))
    # RFC 6455 §1.3's own example key and accept value, through curl.
    status, out, err = curl("-i", "-N", "--max-time", "1.5", "-H", "Connection: Upgrade", "-H", "Upgrade: websocket",
                            "-H", "Sec-WebSocket-Version: 13", "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                            f"http://{host}:{ports['locationPort']}/")
    line, code, headers, _ = parse_head(out)
    checks.check(code == 101 and headers.get("sec-websocket-accept") == ["s3pPLMBiTxaQ9kYGzzhZRbK+xOo="],
                 "V1 handshake by curl: 101 with the RFC 6455 §1.3 accept value", repr(out[:300]))

    status, out, err = curl("-i", "-H", "Connection: Upgrade", "-H", "Upgrade: websocket", "-H", "Sec-WebSocket-Version: 8",
                            "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", f"http://{host}:{ports['locationPort']}/")
    _, code, headers, _ = parse_head(out)
    checks.check(code == 426 and headers.get("sec-websocket-version") == ["13"],
                 "WebSocket version 8: 426 with Sec-WebSocket-Version: 13", repr(out[:300]))


def check_connection_close_and_timeouts(context, checks):
    """Connection: close, and the time-outs (the daemon runs with 1 s request, 2 s idle)."""
    host, ports = context["host"], context["ports"]
    base = base_url(context)
    status, out, err = curl("-i", "-H", auth(context), "-H", "Connection: close", base + "/api/v1/test/ping")
    checks.equal(parse_head(out)[2].get("connection"), ["close"], "Connection: close is answered with Connection: close")
    for what, data, expect_status, low, high in TIMEOUT_CASES:
        started = time.monotonic()
        with socket.create_connection((host, ports["apiPort"]), timeout=6) as raw:
            raw.sendall(data)
            answer = tmmclient.read_until_closed(raw, 4096)
        elapsed = time.monotonic() - started
        checks.check(answer[9:12] == expect_status and low <= elapsed <= high,
                     f"{what}: {'408 and ' if expect_status else ''}closed after {elapsed:.2f} s", repr(answer[:120]))


def check_secure_ports_tls_only(context, checks):
    """The secure ports speak TLS: plain HTTP there gets no HTTP answer."""
    host, ports = context["host"], context["ports"]
    ca = context["stateDir"] + "/tls/ca.pem"
    for key in ("locationSecurePort", "apiSecurePort", "locationV2SecurePort"):
        started = time.monotonic()
        status, out, err = curl(f"http://{host}:{ports[key]}/api/v1/publicKey")
        checks.check(status != 0 and b"HTTP/1.1" not in out and time.monotonic() - started < 5,
                     f"{key} {ports[key]}: plain HTTP is refused by the TLS layer (curl exit {status}), at once",
                     f"exit {status} {out} {err}")
    status, out, err = curl("--cacert", ca, "--resolve", f"tmm-api-local.fieldsystems.trimble.com:{ports['apiSecurePort']}:{host}",
                            f"https://tmm-api-local.fieldsystems.trimble.com:{ports['apiSecurePort']}/api/v1/publicKey")
    checks.check(status == 0 and b'"kty":"RSA"' in out, "https with the CA from the state directory: the public key",
                 f"exit {status} {out} {err}")

if __name__ == "__main__":
    tmmclient.main(run)
