"""RTCM 3 in Python (tmmtools/peers/rtcm.py): CRC-24Q and the 1005 encoder against the example
frame of RTCM 10403 (independent of this code), the frame reader's counts on damaged, split,
noisy and truncated input, and the generated station decoded by two independent decoders: gpsd's
gpsdecode (JSON) and RTKLIB's convbin (RINEX).

Run: /usr/bin/python3 -m tmmtools.tests from the repository root.
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

from tmmtools.peers import rtcm

# RTCM 10403's example of message 1005: station 2003, ARP (1114104.5999, -4850729.7108,
# 3975521.4643) m, GPS only, ITRF year 0; its CRC-24Q is the last three bytes.
EXAMPLE_1005 = bytes.fromhex("D300133ED7D30202980EDEEF34B4BD62AC0941986F33360B98")
GPS_SECOND = 1_400_000_000  # a multiple of 5: the 1006 and 1230 come with this epoch


class Framing(unittest.TestCase):
    def test_crc24q_and_the_1005_encoder_reproduce_the_standard_example(self):
        self.assertEqual(rtcm.crc24q(EXAMPLE_1005[:-3]), 0x360B98)
        self.assertEqual(rtcm.crc24q(EXAMPLE_1005), 0)  # over a whole frame the remainder is zero
        payload = rtcm.station_arp(1005, 2003, (1114104.5999, -4850729.7108, 3975521.4643), glonass=False,
                                   galileo=False, single_oscillator=False)
        self.assertEqual(rtcm.frame(payload), EXAMPLE_1005)
        self.assertEqual((rtcm.message_number(payload), rtcm.station_id(payload)), (1005, 2003))

    def test_a_payload_over_1023_bytes_is_refused(self):
        self.assertEqual(len(rtcm.frame(b"\x00" * 1023)), 1029)
        with self.assertRaises(ValueError):
            rtcm.frame(b"\x00" * 1024)

    def test_the_reader_counts_frames_damaged_frames_and_other_bytes(self):
        frames = rtcm.Station(77).epoch(GPS_SECOND)
        broken = bytearray(frames[2])
        broken[40] ^= 0x01
        noise = b"$PASHQ,RID*28\r\n@F0.3=1*67\r\n"
        stream = noise + frames[0] + bytes(broken) + frames[1] + b"\xd3\xff\x00" + frames[3] + frames[4]
        reader = rtcm.Reader()
        payloads = [p for byte in stream for p in reader.feed(bytes([byte]))]  # one byte at a time
        self.assertEqual([rtcm.message_number(p) for p in payloads], [1006, 1230, 1087, 1097])
        self.assertEqual((reader.frames, reader.damaged, reader.station_id), (4, 1, 77))
        self.assertEqual(reader.other_bytes, len(noise) + len(broken) + 3)
        self.assertEqual(reader.counts()["messages"], {"1006": 1, "1087": 1, "1097": 1, "1230": 1})

    def test_a_corrupted_length_does_not_swallow_the_frames_behind_it(self):
        frames = rtcm.Station(5).epoch(GPS_SECOND)
        long_header = bytearray(frames[0])
        long_header[2] = 0xFF  # declares 255 bytes more than the 1006 has
        reader = rtcm.Reader()
        payloads = reader.feed(bytes(long_header) + b"".join(frames[1:]))
        self.assertEqual([rtcm.message_number(p) for p in payloads], [1230, 1077, 1087, 1097])
        self.assertEqual(reader.damaged, 1)  # the headers found inside its span are not counted again

    def test_a_truncated_frame_waits_and_an_empty_one_is_valid(self):
        frame = rtcm.Station(5).epoch(GPS_SECOND)[2]
        reader = rtcm.Reader()
        self.assertEqual(reader.feed(frame[:-1]), [])
        self.assertEqual((reader.frames, reader.other_bytes), (0, 0))
        self.assertEqual(len(reader.feed(frame[-1:] + rtcm.frame(b""))), 2)
        self.assertEqual(reader.counts()["messages"], {"1077": 1, "empty": 1})


class Generator(unittest.TestCase):
    def test_a_station_epoch_is_deterministic_and_plausible(self):
        station = rtcm.Station(2345)
        first = station.epoch(GPS_SECOND)
        self.assertEqual(first, rtcm.Station(2345).epoch(GPS_SECOND))
        self.assertNotEqual(first, station.epoch(GPS_SECOND + 1))
        numbers = [rtcm.message_number(p) for p in rtcm.split(b"".join(first))]
        self.assertEqual(numbers, [1006, 1230, 1077, 1087, 1097])
        self.assertEqual([rtcm.message_number(p) for p in rtcm.split(b"".join(station.epoch(GPS_SECOND + 1)))],
                         [1077, 1087, 1097])
        sizes = {rtcm.message_number(f[3:-3]): len(f) for f in first}
        self.assertTrue(200 < sizes[1077] < 400 and 150 < sizes[1087] < 300, sizes)
        multiple = [f[3 + 6] >> 1 & 1 for f in first[2:]]  # DF393: more MSMs of this epoch follow
        self.assertEqual(multiple, [1, 1, 0])
        self.assertTrue(all(rtcm.station_id(f[3:-3]) == 2345 for f in first))

    @unittest.skipUnless(shutil.which("gpsdecode"), "gpsdecode (gpsd-clients) is not installed")
    def test_gpsd_decodes_the_station(self):
        data = b"".join(b"".join(rtcm.Station(2345).epoch(GPS_SECOND + i)) for i in range(5))
        done = subprocess.run(["gpsdecode"], input=data, capture_output=True, timeout=30)
        reports = [json.loads(line) for line in done.stdout.splitlines()]
        self.assertEqual([r["type"] for r in reports if r.get("class") == "RTCM3"],
                         [1006, 1230] + [1077, 1087, 1097] * 5)
        arp = next(r for r in reports if r["type"] == 1006)
        x, y, z = rtcm.ecef(39.95, -105.05, 1600.0)
        self.assertEqual(arp["station_id"], 2345)
        self.assertAlmostEqual(arp["x"], x, places=3)
        self.assertAlmostEqual(arp["y"], y, places=3)
        self.assertAlmostEqual(arp["z"], z, places=3)
        self.assertEqual(arp["h"], 1.5)

    @unittest.skipUnless(shutil.which("convbin"), "convbin (rtklib) is not installed")
    def test_rtklib_decodes_the_observations(self):
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "station.rtcm3")
            with open(path, "wb") as handle:
                for i in range(10):
                    handle.write(b"".join(rtcm.Station(2345).epoch(GPS_SECOND + i)))
            # convbin needs a time near the data to resolve RTCM's time of week.
            subprocess.run(["convbin", "-r", "rtcm3", "-tr", "2024/05/17", "16:00:00", path, "-o",
                            os.path.join(scratch, "station.obs")], capture_output=True, timeout=60, check=True)
            with open(os.path.join(scratch, "station.obs")) as handle:
                rinex = handle.read()
        header, _, body = rinex.partition("END OF HEADER")
        self.assertIn("2345", header.splitlines()[4])  # MARKER NAME: the station id
        self.assertIn("G    4 C1C L1C C2W L2W", header)
        self.assertIn("R    4 C1C L1C C2C L2C", header)
        self.assertIn("E    4 C1C L1C C5Q L5Q", header)
        epochs = [line for line in body.splitlines() if line.startswith(">")]
        self.assertEqual(len(epochs), 10)
        self.assertTrue(all(line.split()[-1] == "25" for line in epochs), epochs[:2])  # 10 + 8 + 7 satellites
        ranges = [float(line[3:17]) for line in body.splitlines() if line[:1] in "GRE" and line[1:3].isdigit()]
        self.assertTrue(all(1.9e7 < r < 2.7e7 for r in ranges), (min(ranges), max(ranges)))


if __name__ == "__main__":
    unittest.main()
