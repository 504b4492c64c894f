"""RTCM 3 in Python: framing, CRC-24Q, a reader that splits and validates a byte stream, and a
generator of a reference station's messages (the one home of these in the Python tools; the sim's
corrections input and the NTRIP casters use it; the Swift side has its own, independent one).

    python3 -m tmmtools.peers.rtcm [--station-id N] [--seconds N] [--realtime] [--out FILE]
    python3 -m tmmtools.peers.rtcm --check FILE

The first form writes a reference station's messages, one epoch a second (to standard output or
FILE): at once, or with --realtime at each whole second of the clock (what str2str reads as its
input in tmmtools/peers/str2str_caster.py). The second reads a file and prints one JSON line:
frames, damaged frames, other bytes, message numbers, the station id (exit 1 without a frame).

A frame (RTCM 10403.3, section 4) is the preamble 0xD3, 6 reserved bits (0), a 10-bit payload
length (0-1023), the payload and CRC-24Q (polynomial 0x1864CFB, initial value 0) over the
preamble, length and payload, most significant byte first.

The generator writes, per epoch (GPS second), MSM7 observations of GPS (1077), GLONASS (1087)
and Galileo (1097), the last with the multiple-message bit clear; every `station_interval`
seconds (default 5: a caster's usual 5-10 s) 1006 (the station's ARP in ECEF and its antenna
height, with the station id) and 1230 (GLONASS code-phase biases) before them. Observations are
smooth, plausible functions of time (ranges 19,000-26,000 km, rates up to ~450 m/s, CNR 35-50
dB-Hz), seeded by the station id: the same station and second give the same bytes, so every
client of a caster gets the same frames at the same second, and RTKLIB's convbin and gpsd's
gpsdecode decode them (tmmtools/tests/test_rtcm.py).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import random
import sys
import time

PREAMBLE = 0xD3
MAX_PAYLOAD = 1023
CRC24Q_POLYNOMIAL = 0x1864CFB
STATION_MESSAGES = (1005, 1006)  # the ones whose DF003 is a reference station's ARP

SPEED_OF_LIGHT = 299792458.0
GPS_EPOCH_UNIX = 315964800  # 1980-01-06T00:00:00Z
LEAP_SECONDS = 18  # GPS - UTC since 2017
WEEK = 7 * 86400


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= CRC24Q_POLYNOMIAL
        table.append(crc & 0xFFFFFF)
    return table


_CRC_TABLE = _crc_table()


def crc24q(data: bytes, crc: int = 0) -> int:
    """CRC-24Q of `data` (Qualcomm's, as RTCM 3 uses it)."""
    for byte in data:
        crc = ((crc << 8) & 0xFFFFFF) ^ _CRC_TABLE[(crc >> 16) ^ byte]
    return crc


def frame(payload: bytes) -> bytes:
    """A whole frame around `payload` (at most 1023 bytes)."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"an RTCM 3 payload is at most {MAX_PAYLOAD} bytes, not {len(payload)}")
    head = bytes((PREAMBLE, len(payload) >> 8, len(payload) & 0xFF)) + payload
    return head + crc24q(head).to_bytes(3, "big")


def message_number(payload: bytes) -> int | None:
    """DF002, the first 12 bits of a payload (None for a payload under 2 bytes)."""
    return (payload[0] << 4 | payload[1] >> 4) if len(payload) >= 2 else None


def station_id(payload: bytes) -> int | None:
    """DF003, the 12 bits after the message number (every message here carries it there)."""
    return ((payload[1] & 0x0F) << 8 | payload[2]) if len(payload) >= 3 else None


class Reader:
    """Splits a byte stream into RTCM 3 frames and validates each, as a receiver's corrections
    port does. Counts valid frames (and their message numbers), damaged frames (a header whose
    CRC does not match) and other bytes (everything outside a valid frame: gpsd's probe strings,
    NMEA, noise, damaged frames). The last 1005/1006 station id is kept.

    After a damaged frame the search goes on at the byte after its preamble (a corrupted length
    must not swallow the good frames behind it); a header inside a damaged frame's declared span
    that fails too is not counted as another damaged frame (it is part of the first)."""

    def __init__(self):
        self.buffer = bytearray()
        self.offset = 0  # stream offset of buffer[0]
        self.bytes = 0
        self.frames = 0
        self.frame_bytes = 0
        self.damaged = 0
        self.messages: collections.Counter = collections.Counter()
        self.station_id: int | None = None
        self._suspect_end = 0

    @property
    def other_bytes(self) -> int:
        return self.bytes - self.frame_bytes - len(self.buffer)

    def counts(self) -> dict:
        messages = {str(k): v for k, v in sorted(self.messages.items(), key=lambda kv: str(kv[0]))}
        return {"bytes": self.bytes, "frames": self.frames, "damaged": self.damaged, "other_bytes": self.other_bytes,
                "station": self.station_id, "messages": messages}

    def feed(self, data: bytes) -> list[bytes]:
        """The payloads of the valid frames `data` completes, in order."""
        self.bytes += len(data)
        self.buffer += data
        payloads = []
        while True:
            start = self.buffer.find(PREAMBLE)
            if start < 0:
                self._drop(len(self.buffer))
                return payloads
            self._drop(start)
            if len(self.buffer) < 3:
                return payloads
            if self.buffer[1] & 0xFC:  # reserved bits set: not a header
                self._drop(1)
                continue
            length = (self.buffer[1] & 0x03) << 8 | self.buffer[2]
            if len(self.buffer) < length + 6:
                return payloads
            if crc24q(self.buffer[:length + 3]) != int.from_bytes(self.buffer[length + 3:length + 6], "big"):
                if self.offset >= self._suspect_end:
                    self.damaged += 1
                self._suspect_end = max(self._suspect_end, self.offset + length + 6)
                self._drop(1)
                continue
            payload = bytes(self.buffer[3:length + 3])
            self._accept(payload)
            payloads.append(payload)
            self.frame_bytes += length + 6
            del self.buffer[:length + 6]
            self.offset += length + 6

    def _drop(self, count: int):
        del self.buffer[:count]
        self.offset += count

    def _accept(self, payload: bytes):
        self.frames += 1
        number = message_number(payload)
        self.messages[number if number is not None else "empty"] += 1
        if number in STATION_MESSAGES:
            self.station_id = station_id(payload)


def split(data: bytes) -> list[bytes]:
    """The payloads of the valid frames in `data`."""
    return Reader().feed(data)


# --- writing messages ----------------------------------------------------------------------------

class Bits:
    """Big-endian bit writer: fields as RTCM lays them out (DF numbers in the comments)."""

    def __init__(self):
        self.value = 0
        self.length = 0

    def u(self, bits: int, value: int) -> "Bits":
        if not 0 <= value < 1 << bits:
            raise ValueError(f"{value} does not fit in {bits} unsigned bits")
        self.value = self.value << bits | value
        self.length += bits
        return self

    def s(self, bits: int, value: int) -> "Bits":
        """Two's complement."""
        if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
            raise ValueError(f"{value} does not fit in {bits} signed bits")
        return self.u(bits, value & ((1 << bits) - 1))

    def payload(self) -> bytes:
        """The bits, zero-padded to whole bytes."""
        pad = -self.length % 8
        return (self.value << pad).to_bytes((self.length + pad) // 8, "big")


def ecef(latitude: float, longitude: float, height: float) -> tuple[float, float, float]:
    """WGS 84 geodetic to ECEF metres."""
    a, e2 = 6378137.0, 6.69437999014e-3
    phi, lam = math.radians(latitude), math.radians(longitude)
    n = a / math.sqrt(1 - e2 * math.sin(phi) ** 2)
    return ((n + height) * math.cos(phi) * math.cos(lam), (n + height) * math.cos(phi) * math.sin(lam),
            (n * (1 - e2) + height) * math.sin(phi))


def station_arp(number: int, station: int, position: tuple[float, float, float], antenna_height: float = 0.0,
                gps: bool = True, glonass: bool = True, galileo: bool = True, reference_station: bool = False,
                single_oscillator: bool = True, itrf_year: int = 0) -> bytes:
    """1005 (152 bits) or 1006 (168 bits, with the antenna height): the reference station's ARP."""
    if number not in STATION_MESSAGES:
        raise ValueError("station_arp writes 1005 or 1006")
    x, y, z = (round(v * 10000) for v in position)  # DF025-027: 0.0001 m
    bits = Bits().u(12, number).u(12, station).u(6, itrf_year)  # DF002, DF003, DF021
    bits.u(1, int(gps)).u(1, int(glonass)).u(1, int(galileo)).u(1, int(reference_station))  # DF022-024, DF141
    bits.s(38, x).u(1, int(single_oscillator)).u(1, 0).s(38, y)  # DF025, DF142, DF001, DF026
    bits.u(2, 0).s(38, z)  # DF364 quarter cycle indicator, DF027
    if number == 1006:
        bits.u(16, round(antenna_height * 10000))  # DF028
    return bits.payload()


def glonass_biases(station: int, biases_m: tuple = (0.0, 0.0, 0.0, 0.0)) -> bytes:
    """1230: GLONASS L1 C/A, L1 P, L2 C/A, L2 P code-phase biases (0.02 m), all four present."""
    bits = Bits().u(12, 1230).u(12, station).u(1, 0).u(3, 0).u(4, 0b1111)  # DF002, DF003, DF421, DF001, DF422
    for bias in biases_m:
        bits.s(16, round(bias / 0.02))  # DF423-DF426
    return bits.payload()


# Per constellation: MSM7 message number, signal ids (RTCM signal mask numbering, RTKLIB's
# msm_sig_* tables) and how many satellites of which PRN range are tracked.
CONSTELLATIONS = {
    "GPS": {"message": 1077, "signals": (2, 10), "prns": (1, 32), "count": 10},      # 1C, 2W
    "GLONASS": {"message": 1087, "signals": (2, 8), "prns": (1, 24), "count": 8},    # 1C, 2C
    "Galileo": {"message": 1097, "signals": (2, 23), "prns": (1, 36), "count": 7},   # 1C, 5Q
}


class Satellite:
    """One satellite's range as a smooth function of time: r0 + A sin(2πt/T + φ)."""

    def __init__(self, rng: random.Random, prn: int, glonass_channel: int | None):
        self.prn = prn
        self.channel = glonass_channel
        self.r0 = rng.uniform(21.5e6, 23.5e6)
        self.amplitude = rng.uniform(1.0e6, 2.5e6)
        self.period = 43082.0  # half a sidereal day
        self.phase = rng.uniform(0, 2 * math.pi)
        self.cnr = rng.uniform(35, 50)
        self.l2_delay = rng.uniform(1.0, 6.0)  # metres more on the second frequency (ionosphere)

    def range(self, t: float) -> float:
        return self.r0 + self.amplitude * math.sin(2 * math.pi * t / self.period + self.phase)

    def rate(self, t: float) -> float:
        return self.amplitude * 2 * math.pi / self.period * math.cos(2 * math.pi * t / self.period + self.phase)


def _msm_header(number: int, station: int, epoch: int, multiple: bool, sats: list, signals: tuple) -> Bits:
    bits = Bits().u(12, number).u(12, station).u(30, epoch).u(1, int(multiple))  # DF002, DF003, epoch, DF393
    bits.u(3, 0).u(7, 0).u(2, 0).u(2, 0).u(1, 0).u(3, 0)  # DF409 IODS, DF001, DF411, DF412, DF417, DF418
    prns = {sat.prn for sat in sats}
    for prn in range(1, 65):  # DF394 satellite mask, satellite 1 first
        bits.u(1, int(prn in prns))
    for signal in range(1, 33):  # DF395 signal mask
        bits.u(1, int(signal in signals))
    for _ in range(len(sats) * len(signals)):  # DF396 cell mask: every satellite has every signal
        bits.u(1, 1)
    return bits


def msm7(number: int, station: int, epoch: int, multiple: bool, sats: list, signals: tuple, t: float) -> bytes:
    """An MSM7 message (full pseudoranges, phase ranges, rates and CNR) for `sats` at GPS time `t`."""
    bits = _msm_header(number, station, epoch, multiple, sats, signals)
    rough = []
    for sat in sats:
        range_ms = sat.range(t) / SPEED_OF_LIGHT * 1000
        rough.append(round(range_ms * 1024) / 1024)  # integer ms + 1/1024 ms: the rough range
    for value in rough:
        bits.u(8, int(value))  # DF397 integer milliseconds
    for sat in sats:
        bits.u(4, sat.channel + 7 if sat.channel is not None else 0)  # extended info (GLONASS channel)
    for value in rough:
        bits.u(10, round((value - int(value)) * 1024))  # DF398 rough range modulo 1 ms
    for sat in sats:
        bits.s(14, round(sat.rate(t)))  # DF399 rough phase range rate, m/s
    fine = [(sat, rough[i], k) for i, sat in enumerate(sats) for k in range(len(signals))]
    for sat, rough_ms, k in fine:
        pseudorange = (sat.range(t) + k * sat.l2_delay) / SPEED_OF_LIGHT * 1000
        bits.s(20, round((pseudorange - rough_ms) * 2 ** 29))  # DF405 fine pseudorange, 2^-29 ms
    for sat, rough_ms, k in fine:
        phase = (sat.range(t) - k * sat.l2_delay + 0.3) / SPEED_OF_LIGHT * 1000
        bits.s(24, round((phase - rough_ms) * 2 ** 31))  # DF406 fine phase range, 2^-31 ms
    for _ in fine:
        bits.u(10, 704)  # DF407 lock time indicator (extended): locked for minutes
    for _ in fine:
        bits.u(1, 0)  # DF420 half-cycle ambiguity
    for sat, _, k in fine:
        bits.u(10, round((sat.cnr - 6 * k) * 16))  # DF408 CNR, 2^-4 dB-Hz
    for sat, _, _ in fine:
        bits.s(15, round((sat.rate(t) - round(sat.rate(t))) * 10000))  # DF404 fine phase range rate, 0.0001 m/s
    return bits.payload()


class Station:
    """A reference station's RTCM output, a pure function of the GPS second (see the module's
    docstring). `position`: (latitude, longitude, ellipsoidal height) of its ARP."""

    def __init__(self, station_id: int = 1234, position=(39.95, -105.05, 1600.0), antenna_height: float = 1.5,
                 station_interval: int = 5, message_1005: bool = False):
        if not 0 <= station_id <= 4095:
            raise ValueError("a station id is 12 bits: 0-4095")
        self.station_id = station_id
        self.arp = ecef(*position)
        self.antenna_height = antenna_height
        self.station_interval = station_interval
        self.arp_message = 1005 if message_1005 else 1006
        rng = random.Random(station_id)
        self.sky = {}
        for name, c in CONSTELLATIONS.items():
            prns = sorted(rng.sample(range(c["prns"][0], c["prns"][1] + 1), c["count"]))
            self.sky[name] = [Satellite(rng, prn, rng.randint(-7, 6) if name == "GLONASS" else None) for prn in prns]

    def epoch(self, gps_second: int) -> list[bytes]:
        """The frames of one epoch: `gps_second` is whole seconds of GPS time since 1980-01-06."""
        frames = []
        if gps_second % self.station_interval == 0:
            frames.append(frame(station_arp(self.arp_message, self.station_id, self.arp, self.antenna_height)))
            frames.append(frame(glonass_biases(self.station_id, (1.02, 1.02, -0.88, -0.88))))
        tow_ms = (gps_second % WEEK) * 1000
        glonass_seconds = (gps_second - LEAP_SECONDS + 3 * 3600) % WEEK  # Moscow time, day 0 = Sunday
        glonass_epoch = (glonass_seconds // 86400) << 27 | (glonass_seconds % 86400) * 1000  # DF416, DF034
        epochs = {"GPS": tow_ms, "GLONASS": glonass_epoch, "Galileo": tow_ms}
        names = list(CONSTELLATIONS)
        for index, name in enumerate(names):
            c = CONSTELLATIONS[name]
            last = index == len(names) - 1
            frames.append(frame(msm7(c["message"], self.station_id, epochs[name], not last, self.sky[name],
                                     c["signals"], float(gps_second))))
        return frames


def gps_second_now(now: float | None = None) -> int:
    """The current whole GPS second (the system clock is UTC)."""
    return int((time.time() if now is None else now) - GPS_EPOCH_UNIX + LEAP_SECONDS)


def stream(station: Station, sink, seconds: float | None, realtime: bool, start: int | None = None) -> int:
    """Writes `seconds` epochs (None: until the sink fails) to the binary file `sink`; with
    `realtime` each at its whole second of the clock, else all at once from `start` (default now).
    Returns the epochs written."""
    second = gps_second_now() if start is None else start
    written = 0
    while seconds is None or written < seconds:
        if realtime:
            delay = (second - LEAP_SECONDS + GPS_EPOCH_UNIX) - time.time()
            if delay > 0:
                time.sleep(delay)
        try:
            sink.write(b"".join(station.epoch(second)))
            sink.flush()
        except (BrokenPipeError, OSError):
            break
        written += 1
        second += 1
    return written


def main() -> int:
    parser = argparse.ArgumentParser(prog="rtcm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--station-id", type=int, default=1234, help="DF003, 0-4095 (default 1234)")
    parser.add_argument("--seconds", type=float, help="epochs to write (default: for ever)")
    parser.add_argument("--realtime", action="store_true", help="each epoch at its second of the clock")
    parser.add_argument("--start", type=int, help="the first GPS second (default now)")
    parser.add_argument("--out", help="write here instead of standard output")
    parser.add_argument("--check", metavar="FILE", help="read FILE and print what it holds (JSON)")
    args = parser.parse_args()
    if args.check:
        reader = Reader()
        with open(args.check, "rb") as handle:
            reader.feed(handle.read())
        print(json.dumps(reader.counts(), sort_keys=True))
        return 0 if reader.frames else 1
    station = Station(args.station_id)
    sink = open(args.out, "wb") if args.out else sys.stdout.buffer
    try:
        stream(station, sink, args.seconds, args.realtime, args.start)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
