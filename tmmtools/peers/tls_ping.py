"""An independent TLS client for the memory-BIO server session (Tests/TLSTests/TLSServerSessionTests.swift):
Python's `ssl` (OpenSSL underneath, but its own client state machine and defaults).

    python3 -m tmmtools.peers.tls_ping PORT CAFILE ALPN HIGHEST

Connects to 127.0.0.1:PORT as `tmm-api-local.fieldsystems.trimble.com`, trusting the CA in
CAFILE; ALPN is the protocol list (comma-separated, "-" for none), HIGHEST the highest version
("1.1", "1.2", "1.3"). Sends "ping", prints the version, the ALPN protocol and the reply, or
`error <reason>`.
"""

import socket
import ssl
import sys

SERVER_NAME = "tmm-api-local.fieldsystems.trimble.com"
VERSIONS = {"1.1": ssl.TLSVersion.TLSv1_1, "1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


def main(port: int, cafile: str, alpn: str, highest: str) -> None:
    ctx = ssl.create_default_context(cafile=cafile)
    if alpn != "-":
        ctx.set_alpn_protocols(alpn.split(","))
    if highest == "1.1":
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
        ctx.minimum_version = ssl.TLSVersion.TLSv1
    ctx.maximum_version = VERSIONS[highest]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname=SERVER_NAME) as tls:
                tls.sendall(b"ping")
                reply = tls.recv(100)
                print(tls.version(), tls.selected_alpn_protocol(), reply.decode())
    except Exception as error:
        print("error", error)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4])
