"""tmm-sim: scripted virtual GNSS receivers for hardware-in-the-loop tests (hwtests/README.md)."""
