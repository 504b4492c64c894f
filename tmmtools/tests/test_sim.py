"""tmm-sim's own tests: scenario validation (a malformed-input table and a mutation fuzz), NMEA
well-formedness, determinism, a cross-check through tmm-bridge's own decoder, and the UBX output:
frames checked byte for byte by pyubx2 (a test-only dependency: scripts/install-deps.sh --ubx-tests),
by a decoder written here from u-blox's description, and through a private gpsd.

Run: /usr/bin/python3 -m tmmtools.tests from the repository root (hwtest.py runs them first).
"""

import datetime as _dt
import os
import random
import struct
import subprocess
import tempfile
import tomllib
import unittest

from tmmtools import checkout
from tmmtools.harness import verify
from tmmtools.harness.bench import bridge_binary
from tmmtools.peers import rtcm
from tmmtools.sim import nmea, ubx
from tmmtools.sim.corrections import Limits, Model
from tmmtools.sim.receiver import Note, Receiver, Write
from tmmtools.sim.scenario import ScenarioError, load, parse

SCENARIOS = checkout.path("hwtests", "scenarios")
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
        ("unknown protocol", dict(MINIMAL, receiver={"protocol": "sbf"}), "protocol"),
        ("ubx from a Trimble", dict(MINIMAL, receiver={"vendor": "trimble", "protocol": "ubx"}), "needs vendor"),
        ("ubx replaying NMEA", dict(MINIMAL, receiver={"vendor": "ublox", "protocol": "ubx"},
                                   phase=[{"at": 0, "replay": "Tests/Fixtures/nmea/nmea-rtk.log"}]), "replay"),
        ("ubx-messages unknown", dict(MINIMAL, receiver={"ubx-messages": ["PVT", "GGA"]}), "ubx-messages"),
        ("ubx-messages without PVT", dict(MINIMAL, receiver={"ubx-messages": ["HPPOSLLH"]}), "with PVT"),
        ("ubx-messages repeated", dict(MINIMAL, receiver={"ubx-messages": ["PVT", "PVT"]}), "distinct"),
        ("ubx-messages not a list", dict(MINIMAL, receiver={"ubx-messages": "PVT"}), "ubx-messages"),
        ("limits on a scripted phase", dict(MINIMAL, phase=[{"at": 0, "quality": "fixed", "age-limit": 3}]),
         "for quality = \"corrections\" only"),
        ("accuracy on a corrections phase", dict(MINIMAL, phase=[{"at": 0, "quality": "corrections", "horizontal": 1}]),
         "horizontal cannot be given"),
        ("negative float-after", dict(MINIMAL, phase=[{"at": 0, "quality": "corrections", "float-after": -1}]),
         "float-after"),
        ("zero age-limit", dict(MINIMAL, phase=[{"at": 0, "quality": "corrections", "age-limit": 0}]), "age-limit"),
        ("corrections not a table", dict(MINIMAL, corrections=3), "[corrections]"),
        ("unknown caster", dict(MINIMAL, corrections={"caster": "snip"}), "caster"),
        ("unknown corrections key", dict(MINIMAL, corrections={"host": "x"}), "unknown key 'host'"),
        ("station id over 12 bits", dict(MINIMAL, corrections={"station-id": 4096}), "station-id"),
        ("user with a colon", dict(MINIMAL, corrections={"user": "a:b"}), "corrections.user"),
        ("empty mount point", dict(MINIMAL, corrections={"mount": ""}), "corrections.mount"),
        ("gpsd-readonly not a boolean", dict(MINIMAL, corrections={"gpsd-readonly": "no"}), "gpsd-readonly"),
        ("caster event without a caster", dict(MINIMAL, event=[{"at": 1, "kind": "caster-kill"}]),
         "needs a [corrections]"),
        ("mqtt not a table", dict(MINIMAL, mqtt="mqtt://x"), "[mqtt]"),
        ("unknown mqtt key", dict(MINIMAL, mqtt={"host": "x"}), "unknown key 'host'"),
        ("mqtt rate too high", dict(MINIMAL, mqtt={"rate": 51}), "mqtt.rate"),
        ("mqtt topic with a wildcard", dict(MINIMAL, mqtt={"topic": "fleet/#"}), "mqtt.topic"),
        ("mqtt client id empty", dict(MINIMAL, mqtt={"client-id": ""}), "mqtt.client-id"),
        ("broker event without a broker", dict(MINIMAL, event=[{"at": 1, "kind": "broker-stop"}]),
         "needs an [mqtt]"),
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


