"""tmm-sim: play a scenario (hwtests/scenarios/*.toml) as a virtual receiver.

  python3 -m tmmtools.sim SCENARIO                  a pty receiver in real time; prints its device path
  python3 -m tmmtools.sim SCENARIO --print          the bytes only, to standard output, at once (for diffing)
  python3 -m tmmtools.sim SCENARIO --protocol ubx   a u-blox writing UBX binary instead of the scenario's NMEA
  python3 -m tmmtools.sim SCENARIO --check          validate the scenario and summarise it

Deterministic for a seed (--seed, else the scenario's): the same scenario and seed give the same
bytes. hwtests/README.md documents the scenario format and the options.
"""

import argparse
import dataclasses
import json
import os
import signal
import sys

from tmmtools.sim.driver import Driver
from tmmtools.sim.receiver import Receiver, Write
from tmmtools.sim.scenario import PROTOCOLS, ScenarioError, load, with_protocol


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tmm-sim", description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", help="a scenario file (TOML)")
    parser.add_argument("--seed", type=int, help="random seed (default: the scenario's seed)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--print", action="store_true", help="write the bytes (NMEA or UBX) to standard output at once, no pty")
    mode.add_argument("--check", action="store_true", help="validate the scenario and print a summary")
    parser.add_argument("--out", help="also write every byte the receiver writes to this file")
    parser.add_argument("--timeline", help="write the truth of every epoch and every event (JSON lines) here")
    parser.add_argument("--received", help="write every byte written to the receiver (gpsd's probes, RTCM) here")
    parser.add_argument("--speed", type=float, default=1.0, help="play faster (2 = twice real time)")
    parser.add_argument("--link", help="keep a symlink at this path to the current pty")
    parser.add_argument("--gpsd-control", help="gpsd's control socket: add and remove the pty as it is plugged")
    parser.add_argument("--gpsd-pid", type=int, help="the gpsd a gpsd-kill event kills (SIGKILL)")
    parser.add_argument("--duration", type=float, help="play this many seconds instead of the scenario's duration")
    parser.add_argument("--protocol", choices=PROTOCOLS,
                        help="output protocol (default: the scenario's receiver.protocol, else nmea); ubx makes it a u-blox")
    parser.add_argument("--hold", action="store_true", help="keep the pty open after the scenario ends, until killed")
    return parser


def summarize(scenario) -> None:
    """--check: one line for the scenario, one per phase and per event."""
    print(f"{scenario.name}: {scenario.duration:g} s at {scenario.rate:g} Hz, "
          f"{scenario.receiver.vendor} {scenario.receiver.model} ({'+'.join(scenario.receiver.talkers)}, "
          f"{scenario.receiver.protocol.upper()}), "
          f"{scenario.trajectory.kind} trajectory, {len(scenario.phases)} phases, {len(scenario.events)} events")
    for phase in scenario.phases:
        if phase.replay:
            what = f"replay {os.path.basename(phase.replay)}"
        elif phase.limits:
            limits = phase.limits
            what = (f"corrections: float after {limits.float_after:g} s of RTCM, fixed {limits.fixed_after:g} s later; "
                    f"float at an age over {limits.age_limit:g} s, autonomous {limits.autonomous_after:g} s later; "
                    f"{phase.satellites} satellites")
        else:
            what = (f"{phase.quality} σh {phase.accuracy.horizontal:g} m σv {phase.accuracy.vertical:g} m, "
                    f"{phase.satellites} satellites")
        print(f"  {phase.at:8.2f} s  phase: {what}")
    for event in scenario.events:
        print(f"  {event.at:8.2f} s  event: {event.kind}")
    if scenario.corrections:
        c = scenario.corrections
        print(f"  corrections: {c.caster}, mount point {c.mount}, user {c.user}, station {c.station_id}"
              + (", gpsd read-only" if c.gpsd_readonly else ""))


def print_bytes(scenario, seed, out, timeline) -> None:
    """--print: every byte to standard output at once (and to `out`), the truths to `timeline`."""
    sink = sys.stdout.buffer
    for item in Receiver(scenario, seed).timeline():
        if isinstance(item, Write):
            sink.write(item.data)
            if out:
                out.write(item.data)
            if timeline and item.truth is not None:
                timeline.write(json.dumps({"truth": item.truth}, sort_keys=True) + "\n")
        elif timeline:
            timeline.write(json.dumps({"t": item.t, "note" if hasattr(item, "detail") else "action": item.kind}) + "\n")


def play(scenario, args, out, timeline, received=None) -> None:
    """A pty receiver in real time (or --speed), until the scenario's end or SIGTERM/SIGINT;
    with --hold the pty stays open until then."""
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    driver = Driver(scenario, seed=args.seed, speed=args.speed, out=out, timeline=timeline,
                    events=sys.stdout, gpsd_control=args.gpsd_control, gpsd_pid=args.gpsd_pid,
                    link=args.link, received=received)
    try:
        counts = driver.run(stop=lambda: bool(stopping))
        print(json.dumps({"event": "done", **counts}), flush=True)
        if args.hold:
            while not stopping:
                signal.pause()
    finally:
        driver.close()


def main() -> int:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `tmm-sim ... --print | head` ends quietly
    parser = argument_parser()
    args = parser.parse_args()
    try:
        scenario = load(args.scenario)
        if args.protocol:
            scenario = with_protocol(scenario, args.protocol)
    except ScenarioError as error:
        print(f"tmm-sim: {error}", file=sys.stderr)
        return 78  # EX_CONFIG, as tmm-bridge uses for configuration errors
    if args.speed <= 0:
        parser.error("--speed must be positive")
    if args.duration is not None:
        if not 0 < args.duration <= 7 * 86400:
            parser.error("--duration must be between 0 and 604800 seconds")
        scenario = dataclasses.replace(scenario, duration=args.duration)

    if args.check:
        summarize(scenario)
        return 0

    timeline = open(args.timeline, "w", encoding="utf-8") if args.timeline else None
    out = open(args.out, "wb") if args.out else None
    received = open(args.received, "wb") if args.received else None
    try:
        if args.print:
            print_bytes(scenario, args.seed, out, timeline)
        else:
            play(scenario, args, out, timeline, received)
        return 0
    finally:
        for handle in (timeline, out, received):
            if handle:
                handle.close()


if __name__ == "__main__":
    sys.exit(main())
