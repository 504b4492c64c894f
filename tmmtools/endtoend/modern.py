"""The 2026 samples' flow (Android, iOS, MAUI, web) over TLS with Access Code V2 (TMM-API.md §4.2,
§7, §8.5), checked with independent clients: `openssl s_client`, curl, Python's ssl and
`python3-cryptography` for the codes, `python3-websockets` over wss.

Context: a fresh state directory (so the daemon made its local CA and the Access Code V2 key on
this start), the allowlist policy with `allowedIds`, nothing registered, a pty receiver connected.
"""

import json
import subprocess
import time

from cryptography.hazmat.primitives.asymmetric import rsa

from tmmtools import polling
from tmmtools.client import tmmclient
from tmmtools.client.tmmclient import TMM_HOST, ModernClient, http_request

WEB_ORIGIN = "http://localhost:5173"


def s_client(host, port, cafile, *options, brief=True):
    """`openssl s_client [-brief]` to the Trimble name at host:port; (exit status, all output)."""
    command = ["openssl", "s_client", "-connect", f"{host}:{port}", "-servername", TMM_HOST, "-CAfile", cafile,
               "-verify_return_error", *(["-brief"] if brief else []), *options]
    done = subprocess.run(command, input="", capture_output=True, text=True, timeout=15)
    return done.returncode, done.stdout + done.stderr


def secure_api(context):
    """The host, the ports, the REST server's TLS port and the daemon's CA file."""
    return context["host"], context["ports"], context["ports"]["apiSecurePort"], context["stateDir"] + "/tls/ca.pem"


def status_with(context, code, port=None, secure=True, path="/api/v1/receiver"):
    """The status of a GET with Access Code V2 `code`, over https (on `port`, the REST TLS port
    by default) or plain http."""
    host, _, https, ca = secure_api(context)
    return http_request(host, port or https, "GET", path, {"Authorization": "AccessCodeV2 " + code},
                        cafile=ca if secure else None).status


def run(context, checks):
    epochs = tmmclient.capture_epochs(context["capture"])
    check_tls_as_openssl_sees_it(context, checks)
    key = check_public_key(context, checks)
    valid = check_refused_v2_codes(context, checks, key)
    check_v2_reuse_and_single_use(context, checks, key, valid)
    check_fresh_code_samples(context, checks, epochs)
    check_web_sample(context, checks, epochs)
    check_settings_over_https(context, checks)
    check_location_v2_broadcast(context, checks)
    check_unsupported_windows_request(context, checks)


def check_tls_as_openssl_sees_it(context, checks):
    """TLS as openssl sees it: versions, ALPN, the names the certificate claims."""
    host, ports, https, ca = secure_api(context)
    status, out = s_client(host, https, ca, "-alpn", "http/1.1", "-verify_hostname", TMM_HOST)
    checks.check(status == 0 and "Verification: OK" in out and "Protocol version: TLSv1.3" in out
                 and f"Verified peername: {TMM_HOST}" in out,
                 "openssl s_client: TLS 1.3, the chain verifies to the CA for the Trimble name", out)
    status, out = s_client(host, https, ca, "-alpn", "h2,http/1.1", brief=False)
    checks.check(status == 0 and "ALPN protocol: http/1.1" in out, "ALPN: http/1.1 chosen from h2,http/1.1", out)
    status, out = s_client(host, https, ca, "-tls1_2")
    checks.check(status == 0 and "Protocol version: TLSv1.2" in out, "TLS 1.2 is offered", out)
    status, out = s_client(host, https, ca, "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0")
    checks.check(status != 0 and "Protocol version" not in out, "TLS 1.1 is refused", out)
    status, out = s_client(host, https, ca, "-alpn", "h2")
    checks.check(status != 0 and "no application protocol" in out, "an h2-only client gets the ALPN alert", out)
    status, out = s_client(host, https, ca, "-verify_hostname", "example.com")
    checks.check(status != 0 and "hostname mismatch" in out, "the certificate does not claim other names", out)
    for key in ("locationSecurePort", "locationV2SecurePort"):
        status, out = s_client(host, ports[key], ca, "-verify_ip", "127.0.0.1")
        checks.check(status == 0 and "Verification: OK" in out, f"{key}: TLS, the certificate names 127.0.0.1 too", out)


def check_public_key(context, checks):
    """The public key, fast and unauthenticated; returns it."""
    host, _, https, ca = secure_api(context)
    done = subprocess.run(["curl", "-sS", "--max-time", "1", "--cacert", ca, "--resolve", f"{TMM_HOST}:{https}:{host}",
                           f"https://{TMM_HOST}:{https}/api/v1/publicKey/"], capture_output=True, text=True)
    checks.equal(done.returncode, 0, f"curl https://{TMM_HOST}/api/v1/publicKey/ within the samples' 1 s ({done.stderr})")
    jwk = json.loads(done.stdout)
    checks.check(jwk.get("kty") == "RSA" and jwk.get("e") == "AQAB" and len(jwk.get("n", "")) == 342
                 and "=" not in jwk["n"], "the JWK: kty RSA, e AQAB, n unpadded base64url of 2048 bits", repr(jwk))
    key = tmmclient.public_key_from_jwk(jwk)
    return key