try:
    import pyubx2
    from pyubx2 import UBXReader
    from pyubx2.exceptions import UBXParseError
except ImportError:  # scripts/install-deps.sh --ubx-tests installs it
    pyubx2 = None

UTC = _dt.datetime(2026, 12, 2, 10, 0, 19, 400000, tzinfo=_dt.timezone.utc)
LAT, LON, HEIGHT, MSL = 39.9123456789, -105.1234567891, 1650.12345, 1666.62345


def decode(frame: bytes) -> tuple[int, int, bytes]:
    """An independent reading of one frame, from u-blox's description: sync, class, id, length,
    payload, 8-bit Fletcher checksum over class..payload. ValueError when anything is off."""
    if frame[:2] != b"\xb5\x62" or len(frame) < 8:
        raise ValueError("no sync")
    length = frame[4] | frame[5] << 8
    if len(frame) != 8 + length:
        raise ValueError("length")
    a = b = 0
    for byte in frame[2:6 + length]:
        a = (a + byte) % 256
        b = (b + a) % 256
    if frame[-2:] != bytes((a, b)):
        raise ValueError("checksum")
    return frame[2], frame[3], frame[6:6 + length]


def ubx_scenario(**receiver):
    document = dict(MINIMAL, duration=6, rate=10, position={"latitude": LAT, "longitude": LON, "height": HEIGHT, "undulation": -16.5},
                    receiver=dict({"vendor": "ublox", "protocol": "ubx", "talkers": ["GP", "GL", "GA", "GB"]}, **receiver),
                    phase=[{"at": 0, "quality": "none"}, {"at": 1.5, "quality": "autonomous", "satellites": 14},
                           {"at": 2.5, "quality": "dgps", "satellites": 16}, {"at": 3.5, "quality": "float", "satellites": 18},
                           {"at": 4.5, "quality": "fixed", "satellites": 20}])
    return document


