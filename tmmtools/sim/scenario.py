"""Scenario files: a receiver described over time (hwtests/README.md, "Scenario format").

A scenario is TOML. `load(path)` reads and validates one and returns a `Scenario`; any mistake is
a `ScenarioError` naming the key and what is allowed, so a bench engineer can fix the file
without reading this code.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import tomllib
from dataclasses import dataclass, field, replace

from tmmtools import checkout
from tmmtools.sim.corrections import Limits

# "corrections": the fix follows the RTCM written to the receiver (sim/corrections.py).
QUALITIES = ("none", "autonomous", "dgps", "float", "fixed", "corrections")
# The limits of a corrections phase (seconds), its keys and defaults (sim/corrections.py).
CORRECTION_LIMITS = {"float-after": "float_after", "fixed-after": "fixed_after", "age-limit": "age_limit",
                     "autonomous-after": "autonomous_after"}
# The casters the runner can start for a [corrections] section (hwtests/README.md, "Corrections"):
# RTKLIB's str2str (NTRIP Rev 1) or tmmtools.peers.ntrip_caster (Rev 2 and Rev 1).
CASTERS = ("str2str", "test-caster")
TALKERS = ("GP", "GL", "GA", "GB", "GQ")
VENDORS = ("trimble", "ublox", "generic")
PROTOCOLS = ("nmea", "ubx")  # what the receiver writes: NMEA 0183 sentences, or u-blox UBX binary
# The UBX messages a receiver with protocol = "ubx" can write per epoch (sim/ubx.py), and the
# default set: a ZED-F9P's, in its output order (by message id, NAV-EOE last).
UBX_MESSAGES = ("DOP", "PVT", "HPPOSLLH", "SAT", "EOE")
TRAJECTORIES = ("fixed", "line", "circle", "track")
EVENTS = ("outage", "silent", "unplug", "gpsd-kill", "garbage", "checksum-errors", "rate", "time-jump",
          "caster-kill", "caster-restart", "wrong-password", "restore-password", "broker-stop", "broker-restart")
# Events the runner carries out on the corrections source (the simulator only announces them).
CASTER_EVENTS = ("caster-kill", "caster-restart", "wrong-password", "restore-password")
# Events the runner carries out on the [mqtt] section's broker (announced only, as the above).
BROKER_EVENTS = ("broker-stop", "broker-restart")

# 1-sigma horizontal and vertical accuracy (metres, as GST reports it), HDOP and the age of
# corrections, per fix quality, when a phase does not say: typical of a survey receiver.
DEFAULT_ACCURACY = {
    "none": (0.0, 0.0),
    "autonomous": (1.5, 3.0),
    "dgps": (0.45, 0.9),
    "float": (0.15, 0.3),
    "fixed": (0.010, 0.020),
}
DEFAULT_HDOP = {"none": 99.9, "autonomous": 1.2, "dgps": 0.9, "float": 0.8, "fixed": 0.7}


class ScenarioError(Exception):
    pass


@dataclass(frozen=True)
class Accuracy:
    horizontal: float
    vertical: float


@dataclass(frozen=True)
class Phase:
    at: float
    quality: str = "autonomous"
    accuracy: Accuracy = Accuracy(1.5, 3.0)
    satellites: int = 12
    replay: str | None = None  # a gpsd-format capture played instead of generated sentences
    limits: Limits | None = None  # quality = "corrections": when the fix follows the RTCM received


@dataclass(frozen=True)
class Event:
    at: float
    kind: str
    duration: float = 0.0
    count: int = 0
    rate: float = 0.0
    seconds: float = 0.0


@dataclass(frozen=True)
class CorrectionSource:
    """[corrections]: the NTRIP caster the runner starts and configures in the bridge."""
    caster: str = "test-caster"
    mount: str = "RTCM3"
    user: str = "rover"
    password: str = "secret"
    station_id: int = 1234  # DF003 of the caster's RTCM (1006 and the MSMs)
    gpsd_readonly: bool = False  # gpsd -b: it then refuses to write to the receiver


@dataclass(frozen=True)
class FleetBroker:
    """[mqtt]: the MQTT broker (mosquitto) the runner starts, and the bridge's fleet options."""
    rate: float = 1.0  # mqtt-rate, Hz (0: every epoch)
    topic: str = "tmm-bridge/hwtest"  # mqtt-topic: PREFIX/location, PREFIX/status, PREFIX/events
    client_id: str = "tmm-bridge-hwtest"  # mqtt-client-id