def check_refused_v2_codes(context, checks, key):
    """Access Code V2: what is refused; returns a valid code of this second."""
    apps = context["allowedIds"]
    now = int(time.time())
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    valid = tmmclient.access_code_v2(key, apps[0], now)
    refused = {
        "expired (61 min old)": tmmclient.access_code_v2(key, apps[0], now - 3660),
        "from the future (10 min)": tmmclient.access_code_v2(key, apps[0], now + 600),
        "another key": tmmclient.access_code_v2(other_key, apps[0], now),
        "an id not allowed": tmmclient.access_code_v2(key, context["unknownId"], now),
        "truncated": valid[:-12],
        "garbage": "bm90IGEgY29kZQ==",
        "the V1 plaintext": tmmclient.access_code_v2(key, apps[0], now, plaintext=apps[0] + tmmclient.timestamp(now)),
    }
    for label, code in refused.items():
        checks.equal(status_with(context, code), 401, f"Access Code V2 {label}: 401")
    checks.equal(tmmclient.ws_handshake_status(tmmclient.ws_url(context, "locationV2Port", "/locationV2")), 401,
                 "refused codes do not unlock LocationV2")
    return valid


def check_v2_reuse_and_single_use(context, checks, key, valid):
    """Reuse over https, single use over http; the first valid code registered the app."""
    ports, apps = context["ports"], context["allowedIds"]
    checks.equal(status_with(context, valid), 200, "a valid code over https: 200")
    checks.equal(status_with(context, valid), 200, "the same code again over https: 200 (reuse until it expires)")
    fresh = tmmclient.access_code_v2(key, apps[0], int(time.time()))
    checks.equal(status_with(context, fresh, ports["apiPort"], secure=False), 200,
                 "a fresh code over plain http: 200")
    checks.equal(status_with(context, fresh, ports["apiPort"], secure=False), 401,
                 "the same code again over http: 401 (single use)")
    checks.equal(status_with(context, valid, ports["apiPort"], secure=False), 401,
                 "a code seen over https, replayed over http: 401")
    # A code registers as a side effect of the request it authenticates: the answer does not wait
    # for the registry write (docs/registration.md), so the file is polled.
    checks.check(polling.wait_until(lambda: apps[0].lower() in tmmclient.registered_ids(context)),
                 "the first valid code registered the application (registry file)", repr(tmmclient.registered_ids(context)))


def check_fresh_code_samples(context, checks, epochs):
    """The Android, iOS and MAUI samples: a fresh code per request."""
    host, ports, https, ca = secure_api(context)
    apps = context["allowedIds"]
    for name, app in (("Android", apps[1]), ("iOS", apps[2]), ("MAUI", apps[3])):
        client = ModernClient(host, https, ca, app)
        first = client.get("/api/v1/receiver")
        put = client.put("/api/v1/receiver", {"isConnected": True})
        again = client.get("/api/v1/receiver")
        checks.check(first.status == put.status == again.status == 200 and put.json()["isConnected"] is True,
                     f"{name} sample: publicKey, GET, PUT isConnected, GET with fresh codes: 200s, connected",
                     f"{first!r} {put!r} {again!r}")
        position = client.get("/api/v1/positionStream?format=locationV2").json()
        checks.equal(position, {"port": ports["locationV2Port"]}, f"{name} sample: positionStream names the V2 port")
    frames = tmmclient.wss_collect(host, ports["locationV2SecurePort"], "/locationV2", ca, 5, limit=5)
    problems = [p for _, m in frames for p in tmmclient.position_problems(json.loads(m), epochs)]
    checks.check(len(frames) == 5 and not problems, "wss /locationV2 on locationV2SecurePort: capture positions",
                 repr(problems[:3]))


def check_web_sample(context, checks, epochs):
    """The web sample: one code for a GET then a PUT, from another origin."""
    host, ports, https, ca = secure_api(context)
    apps = context["allowedIds"]
    web = ModernClient(host, https, ca, apps[4], fresh_code_per_request=False, origin=WEB_ORIGIN)
    preflight = http_request(host, https, "OPTIONS", "/api/v1/receiver/",
                             {"Origin": WEB_ORIGIN, "Access-Control-Request-Method": "PUT",
                              "Access-Control-Request-Headers": "authorization,content-type"}, cafile=ca)
    checks.check(preflight.status == 204 and "authorization" in preflight.headers.get("access-control-allow-headers", "").lower(),
                 "web sample: the CORS preflight over https", repr(preflight))
    got = web.get("/api/v1/receiver/")
    put = web.put("/api/v1/receiver/", {"isConnected": True})
    checks.check(got.status == put.status == 200 and got.headers.get("access-control-allow-origin") in ("*", WEB_ORIGIN),
                 "web sample: GET then PUT with one code over https, readable from its origin", f"{got!r} {put!r}")
    events = tmmclient.wss_collect(host, ports["locationV2SecurePort"], "/events", ca, 3, limit=1)
    checks.check(len(events) == 1 and json.loads(events[0][1]).get("event") == "status",
                 "wss /events: the status event first", repr(events))
    v1 = tmmclient.wss_collect(host, ports["locationSecurePort"], "/", ca, 3, limit=1)
    checks.check(len(v1) == 1 and not tmmclient.position_problems(json.loads(v1[0][1]), epochs),
                 "wss / on locationSecurePort: LocationV1", repr(v1[:1]))