class Ubx(unittest.TestCase):
    def pvt(self, quality="float", **extra):
        arguments = dict(itow_ms=ubx.itow(UTC), utc=UTC, quality=quality, num_sv=22, lat=LAT, lon=LON, height=HEIGHT,
                         msl=MSL, h_acc=0.2121, v_acc=0.3, speed=1.5, course=45.0, pdop=1.3, correction_age=1.0)
        arguments.update(extra)
        return ubx.nav_pvt(**arguments)

    def test_framing_and_checksum_by_the_description(self):
        frame = ubx.nav_eoe(123456)
        self.assertEqual(frame, bytes.fromhex("b5620161040040e20100") + bytes(ubx.checksum(frame[2:-2])))
        self.assertEqual(decode(frame), (0x01, 0x61, struct.pack("<I", 123456)))
        # CK_A is the sum of the bytes, CK_B the sum of the running sums (mod 256).
        self.assertEqual(ubx.checksum(bytes([1, 2, 3])), bytes([6, 10]))
        with self.assertRaisesRegex(ValueError, "checksum"):
            decode(ubx.nav_eoe(123456, corrupt=True))

    def test_itow_is_gps_time_of_week(self):
        # 2026-12-02 is a Wednesday: 3 days + 10 h + 19.4 s + 18 leap seconds into the GPS week.
        self.assertEqual(ubx.itow(UTC), ((3 * 24 + 10) * 3600 + 19 + 18) * 1000 + 400)

    def test_hp_split_round_trips_to_1e_9_degrees_and_0_1_mm(self):
        rng = random.Random(7)
        for _ in range(20000):
            degrees = rng.uniform(-180, 180)
            main, hp = ubx.degrees_hp(degrees)
            self.assertTrue(-99 <= hp <= 99 and -50 <= hp <= 49, hp)
            self.assertEqual(main * 100 + hp, round(degrees * 1e9))
            self.assertLessEqual(abs(ubx.hp_degrees(main, hp) - degrees), 0.5e-9 + 1e-12)
            metres = rng.uniform(-1000, 9000)
            mm, hp = ubx.height_hp(metres)
            self.assertEqual(mm * 10 + hp, round(metres * 1e4))
            self.assertTrue(-9 <= hp <= 9 and -5 <= hp <= 4, hp)
            self.assertLessEqual(abs(ubx.hp_metres(mm, hp) - metres), 0.5e-4 + 1e-9)
        self.assertEqual(ubx.degrees_hp(-105.1234567891), (-1051234568, 11))  # -105.1234568 + 11e-9
        self.assertEqual(ubx.height_hp(1650.12345), (1650123, 4))
        self.assertEqual(ubx.height_hp(-0.00006), (0, -1))

    def test_nav_pvt_fields_by_the_description(self):
        cls, msg_id, payload = decode(self.pvt("fixed"))
        self.assertEqual((cls, msg_id, len(payload)), (0x01, 0x07, 92))
        (itow, year, month, day, hour, minute, second, valid, _tacc, nano, fix_type, flags, _flags2, num_sv, lon, lat,
         height, msl) = struct.unpack_from("<IHBBBBBBIiBBBBiiii", payload)
        self.assertEqual((itow, year, month, day, hour, minute, second, nano), (ubx.itow(UTC), 2026, 12, 2, 10, 0, 19, 400000000))
        self.assertEqual(valid & 0x07, 0x07)
        self.assertEqual((fix_type, flags & 0x01, flags >> 1 & 1, flags >> 6), (3, 1, 1, 2))
        self.assertEqual((num_sv, lat, lon, height, msl), (22, 399123457, -1051234568, 1650123, 1666623))
        self.assertEqual(struct.unpack_from("<II", payload, 40), (212, 300))

    @unittest.skipUnless(pyubx2, "pyubx2 is not installed (scripts/install-deps.sh --ubx-tests)")
    def test_pyubx2_reads_every_message_and_writes_it_back_byte_for_byte(self):
        frames = {
            "NAV-PVT": self.pvt(),
            "NAV-HPPOSLLH": ubx.nav_hpposllh(ubx.itow(UTC), LAT, LON, HEIGHT, MSL, 0.2121, 0.3),
            "NAV-DOP": ubx.nav_dop(ubx.itow(UTC), 1.43, 1.3, 0.65, 1.0, 0.8, 0.56, 0.56),
            "NAV-SAT": ubx.nav_sat(ubx.itow(UTC), [(0, 5, 34, 6, 191, ubx.sat_flags(True, True, True)),
                                                   (6, 12, 0, 40, 300, ubx.sat_flags(False, False, False))]),
            "NAV-EOE": ubx.nav_eoe(ubx.itow(UTC)),
        }
        for identity, frame in frames.items():
            with self.subTest(identity):
                message = UBXReader.parse(frame, validate=pyubx2.VALCKSUM)
                self.assertEqual(message.identity, identity)
                self.assertEqual(message.serialize(), frame)
        pvt = UBXReader.parse(frames["NAV-PVT"])
        self.assertEqual((pvt.fixType, pvt.gnssFixOk, pvt.diffSoln, pvt.carrSoln, pvt.numSV), (3, 1, 1, 1, 22))
        self.assertEqual((pvt.year, pvt.month, pvt.day, pvt.hour, pvt.min, pvt.second, pvt.nano), (2026, 12, 2, 10, 0, 19, 400000000))
        self.assertEqual((pvt.validDate, pvt.validTime, pvt.fullyResolved), (1, 1, 1))
        self.assertAlmostEqual(pvt.lat, 39.9123457, places=9)
        self.assertAlmostEqual(pvt.lon, -105.1234568, places=9)
        self.assertEqual((pvt.height, pvt.hMSL, pvt.hAcc, pvt.vAcc, pvt.gSpeed), (1650123, 1666623, 212, 300, 1500))
        self.assertEqual((pvt.velN, pvt.velE, pvt.velD), (1061, 1061, 0))
        self.assertAlmostEqual(pvt.headMot, 45.0)
        self.assertAlmostEqual(pvt.pDOP, 1.3)
        self.assertEqual((pvt.invalidLlh, pvt.lastCorrectionAge), (0, 2))
        for quality, (fix_type, ok, diff, carr) in {"none": (0, 0, 0, 0), "autonomous": (3, 1, 0, 0), "dgps": (3, 1, 1, 0),
                                                    "float": (3, 1, 1, 1), "fixed": (3, 1, 1, 2)}.items():
            message = UBXReader.parse(self.pvt(quality))
            self.assertEqual((message.fixType, message.gnssFixOk, message.diffSoln, message.carrSoln), (fix_type, ok, diff, carr), quality)
        self.assertEqual(UBXReader.parse(self.pvt("none")).invalidLlh, 1)
        hp = UBXReader.parse(frames["NAV-HPPOSLLH"])  # pyubx2 adds the Hp parts to the main ones
        self.assertAlmostEqual(hp.lat, 39.912345679, places=12)
        self.assertAlmostEqual(hp.lon, -105.123456789, places=12)
        self.assertAlmostEqual(hp.height, 1650123.4, places=6)  # mm
        self.assertAlmostEqual(hp.hMSL, 1666623.4, places=6)
        self.assertAlmostEqual(hp.hAcc, 212.1, places=6)  # mm (pyubx2 applies the 0.1 mm scale)
        self.assertEqual(hp.invalidLlh, 0)
        dop = UBXReader.parse(frames["NAV-DOP"])
        self.assertEqual((dop.gDOP, dop.pDOP, dop.tDOP, dop.vDOP, dop.hDOP), (1.43, 1.3, 0.65, 1.0, 0.8))
        sat = UBXReader.parse(frames["NAV-SAT"])
        self.assertEqual((sat.version, sat.numSvs), (1, 2))
        self.assertEqual((sat.gnssId_01, sat.svId_01, sat.cno_01, sat.elev_01, sat.azim_01, sat.svUsed_01, sat.qualityInd_01,
                          sat.health_01, sat.diffCorr_01), (0, 5, 34, 6, 191, 1, 7, 1, 1))
        self.assertEqual((sat.gnssId_02, sat.svId_02, sat.svUsed_02, sat.qualityInd_02), (6, 12, 0, 1))

    @unittest.skipUnless(pyubx2, "pyubx2 is not installed (scripts/install-deps.sh --ubx-tests)")
    def test_pyubx2_refuses_malformed_frames(self):
        frame = ubx.nav_eoe(1000)
        with self.assertRaises(UBXParseError):
            UBXReader.parse(ubx.nav_eoe(1000, corrupt=True), validate=pyubx2.VALCKSUM)
        flipped = bytearray(self.pvt())
        flipped[30] ^= 0x10  # a payload bit: the checksum no longer matches
        with self.assertRaises(UBXParseError):
            UBXReader.parse(bytes(flipped), validate=pyubx2.VALCKSUM)
        with self.assertRaises(UBXParseError):
            UBXReader.parse(frame[:-1], validate=pyubx2.VALCKSUM)  # truncated
        with self.assertRaises(UBXParseError):
            UBXReader.parse(b"\xb5\x63" + frame[2:], validate=pyubx2.VALCKSUM)  # bad sync

    def test_scenario_stream_frames_and_truth(self):
        """Every epoch of the UBX scenarios: whole frames with good checksums (bar the ones a
        checksum-errors event corrupts), in the configured order, and HPPOSLLH reads back to
        the timeline's truth to 1e-9 degrees and 0.1 mm."""
        document = ubx_scenario()
        document["event"] = [{"at": 2, "kind": "checksum-errors", "count": 3}, {"at": 3, "kind": "garbage", "count": 40}]
        for scenario in (load(os.path.join(SCENARIOS, "rtk-cold-start-ubx.toml")), parse(document, "u.toml")):
            with self.subTest(scenario.name):
                bad = 0
                corrupted = sum(e.count for e in scenario.events if e.kind == "checksum-errors")
                for item in Receiver(scenario).timeline():
                    if not isinstance(item, Write) or item.truth is None:
                        continue
                    frames = ubx.split(item.data)
                    self.assertEqual(b"".join(frames), item.data)
                    names = []
                    for frame in frames:
                        try:
                            cls, msg_id, payload = decode(frame)
                        except ValueError:
                            bad += 1
                            continue
                        names.append({0x04: "DOP", 0x07: "PVT", 0x14: "HPPOSLLH", 0x35: "SAT", 0x61: "EOE"}[msg_id])
                        if msg_id == 0x14 and item.truth["quality"] != "none":
                            lon, lat, height, msl, lon_hp, lat_hp, h_hp, msl_hp = struct.unpack_from("<iiiibbbb", payload, 8)
                            self.assertEqual(ubx.hp_degrees(lat, lat_hp), item.truth["latitude"])
                            self.assertEqual(ubx.hp_degrees(lon, lon_hp), item.truth["longitude"])
                            self.assertEqual(ubx.hp_metres(height, h_hp), item.truth["height"])
                            self.assertEqual(ubx.hp_metres(msl, msl_hp), item.truth["msl_height"])
                            self.assertAlmostEqual(item.truth["height"] - item.truth["msl_height"], scenario.undulation, places=9)
                    if not item.truth["corrupted"]:
                        expected = [m for m in scenario.receiver.ubx_messages if m != "SAT" or "SAT" in names]
                        self.assertEqual(names, expected)
                self.assertEqual(bad, corrupted)

    @unittest.skipUnless(pyubx2, "pyubx2 is not installed (scripts/install-deps.sh --ubx-tests)")
    def test_pyubx2_reads_the_whole_scenario_stream(self):
        scenario = parse(ubx_scenario(), "u.toml")
        data = b"".join(i.data for i in Receiver(scenario).timeline() if isinstance(i, Write))
        import io
        reader = UBXReader(io.BytesIO(data), protfilter=pyubx2.UBX_PROTOCOL, quitonerror=pyubx2.ERR_RAISE,
                           validate=pyubx2.VALCKSUM)
        identities = [message.identity for _, message in reader]
        self.assertEqual(identities.count("NAV-PVT"), 60)
        self.assertEqual(identities.count("NAV-EOE"), 60)
        self.assertEqual(identities.count("NAV-SAT"), 6)
        self.assertEqual(len(identities), 60 * 4 + 6)

    def test_the_ubx_twin_reports_the_nmea_scenarios_positions(self):
        """Same scenario and seed: the UBX receiver's positions are the NMEA receiver's (to the
        NMEA receiver's printed precision), so the two cold starts are comparable."""
        def truths(name):
            return [i.truth for i in Receiver(load(os.path.join(SCENARIOS, name))).timeline() if isinstance(i, Write)]
        for a, b in zip(truths("rtk-cold-start.toml"), truths("rtk-cold-start-ubx.toml"), strict=True):
            self.assertEqual((a["utc"], a["quality"]), (b["utc"], b["quality"]))
            if "latitude" in a:
                self.assertAlmostEqual(a["latitude"], b["latitude"], delta=1e-9)
                self.assertAlmostEqual(a["longitude"], b["longitude"], delta=1e-9)
                self.assertAlmostEqual(a["height"], b["height"], delta=0.0006)

    def test_the_protocol_option_leaves_nmea_alone_and_is_deterministic(self):
        from tmmtools.sim.scenario import with_protocol
        scenario = load(os.path.join(SCENARIOS, "rtk-cold-start.toml"))
        self.assertEqual(with_protocol(scenario, "nmea").receiver.protocol, "nmea")
        nmea_bytes = b"".join(i.data for i in Receiver(scenario).timeline() if isinstance(i, Write))
        self.assertTrue(nmea_bytes.startswith(b"$GNGGA,100000.00,"))
        as_ubx = with_protocol(scenario, "ubx")
        self.assertEqual((as_ubx.receiver.vendor, as_ubx.receiver.protocol), ("ublox", "ubx"))
        once = b"".join(i.data for i in Receiver(as_ubx).timeline() if isinstance(i, Write))
        self.assertEqual(once, b"".join(i.data for i in Receiver(as_ubx).timeline() if isinstance(i, Write)))
        self.assertTrue(once.startswith(b"\xb5\x62\x01\x04"))
        with self.assertRaises(ScenarioError):
            with_protocol(load(os.path.join(SCENARIOS, "replay-rtk.toml")), "ubx")


