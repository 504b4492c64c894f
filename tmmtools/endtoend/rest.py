"""The REST API as the MAUI and web samples use it (TMM-API.md §4, §8.4), Access Code V1.

Context: `allowedIds[0]` is in the registry from an earlier run of the daemon (the state
directory was kept), so Access Code V1 works without registering again, and LocationV2 starts
locked (no registration and no authenticated call in this run yet). A pty receiver is connected.
"""

import asyncio
import json
import socket
import time

import websockets

from tmmtools.client import tmmclient
from tmmtools.client.tmmclient import PORT_KEYS, MauiClient, http_request

RECEIVER_KEYS = ["isReceiverConfigured", "isConnected", "bluetoothName", "bluetoothAddress", "receiverBrand",
                 "receiverModel", "receiverSerialNumber", "isSigninRequired", "isSignedIn"]
BOOLEAN_KEYS = {"isReceiverConfigured", "isConnected", "isSigninRequired", "isSignedIn"}
WEB_ORIGIN = "http://localhost:5173"


def check_receiver_info(checks, info, what):
    checks.equal(list(info.keys()), RECEIVER_KEYS, f"{what}: the nine ReceiverInfo fields in §8.4 order")
    wrong = [k for k in RECEIVER_KEYS
             if not (isinstance(info[k], bool) if k in BOOLEAN_KEYS else (info[k] is None or isinstance(info[k], str)))]
    checks.check(not wrong, f"{what}: booleans are JSON booleans, the rest strings or null", repr(wrong))


def check_error_body(checks, response, status, what):
    checks.equal(response.status, status, f"{what}: HTTP {status}")
    checks.check(response.headers.get("content-type", "").startswith("application/json"),
                 f"{what}: a JSON error body", repr(response))
    body = response.json()
    checks.check(isinstance(body.get("error"), str) and body["error"] and isinstance(body.get("Reason"), str)
                 and body["Reason"], f"{what}: body has 'error' (web sample) and 'Reason' (old .NET clients)", repr(body))
    return body


def endpoint(context):
    """The REST server's host and port, and the registered application id the codes are for."""
    return context["host"], context["ports"]["apiPort"], context["allowedIds"][0]


def run(context, checks):
    v2 = tmmclient.ws_url(context, "locationV2Port", "/locationV2")

    checks.equal(tmmclient.ws_handshake_status(v2), 401, "LocationV2 is locked after a restart: upgrade refused with 401")
    check_refused_access_codes(context, checks, v2)
    maui = check_maui_client_codes(context, checks, v2)
    check_other_endpoints(context, checks, maui)
    check_cors(context, checks, maui)
    check_put_receiver_with_events(context, checks, maui, v2)
    check_put_receiver_bodies(context, checks, maui)
    check_pipelining(context, checks)


def check_refused_access_codes(context, checks, v2):
    """Refused access codes: none, stale, outside the window, malformed, a V2 that does not
    decrypt, a MAUI client 5 s behind; none of them unlocks LocationV2."""
    host, api, app = endpoint(context)
    response = http_request(host, api, "GET", "/api/v1/receiver")
    check_error_body(checks, response, 401, "GET /receiver without Authorization")
    checks.check("www-authenticate" in response.headers, "the 401 carries WWW-Authenticate", repr(response.headers))
    checks.equal(response.headers.get("access-control-allow-origin"), "*",
                 "the 401 carries Access-Control-Allow-Origin, so a browser page can read it")

    tmmclient.wait_for_second_start()
    stale = "Basic " + tmmclient.access_code_v1(app, int(time.time()) - 5)
    response = http_request(host, api, "GET", "/api/v1/receiver", {"Authorization": stale})
    check_error_body(checks, response, 401, "a code from 5 s ago")
    for label, offset in (("2 s ago", -2), ("2 s ahead", 2)):
        tmmclient.wait_for_second_start()
        code = "Basic " + tmmclient.access_code_v1(app, int(time.time()) + offset)
        status = http_request(host, api, "GET", "/api/v1/test/ping", {"Authorization": code}).status
        checks.equal(status, 401, f"a code for {label}: 401 (accepted window is now-1..now+1)")
    for label, header in (("garbage", "Basic not-a-code"), ("user:password", "Basic dXNlcjpwYXNzd29yZA=="),
                          ("no scheme", tmmclient.access_code_v1(app, int(time.time())))):
        status = http_request(host, api, "GET", "/api/v1/test/ping", {"Authorization": header}).status
        checks.equal(status, 401, f"Authorization '{label}': 401")
    response = http_request(host, api, "GET", "/api/v1/receiver", {"Authorization": "AccessCodeV2 " + "A" * 344})
    body = check_error_body(checks, response, 401, "an Access Code V2 that does not decrypt")
    checks.check("Access Code V2 refused" in body["error"], "the 401 for a bad Access Code V2 says why", repr(body))
    maui = MauiClient(host, api, app, clock_offset=-5)
    checks.check(maui.get("/api/v1/receiver").status == 401 and maui.attempts == [401, 401],
                 "MAUI client 5 s behind: 401, retried once with the previous second, 401 again", repr(maui.attempts))
    checks.equal(tmmclient.ws_handshake_status(v2), 401, "failed REST calls do not unlock LocationV2")