@dataclass(frozen=True)
class Trajectory:
    kind: str = "fixed"
    speed: float = 0.0  # m/s
    heading: float = 0.0  # degrees from north (line)
    radius: float = 0.0  # metres (circle)
    track: tuple = ()  # ((t, lat, lon, height), ...) for "track"


@dataclass(frozen=True)
class Receiver:
    vendor: str = "generic"
    model: str = "virtual receiver"
    serial: str = "SIM0001"
    talkers: tuple = ("GP",)
    decimals: int = 5  # decimals of the minutes in GGA/RMC (GGK writes 3 more)
    protocol: str = "nmea"  # "ubx": UBX NAV-DOP/PVT/HPPOSLLH/SAT/EOE instead of NMEA (sim/ubx.py)
    ubx_messages: tuple = UBX_MESSAGES  # which UBX NAV messages, in this order, per epoch


@dataclass(frozen=True)
class Scenario:
    name: str
    path: str
    description: str = ""
    seed: int = 1
    duration: float = 60.0
    rate: float = 1.0
    start_time: _dt.datetime = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)
    latitude: float = 0.0
    longitude: float = 0.0
    height: float = 0.0  # ellipsoidal, metres
    undulation: float = 0.0  # geoid separation: MSL height = height - undulation
    receiver: Receiver = Receiver()
    trajectory: Trajectory = Trajectory()
    phases: tuple = ()
    events: tuple = ()
    expect: dict = field(default_factory=dict)  # what the runner checks (hwtests/README.md)
    corrections: CorrectionSource | None = None  # [corrections]: the caster the runner starts
    mqtt: FleetBroker | None = None  # [mqtt]: the broker the runner starts and the bridge publishes to