@unittest.skipUnless(os.access("/usr/sbin/gpsd", os.X_OK) and os.geteuid() == 0, "needs gpsd (Debian's) and root")
class UbxThroughGpsd(unittest.TestCase):
    """A private gpsd reads the UBX receiver (harness/gpsdcheck.py): driver u-blox, a TPV per
    epoch whose last one is within 1 mm of the truth, status per quality (gpsd 3.22: RTK as
    DGPS), and SKY with the satellites in use when NAV-SAT is written."""

    def play(self, **receiver):
        from tmmtools.harness import gpsdcheck
        with tempfile.TemporaryDirectory() as out:
            path = os.path.join(out, "u.toml")
            import json
            document = ubx_scenario(**receiver)
            with open(path, "w") as handle:  # TOML's basic values are JSON's
                for key in ("name", "duration", "rate"):
                    handle.write(f"{key} = {json.dumps(document[key])}\n")
                for table in ("position", "receiver"):
                    handle.write(f"[{table}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in document[table].items()))
                for phase in document["phase"]:
                    handle.write("[[phase]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in phase.items()))
            scenario = load(path)
            timeline, reports = gpsdcheck.play(path, out)
            messages = scenario.receiver.ubx_messages
            return verify.gpsd_checks(timeline, reports, {"sky": "SAT" in messages, "hpposllh": "HPPOSLLH" in messages})

    def test_gpsd_reads_the_scenario_message_set_to_the_millimetre(self):
        checks, figures = self.play(**{"ubx-messages": ["PVT", "HPPOSLLH"]})
        for check in checks:
            self.assertTrue(check.passed, f"{check.name}: {check.detail}")
        self.assertLessEqual(figures["largest_difference_mm"], 1.0)

    def test_gpsd_reports_the_satellites_of_nav_sat(self):
        checks, _ = self.play()  # a ZED-F9P's full set: DOP, PVT, HPPOSLLH, SAT, EOE
        by_name = {c.name.split(": ", 1)[1]: c for c in checks}
        for name in ("the receiver is identified as driver 'u-blox'", "a TPV for every epoch",
                     "SKY with the receiver's satellites in use, once a second"):
            self.assertTrue(by_name[name].passed, f"{name}: {by_name[name].detail}")
        mode = next(c for n, c in by_name.items() if n.startswith("mode and status"))
        self.assertTrue(mode.passed, mode.detail)


def corrections_scenario(protocol="nmea", station_id=2345):
    """60 s at 1 Hz of one corrections phase with short limits: float 2 s after the first frame,
    fixed 3 s later; float at an age over 4 s, autonomous 5 s later."""
    receiver = {"vendor": "trimble", "talkers": ["GP", "GL"]} if protocol == "nmea" else \
        {"vendor": "ublox", "protocol": "ubx", "ubx-messages": ["PVT", "HPPOSLLH"]}
    return parse({"name": "c", "duration": 60, "rate": 1, "receiver": receiver,
                  "corrections": {"station-id": station_id},
                  "phase": [{"at": 0, "quality": "corrections", "satellites": 20, "float-after": 2, "fixed-after": 3,
                             "age-limit": 4, "autonomous-after": 5}]}, "c.toml")


def damaged(frame: bytes) -> bytes:
    """`frame` with one payload bit flipped: its CRC no longer matches."""
    broken = bytearray(frame)
    broken[5] ^= 0x04
    return bytes(broken)


class CorrectionsModel(unittest.TestCase):
    """The RTK fix follows the RTCM a test feeds at fake times (sim/corrections.py)."""
    GPS_SECOND = 1_400_000_000  # a multiple of 5: the station's 1006 comes with the first epoch

    def test_the_fix_goes_float_fixed_and_falls_back_as_corrections_come_and_go(self):
        model = Model(Limits(float_after=2, fixed_after=3, age_limit=4, autonomous_after=5))
        self.assertEqual(model.quality(0), "autonomous")
        for t in range(1, 15):  # a frame a second from t = 1 to 14
            model.frame(t)
        qualities = {t / 2: model.quality(t / 2) for t in range(28, 60)}
        self.assertEqual(qualities[14.0], "fixed")
        self.assertEqual(model.age(16.5), 2.5)
        self.assertEqual(qualities[18.0], "fixed")  # age 4: still within the limit
        self.assertEqual(qualities[18.5], "float")  # over it
        self.assertEqual(qualities[23.0], "float")
        self.assertEqual(qualities[23.5], "autonomous")  # 4 + 5 s without corrections
        for t in (30, 31):
            model.frame(t)
        self.assertEqual(model.quality(31.9), "autonomous")
        model.frame(32)
        self.assertEqual(model.quality(32), "float")  # a new stream: float after 2 s again

    def test_a_short_gap_keeps_the_fix_and_a_float_rover_refixes_sooner(self):
        model = Model(Limits(float_after=2, fixed_after=3, age_limit=4, autonomous_after=20))
        seen = []
        for t in (0, 1, 2, 3, 4, 5, 8, 9):  # a 3 s gap, under the age limit
            model.frame(t)
            seen.append(model.quality(t))
        self.assertEqual(seen, ["autonomous", "autonomous", "float", "float", "float", "fixed", "fixed", "fixed"])
        self.assertEqual(model.quality(14), "float")  # lost: float, still float 10 s later
        model.frame(20)
        self.assertEqual([model.quality(t) for t in (20, 22.9)], ["float", "float"])
        model.frame(23)
        self.assertEqual(model.quality(23), "fixed")  # float already: fixed after fixed-after only

    def play(self, scenario, feed):
        """The timeline with `feed(t)` called at each epoch's time: the bytes it returns are
        written to the receiver then. Returns the Writes and the notes."""
        receiver = Receiver(scenario)
        items = list(receiver.timeline(pace=lambda t: receiver.corrections.feed(t, feed(t))))
        return [i for i in items if isinstance(i, Write)], [i for i in items if isinstance(i, Note)], receiver

    def station_frames(self, t, station=rtcm.Station(2345)):
        return b"".join(station.epoch(self.GPS_SECOND + int(t)))

    def test_the_nmea_receiver_reports_rtk_age_and_station_from_the_rtcm_it_reads(self):
        def feed(t):
            if 1 <= t <= 20:  # corrections for 20 s, one frame of each epoch damaged, gpsd's probes
                frames = rtcm.Station(2345).epoch(self.GPS_SECOND + int(t))
                return b"$PUBX,00*33\r\n" + damaged(frames[-1]) + b"".join(frames[:-1])
            if 30 <= t <= 40:  # then only damaged frames: no corrections
                return b"".join(damaged(f) for f in rtcm.Station(2345).epoch(self.GPS_SECOND + int(t)))
            return b""
        writes, notes, receiver = self.play(corrections_scenario(), feed)
        truths = {w.truth["t"]: w.truth for w in writes}
        self.assertEqual(collapse_qualities(truths), ["autonomous", "float", "fixed", "float", "autonomous"])
        self.assertEqual([t for t in sorted(truths) if truths[t]["quality"] != truths.get(t - 1, {}).get("quality")],
                         [0, 3, 6, 25, 30])
        gga = {w.truth["t"]: w.data.split(b"\r\n")[0].decode() for w in writes}
        fields = gga[10].split("*")[0].split(",")
        self.assertEqual((fields[6], fields[13], fields[14]), ("4", "0.0", "2345"))  # fixed, age, station
        fields = gga[23].split("*")[0].split(",")
        self.assertEqual((fields[6], fields[13], fields[14]), ("4", "3.0", "2345"))
        fields = gga[27].split("*")[0].split(",")
        self.assertEqual((fields[6], fields[13], fields[14]), ("5", "7.0", "2345"))  # float after the limit
        self.assertEqual(gga[35].split(",")[6], "1")  # autonomous: no age, no station
        self.assertEqual(gga[35].split("*")[0].split(",")[13:15], ["", ""])
        self.assertEqual((truths[23]["diff_age"], truths[23]["station"]), (3.0, 2345))
        self.assertNotIn("diff_age", truths[35])
        counts = receiver.corrections.counts()
        self.assertEqual((counts["frames"], counts["damaged"], counts["station"]),
                         (20 * 2 + 4 * 2, 20 + 11 * 3 + 3 * 2, 2345))
        self.assertEqual(counts["messages"], {"1006": 4, "1077": 20, "1087": 20, "1230": 4})  # 1097 damaged
        damaged_bytes = (sum(len(damaged_epoch(t)[-1]) for t in range(1, 21))
                         + sum(len(frame) for t in range(30, 41) for frame in damaged_epoch(t)))
        self.assertEqual(counts["other_bytes"], 20 * len(b"$PUBX,00*33\r\n") + damaged_bytes)
        kinds = [(n.t, n.detail["quality"]) for n in notes if n.kind == "corrections"]
        self.assertEqual(kinds, [(0, "autonomous"), (3, "float"), (6, "fixed"), (25, "float"), (30, "autonomous")])
        rtcm_notes = [n for n in notes if n.kind == "rtcm"]
        self.assertEqual(rtcm_notes[-1].detail, counts)

    def test_damaged_frames_alone_never_give_a_fix_and_no_station_is_zero(self):
        writes, _, receiver = self.play(corrections_scenario(), lambda t: b"".join(damaged_epoch(t)))
        self.assertEqual({w.truth["quality"] for w in writes}, {"autonomous"})
        self.assertEqual((receiver.corrections.counts()["frames"], receiver.corrections.station), (0, 0))
        self.assertGreater(receiver.corrections.counts()["damaged"], 100)

    def test_before_a_station_message_the_station_is_zero(self):
        station = rtcm.Station(77)
        writes, _, _ = self.play(corrections_scenario(), lambda t: b"".join(station.epoch(self.GPS_SECOND + 1)[-3:]))
        fields = writes[10].data.split(b"\r\n")[0].decode().split("*")[0].split(",")
        self.assertEqual((fields[6], fields[14]), ("4", "0000"))

    def test_the_ubx_receiver_reports_carrier_solution_and_correction_age(self):
        writes, _, _ = self.play(corrections_scenario("ubx"), lambda t: self.station_frames(t) if 1 <= t <= 20 else b"")
        flags = {}
        for write in writes:
            pvt = next(f for f in ubx.split(write.data) if f[3] == 0x07)
            flags[write.truth["t"]] = (pvt[6 + 21], pvt[6 + 78] >> 1 & 0x0F)  # flags, flags3.lastCorrectionAge
        self.assertEqual(flags[0], (0x01, 0))  # gnssFixOK only
        self.assertEqual(flags[4], (0x43, 1))  # diffSoln, carrSoln float; age < 1 s
        self.assertEqual(flags[10], (0x83, 1))  # carrSoln fixed
        self.assertEqual(flags[23], (0x83, 3))  # age 3 s: 2-5 s
        self.assertEqual(flags[27], (0x43, 4))  # float again, age 7 s: 5-10 s
        self.assertEqual(flags[35], (0x01, 0))

    def test_without_input_a_corrections_phase_is_autonomous_and_deterministic(self):
        scenario = corrections_scenario()
        once = [i.data for i in Receiver(scenario).timeline() if isinstance(i, Write)]
        self.assertEqual(once, [i.data for i in Receiver(scenario).timeline() if isinstance(i, Write)])
        self.assertTrue(all(data.split(b",")[6] == b"1" for data in once))


def damaged_epoch(t, station=rtcm.Station(2345)):
    return [damaged(f) for f in station.epoch(CorrectionsModel.GPS_SECOND + int(t))]


def collapse_qualities(truths: dict) -> list:
    return verify.collapse(truths[t]["quality"] for t in sorted(truths))


class Trajectories(unittest.TestCase):
    def positions(self, trajectory, **extra):
        document = dict(MINIMAL, duration=10, rate=1, position={"latitude": 48.0, "longitude": 11.0},
                        trajectory=trajectory, phase=[{"at": 0, "quality": "fixed", "horizontal": 0, "vertical": 0}], **extra)
        scenario = parse(document, "t.toml")
        return [i.truth for i in Receiver(scenario).timeline() if isinstance(i, Write)]

    def test_a_line_moves_at_its_speed_and_heading(self):
        truths = self.positions({"kind": "line", "speed": 10, "heading": 90})
        self.assertAlmostEqual(truths[0]["latitude"], 48.0, places=7)
        # 9 s east at 10 m/s: 90 m, about 0.0012 degrees of longitude at 48° N.
        self.assertAlmostEqual((truths[9]["longitude"] - 11.0) * 111320 * 0.6691306, 90, delta=0.5)
        self.assertAlmostEqual(truths[9]["latitude"], 48.0, places=6)
        self.assertEqual(truths[5]["speed"], 10)

    def test_a_circle_comes_back(self):
        # radius 20 m at 2 * pi * 20 / 10 m/s: one turn in 10 s.
        import math
        truths = self.positions({"kind": "circle", "radius": 20, "speed": 2 * math.pi * 2})
        self.assertAlmostEqual(truths[0]["latitude"], truths[5]["latitude"] + 2 * 20 / 111200, delta=2e-6)

    def test_a_recorded_track_is_interpolated(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as track:
            track.write("# seconds,latitude,longitude,height\n0,48.0,11.0,500\n10,48.001,11.0,510\n")
        try:
            truths = self.positions({"kind": "track", "file": track.name})
        finally:
            os.unlink(track.name)
        self.assertAlmostEqual(truths[5]["latitude"], 48.0005, places=7)
        self.assertAlmostEqual(truths[5]["height"], 505, delta=0.002)


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
