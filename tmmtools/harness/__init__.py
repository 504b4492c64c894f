"""The hardware-in-the-loop bench (hwtests/README.md): gpsd, tmm-bridge and a receiver as processes,
clients that record what the bridge sends, and the checks. tmmtools/hwtest.py runs the scenarios."""
