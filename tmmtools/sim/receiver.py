"""The virtual receiver: a scenario turned into the bytes a receiver writes, epoch by epoch.

Pure and deterministic: `Receiver(scenario, seed).timeline()` yields the same items for the same
scenario and seed, whatever the wall clock; pacing, the pty and gpsd belong to `driver.py`.
Items are
- `Write(t, data, truth)`: bytes at scenario time `t` (seconds from the start); `truth` is what
  the receiver reported in this epoch (what TMM clients must see), or None for garbage;
- `Action(t, kind, duration)`: something outside the byte stream (`unplug`, `gpsd-kill`);
- `Note(t, kind, detail)`: a timeline fact (phase change, outage, rate change, time jump...).
"""

from __future__ import annotations

import datetime as _dt
import math
import random
from dataclasses import dataclass

from tmmtools.sim import nmea, ubx
from tmmtools.sim.corrections import Corrections
from tmmtools.sim.scenario import BROKER_EVENTS, CASTER_EVENTS, DEFAULT_ACCURACY, DEFAULT_HDOP, Accuracy, Scenario

# WGS 84, for turning metres north/east into degrees.
_A = 6378137.0
_E2 = 6.69437999014e-3

# NMEA satellite id ranges per constellation (GLONASS 65-96, QZSS 193-199).
_PRN_RANGE = {"GP": (1, 32), "GL": (65, 96), "GA": (1, 36), "GB": (1, 63), "GQ": (193, 199)}


@dataclass(frozen=True)
class Write:
    t: float
    data: bytes
    truth: dict | None


@dataclass(frozen=True)
class Action:
    t: float
    kind: str
    duration: float = 0.0


@dataclass(frozen=True)
class Note:
    t: float
    kind: str
    detail: dict


@dataclass
class Fix:
    seconds_of_day: float
    date: _dt.date
    quality: str
    lat: float
    lon: float
    ellipsoidal_height: float
    undulation: float
    used: int
    hdop: float
    pdop: float
    vdop: float
    speed: float
    course: float
    accuracy: object
    correction_age: float
    station: int

    @property
    def msl_height(self) -> float:
        return self.ellipsoidal_height - self.undulation


@dataclass
class _Satellite:
    prn: int
    elevation: int
    azimuth: int
    snr: int | None


def _offset(lat: float, lon: float, north: float, east: float) -> tuple[float, float]:
    phi = math.radians(lat)
    s = math.sin(phi) ** 2
    meridian = _A * (1 - _E2) / (1 - _E2 * s) ** 1.5
    normal = _A / math.sqrt(1 - _E2 * s)
    return (lat + math.degrees(north / meridian),
            lon + math.degrees(east / (normal * math.cos(phi))))


def _printed_degrees(text: str, hemisphere: str, degree_digits: int) -> float:
    """The value a parser reads back from a printed NMEA coordinate."""
    value = int(text[:degree_digits]) + float(text[degree_digits:]) / 60
    return -value if hemisphere in "SW" else value


def ubx_accuracy(fix: Fix) -> tuple[float, float]:
    """NAV-PVT/HPPOSLLH hAcc and vAcc (metres) for a fix: the horizontal one is the 2-D RMS of
    the phase's per-axis sigma (what GST's σlat and σlon give as hrms), the vertical one its σ;
    without a fix a receiver writes its largest value."""
    if fix.quality == "none":
        return 4294967.295, 4294967.295
    return round(math.hypot(fix.accuracy.horizontal, fix.accuracy.horizontal), 4), round(fix.accuracy.vertical, 4)


def read_capture(path: str) -> list[list[bytes]]:
    """A gpsd-format capture as receiver cycles: a new cycle starts when a sentence carrying a
    time (GGA, RMC, GNS, GLL, GST, ZDA, GGK) has a time other than the cycle's."""
    cycles: list[list[bytes]] = []
    current: list[bytes] = []
    current_time = None
    with open(path, "rb") as handle:
        for raw in handle:
            line = raw.rstrip(b"\r\n")
            if not line.startswith((b"$", b"!")):
                continue
            fields = line.split(b"*")[0].split(b",")
            address = fields[0][3:] if not fields[0].startswith(b"$PTNL") else b"GGK"
            position = {b"GGA": 1, b"RMC": 1, b"GNS": 1, b"GST": 1, b"ZDA": 1, b"GLL": 5, b"GGK": 2}.get(address)
            stamp = fields[position] if position is not None and len(fields) > position else None
            if stamp and current_time is not None and stamp != current_time and current:
                cycles.append(current)
                current = []
            if stamp:
                current_time = stamp
            current.append(line + b"\r\n")
    if current:
        cycles.append(current)
    return cycles


