"""Registers new applications one after another, as fast as `tmm-bridge open` goes, while the
Swift side SIGKILLs and restarts the daemon under it (the daemon runs `--registration open`).

Every id whose reply said OK is appended to `ackFile` (one line each, written after the reply was
read), so the Swift side can check that each of them is in registry.json after every kill. Runs
until `stopFile` exists or `seconds` pass; a request that fails (daemon dead or dying) is not
acknowledged and the loop goes on with a new id.
"""

import os
import time
import uuid

from tmmtools.client import tmmclient


def run(context, checks):
    returl = "tmmapiossample://response/register"
    deadline = time.monotonic() + context["seconds"]
    acknowledged = failed = 0
    with open(context["ackFile"], "a", encoding="ascii") as ack:
        while time.monotonic() < deadline and not os.path.exists(context["stopFile"]):
            application_id = str(uuid.uuid4())
            if acknowledged % 2:
                url = tmmclient.windows_register_url(application_id, "tmmapisample://response")
            else:
                url = tmmclient.ios_register_url(tmmclient.ios_register_json(application_id, returl))
            try:
                result = tmmclient.tmm_open(context, url, timeout=10)
            except Exception:  # a time-out while the daemon is being killed
                failed += 1
                continue
            ok = result.status == 0 and ("registrationResult=OK" in result.reply or (
                result.reply.startswith(returl) and
                tmmclient.decode_ios_reply(result.reply, returl).get("registrationResult") == "OK"))
            if ok:
                ack.write(application_id + "\n")
                ack.flush()
                acknowledged += 1
            else:
                checks.check(result.status == 1 and result.stderr.startswith("tmm-bridge: "),
                             "a request that got no OK failed with exit 1 and a message", repr(result))
                failed += 1
                time.sleep(0.02)  # retry pace while the daemon is down
    print(f"acknowledged {acknowledged}, failed {failed}", flush=True)
    checks.check(acknowledged > 0, "some registrations were acknowledged")


if __name__ == "__main__":
    tmmclient.main(run)