def check_settings_over_https(context, checks):
    """Settings and the other endpoints, over https."""
    host, ports, https, ca = secure_api(context)
    apps = context["allowedIds"]
    client = ModernClient(host, https, ca, apps[1])
    put = client.put("/api/v1/antenna", {"MeasuredHeight": 1.8, "IsAntennaHeightApplied": True})
    checks.check(put.status == 200 and put.json() == {"measuredHeight": 1.8, "isAntennaHeightApplied": True},
                 "PUT /antenna (PascalCase, as old clients send it): the stored settings", repr(put))
    checks.equal(client.get("/api/v1/antenna").json(), {"measuredHeight": 1.8, "isAntennaHeightApplied": True},
                 "GET /antenna: what was stored")
    frames = tmmclient.wss_collect(host, ports["locationV2SecurePort"], "/locationV2", ca, 3, limit=2)
    checks.check(frames and all(json.loads(m).get("antennaHeight") == 1.8 for _, m in frames),
                 "LocationV2 antennaHeight: the applied 1.8 m", repr([json.loads(m).get("antennaHeight") for _, m in frames]))
    put = client.put("/api/v1/correctionSource", {"CorrectionSource": "ntrip", "ServerAddress": "caster.example",
                                                 "ServerPort": 2101, "NtripMountPoint": "RTCM3",
                                                 "NtripUserName": "u", "NtripPassword": "secret"})
    body = put.json()
    checks.check(put.status == 200 and body["correctionSource"] == "ntrip" and body["hasNtripPassword"] is True
                 and "secret" not in put.body.decode(), "PUT /correctionSource: stored, the password never echoed", repr(put))
    info = client.get("/api/v1/userInfo")
    checks.check(info.status == 200 and info.json().get("isSignedIn") is False, "GET /userInfo: no Trimble ID", repr(info))


def check_location_v2_broadcast(context, checks):
    """TMM's "Set configuration for LocationV2 broadcast" (PUT /api/v1/positionStream/locationV2/,
    body unpublished: docs/protocol-choices.md): 2 Hz caps the 10 Hz receiver's stream on wss,
    a bad rate is a 400 that changes nothing, null goes back to max-location-rate."""
    host, ports, https, ca = secure_api(context)
    client = ModernClient(host, https, ca, context["allowedIds"][1])
    path = "/api/v1/positionStream/locationV2/"
    put = client.put(path, {"rate": 2})
    body = put.json() if put.status == 200 else {}
    checks.check(body.get("rate") == 2.0 and body.get("interval") == 500.0 and body.get("requestedRate") == 2.0
                 and body.get("maximumRate", 0) >= 2.0,
                 "PUT positionStream/locationV2 {rate: 2}: 2 Hz in force", repr(put))
    checks.equal(client.get(path).json(), body, "GET positionStream/locationV2: what was set")
    bad = client.put(path, {"rate": 0})
    checks.check(bad.status == 400 and "from 1 to 1000" in bad.json().get("error", ""),
                 "PUT positionStream/locationV2 {rate: 0}: 400 with the reason", repr(bad))
    # A 2 Hz cap lets 1 + 2 × 3 frames through in 3 s (the bucket starts full); the receiver
    # makes 30 epochs meanwhile.
    frames = tmmclient.wss_collect(host, ports["locationV2SecurePort"], "/locationV2", ca, 3)
    checks.check(3 <= len(frames) <= 8, "wss /locationV2 at the 2 Hz asked for, not the receiver's 10 Hz",
                 f"{len(frames)} frames in 3 s")
    reset = client.put(path, {"rate": None})
    reset_body = reset.json() if reset.status == 200 else {}
    checks.check(reset_body.get("requestedRate", 0) is None and reset_body.get("rate") == body.get("maximumRate"),
                 "PUT positionStream/locationV2 {rate: null}: max-location-rate again", repr(reset))


def check_unsupported_windows_request(context, checks):
    """A Windows request the bridge has no screen for: an error callback at once."""
    started = time.monotonic()
    result = tmmclient.tmm_open(context, "trimbleMobileManager://request/tmmOpenToReceiverSelection?callback=tmmapisample://response")
    pairs = dict(tmmclient.parse_windows_reply(result.stdout.strip(), "tmmapisample://response"))
    checks.check(result.status == 0 and pairs.get("id") == "tmmOpenToReceiverSelection" and pairs.get("status") == "error"
                 and "not supported" in pairs.get("message", "") and time.monotonic() - started < 5,
                 "MAUI's tmmOpenToReceiverSelection: answered with status=error at once", repr(result))


if __name__ == "__main__":
    tmmclient.main(run)
