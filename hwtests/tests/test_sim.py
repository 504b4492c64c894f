"""tmm-sim's own tests: scenario validation (a malformed-input table and a mutation fuzz), NMEA
well-formedness, determinism, and a cross-check through tmm-bridge's own decoder.

Run: /usr/bin/python3 -m unittest discover -s hwtests/tests (hwtest.py runs them first).
"""

import os
import random
import subprocess
import sys
import tomllib
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

from harness import verify  # noqa: E402
from harness.bench import bridge_binary  # noqa: E402
from sim import nmea  # noqa: E402
from sim.receiver import Receiver, Write  # noqa: E402
from sim.scenario import ScenarioError, load, parse  # noqa: E402

SCENARIOS = os.path.join(HERE, "scenarios")
MINIMAL = {"name": "t", "duration": 2, "rate": 5}


def scenario_files():
    return sorted(os.path.join(SCENARIOS, f) for f in os.listdir(SCENARIOS) if f.endswith(".toml"))


class ScenarioValidation(unittest.TestCase):
    # (what is wrong, the document, a fragment the error must contain)
    CASES = [
        ("no name", {"duration": 1}, "name"),
        ("no duration", {"name": "x"}, "duration"),
        ("rate too high", dict(MINIMAL, rate=51), "rate"),
        ("rate zero", dict(MINIMAL, rate=0), "rate"),
        ("duration a string", dict(MINIMAL, duration="10"), "duration"),
        ("boolean number", dict(MINIMAL, rate=True), "rate"),
        ("unknown top-level key", dict(MINIMAL, speed=3), "unknown key 'speed'"),
        ("bad start time", dict(MINIMAL, **{"start-time": "yesterday"}), "start-time"),
        ("latitude at the pole", dict(MINIMAL, position={"latitude": 90}), "latitude"),
        ("unknown talker", dict(MINIMAL, receiver={"talkers": ["XX"]}), "talkers"),
        ("duplicate talker", dict(MINIMAL, receiver={"talkers": ["GP", "GP"]}), "talkers"),
        ("no talkers", dict(MINIMAL, receiver={"talkers": []}), "talkers"),
        ("unknown vendor", dict(MINIMAL, receiver={"vendor": "acme"}), "vendor"),
        ("decimals out of range", dict(MINIMAL, receiver={"decimals": 9}), "decimals"),
        ("unknown trajectory", dict(MINIMAL, trajectory={"kind": "spiral"}), "kind"),
        ("circle without radius", dict(MINIMAL, trajectory={"kind": "circle", "speed": 1}), "radius"),
        ("line without speed", dict(MINIMAL, trajectory={"kind": "line"}), "speed"),
        ("track without file", dict(MINIMAL, trajectory={"kind": "track"}), "file"),
        ("track file missing", dict(MINIMAL, trajectory={"kind": "track", "file": "/nonexistent.csv"}), "cannot read"),
        ("first phase not at 0", dict(MINIMAL, phase=[{"at": 1}]), "at = 0"),
        ("phases out of order", dict(MINIMAL, phase=[{"at": 0}, {"at": 1}, {"at": 1}]), "increase"),
        ("unknown quality", dict(MINIMAL, phase=[{"at": 0, "quality": "rtk"}]), "quality"),
        ("phase after the end", dict(MINIMAL, phase=[{"at": 0}, {"at": 5}]), "outside"),
        ("negative accuracy", dict(MINIMAL, phase=[{"at": 0, "horizontal": -1}]), "horizontal"),
        ("replay missing", dict(MINIMAL, phase=[{"at": 0, "replay": "nope.log"}]), "no such capture"),
        ("unknown event", dict(MINIMAL, event=[{"at": 1, "kind": "explode"}]), "kind"),
        ("outage without duration", dict(MINIMAL, event=[{"at": 1, "kind": "outage"}]), "needs duration"),
        ("rate event without rate", dict(MINIMAL, event=[{"at": 1, "kind": "rate"}]), "needs rate"),
        ("rate event too fast", dict(MINIMAL, event=[{"at": 1, "kind": "rate", "rate": 100}]), "rate"),
        ("unknown event key", dict(MINIMAL, event=[{"at": 1, "kind": "garbage", "count": 1, "size": 2}]), "unknown key"),
        ("expect not a table", dict(MINIMAL, expect=3), "expect"),
    ]

    def test_every_malformed_scenario_is_refused_with_its_key_named(self):
        for what, document, fragment in self.CASES:
            with self.subTest(what):
                with self.assertRaises(ScenarioError) as caught:
                    parse(document, "s.toml")
                self.assertIn(fragment, str(caught.exception))
                self.assertTrue(str(caught.exception).startswith("s.toml"), str(caught.exception))

    def test_every_shipped_scenario_loads(self):
        for path in scenario_files():
            with self.subTest(os.path.basename(path)):
                load(path)

    def test_mutated_scenarios_load_or_raise_scenario_error_only(self):
        """A mutation fuzz: random byte edits of the shipped files either load or give a
        ScenarioError (never a crash with another exception)."""
        rng = random.Random(2026)
        texts = []
        for path in scenario_files():
            with open(path, "rb") as handle:
                texts.append(handle.read())
        for round_number in range(3000):
            data = bytearray(rng.choice(texts))
            for _ in range(rng.randint(1, 6)):
                position = rng.randrange(len(data))
                choice = rng.random()
                if choice < 0.4:
                    data[position] = rng.randrange(256)
                elif choice < 0.7:
                    del data[position]
                else:
                    data.insert(position, rng.choice(b'=[]{}",.0123456789-e\n#'))
            try:
                document = tomllib.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue  # not TOML: load() reports it as a ScenarioError (tested above)
            try:
                parse(document, "fuzz.toml")
            except ScenarioError:
                pass