def with_protocol(scenario: Scenario, protocol: str) -> Scenario:
    """The scenario played with another output protocol (tmm-sim --protocol): UBX makes the
    receiver a u-blox; a scenario that replays an NMEA capture cannot be played as UBX."""
    if protocol not in PROTOCOLS:
        raise ScenarioError(f"protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    if protocol == "ubx" and any(p.replay for p in scenario.phases):
        raise ScenarioError(f"{scenario.path}: replay (an NMEA capture) cannot be played by a receiver with protocol = \"ubx\"")
    vendor = "ublox" if protocol == "ubx" else scenario.receiver.vendor
    return replace(scenario, receiver=replace(scenario.receiver, protocol=protocol, vendor=vendor))


def _where(path: str, key: str) -> str:
    return f"{path}: {key}"


def _number(table: dict, key: str, path: str, default=None, low=None, high=None, integer=False):
    if key not in table:
        if default is None:
            raise ScenarioError(f"{_where(path, key)} is required")
        return default
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        raise ScenarioError(f"{_where(path, key)} must be {'an integer' if integer else 'a number'}, not {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ScenarioError(f"{_where(path, key)} must be finite")
    if low is not None and value < low or high is not None and value > high:
        raise ScenarioError(f"{_where(path, key)} = {value} is outside {low}...{high}")
    return value


def _choice(table: dict, key: str, path: str, choices, default=None) -> str:
    value = table.get(key, default)
    if value is None:
        raise ScenarioError(f"{_where(path, key)} is required (one of {', '.join(choices)})")
    if value not in choices:
        raise ScenarioError(f"{_where(path, key)} = {value!r}: expected one of {', '.join(choices)}")
    return value


def _unknown(table: dict, allowed, path: str, section: str) -> None:
    for key in table:
        if key not in allowed:
            raise ScenarioError(f"{path}: unknown key {key!r} in {section} (allowed: {', '.join(sorted(allowed))})")


def _resolve(base: str, relative: str) -> str:
    """A path in a scenario is relative to the scenario's folder, else to the repository root."""
    if os.path.isabs(relative):
        return relative
    candidate = os.path.join(os.path.dirname(base), relative)
    if os.path.exists(candidate):
        return candidate
    return checkout.path(relative)


def _read_track(path: str, source: str) -> tuple:
    """A recorded track: CSV lines `seconds,latitude,longitude,height`, `#` comments."""
    points = []
    try:
        with open(path, encoding="ascii") as handle:
            for number, line in enumerate(handle, start=1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                try:
                    t, lat, lon, h = (float(x) for x in line.split(","))
                except ValueError:
                    raise ScenarioError(f"{path}:{number}: expected seconds,latitude,longitude,height") from None
                if points and t <= points[-1][0]:
                    raise ScenarioError(f"{path}:{number}: times must increase")
                points.append((t, lat, lon, h))
    except OSError as error:
        raise ScenarioError(f"{source}: trajectory.file: cannot read {path}: {error.strerror}") from None
    if len(points) < 2:
        raise ScenarioError(f"{path}: a track needs at least two points")
    return tuple(points)


def load(path: str) -> Scenario:
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as error:
        raise ScenarioError(f"{path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{path}: not valid TOML: {error}") from None
    return parse(data, path)


def parse(data: dict, path: str = "<scenario>") -> Scenario:
    """A scenario from its TOML table; ScenarioError names the first thing that is wrong, in
    the file's order: top level, [position], [receiver], [trajectory], [[phase]], [[event]]."""
    _unknown(data, {"name", "description", "seed", "duration", "rate", "start-time", "position",
                    "receiver", "trajectory", "phase", "event", "expect", "corrections", "mqtt"}, path, "the top level")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ScenarioError(f"{_where(path, 'name')} is required (a short identifier)")
    duration = _number(data, "duration", path, low=0.1, high=7 * 86400)
    rate = _number(data, "rate", path, default=1, low=1, high=50)
    seed = _number(data, "seed", path, default=1, integer=True)
    start = _start_time(data, path)
    latitude, longitude, height, undulation = _position(data.get("position", {}), path)
    receiver = _receiver(data.get("receiver", {}), path)
    trajectory = _trajectory(data.get("trajectory", {}), path)
    phases = _phases(data.get("phase", [{"at": 0, "quality": "autonomous"}]), path, duration, receiver)
    events = _events(data.get("event", []), path, duration)
    expect = data.get("expect", {})
    if not isinstance(expect, dict):
        raise ScenarioError(f"{path}: [expect] must be a table")
    corrections = _corrections(data["corrections"], path) if "corrections" in data else None
    if corrections is None and any(e.kind in CASTER_EVENTS for e in events):
        kind = next(e.kind for e in events if e.kind in CASTER_EVENTS)
        raise ScenarioError(f"{path}: event kind = {kind!r} needs a [corrections] section (the caster it acts on)")
    mqtt = _mqtt(data["mqtt"], path) if "mqtt" in data else None
    if mqtt is None and any(e.kind in BROKER_EVENTS for e in events):
        kind = next(e.kind for e in events if e.kind in BROKER_EVENTS)
        raise ScenarioError(f"{path}: event kind = {kind!r} needs an [mqtt] section (the broker it acts on)")

    return Scenario(name=name, path=path, description=str(data.get("description", "")), seed=seed,
                    duration=float(duration), rate=float(rate), start_time=start, latitude=latitude,
                    longitude=longitude, height=height, undulation=undulation, receiver=receiver,
                    trajectory=trajectory, phases=tuple(phases), events=tuple(events), expect=expect,
                    corrections=corrections, mqtt=mqtt)


def _mqtt(table, path: str) -> FleetBroker:
    """[mqtt]: the bridge's mqtt-rate, mqtt-topic and mqtt-client-id for the runner's broker."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{path}: [mqtt] must be a table")
    _unknown(table, {"rate", "topic", "client-id"}, path, "[mqtt]")
    texts = {}
    for key, default in (("topic", FleetBroker.topic), ("client-id", FleetBroker.client_id)):
        value = table.get(key, default)
        # A topic prefix and a client id: no wildcards, no spaces, no empty levels.
        if (not isinstance(value, str) or not value or not value.isprintable() or any(c in value for c in " +#")
                or "//" in value or value.startswith("/") or value.endswith("/")):
            raise ScenarioError(f"{_where(path, 'mqtt.' + key)} = {value!r}: a non-empty word (no space, '+', '#', "
                                "empty level)")
        texts[key.replace("-", "_")] = value
    rate = _number({"mqtt." + k: v for k, v in table.items()}, "mqtt.rate", path, default=1, low=0, high=50)
    return FleetBroker(rate=float(rate), **texts)


def _corrections(table, path: str) -> CorrectionSource:
    """[corrections]: the caster the runner starts, its mount point and login."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{path}: [corrections] must be a table")
    _unknown(table, {"caster", "mount", "user", "password", "station-id", "gpsd-readonly"}, path, "[corrections]")
    texts = {}
    for key, default in (("mount", "RTCM3"), ("user", "rover"), ("password", "secret")):
        value = table.get(key, default)
        # A mount point, user or password goes into a URL and a Basic login: printable, no ':' in the user.
        if (not isinstance(value, str) or not value or not value.isprintable() or any(c in value for c in " /@")
                or (key == "user" and ":" in value)):
            forbidden = "no space, '/', '@'" + (", ':'" if key == "user" else "")
            raise ScenarioError(f"{_where(path, 'corrections.' + key)} = {value!r}: a non-empty word ({forbidden})")
        texts[key] = value
    readonly = table.get("gpsd-readonly", False)
    if not isinstance(readonly, bool):
        raise ScenarioError(f"{_where(path, 'corrections.gpsd-readonly')} must be true or false")
    return CorrectionSource(caster=_choice(table, "caster", path + ": corrections", CASTERS, "test-caster"),
                            station_id=_number(table, "station-id", path, default=1234, low=0, high=4095, integer=True),
                            gpsd_readonly=readonly, **texts)


def _start_time(data: dict, path: str) -> _dt.datetime:
    start = data.get("start-time", "2026-01-01T00:00:00Z")
    if isinstance(start, str):
        try:
            start = _dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
        except ValueError:
            raise ScenarioError(f"{_where(path, 'start-time')} = {start!r}: expected e.g. 2026-12-02T10:00:00Z") from None
    if not isinstance(start, _dt.datetime):
        raise ScenarioError(f"{_where(path, 'start-time')} must be a date and time")
    if start.tzinfo is None:
        start = start.replace(tzinfo=_dt.timezone.utc)
    return start


def _position(position: dict, path: str) -> tuple:
    """[position]: (latitude, longitude, height, undulation)."""
    _unknown(position, {"latitude", "longitude", "height", "undulation"}, path, "[position]")
    return (_number(position, "latitude", path, default=0.0, low=-89.9, high=89.9),
            _number(position, "longitude", path, default=0.0, low=-180, high=180),
            _number(position, "height", path, default=0.0, low=-1000, high=20000),
            _number(position, "undulation", path, default=0.0, low=-150, high=150))


def _receiver(r: dict, path: str) -> Receiver:
    _unknown(r, {"vendor", "model", "serial", "talkers", "decimals", "protocol", "ubx-messages"}, path, "[receiver]")
    messages = r.get("ubx-messages", list(UBX_MESSAGES))
    if (not isinstance(messages, list) or any(m not in UBX_MESSAGES for m in messages)
            or len(set(messages)) != len(messages) or "PVT" not in messages):
        raise ScenarioError(f"{path}: receiver.ubx-messages = {messages!r}: distinct values from "
                            f"{', '.join(UBX_MESSAGES)}, with PVT")
    talkers = tuple(r.get("talkers", ["GP"]))
    if not talkers or any(t not in TALKERS for t in talkers) or len(set(talkers)) != len(talkers):
        raise ScenarioError(f"{path}: receiver.talkers = {list(talkers)!r}: distinct values from {', '.join(TALKERS)}")
    receiver = Receiver(
        vendor=_choice(r, "vendor", path, VENDORS, "generic"),
        model=str(r.get("model", "virtual receiver")),
        serial=str(r.get("serial", "SIM0001")),
        talkers=talkers,
        decimals=_number(r, "decimals", path, default=5, low=4, high=7, integer=True),
        protocol=_choice(r, "protocol", path, PROTOCOLS, "nmea"),
        ubx_messages=tuple(messages),
    )
    if receiver.protocol == "ubx" and receiver.vendor != "ublox":
        raise ScenarioError(f"{path}: receiver.protocol = \"ubx\" needs vendor = \"ublox\" (not {receiver.vendor!r})")
    return receiver


def _trajectory(t: dict, path: str) -> Trajectory:
    _unknown(t, {"kind", "speed", "heading", "radius", "file"}, path, "[trajectory]")
    kind = _choice(t, "kind", path, TRAJECTORIES, "fixed")
    trajectory = Trajectory(
        kind=kind,
        speed=_number(t, "speed", path, default=0.0 if kind in ("fixed", "track") else None, low=0, high=300),
        heading=_number(t, "heading", path, default=0.0, low=0, high=360),
        radius=_number(t, "radius", path, default=0.0 if kind != "circle" else None, low=0, high=100000),
        track=_read_track(_resolve(path, t["file"]), path) if kind == "track" and "file" in t else (),
    )
    if kind == "track" and not trajectory.track:
        raise ScenarioError(f"{path}: trajectory.file is required for kind = \"track\"")
    return trajectory


def _phases(tables: list, path: str, duration: float, receiver: Receiver) -> list:
    """[[phase]]: the first at 0, times increasing; a replay only for an NMEA receiver."""
    phases = []
    for index, p in enumerate(tables):
        where = f"{path}: phase[{index}]"
        _unknown(p, {"at", "quality", "horizontal", "vertical", "satellites", "replay", *CORRECTION_LIMITS}, where,
                 "the phase")
        quality = _choice(p, "quality", where, QUALITIES, "autonomous")
        limits = _limits(p, where, quality)
        default_h, default_v = DEFAULT_ACCURACY.get(quality, (0.0, 0.0))
        replay = p.get("replay")
        if replay is not None:
            replay = _resolve(path, str(replay))
            if not os.path.isfile(replay):
                raise ScenarioError(f"{where}: replay = {p['replay']!r}: no such capture")
        phases.append(Phase(
            at=_number(p, "at", where, low=0, high=duration),
            quality=quality,
            accuracy=Accuracy(_number(p, "horizontal", where, default=default_h, low=0, high=1000),
                              _number(p, "vertical", where, default=default_v, low=0, high=1000)),
            satellites=_number(p, "satellites", where, default=0 if quality == "none" else 12, low=0, high=64, integer=True),
            replay=replay,
            limits=limits,
        ))
    if receiver.protocol == "ubx" and any(p.replay for p in phases):
        raise ScenarioError(f"{path}: replay (an NMEA capture) cannot be played by a receiver with protocol = \"ubx\"")
    if not phases or phases[0].at != 0:
        raise ScenarioError(f"{path}: the first [[phase]] must start at = 0")
    if any(b.at <= a.at for a, b in zip(phases, phases[1:])):
        raise ScenarioError(f"{path}: [[phase]] times must increase")
    return phases


def _limits(p: dict, where: str, quality: str) -> Limits | None:
    """A corrections phase's limits (its accuracy is the current quality's default, it replays
    nothing); the limit keys belong to corrections phases only."""
    given = [key for key in CORRECTION_LIMITS if key in p]
    if quality != "corrections":
        if given:
            raise ScenarioError(f"{where}: {given[0]} is for quality = \"corrections\" only")
        return None
    for key in ("horizontal", "vertical", "replay"):
        if key in p:
            raise ScenarioError(f"{where}: {key} cannot be given with quality = \"corrections\" (its accuracy is "
                                "each quality's default, DEFAULT_ACCURACY)")
    defaults = Limits()
    values = {field: _number(p, key, where, default=getattr(defaults, field), low=0, high=86400)
              for key, field in CORRECTION_LIMITS.items()}
    if values["age_limit"] <= 0:
        raise ScenarioError(f"{where}: age-limit must be over 0")
    return Limits(**{k: float(v) for k, v in values.items()})


# The field each event kind cannot do without.
EVENT_NEEDS = {"outage": "duration", "silent": "duration", "unplug": "duration", "garbage": "count",
               "checksum-errors": "count", "rate": "rate", "time-jump": "seconds"}


def _events(tables: list, path: str, duration: float) -> list:
    """[[event]], sorted by time."""
    events = []
    for index, e in enumerate(tables):
        where = f"{path}: event[{index}]"
        _unknown(e, {"at", "kind", "duration", "count", "rate", "seconds"}, where, "the event")
        kind = _choice(e, "kind", where, EVENTS)
        needs = EVENT_NEEDS.get(kind)
        if needs and needs not in e:
            raise ScenarioError(f"{where}: kind = {kind!r} needs {needs}")
        events.append(Event(
            at=_number(e, "at", where, low=0, high=duration),
            kind=kind,
            duration=_number(e, "duration", where, default=0.0, low=0, high=duration),
            count=_number(e, "count", where, default=0, low=0, high=100000, integer=True),
            rate=_number(e, "rate", where, default=0.0 if kind != "rate" else None, low=0 if kind != "rate" else 1, high=50),
            seconds=_number(e, "seconds", where, default=0.0, low=-86400 * 366, high=86400 * 366),
        ))
    events.sort(key=lambda e: e.at)
    return events