def check_maui_client_codes(context, checks, v2):
    """The MAUI client: code for now, retry with now-1 on any non-2xx; returns that client."""
    host, api, app = endpoint(context)
    maui = MauiClient(host, api, app)
    response = maui.get("/api/v1/receiver")
    checks.check(response.status == 200 and maui.attempts == [200], "GET /api/v1/receiver: 200 at the first try",
                 repr(response))
    checks.check(response.headers.get("content-type", "").startswith("application/json"), "ReceiverInfo is JSON",
                 repr(response.headers))
    info = response.json()
    check_receiver_info(checks, info, "GET /receiver")
    checks.check(info["isReceiverConfigured"] is True and info["isConnected"] is True,
                 "the pty receiver is configured and connected", repr(info))
    checks.equal(tmmclient.ws_handshake_status(v2), 101, "an authenticated REST call unlocked LocationV2")

    tmmclient.wait_for_second_start()
    ahead = MauiClient(host, api, app, clock_offset=2)
    response = ahead.get("/api/v1/test/ping")
    checks.check(response.status == 200 and ahead.attempts == [401, 200],
                 "MAUI client 2 s ahead: 401, then its retry with the previous second is accepted", repr(ahead.attempts))
    for label, offset in (("1 s ago", -1), ("1 s ahead", 1)):
        tmmclient.wait_for_second_start()
        code = "Basic " + tmmclient.access_code_v1(app, int(time.time()) + offset)
        status = http_request(host, api, "GET", "/api/v1/test/ping", {"Authorization": code}).status
        checks.equal(status, 200, f"a code for {label}: 200")
    code = tmmclient.access_code_v1(app, int(time.time()))
    status = http_request(host, api, "GET", "/api/v1/test/ping", {"Authorization": "basic\t" + code}).status
    checks.equal(status, 200, "the scheme is case-insensitive ('basic' and a tab)")
    return maui