class Sentences(unittest.TestCase):
    def test_every_sentence_has_a_valid_checksum_and_fits(self):
        for path in scenario_files():
            scenario = load(path)
            if any(p.replay for p in scenario.phases):
                continue
            corrupted = sum(e.count for e in scenario.events if e.kind == "checksum-errors")
            bad = 0
            for item in Receiver(scenario).timeline():
                if not isinstance(item, Write) or item.truth is None:
                    continue
                for line in item.data.split(b"\r\n")[:-1]:
                    body, _, given = line[1:].partition(b"*")
                    self.assertLessEqual(len(line), 160, line)
                    if nmea.checksum(body.decode()) != given.decode():
                        bad += 1
            self.assertEqual(bad, corrupted, os.path.basename(path))

    def test_coordinates_round_and_carry(self):
        self.assertEqual(nmea.latitude(47.99999999999, 5), ("4800.00000", "N"))
        self.assertEqual(nmea.longitude(-105.11, 7), ("10506.6000000", "W"))
        self.assertEqual(nmea.hhmmss(86399.999), "000000.00")
        self.assertEqual(nmea.hhmmss(3723.5), "010203.50")


class Determinism(unittest.TestCase):
    def test_the_same_seed_gives_the_same_bytes_and_another_seed_does_not(self):
        scenario = load(os.path.join(SCENARIOS, "faults-and-rates.toml"))

        def play(seed):
            return b"".join(i.data for i in Receiver(scenario, seed).timeline() if isinstance(i, Write))
        self.assertEqual(play(3), play(3))
        self.assertNotEqual(play(3), play(4))


class DecodedByTheBridge(unittest.TestCase):
    """Without gpsd: `tmm-bridge decode` reads each scenario's NMEA back to its truth."""

    def test_decode_matches_the_timeline(self):
        try:
            binary = bridge_binary()
        except Exception as error:
            self.skipTest(str(error))
        for name in ("rtk-cold-start.toml", "unplug-replug.toml", "steady.toml"):
            scenario = load(os.path.join(SCENARIOS, name))
            items = [i for i in Receiver(scenario).timeline() if isinstance(i, Write)]
            data = b"".join(i.data for i in items)
            completed = subprocess.run([binary, "decode", "-"], input=data, capture_output=True, timeout=60)
            self.assertEqual(completed.returncode, 0, completed.stderr)
            import json
            messages = [(0.0, json.loads(line)) for line in completed.stdout.splitlines()]
            truths = [i.truth for i in items if i.truth is not None]
            matched, repeats = verify.match(truths, messages)
            self.assertEqual(len(matched), len(truths), f"{name}: decoded {len(matched)} of {len(truths)} epochs")
            self.assertFalse(repeats)
            for truth, _, message in matched.values():
                self.assertEqual(verify.position_difference(truth, message), "", f"{name} {truth['utc']}")


if __name__ == "__main__":
    unittest.main()
