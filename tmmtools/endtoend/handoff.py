"""The port handoff (TMM-API.md §2.3): with some base ports held by another listener, the daemon
serves those servers on ports from `--fallback-port-start` up, and every channel a client learns
ports from reports the same real ports. A legacy client (§1) learns `apiPort` from the
registration reply only, so this script never uses the context's ports to find the servers.

Context: `basePorts` (what was configured), `heldPorts` (the busy ones), `ports` (the daemon's
`ports:` line, only to compare with).
"""

import json
import socket

from tmmtools.client import tmmclient
from tmmtools.client.tmmclient import PORT_KEYS


def run(context, checks):
    host = context["host"]
    expected = context["ports"]
    held = set(context["heldPorts"])
    moved = [k for k in PORT_KEYS if context["basePorts"][k] in held]
    checks.check(len(moved) > 0, f"servers whose base port is held: {moved}")
    for key in moved:
        checks.check(expected[key] >= context["fallbackStart"] and expected[key] not in held,
                     f"{key} moved from {context['basePorts'][key]} to {expected[key]} (fallback from "
                     f"{context['fallbackStart']})")
    for key in set(PORT_KEYS) - set(moved):
        checks.equal(expected[key], context["basePorts"][key], f"{key} kept its free base port")

    # Registration replies, both platforms, and both socket-server-port requests.
    returl = "tmmapiossample://response/register"
    result = tmmclient.tmm_open(context, tmmclient.ios_register_url(
        tmmclient.ios_register_json(context["allowedIds"][0], returl)))
    reply = tmmclient.decode_ios_reply(result.reply, returl)
    checks.equal(reply.get("registrationResult"), "OK", "iOS register: OK")
    learned = {k: int(reply[k]) for k in PORT_KEYS}
    checks.equal(learned, expected, "iOS register reply: the real ports, moved ones included")

    callback = "tmmapisample://response"
    result = tmmclient.tmm_open(context, tmmclient.windows_register_url(context["allowedIds"][1], callback))
    values = dict(tmmclient.parse_windows_reply(result.reply, callback))
    checks.equal({k: int(values[k]) for k in PORT_KEYS}, expected, "Windows register reply: the same ports")

    returl = "tmmapiossample://response/port"
    result = tmmclient.tmm_open(context, tmmclient.ios_register_url(json.dumps({"returl": returl}),
                                                                    "tmmsocketserverport://?"))
    reply = tmmclient.decode_ios_reply(result.reply, returl) if result.status == 0 else {}
    checks.check(result.status == 0 and {k: int(reply.get(k, -1)) for k in PORT_KEYS} == expected,
                 "iOS tmmsocketserverport reply: the same ports", repr(result))
    url = f"trimblemobilemanager://request/tmmSocketServerPort?callback={callback}"
    result = tmmclient.tmm_open(context, url)
    values = dict(tmmclient.parse_windows_reply(result.reply, callback)) if result.status == 0 else {}
    checks.check(values.get("id") == "tmmSocketServerPort" and values.get("status") == "success"
                 and {k: int(values.get(k, -1)) for k in PORT_KEYS} == expected,
                 "Windows tmmSocketServerPort reply: the same ports", repr(result))

    # REST at the apiPort the registration gave; the stream port it names; tmmInfo.
    maui = tmmclient.MauiClient(host, learned["apiPort"], context["allowedIds"][0])
    for form, key in (("locationV1", "locationPort"), ("locationV2", "locationV2Port")):
        body = maui.get(f"/api/v1/positionStream?format={form}").json()
        checks.equal(body, {"port": expected[key]}, f"positionStream?format={form} at the learned apiPort: the real {key}")
    info = maui.get("/api/v1/tmmInfo").json()
    checks.equal({k: info[k] for k in PORT_KEYS}, expected, "tmmInfo: the same ports")

    # A moved secure port serves TLS like the others: the public key over https at the learned port.
    ca = context["stateDir"] + "/tls/ca.pem"
    for key in moved:
        if key == "apiSecurePort":
            body = tmmclient.https_get(host, expected[key], "/api/v1/publicKey", ca).json()
            checks.equal(body.get("kty"), "RSA", f"the moved {key} {expected[key]} serves the public key over TLS")

    # The stream is really there.
    port = maui.get("/api/v1/positionStream?format=locationV2").json()["port"]
    frames = tmmclient.ws_collect(f"ws://{host}:{port}/locationV2", 5, limit=5)
    epochs = tmmclient.capture_epochs(context["capture"])
    problems = [p for _, m in frames for p in tmmclient.position_problems(json.loads(m), epochs)]
    checks.check(len(frames) == 5 and not problems, f"LocationV2 on the reported port {port}: capture positions",
                 repr(problems[:3]))


if __name__ == "__main__":
    tmmclient.main(run)
