"""Small peers the Swift tests run as the other side of one test each: a WebSocket client that
reports handshake statuses, a TLS client that watches for close_notify, a fake gpsd, and so on.
Each module's docstring names its test; each is `python3 -m tmmtools.peers.<name> ARGS`, started
through Tests/Support/TestSupport/PythonTools.swift."""
