"""Access codes for the Swift tests, made as the samples make them, through
tmmtools/client/tmmclient.py, the one Python home of the code formats: V2 for the server tests
(Tests/BridgeTests/Support/AccessCodeV2Client.swift; Debian's python3-cryptography), V1 for
Tests/CLITests/ReloadTests.swift and hwtests/rest-check.sh.

    python3 -m tmmtools.peers.access_codes mint JWK UNIX_SECONDS FIRST_BYTE_ZERO ID...
        one code per ID, for the public key JWK (GET /api/v1/publicKey's body), dated
        UNIX_SECONDS; FIRST_BYTE_ZERO 1: only ciphertexts whose first byte is 0x00 (one in 256 is)
    python3 -m tmmtools.peers.access_codes send PORT JWK ID...
        for each ID a fresh code sent on a new connection to 127.0.0.1:PORT
        (GET /api/v1/receiver); prints each answer's status
    python3 -m tmmtools.peers.access_codes v1 ID [OFFSET]
        the Access Code V1 of ID for this second, or for OFFSET seconds from it (-1: the
        previous second, the MAUI sample's retry)
"""

import base64
import json
import sys
import time

from tmmtools.client import tmmclient


def mint(jwk: str, seconds: str, first_byte_zero: str, ids: list) -> None:
    key = tmmclient.public_key_from_jwk(json.loads(jwk))
    for application_id in ids:
        while True:
            code = tmmclient.access_code_v2(key, application_id, int(seconds))
            if first_byte_zero != "1" or base64.b64decode(code)[0] == 0:
                break
        print(code)


def send(port: str, jwk: str, ids: list) -> None:
    key = tmmclient.public_key_from_jwk(json.loads(jwk))
    for application_id in ids:
        code = tmmclient.access_code_v2(key, application_id, int(time.time()))
        response = tmmclient.http_request("127.0.0.1", int(port), "GET", "/api/v1/receiver",
                                          {"Authorization": "AccessCodeV2 " + code})
        print(response.status, flush=True)


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "mint":
        mint(arguments[0], arguments[1], arguments[2], arguments[3:])
    elif command == "send":
        send(arguments[0], arguments[1], arguments[2:])
    elif command == "v1":
        offset = int(arguments[1]) if len(arguments) > 1 else 0
        print(tmmclient.access_code_v1(arguments[0], int(time.time()) + offset))
    else:
        sys.exit(f"access_codes: unknown command {command!r} (mint, send or v1)")
