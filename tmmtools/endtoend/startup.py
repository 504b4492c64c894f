"""Right after start-up, with a receiver that stayed silent for a second when it was handed to
gpsd: once its positions flow, REST and /events must say it is connected.

Context: a fresh daemon, `allowedIds[0]` allowlisted.
"""

import json

from tmmtools.client import tmmclient


def run(context, checks):
    returl = "tmmapiossample://response/register"
    result = tmmclient.tmm_open(context, tmmclient.ios_register_url(
        tmmclient.ios_register_json(context["allowedIds"][0], returl)))
    checks.check(result.status == 0, "registration OK", repr(result))
    frames = tmmclient.ws_collect(tmmclient.ws_url(context, "locationV2Port", "/locationV2"), 6, limit=3)
    checks.equal(len(frames), 3, "LocationV2 positions flow")
    maui = tmmclient.MauiClient(context["host"], context["ports"]["apiPort"], context["allowedIds"][0])
    info = maui.get("/api/v1/receiver").json()
    checks.check(info.get("isReceiverConfigured") is True and info.get("isConnected") is True,
                 "GET /receiver while positions flow: configured and connected", repr(info))
    status = json.loads(tmmclient.ws_collect(tmmclient.ws_url(context, "locationV2Port", "/events"), 3, limit=1)[0][1])
    checks.check(status.get("input") == "live" and status.get("receiver", {}).get("isConnected") is True,
                 "/events status: input live, receiver connected", repr(status))


if __name__ == "__main__":
    tmmclient.main(run)
