"""A Python ssl client that keeps a connection open after one request
(Tests/BridgeTests/ServerTLSLoadTests.swift, close_notify).

    python3 -m tmmtools.peers.tls_close_watch PORT CAFILE

Sends `GET /api/v1/publicKey` to 127.0.0.1:PORT over TLS (CAFILE: the daemon's CA) and prints
`answered`; then `clean` when the server ends the connection with close_notify, `unclean` when
the connection just ends (SSLEOFError). Debian's Python turns on OP_IGNORE_UNEXPECTED_EOF, which
would report both as clean: it is turned off, and ragged EOFs are not suppressed.
"""

import socket
import ssl
import sys

SERVER_NAME = "tmm-api-local.fieldsystems.trimble.com"


def main(port: int, cafile: str) -> None:
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.options &= ~ssl.OP_IGNORE_UNEXPECTED_EOF
    with socket.create_connection(("127.0.0.1", port), timeout=20) as raw:
        with ctx.wrap_socket(raw, server_hostname=SERVER_NAME, suppress_ragged_eofs=False) as tls:
            tls.sendall(b"GET /api/v1/publicKey HTTP/1.1\r\nHost: x\r\n\r\n")
            data = b""
            while b"\r\n\r\n" not in data:
                data += tls.recv(4096)
            print("answered", flush=True)
            try:
                while tls.recv(4096):
                    pass
                print("clean", flush=True)
            except ssl.SSLEOFError:
                print("unclean", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
