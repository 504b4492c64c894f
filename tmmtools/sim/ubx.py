"""u-blox UBX binary writers for the scenario simulator (standard library only).

Layouts follow u-blox's "u-blox F9 HPG Interface Description" (ZED-F9P, protocol 27+):
a frame is `B5 62 class id length(U2 LE) payload CK_A CK_B`, the checksum an 8-bit Fletcher sum
over class, id, length and payload. Per navigation epoch a ZED-F9P set up for RTK writes, in this
order (the order of the message ids), NAV-DOP, NAV-PVT, NAV-HPPOSLLH, NAV-SAT and NAV-EOE.

High precision (NAV-HPPOSLLH): latitude/longitude are `lat` in 1e-7 degrees plus `latHp` in 1e-9
degrees (-99..+99), heights `height` in mm plus `heightHp` in 0.1 mm (-9..+9). `degrees_hp` and
`height_hp` split a value so that the standard-precision part is the value rounded to the
nearest 1e-7 degree / mm (what NAV-PVT carries as well) and the remainder goes into the Hp byte
(-50..+49 and -5..+4): the position round-trips to 1e-9 degree and 0.1 mm.

Every writer returns one whole frame as bytes; numbers are integers computed with fixed
rounding, so the same inputs always give the same bytes.
"""

from __future__ import annotations

import datetime as _dt
import math
import struct

SYNC = b"\xb5\x62"
CLASS_NAV = 0x01
NAV_DOP, NAV_PVT, NAV_HPPOSLLH, NAV_SAT, NAV_EOE = 0x04, 0x07, 0x14, 0x35, 0x61

# NAV-PVT fixType and flags per fix phase: flags bit 0 gnssFixOK, bit 1 diffSoln (differential
# corrections applied), bits 6-7 carrSoln (1 float, 2 fixed carrier-phase solution).
FIX_TYPE = {"none": 0, "autonomous": 3, "dgps": 3, "float": 3, "fixed": 3}
PVT_FLAGS = {"none": 0x00, "autonomous": 0x01, "dgps": 0x03, "float": 0x43, "fixed": 0x83}
VALID_DATE, VALID_TIME, FULLY_RESOLVED = 0x01, 0x02, 0x04
# flags2: confirmedAvai (bit 5), confirmedDate (6), confirmedTime (7).
FLAGS2_CONFIRMED = 0xE0
# UBX gnssId per NMEA talker (u-blox: 0 GPS, 1 SBAS, 2 Galileo, 3 BeiDou, 5 QZSS, 6 GLONASS).
GNSS_ID = {"GP": 0, "GA": 2, "GB": 3, "GQ": 5, "GL": 6}
# NMEA satellite number → UBX svId (GLONASS 65-96 → slot 1-32, QZSS 193-202 → 1-10).
SV_OFFSET = {"GP": 0, "GA": 0, "GB": 0, "GQ": 192, "GL": 64}

# GPS time: its epoch and the GPS-UTC leap seconds since 2017-01-01 (no leap second since).
GPS_EPOCH = _dt.datetime(1980, 1, 6, tzinfo=_dt.timezone.utc)
LEAP_SECONDS = 18
WEEK_MS = 7 * 86400 * 1000


def checksum(body: bytes) -> bytes:
    """CK_A, CK_B: the 8-bit Fletcher sum over class, id, length and payload."""
    a = b = 0
    for byte in body:
        a = (a + byte) & 0xFF
        b = (b + a) & 0xFF
    return bytes((a, b))


def frame(msg_class: int, msg_id: int, payload: bytes, corrupt: bool = False) -> bytes:
    """One UBX frame; `corrupt` writes a CK_B that is off by one (a checksum error)."""
    body = struct.pack("<BBH", msg_class, msg_id, len(payload)) + payload
    ck = checksum(body)
    if corrupt:
        ck = bytes((ck[0], ck[1] ^ 0x01))
    return SYNC + body + ck


def _nearest_split(units: int, base: int) -> tuple[int, int]:
    """`units` = main * base + rest with main rounded to the nearest (halves up), rest in
    -base/2 .. base/2 - 1."""
    main, rest = divmod(units, base)
    if rest >= base // 2:
        main, rest = main + 1, rest - base
    return main, rest


