"""A fake daemon's control socket (Tests/CLITests/ControlSocketTrustTests.swift: `tmm-bridge open`
must only believe a daemon it can trust), run as `nobody` with setpriv, or as root.

    python3 -m tmmtools.peers.fake_control SOCKET REPLY

Listens on the Unix socket SOCKET (mode 0666, put in place by a rename so it appears ready),
answers one request with the line REPLY, and records the request it got in SOCKET.got.
"""

import os
import socket
import sys


def main(path: str, reply: str) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path + ".tmp")
    os.chmod(path + ".tmp", 0o666)
    server.listen(1)
    os.rename(path + ".tmp", path)
    connection, _ = server.accept()
    got = connection.recv(8192)
    with open(path + ".got", "wb") as f:
        f.write(got)
    connection.sendall(reply.encode() + b"\n")
    connection.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