class Receiver:
    def __init__(self, scenario: Scenario, seed: int | None = None):
        self.scenario = scenario
        self.seed = scenario.seed if seed is None else seed
        self.rng = random.Random(self.seed)
        self.sky = self._make_sky()
        self._captures: dict[str, list[list[bytes]]] = {}
        # What is written to the receiver (driver.py feeds it); a corrections phase's fix follows it.
        self.corrections = Corrections()

    def _make_sky(self) -> dict[str, list[_Satellite]]:
        """Satellites per constellation, placed once from the seed; they drift slowly."""
        talkers = self.scenario.receiver.talkers
        sky = {}
        for talker in talkers:
            low, high = _PRN_RANGE[talker]
            count = min(high - low + 1, 16 // len(talkers) + 4)
            prns = sorted(self.rng.sample(range(low, high + 1), count))
            sky[talker] = [_Satellite(prn, self.rng.randint(5, 85), self.rng.randint(0, 359), None) for prn in prns]
        return sky

    def _phase_at(self, t: float):
        current = self.scenario.phases[0]
        for phase in self.scenario.phases:
            if phase.at <= t:
                current = phase
        return current

    def _position_at(self, t: float) -> tuple[float, float, float, float, float]:
        """Truth at `t`: latitude, longitude, ellipsoidal height, speed (m/s), course (degrees)."""
        s, tr = self.scenario, self.scenario.trajectory
        if tr.kind == "line":
            distance = tr.speed * t
            heading = math.radians(tr.heading)
            lat, lon = _offset(s.latitude, s.longitude, distance * math.cos(heading), distance * math.sin(heading))
            return lat, lon, s.height, tr.speed, tr.heading
        if tr.kind == "circle" and tr.radius > 0:
            angle = tr.speed * t / tr.radius  # starts due north of the centre, turns clockwise
            lat, lon = _offset(s.latitude, s.longitude, tr.radius * math.cos(angle), tr.radius * math.sin(angle))
            return lat, lon, s.height, tr.speed, (math.degrees(angle) + 90) % 360
        if tr.kind == "track":
            points = tr.track
            t = min(max(t, points[0][0]), points[-1][0])
            for (t0, la0, lo0, h0), (t1, la1, lo1, h1) in zip(points, points[1:]):
                if t0 <= t <= t1:
                    f = (t - t0) / (t1 - t0)
                    lat, lon, h = la0 + f * (la1 - la0), lo0 + f * (lo1 - lo0), h0 + f * (h1 - h0)
                    north = (la1 - la0) * 111320
                    east = (lo1 - lo0) * 111320 * math.cos(math.radians(lat))
                    speed = math.hypot(north, east) / (t1 - t0)
                    return lat, lon, h, speed, math.degrees(math.atan2(east, north)) % 360
        return s.latitude, s.longitude, s.height, 0.0, 0.0

    def _fix(self, t: float, utc: _dt.datetime, quality: str, phase) -> Fix:
        lat, lon, height, speed, course = self._position_at(t)
        accuracy = phase.accuracy
        correction_age, station = 1.0 + (int(t) % 3), 1
        if phase.quality == "corrections":  # what the RTCM received gave: the quality's accuracy, the real age
            accuracy = Accuracy(*DEFAULT_ACCURACY[quality])
            correction_age, station = round(self.corrections.age(t) or 0.0, 1), self.corrections.station
        if quality != "none":
            # The reported position scatters around the truth by the accuracy it claims.
            lat, lon = _offset(lat, lon, self.rng.gauss(0, accuracy.horizontal), self.rng.gauss(0, accuracy.horizontal))
            height += self.rng.gauss(0, accuracy.vertical)
        hdop = DEFAULT_HDOP[quality]
        midnight = utc.replace(hour=0, minute=0, second=0, microsecond=0)
        return Fix(seconds_of_day=(utc - midnight).total_seconds(), date=utc.date(), quality=quality,
                   lat=lat, lon=lon, ellipsoidal_height=height, undulation=self.scenario.undulation,
                   used=phase.satellites if quality != "none" else 0, hdop=hdop, pdop=round(hdop * 1.6, 1),
                   vdop=round(hdop * 1.3, 1), speed=speed, course=course, accuracy=accuracy,
                   correction_age=correction_age, station=station)

    def _used_ids(self, fix: Fix) -> dict[str, list[int]]:
        """Satellites used: the first ones of each constellation's sky, shared out in order."""
        remaining = fix.used
        used_ids = {}
        for talker in self.scenario.receiver.talkers:
            take = min(remaining, len(self.sky[talker]))
            used_ids[talker] = [sat.prn for sat in self.sky[talker][:take]]
            remaining -= take
        return used_ids

    def _sky_view(self, t: float, fix: Fix, used_ids: dict) -> dict[str, list[_Satellite]]:
        """Satellites in view per constellation, with this second's signal strengths (None: in
        view but not tracked). Draws from the seeded generator, so it is called once a second."""
        view = {}
        for talker in self.scenario.receiver.talkers:
            drift = int(t * 0.004) % 360
            sats = []
            for index, sat in enumerate(self.sky[talker]):
                snr = None if fix.quality == "none" else max(10, min(54, 30 + sat.elevation // 4 + self.rng.randint(-3, 3)))
                if index >= len(used_ids[talker]) and fix.quality != "none" and index % 3 == 0:
                    snr = None  # in view but not tracked
                sats.append(_Satellite(sat.prn, sat.elevation, (sat.azimuth + drift) % 360, snr))
            view[talker] = sats
        return view

    def _sentences(self, t: float, fix: Fix, with_gsv: bool) -> list[str]:
        receiver = self.scenario.receiver
        talkers = receiver.talkers
        combined = "GN" if len(talkers) > 1 else talkers[0]
        out = [nmea.gga(combined, fix, receiver.decimals)]
        used_ids = self._used_ids(fix)
        for talker in talkers:
            system_id = nmea.SYSTEM_ID[talker] if len(talkers) > 1 else None
            out.append(nmea.gsa(combined if len(talkers) > 1 else talker, used_ids[talker], fix, system_id))
        if with_gsv:
            for talker, sats in self._sky_view(t, fix, used_ids).items():
                out.extend(nmea.gsv(talker, sats))
        out.append(nmea.gst(combined, fix))
        out.append(nmea.rmc(combined, fix, receiver.decimals))
        if receiver.vendor == "trimble":
            out.append(nmea.ggk(fix, receiver.decimals))
        return out

    def _ubx_frames(self, t: float, utc: _dt.datetime, fix: Fix, with_sat: bool) -> list:
        """One navigation epoch as (writer, arguments) pairs, the scenario's `ubx-messages` in
        their order (default a ZED-F9P's: NAV-DOP, NAV-PVT, NAV-HPPOSLLH, NAV-SAT, NAV-EOE);
        NAV-SAT once a second, as GSV."""
        tow = ubx.itow(utc)
        h_acc, v_acc = ubx_accuracy(fix)
        correction_age = fix.correction_age if fix.quality in ("dgps", "float", "fixed") else None
        used_ids = self._used_ids(fix)
        # Drawn once a second whether or not NAV-SAT is written, so positions do not depend on
        # the message set (and equal the NMEA receiver's for the same scenario and seed).
        view = self._sky_view(t, fix, used_ids) if with_sat else None
        frames = []
        for name in self.scenario.receiver.ubx_messages:
            if name == "DOP":
                frames.append((ubx.nav_dop, dict(itow_ms=tow, gdop=fix.pdop * 1.1, pdop=fix.pdop, tdop=fix.pdop * 0.5,
                                                 vdop=fix.vdop, hdop=fix.hdop, ndop=fix.hdop * 0.7, edop=fix.hdop * 0.7)))
            elif name == "PVT":
                frames.append((ubx.nav_pvt, dict(itow_ms=tow, utc=utc, quality=fix.quality, num_sv=fix.used, lat=fix.lat,
                                                 lon=fix.lon, height=fix.ellipsoidal_height, msl=fix.msl_height, h_acc=h_acc,
                                                 v_acc=v_acc, speed=fix.speed, course=fix.course, pdop=fix.pdop,
                                                 correction_age=correction_age)))
            elif name == "HPPOSLLH":
                frames.append((ubx.nav_hpposllh, dict(itow_ms=tow, lat=fix.lat, lon=fix.lon, height=fix.ellipsoidal_height,
                                                      msl=fix.msl_height, h_acc=h_acc, v_acc=v_acc,
                                                      valid=fix.quality != "none")))
            elif name == "SAT" and view is not None:
                corrected = fix.quality in ("dgps", "float", "fixed")
                satellites = []
                for talker, sats in view.items():
                    for sat in sats:
                        used = sat.prn in used_ids[talker]
                        satellites.append((ubx.GNSS_ID[talker], sat.prn - ubx.SV_OFFSET[talker], sat.snr or 0,
                                           sat.elevation, sat.azimuth, ubx.sat_flags(used, sat.snr is not None, corrected)))
                frames.append((ubx.nav_sat, dict(itow_ms=tow, satellites=satellites)))
            elif name == "EOE":
                frames.append((ubx.nav_eoe, dict(itow_ms=tow)))
        return frames

    def _truth(self, t: float, utc: _dt.datetime, fix: Fix, rate: float, sentences: int, corrupted: bool) -> dict:
        truth = {"t": round(t, 6), "utc": utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 10000:02d}Z",
                 "quality": fix.quality, "rate": rate, "sentences": sentences, "corrupted": corrupted}
        if fix.quality != "none":
            # What a parser reads back: Trimble's GGK carries 3 more decimals than its GGA, and
            # the bridge takes the position from GGK when it has one.
            decimals = self.scenario.receiver.decimals + (3 if self.scenario.receiver.vendor == "trimble" else 0)
            lat_text, ns = nmea.latitude(fix.lat, decimals)
            lon_text, ew = nmea.longitude(fix.lon, decimals)
            truth.update({
                "latitude": _printed_degrees(lat_text, ns, 2), "longitude": _printed_degrees(lon_text, ew, 3),
                "msl_height": round(fix.msl_height, 3), "height": round(fix.msl_height, 3) + fix.undulation,
                "sigma_h": round(fix.accuracy.horizontal, 3), "sigma_v": round(fix.accuracy.vertical, 3),
                "satellites": fix.used, "hdop": fix.hdop, "speed": round(fix.speed, 3),
            })
        return truth

    def _ubx_truth(self, t: float, utc: _dt.datetime, fix: Fix, rate: float, frames: int, corrupted: bool) -> dict:
        truth = {"t": round(t, 6), "utc": utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 10000:02d}Z",
                 "quality": fix.quality, "rate": rate, "sentences": frames, "corrupted": corrupted, "protocol": "ubx"}
        if fix.quality != "none":
            # What a reader gets back from NAV-HPPOSLLH (1e-9 degrees, 0.1 mm).
            h_acc, v_acc = ubx_accuracy(fix)
            truth.update({
                "latitude": ubx.hp_degrees(*ubx.degrees_hp(fix.lat)),
                "longitude": ubx.hp_degrees(*ubx.degrees_hp(fix.lon)),
                "height": ubx.hp_metres(*ubx.height_hp(fix.ellipsoidal_height)),
                "msl_height": ubx.hp_metres(*ubx.height_hp(fix.msl_height)),
                "sigma_h": round(fix.accuracy.horizontal, 4), "sigma_v": round(fix.accuracy.vertical, 4),
                "h_acc": h_acc, "v_acc": v_acc,
                "satellites": fix.used, "hdop": fix.hdop, "speed": round(fix.speed, 3),
            })
        return truth

    def timeline(self, pace=None):
        """The scenario's items in time order. `pace(t)`, when given, is called before each step at
        scenario time `t`: the driver waits there for `t`, feeding what was written to the receiver
        into `self.corrections`, so that a corrections phase's epoch at `t` has the fix of `t`."""
        s = self.scenario
        play = _Play(rate=s.rate, events=list(s.events))
        while play.t < s.duration - 1e-9:
            t = play.t
            if pace:
                pace(t)
            yield from self._due_events(play)
            phase = self._phase_at(t)
            if phase is not play.phase:
                yield Note(t, "phase", {"quality": phase.quality, **({"replay": phase.replay} if phase.replay else {})})
                play.phase, play.replay_index = phase, 0
                if phase.limits:
                    self.corrections.configure(phase.limits)
            yield from self._corrections_notes(t, phase, play)
            if t >= play.silent_until - 1e-9:
                yield self._epoch(t, phase, play)
            play.tick += 1
            play.t = play.base + play.tick / play.rate

    def _due_events(self, play: "_Play"):
        """The scenario's events due at the current time: their notes, actions and writes."""
        t = play.t
        while play.events and play.events[0].at <= t + 1e-9:
            event = play.events.pop(0)
            detail = {k: v for k, v in vars(event).items() if k not in ("at", "kind") and v}
            yield Note(t, event.kind, detail)
            if event.kind == "outage":
                play.outage_until = t + event.duration
            elif event.kind == "silent":
                play.silent_until = t + event.duration
            elif event.kind == "unplug":
                play.silent_until = t + event.duration
                yield Action(t, "unplug", event.duration)
            elif event.kind in ("gpsd-kill", *CASTER_EVENTS, *BROKER_EVENTS):
                yield Action(t, event.kind)
            elif event.kind == "garbage":
                junk = bytes(self.rng.randrange(256) for _ in range(event.count))
                yield Write(t, junk, None)
            elif event.kind == "checksum-errors":
                play.corrupt += event.count
            elif event.kind == "rate":
                play.base, play.tick, play.rate = t, 0, event.rate
            elif event.kind == "time-jump":
                play.clock_offset += event.seconds

    def _corrections_notes(self, t: float, phase, play: "_Play"):
        """In a corrections phase: a `corrections` note when the fix changes, and an `rtcm` note (what
        the receiver's port has read: frames, damaged frames, other bytes, message numbers, station)
        once a second when it changed."""
        if phase.quality != "corrections":
            return
        quality = self.corrections.quality(t)
        if quality != play.corrections_quality:
            play.corrections_quality = quality
            age = self.corrections.age(t)
            yield Note(t, "corrections", {"quality": quality, "age": None if age is None else round(age, 1),
                                          "station": self.corrections.station})
        counts = self.corrections.counts()
        if int(t) != play.counts_second and counts != play.counts and counts["bytes"]:
            play.counts_second, play.counts = int(t), counts
            yield Note(t, "rtcm", counts)

    def _epoch(self, t: float, phase, play: "_Play") -> Write:
        """One epoch's bytes and truth (a replayed capture's cycle, or generated NMEA or UBX)."""
        s = self.scenario
        utc = s.start_time + _dt.timedelta(seconds=t + play.clock_offset)
        if phase.replay:
            cycles = self._captures.setdefault(phase.replay, read_capture(phase.replay))
            lines = cycles[play.replay_index % len(cycles)]
            truth = {"t": round(t, 6), "replay": phase.replay, "cycle": play.replay_index % len(cycles),
                     "rate": play.rate}
            play.replay_index += 1
            return Write(t, b"".join(lines), truth)
        if t < play.outage_until - 1e-9:
            quality = "none"
        elif phase.quality == "corrections":
            quality = self.corrections.quality(t)
        else:
            quality = phase.quality
        fix = self._fix(t, utc, quality, phase)
        second = int(t + play.clock_offset)
        if s.receiver.protocol == "ubx":
            parts = self._ubx_frames(t, utc, fix, with_sat=second != play.last_second)
            def encode(part, bad): return part[0](**part[1], corrupt=bad)
            make_truth = self._ubx_truth
        else:
            parts = self._sentences(t, fix, with_gsv=second != play.last_second)
            encode, make_truth = nmea.sentence, self._truth
        play.last_second = second
        data = []
        corrupted = False
        for part in parts:
            data.append(encode(part, play.corrupt > 0))
            if play.corrupt > 0:
                play.corrupt -= 1
                corrupted = True
        truth = make_truth(t, utc, fix, play.rate, len(parts), corrupted)
        if phase.quality == "corrections":
            truth["corrections"] = True
            if quality in ("dgps", "float", "fixed"):  # what GGA fields 13 and 14 say
                truth.update(diff_age=fix.correction_age, station=fix.station)
        return Write(t, b"".join(data), truth)


@dataclass
class _Play:
    """Where timeline() is: time, rate, what the events started, the corrections reported."""
    rate: float
    events: list
    t: float = 0.0
    tick: int = 0  # epochs since the last rate change, to step time without float drift
    base: float = 0.0
    clock_offset: float = 0.0
    outage_until: float = -1.0
    silent_until: float = -1.0
    corrupt: int = 0
    phase: object = None
    replay_index: int = 0
    last_second: int | None = None
    corrections_quality: str | None = None
    counts_second: int | None = None
    counts: dict | None = None