def degrees_hp(degrees: float) -> tuple[int, int]:
    """(1e-7 degrees, 1e-9 degrees remainder): degrees ≈ (main * 100 + hp) * 1e-9."""
    return _nearest_split(round(degrees * 1e9), 100)


def height_hp(metres: float) -> tuple[int, int]:
    """(mm, 0.1 mm remainder): metres ≈ (main * 10 + hp) * 1e-4."""
    return _nearest_split(round(metres * 1e4), 10)


def hp_degrees(main: int, hp: int) -> float:
    """The degrees a reader gets back from NAV-HPPOSLLH's main and Hp parts."""
    return (main * 100 + hp) / 1e9


def hp_metres(main: int, hp: int) -> float:
    return (main * 10 + hp) / 1e4


def itow(utc: _dt.datetime) -> int:
    """GPS time of week in ms of a UTC instant (as the receiver's epochs are stamped)."""
    delta = utc - GPS_EPOCH + _dt.timedelta(seconds=LEAP_SECONDS)
    ms = (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000
    return ms % WEEK_MS


def _u(value: float, low: int, high: int) -> int:
    return max(low, min(high, int(round(value))))


def correction_age_code(age: float | None) -> int:
    """NAV-PVT flags3 lastCorrectionAge (bits 1-4): 0 none, 1 < 1 s, 2 1-2 s, 3 2-5 s, ..."""
    if age is None:
        return 0
    for code, limit in enumerate((1, 2, 5, 10, 15, 20, 30, 45, 60, 90, 120), start=1):
        if age < limit:
            return code
    return 12


def nav_pvt(itow_ms: int, utc: _dt.datetime, quality: str, num_sv: int, lat: float, lon: float,
            height: float, msl: float, h_acc: float, v_acc: float, speed: float = 0.0,
            course: float = 0.0, pdop: float = 99.99, correction_age: float | None = None,
            corrupt: bool = False) -> bytes:
    """UBX-NAV-PVT (0x01 0x07, 92 bytes). Angles in degrees, lengths in metres, speed in m/s.
    Without a fix the position is zero and flags3.invalidLlh is set, as a receiver does."""
    fix = quality != "none"
    lat_i = degrees_hp(lat)[0] if fix else 0
    lon_i = degrees_hp(lon)[0] if fix else 0
    height_mm = height_hp(height)[0] if fix else 0
    msl_mm = height_hp(msl)[0] if fix else 0
    heading = math.radians(course)
    vel_n = _u(speed * math.cos(heading) * 1000, -2**31, 2**31 - 1) if fix else 0
    vel_e = _u(speed * math.sin(heading) * 1000, -2**31, 2**31 - 1) if fix else 0
    g_speed = _u(speed * 1000, 0, 2**31 - 1) if fix else 0
    head_mot = _u((course % 360) * 1e5, 0, 36000000 - 1) if fix else 0
    flags3 = (0 if fix else 0x01) | (correction_age_code(correction_age) << 1 if fix else 0)
    payload = struct.pack(
        "<IHBBBBBBIiBBBBiiiiIIiiiiiIIHH4xihH",
        itow_ms, utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second,
        VALID_DATE | VALID_TIME | FULLY_RESOLVED,
        20,                                    # tAcc, ns
        utc.microsecond * 1000,                # nano: fraction of the second, ns
        FIX_TYPE[quality], PVT_FLAGS[quality], FLAGS2_CONFIRMED, num_sv if fix else 0,
        lon_i, lat_i, height_mm, msl_mm,
        _u(h_acc * 1000, 0, 2**32 - 1), _u(v_acc * 1000, 0, 2**32 - 1),
        vel_n, vel_e, 0, g_speed, head_mot,
        50 if fix else 20000,                  # sAcc, mm/s
        _u((5.0 if fix else 180.0) * 1e5, 0, 2**32 - 1),  # headAcc, 1e-5 degrees
        _u(pdop * 100, 0, 0xFFFF),
        flags3,
        head_mot,                              # headVeh (no headVehValid flag)
        0, 0)                                  # magDec, magAcc (not valid: valid.validMag clear)
    assert len(payload) == 92
    return frame(CLASS_NAV, NAV_PVT, payload, corrupt)


def nav_hpposllh(itow_ms: int, lat: float, lon: float, height: float, msl: float, h_acc: float,
                 v_acc: float, valid: bool = True, corrupt: bool = False) -> bytes:
    """UBX-NAV-HPPOSLLH (0x01 0x14, 36 bytes, version 0); accuracies in metres (0.1 mm units)."""
    lat_i, lat_hp = degrees_hp(lat) if valid else (0, 0)
    lon_i, lon_hp = degrees_hp(lon) if valid else (0, 0)
    h_mm, h_hp = height_hp(height) if valid else (0, 0)
    msl_mm, msl_hp = height_hp(msl) if valid else (0, 0)
    payload = struct.pack("<B2xBIiiiibbbbII", 0, 0 if valid else 0x01, itow_ms, lon_i, lat_i, h_mm, msl_mm,
                          lon_hp, lat_hp, h_hp, msl_hp,
                          _u(h_acc * 1e4, 0, 2**32 - 1), _u(v_acc * 1e4, 0, 2**32 - 1))
    assert len(payload) == 36
    return frame(CLASS_NAV, NAV_HPPOSLLH, payload, corrupt)


def nav_dop(itow_ms: int, gdop: float, pdop: float, tdop: float, vdop: float, hdop: float,
            ndop: float, edop: float, corrupt: bool = False) -> bytes:
    """UBX-NAV-DOP (0x01 0x04, 18 bytes): DOPs in 0.01."""
    values = [_u(d * 100, 0, 0xFFFF) for d in (gdop, pdop, tdop, vdop, hdop, ndop, edop)]
    return frame(CLASS_NAV, NAV_DOP, struct.pack("<I7H", itow_ms, *values), corrupt)


def sat_flags(used: bool, tracked: bool, corrected: bool) -> int:
    """NAV-SAT flags: qualityInd (bits 0-2: 7 carrier locked, 4 code locked, 1 searching), svUsed
    (bit 3), health 1 = healthy (bits 4-5), diffCorr (bit 6), orbitSource 1 = ephemeris (bits
    8-10) and ephAvail (bit 11)."""
    quality = 7 if used else 4 if tracked else 1
    flags = quality | (0x08 if used else 0) | (1 << 4) | (0x40 if used and corrected else 0)
    if tracked:
        flags |= (1 << 8) | (1 << 11)
    return flags


def nav_sat(itow_ms: int, satellites: list, corrupt: bool = False) -> bytes:
    """UBX-NAV-SAT (0x01 0x35, version 1): `satellites` are (gnssId, svId, cno dBHz, elevation
    degrees, azimuth degrees, flags) tuples."""
    payload = struct.pack("<IBB2x", itow_ms, 1, len(satellites))
    for gnss_id, sv_id, cno, elevation, azimuth, flags in satellites:
        payload += struct.pack("<BBBbhhI", gnss_id, sv_id, cno, elevation, azimuth, 0, flags)
    return frame(CLASS_NAV, NAV_SAT, payload, corrupt)


def nav_eoe(itow_ms: int, corrupt: bool = False) -> bytes:
    """UBX-NAV-EOE (0x01 0x61): the end of a navigation epoch."""
    return frame(CLASS_NAV, NAV_EOE, struct.pack("<I", itow_ms), corrupt)


def split(data: bytes) -> list[bytes]:
    """The UBX frames in a byte string (for tests and captures): whatever is not a whole frame
    starting with the sync bytes is skipped; the checksum is not checked."""
    frames, position = [], 0
    while True:
        start = data.find(SYNC, position)
        if start < 0 or start + 8 > len(data):
            return frames
        length = struct.unpack_from("<H", data, start + 4)[0]
        end = start + 8 + length
        if end > len(data):
            return frames
        frames.append(data[start:end])
        position = end
