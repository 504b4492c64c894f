"""NMEA 0183 sentence writers for the scenario simulator.

Each function returns one sentence as bytes, `$...*hh\r\n`. Field layouts follow NMEA 0183 4.10
as the receivers in Tests/Fixtures/nmea write them (talker per constellation for GSA/GSV, `GN` for
combined GGA/RMC/GST) and Trimble's `$PTNL,GGK` as documented in Sources/NMEA0183/Sentences/Misc.swift.
Numbers are formatted with fixed decimals so the same inputs always give the same bytes.
"""

from __future__ import annotations

# GGA quality indicator per fix phase (NMEA 0183 4.10, table "GPS quality indicator").
GGA_QUALITY = {"none": 0, "autonomous": 1, "dgps": 2, "fixed": 4, "float": 5}
# RMC/GNS mode indicator (FAA mode) per phase: A autonomous, D differential, R RTK fixed,
# F RTK float, N no fix.
RMC_MODE = {"none": "N", "autonomous": "A", "dgps": "D", "fixed": "R", "float": "F"}
# Trimble GGK quality: 0 none, 1 autonomous, 2 RTK float, 3 RTK fixed, 4 DGPS (code phase).
GGK_QUALITY = {"none": 0, "autonomous": 1, "float": 2, "fixed": 3, "dgps": 4}
# GSA system id (NMEA 4.10): 1 GPS, 2 GLONASS, 3 Galileo, 4 BeiDou, 5 QZSS.
SYSTEM_ID = {"GP": 1, "GL": 2, "GA": 3, "GB": 4, "GQ": 5}


def checksum(body: str) -> str:
    value = 0
    for byte in body.encode("ascii"):
        value ^= byte
    return f"{value:02X}"


def sentence(body: str, corrupt: bool = False) -> bytes:
    """`$body*hh\\r\\n`; `corrupt` writes a checksum that is off by one (a checksum error)."""
    hexsum = checksum(body)
    if corrupt:
        hexsum = f"{(int(hexsum, 16) ^ 0x01):02X}"
    return f"${body}*{hexsum}\r\n".encode("ascii")


def hhmmss(seconds_of_day: float) -> str:
    centis = int(round(seconds_of_day * 100)) % (86400 * 100)
    h, rest = divmod(centis, 360000)
    m, rest = divmod(rest, 6000)
    s, cs = divmod(rest, 100)
    return f"{h:02d}{m:02d}{s:02d}.{cs:02d}"


def _coordinate(value: float, decimals: int, degree_digits: int, hemispheres: str) -> tuple[str, str]:
    """ddmm.mmmm (latitude, 2 degree digits) or dddmm.mmmm (longitude, 3) and its hemisphere."""
    hemisphere = hemispheres[0] if value >= 0 else hemispheres[1]
    value = abs(value)
    degrees = int(value)
    minutes = (value - degrees) * 60
    text = f"{degrees:0{degree_digits}d}{minutes:0{3 + decimals}.{decimals}f}"
    if text[degree_digits:degree_digits + 2] == "60":  # rounding carried into a whole degree
        text = f"{degrees + 1:0{degree_digits}d}{0:0{3 + decimals}.{decimals}f}"
    return text, hemisphere


def latitude(value: float, decimals: int) -> tuple[str, str]:
    return _coordinate(value, decimals, 2, "NS")


def longitude(value: float, decimals: int) -> tuple[str, str]:
    return _coordinate(value, decimals, 3, "EW")


def gga(talker: str, fix, decimals: int) -> str:
    t = hhmmss(fix.seconds_of_day)
    if fix.quality == "none":
        return f"{talker}GGA,{t},,,,,0,{fix.used:02d},,,,,,,"
    lat, ns = latitude(fix.lat, decimals)
    lon, ew = longitude(fix.lon, decimals)
    age, station = ("", "")
    if fix.quality in ("dgps", "float", "fixed"):
        age, station = (f"{fix.correction_age:.1f}", f"{fix.station:04d}")
    return (f"{talker}GGA,{t},{lat},{ns},{lon},{ew},{GGA_QUALITY[fix.quality]},{fix.used:02d},"
            f"{fix.hdop:.1f},{fix.msl_height:.3f},M,{fix.undulation:.3f},M,{age},{station}")


def rmc(talker: str, fix, decimals: int) -> str:
    t = hhmmss(fix.seconds_of_day)
    d = fix.date.strftime("%d%m%y")
    if fix.quality == "none":
        return f"{talker}RMC,{t},V,,,,,,,{d},,,N,V"
    lat, ns = latitude(fix.lat, decimals)
    lon, ew = longitude(fix.lon, decimals)
    knots = fix.speed * 3600 / 1852
    return (f"{talker}RMC,{t},A,{lat},{ns},{lon},{ew},{knots:.3f},{fix.course:.1f},{d},,,"
            f"{RMC_MODE[fix.quality]},V")


def gst(talker: str, fix) -> str:
    t = hhmmss(fix.seconds_of_day)
    if fix.quality == "none":
        return f"{talker}GST,{t},,,,,,,"
    a = fix.accuracy
    rms = (a.horizontal ** 2 + a.vertical ** 2) ** 0.5
    return (f"{talker}GST,{t},{rms:.3f},{a.horizontal:.3f},{a.horizontal:.3f},0.0,"
            f"{a.horizontal:.3f},{a.horizontal:.3f},{a.vertical:.3f}")


def gsa(talker: str, ids: list[int], fix, system_id: int | None) -> str:
    mode = "1" if fix.quality == "none" else "3"
    slots = [f"{i:02d}" for i in ids[:12]] + [""] * (12 - min(len(ids), 12))
    tail = f",{system_id}" if system_id is not None else ""
    if fix.quality == "none":
        return f"{talker}GSA,A,1,{','.join([''] * 12)},,,{tail}"
    return f"{talker}GSA,A,{mode},{','.join(slots)},{fix.pdop:.1f},{fix.hdop:.1f},{fix.vdop:.1f}{tail}"


def gsv(talker: str, satellites: list) -> list[str]:
    """Every GSV sentence of one constellation (4 satellites each)."""
    if not satellites:
        return [f"{talker}GSV,1,1,00"]
    groups = [satellites[i:i + 4] for i in range(0, len(satellites), 4)]
    out = []
    for number, group in enumerate(groups, start=1):
        fields = []
        for sat in group:
            snr = "" if sat.snr is None else f"{sat.snr:02d}"
            fields.append(f"{sat.prn:02d},{sat.elevation:02d},{sat.azimuth:03d},{snr}")
        out.append(f"{talker}GSV,{len(groups)},{number},{len(satellites):02d},{','.join(fields)}")
    return out


def ggk(fix, decimals: int) -> str:
    t = hhmmss(fix.seconds_of_day)
    d = fix.date.strftime("%m%d%y")
    if fix.quality == "none":
        return f"PTNL,GGK,{t},{d},,,,,0,{fix.used:02d},,EHT,M"
    lat, ns = latitude(fix.lat, decimals + 3)
    lon, ew = longitude(fix.lon, decimals + 3)
    return (f"PTNL,GGK,{t},{d},{lat},{ns},{lon},{ew},{GGK_QUALITY[fix.quality]},{fix.used:02d},"
            f"{fix.pdop:.1f},EHT{fix.ellipsoidal_height:.3f},M")