def check_other_endpoints(context, checks, maui):
    """positionStream's formats, tmmInfo, test/ping, trailing slashes and any case, HEAD."""
    ports = context["ports"]
    for form, key in (("locationV1", "locationPort"), ("locationV2", "locationV2Port"), ("LOCATIONV2", "locationV2Port")):
        response = maui.get(f"/api/v1/positionStream?format={form}")
        body = response.json() if response.status == 200 else None
        checks.check(response.status == 200 and body == {"port": ports[key]} and type(body["port"]) is int,
                     f"positionStream?format={form}: {{\"port\": {ports[key]}}} as a JSON number", repr(response))
    for query, what in (("", "no format"), ("?format=locationV3", "format=locationV3")):
        check_error_body(checks, maui.get("/api/v1/positionStream" + query), 400, f"positionStream with {what}")

    response = maui.get("/api/v1/tmmInfo")
    info = response.json()
    checks.check(response.status == 200 and info.get("name") == "tmm-bridge" and isinstance(info.get("version"), str)
                 and info.get("schemaVersion") == 1, "tmmInfo: name, version, schemaVersion 1", repr(info))
    checks.check(all(type(info.get(k)) is int for k in PORT_KEYS), "tmmInfo: the ports are JSON numbers", repr(info))
    checks.equal({k: info[k] for k in PORT_KEYS}, ports, "tmmInfo: the daemon's real ports")
    check_receiver_info(checks, info["receiver"], "tmmInfo.receiver")

    response = maui.get("/api/v1/test/ping")
    checks.check(response.status == 200 and response.json() == {"result": "pong"}, "test/ping: {\"result\":\"pong\"}",
                 repr(response))

    for path in ("/api/v1/receiver/", "/api/v1/tmmInfo/", "/api/v1/test/ping/", "/api/v1/positionStream/?format=locationV1",
                 "/API/V1/RECEIVER", "/api/v1/TMMINFO/"):
        checks.equal(maui.get(path).status, 200, f"GET {path} (trailing slash / any case): 200")

    response = maui.request("HEAD", "/api/v1/tmmInfo")
    full = maui.get("/api/v1/tmmInfo")
    checks.check(response.status == 200 and response.body == b""
                 and response.headers.get("content-length") == str(len(full.body)),
                 "HEAD tmmInfo: 200, no body, the GET's Content-Length", repr(response))


def check_cors(context, checks, maui):
    """CORS, as the web sample's browser does it."""
    host, api, _ = endpoint(context)
    response = http_request(host, api, "OPTIONS", "/api/v1/receiver/", {
        "Origin": WEB_ORIGIN, "Access-Control-Request-Method": "PUT",
        "Access-Control-Request-Headers": "authorization,content-type"})
    checks.check(200 <= response.status < 300, "CORS preflight (no Authorization): 2xx", repr(response))
    allow_origin = response.headers.get("access-control-allow-origin")
    checks.check(allow_origin in ("*", WEB_ORIGIN), "preflight: Access-Control-Allow-Origin", repr(response.headers))
    methods = {m.strip().upper() for m in response.headers.get("access-control-allow-methods", "").split(",")}
    checks.check({"GET", "PUT"} <= methods, "preflight: Access-Control-Allow-Methods has GET and PUT", repr(methods))
    allowed = {h.strip().lower() for h in response.headers.get("access-control-allow-headers", "").split(",")}
    checks.check({"authorization", "content-type"} <= allowed,
                 "preflight: Access-Control-Allow-Headers has Authorization and Content-Type", repr(allowed))
    response = maui.request("GET", "/api/v1/receiver/", extra_headers={"Origin": WEB_ORIGIN})
    checks.check(response.status == 200 and response.headers.get("access-control-allow-origin") in ("*", WEB_ORIGIN),
                 "the actual GET from the web origin carries Access-Control-Allow-Origin", repr(response.headers))


async def put_with_events(context, maui, v2):
    """PUT /receiver: disconnect, then connect (which waits for the receiver), /events listening."""
    loop = asyncio.get_running_loop()
    async with websockets.connect(tmmclient.ws_url(context, "locationV2Port", "/events"), open_timeout=5,
                                  ping_interval=None) as events:
        status = json.loads(await asyncio.wait_for(events.recv(), 3))
        off = await loop.run_in_executor(None, maui.put, "/api/v1/receiver", {"isConnected": False})
        off_get = await loop.run_in_executor(None, maui.get, "/api/v1/receiver")
        # Epochs already on their way through gpsd and the bridge when the PUT returned. A
        # settling time on purpose: a client sees no event for the last of them; the check
        # below is that nothing comes in the 1.5 s after it.
        await asyncio.sleep(0.5)
        silent = await tmmclient.collect(v2, 1.5)
        started = time.monotonic()
        on = await loop.run_in_executor(None, maui.put, "/api/v1/receiver", {"isConnected": True})
        waited = time.monotonic() - started
        seen = []
        try:
            while not any(e.get("event") == "inputRestored" for e in seen):
                seen.append(json.loads(await asyncio.wait_for(events.recv(), 3)))
        except asyncio.TimeoutError:
            pass
        return status, off, off_get, silent, on, waited, seen


