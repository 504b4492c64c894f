"""A TCP end that another user holds (Tests/PosixTests/ProcFSTests.swift: the owner of each end
of a connection, as the kernel's socket table names it; run as `nobody`).

    python3 -m tmmtools.peers.hold_socket listen PORT          listens on 127.0.0.1:PORT, accepts one
    python3 -m tmmtools.peers.hold_socket connect FROM PORT    connects from address FROM to 127.0.0.1:PORT

Either way it then holds the connection for 30 s (the test stops it sooner).
"""

import socket
import sys
import time


def main(arguments):
    if arguments[0] == "listen":
        server = socket.socket()
        server.bind(("127.0.0.1", int(arguments[1])))
        server.listen(4)
        held = server.accept()[0]
    else:
        held = socket.socket()
        held.bind((arguments[1], 0))
        held.connect(("127.0.0.1", int(arguments[2])))
    time.sleep(30)
    held.close()


if __name__ == "__main__":
    main(sys.argv[1:])
