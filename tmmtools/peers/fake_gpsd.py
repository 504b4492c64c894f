"""A fake gpsd for the trust tests (Tests/CLITests/GPSDTrustTests.swift against the real daemon,
Tests/GPSDTests/GPSDTrustSessionTests.swift at the session), run as `nobody` or as root.

    python3 -m tmmtools.peers.fake_gpsd PORT [BIND_SECONDS [SERVE_SECONDS]]

Binds 127.0.0.1:PORT (retrying for up to BIND_SECONDS, default 0, as an attacker waiting for the
port would), prints `bound PORT` or `bind failed: ...`, then serves everyone who connects, for
SERVE_SECONDS (default 30): VERSION with release 6.6.6-fake, DEVICES, and GGA + RMC at 10 Hz at a
position far from the test capture's (latitude 12.3456...), so that reading it shows in the
bridge's log and on its WebSockets.
"""

import socket
import sys
import threading
import time

from tmmtools.sim.nmea import sentence  # the one NMEA writer of the Python tools

VERSION = b'{"class":"VERSION","release":"6.6.6-fake","rev":"x","proto_major":3,"proto_minor":14}\r\n'
DEVICES = (b'{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/fake","driver":"NMEA0183",'
           b'"activated":"2026-01-01T00:00:00.000Z","flags":1,"native":0,"bps":4800,"parity":"N","stopbits":1,'
           b'"cycle":1.00}]}\r\n')


def bind(port: int, seconds: float):
    """The listening socket, or None when the port stayed taken for `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            s.bind(("127.0.0.1", port))
            s.listen(16)
            return s
        except OSError as error:
            s.close()
            if time.monotonic() > deadline:
                print("bind failed:", error, flush=True)
                return None
            time.sleep(0.002)  # an attacker's retry pace for the port


def epoch(t: int) -> bytes:
    hms = "%02d%02d%02d.00" % (12, (t // 60) % 60, t % 60)
    return (sentence(f"GPGGA,{hms},1220.74074,N,02030.00000,E,4,12,0.7,100.0,M,40.0,M,1.0,0001")
            + sentence(f"GPRMC,{hms},A,1220.74074,N,02030.00000,E,0.0,0.0,010126,,,R"))


def serve(conn: socket.socket) -> None:
    try:
        conn.sendall(VERSION)
        conn.sendall(DEVICES)
        t = 0
        while True:
            conn.sendall(epoch(t))
            t += 1
            time.sleep(0.1)  # a 10 Hz receiver's pace
    except OSError:
        pass


def main(port: int, bind_seconds: float, serve_seconds: float) -> None:
    server = bind(port, bind_seconds)
    if server is None:
        return
    print("bound", server.getsockname()[1], flush=True)
    server.settimeout(0.2)
    end = time.monotonic() + serve_seconds
    while time.monotonic() < end:
        try:
            conn, _ = server.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 0.0,
         float(sys.argv[3]) if len(sys.argv) > 3 else 30.0)
