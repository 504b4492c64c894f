"""3,000 `PUT /api/v1/antenna` as fast as one keep-alive connection takes them, each a different
height, while a second thread registers another application at the 750th
(Tests/CLITests/SlowDiskTests.swift: settings writes on a slow disk hold up neither the
requests nor a registration).

    python3 -m tmmtools.peers.antenna_burst API_PORT APP_ID BRIDGE RUNTIME_DIR LATECOMER_ID

APP_ID is registered already (Access Code V1, retried with a fresh code on a 401 at a second's
edge); BRIDGE is the tmm-bridge binary whose `open` registers LATECOMER_ID with the daemon of
RUNTIME_DIR. Prints one JSON line: {"statuses": {status: count}, "last": the last answer,
"served": GET /api/v1/antenna after the burst, "seconds": the burst's, "registration":
{"seconds", "status", "output"}}.
"""

import base64
import collections
import http.client
import json
import subprocess
import sys
import threading
import time

from tmmtools.client import tmmclient

COUNT = 3000
REGISTER_AT = 750


def register(bridge: str, runtime: str, latecomer: str, result: dict) -> None:
    url = "tmmregister://?" + base64.b64encode(json.dumps(
        {"application_id": latecomer, "returl": "app://r"}).encode()).decode()
    started = time.monotonic()
    done = subprocess.run([bridge, "open", url, "--print", "--runtime-dir", runtime],
                          capture_output=True, text=True, timeout=60)
    result.update(seconds=time.monotonic() - started, status=done.returncode, output=done.stdout + done.stderr)


def put(connection: http.client.HTTPConnection, app: str, body: str):
    """One PUT, with a fresh code again after a 401 (a second's edge), at most 3 tries."""
    for _ in range(3):
        code = tmmclient.access_code_v1(app, int(time.time()))
        connection.request("PUT", "/api/v1/antenna", body, {
            "Authorization": "Basic " + code, "Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        if response.status != 401:
            break
    return response.status, data


def main(port: int, app: str, bridge: str, runtime: str, latecomer: str) -> None:
    registration: dict = {}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    statuses, answered, thread = collections.Counter(), [], None
    started = time.monotonic()
    for i in range(COUNT):
        height = round((i % 20000) / 100 - 50, 2)
        status, data = put(connection, app, json.dumps({"measuredHeight": height, "isAntennaHeightApplied": i % 2 == 0}))
        statuses[status] += 1
        if status == 200:
            answered.append(json.loads(data))
        if i == REGISTER_AT:
            thread = threading.Thread(target=register, args=(bridge, runtime, latecomer, registration))
            thread.start()
    elapsed = time.monotonic() - started
    thread.join()
    served = tmmclient.MauiClient("127.0.0.1", port, app).get("/api/v1/antenna").json()
    print(json.dumps({"statuses": statuses, "last": answered[-1] if answered else None, "served": served,
                      "seconds": elapsed, "registration": registration}))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