def check_put_receiver_with_events(context, checks, maui, v2):
    status, off, off_get, silent, on, waited, seen = asyncio.run(put_with_events(context, maui, v2))
    checks.check(status.get("event") == "status" and status["receiver"]["isConnected"] is True,
                 "/events status before the PUTs: receiver connected", repr(status))
    checks.check(off.status == 200 and off.json().get("isConnected") is False,
                 "PUT {\"isConnected\":false}: 200 with isConnected false", repr(off))
    check_receiver_info(checks, off.json(), "PUT false reply")
    checks.equal(off_get.json()["isConnected"], False, "GET after the disconnect: isConnected false")
    checks.equal(len(silent), 0, "no LocationV2 positions while disconnected")
    checks.check(on.status == 200 and on.json().get("isConnected") is True,
                 f"PUT {{\"isConnected\":true}}: 200 with isConnected true once the receiver is back ({waited:.2f} s)",
                 repr(on))
    names = [e.get("event") for e in seen]
    disconnected = next((e for e in seen if e.get("event") == "receiverDisconnected"), {})
    connected = next((e for e in seen if e.get("event") == "receiverConnected"), {})
    checks.check(names.index("receiverDisconnected") < names.index("receiverConnected") if
                 {"receiverDisconnected", "receiverConnected"} <= set(names) else False,
                 "/events: receiverDisconnected, then receiverConnected", repr(names))
    checks.check(disconnected.get("receiver", {}).get("isConnected") is False
                 and connected.get("receiver", {}).get("isConnected") is True
                 and disconnected.get("device") == connected.get("device") and connected.get("device"),
                 "/events: both name the device, with the receiver state after each change", repr(seen))
    checks.check("inputLost" in names and names[-1] == "inputRestored", "/events: inputLost and inputRestored",
                 repr(names))
    checks.equal(maui.get("/api/v1/receiver").json()["isConnected"], True, "GET after the connect: isConnected true")
    frames = tmmclient.ws_collect(v2, 5, limit=3)
    checks.equal(len(frames), 3, "LocationV2 positions flow again after the connect")


def check_put_receiver_bodies(context, checks, maui):
    """PUT with old clients' PascalCase, and bodies refused with 400."""
    host, api, app = endpoint(context)
    response = maui.put("/api/v1/receiver/", {"IsConnected": True})
    checks.check(response.status == 200 and response.json()["isConnected"] is True,
                 "PUT with PascalCase {\"IsConnected\":true} (old clients): 200", repr(response))
    for body, what in ((b"{not json", "a body that is not JSON"), (b'{"isConnected":"yes"}', "isConnected a string"),
                       (b"{}", "no isConnected")):
        code = tmmclient.access_code_v1(app, int(time.time()))
        response = http_request(host, api, "PUT", "/api/v1/receiver",
                                {"Authorization": "Basic " + code, "Content-Type": "application/json"}, body)
        check_error_body(checks, response, 400, f"PUT with {what}")


def check_pipelining(context, checks):
    """Three requests in one write (HTTP/1.1 pipelining): three answers, in order."""
    host, api, app = endpoint(context)
    ports = context["ports"]
    code = tmmclient.access_code_v1(app, int(time.time()))
    requests = "".join(f"GET {path} HTTP/1.1\r\nHost: {host}:{api}\r\nAuthorization: Basic {code}\r\n\r\n"
                       for path in ("/api/v1/test/ping", "/api/v1/positionStream?format=locationV2"))
    with socket.create_connection((host, api), timeout=5) as raw:
        raw.sendall(requests.encode() + f"GET /api/v1/tmmInfo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                        f"Authorization: Basic {code}\r\n\r\n".encode())
        data = tmmclient.read_until_closed(raw)
    answers = data.split(b"HTTP/1.1 ")[1:]
    statuses = [a[:3] for a in answers]
    bodies = [json.loads(a[a.index(b"\r\n\r\n") + 4:]) for a in answers]
    checks.check(statuses == [b"200"] * 3 and bodies[0] == {"result": "pong"}
                 and bodies[1] == {"port": ports["locationV2Port"]} and bodies[2].get("name") == "tmm-bridge",
                 "three pipelined requests: three 200s in request order, closed after the last", repr(data[:400]))


if __name__ == "__main__":
    tmmclient.main(run)
