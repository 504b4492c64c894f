"""What clients received, compared with what the virtual receiver said (its timeline).

Every check is a `Check(name, passed, detail)`; a failed check's detail is the first difference,
which the report shows. Epochs are matched by their UTC time (LocationV2 `utcTimeStamp`), so a
missing, repeated or wrong epoch is found exactly.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import statistics
from dataclasses import dataclass, field

DIFF_STATUS = {"autonomous": 1, "dgps": 2, "fixed": 4, "float": 5, "none": None}
SOLUTION_TYPE = {"autonomous": "Autonomous", "dgps": "DGPS", "fixed": "RTK Fixed", "float": "RTK Float", "none": None}
# The bridge prints coordinates with 10 decimals (Trimble GGK carries 1e-10 minutes); 1e-8
# degrees is about a millimetre.
DEGREES_TOLERANCE = 1e-8
# gpsd's TPV "status" per fix quality (gpsd JSON: 1 fix, 2 DGPS, 3 RTK fixed, 4 RTK float; gpsd
# omits 0 and 1), for the quality gpsd reports (gpsd_reported_quality), not the receiver's.
GPSD_STATUS = {"none": None, "autonomous": None, "dgps": 2, "float": 4, "fixed": 3}

# What gpsd can report of a receiver's fix quality: the one place the checks map the receiver's
# quality (the timeline's truth) to what a client of gpsd can see. The bridge reads a binary
# receiver's epochs from gpsd's JSON and is exact against it (it never decodes UBX itself), so
# V2, /events and gpsd's own TPVs are all expected to say what gpsd says.
#
# gpsd's u-blox driver (drivers/driver_ubx.c, ubx_msg_nav_pvt) reads NAV-PVT's carrSoln (flags
# bits 6-7: RTK float, RTK fixed) from release 3.25 on (STATUS_RTK_FLT / STATUS_RTK_FIX). Up to
# 3.24 (3.22 is Debian 12's) it reads only diffSoln: a u-blox in RTK float or RTK fixed is a DGPS
# fix ("status":2) in its TPV, and consecutive equal qualities then collapse into one transition.
# NMEA receivers are unaffected (driver_nmea0183.c reads GGA's RTK qualities in 3.22 too).
GPSD_UBX_CARRSOLN_SINCE = (3, 25)


def gpsd_release_tuple(release: str | None) -> tuple[int, ...] | None:
    """gpsd's release as numbers ('3.22' → (3, 22), '3.23.1' → (3, 23, 1), '3.25.1~dev' →
    (3, 25, 1)); None when unknown. `release` is the VERSION object's, or `gpsd -V`'s first word
    after 'gpsd:'."""
    if not release:
        return None
    numbers = []
    for part in release.strip().split("."):
        digits = ""
        for character in part:
            if not character.isdigit():
                break
            digits += character
        if not digits:
            break
        numbers.append(int(digits))
        if digits != part:
            break
    return tuple(numbers) if len(numbers) >= 2 else None


def gpsd_reads_ubx_carrsoln(release: str | None) -> bool:
    """Whether gpsd `release` tells a u-blox's RTK float and fixed from DGPS. An unknown release is
    taken as one that does: the checks then expect the receiver's own qualities (nothing assumed)."""
    numbers = gpsd_release_tuple(release)
    return numbers is None or numbers >= GPSD_UBX_CARRSOLN_SINCE


def gpsd_reported_quality(quality: str, protocol: str, release: str | None) -> str:
    """The fix quality gpsd `release` reports for a receiver writing `protocol` that is in `quality`."""
    if protocol == "ubx" and quality in ("float", "fixed") and not gpsd_reads_ubx_carrsoln(release):
        return "dgps"
    return quality


# gpsd merges each report's status into the fix it holds upward only (gps_merge_fix: "Only
# upgrade status, not downgrade it"); a driver starts a new fix with CLEAR_IS. The u-blox driver
# sets CLEAR_IS at each new iTOW from 3.25 on; before, never: once a u-blox's fix was DGPS (or
# better), gpsd goes on reporting it so when the receiver is back to autonomous (status 1), for as
# long as it has the device open. Measured with gpsd 3.22 (harness/gpsdcheck.py, a DGPS then
# autonomous UBX scenario: every TPV "status":2).
GPSD_UBX_NEW_FIX_SINCE = (3, 25)
# gpsd's TPV status numbers, the order gps_merge_fix compares them in.
GPSD_STATUS_NUMBER = {"autonomous": 1, "dgps": 2, "fixed": 3, "float": 4}


def gpsd_lowers_ubx_status(release: str | None) -> bool:
    """Whether gpsd `release` reports a u-blox's fix status going down (an unknown one: yes)."""
    numbers = gpsd_release_tuple(release)
    return numbers is None or numbers >= GPSD_UBX_NEW_FIX_SINCE


def gpsd_reported_qualities(qualities, protocol: str, release: str | None) -> list[str]:
    """Each epoch's quality, in order, as gpsd `release` reports it: gpsd_reported_quality, and
    for a u-blox before 3.25 never lower than the highest it reported before (an epoch without
    a fix stays "none": gpsd's mode says so)."""
    out, highest = [], None
    for quality in qualities:
        reported = gpsd_reported_quality(quality, protocol, release)
        if protocol == "ubx" and reported != "none" and not gpsd_lowers_ubx_status(release):
            if highest is not None and GPSD_STATUS_NUMBER[highest] > GPSD_STATUS_NUMBER[reported]:
                reported = highest
            highest = reported
        out.append(reported)
    return out


def annotate_reported(truths: list, protocol: str, release: str | None) -> list[str]:
    """Sets each truth's "gpsd_quality" (gpsd_reported_qualities, in order); returns the notes to
    show when gpsd reports a quality the receiver did not have."""
    qualities = [t["quality"] for t in truths]
    reported = gpsd_reported_qualities(qualities, protocol, release)
    for truth, quality in zip(truths, reported):
        truth["gpsd_quality"] = quality
    notes = [gpsd_quality_note(qualities, protocol, release)]
    held = [q for q, r in zip(qualities, reported) if r != gpsd_reported_quality(q, protocol, release)]
    if held:
        notes.append(f"gpsd {release} never lowers a u-blox's fix status (its UBX driver starts a new fix each epoch "
                     f"from 3.25 on): {len(held)} {'/'.join(sorted(set(held)))} epochs after a better fix are "
                     "checked as the better one gpsd reports")
    return [n for n in notes if n]


def gpsd_collapsed(qualities, protocol: str, release: str | None) -> list[str]:
    """Which of the receiver's `qualities` gpsd `release` reports as another (in a fixed order)."""
    present = set(qualities)
    return [q for q in ("none", "autonomous", "dgps", "float", "fixed")
            if q in present and gpsd_reported_quality(q, protocol, release) != q]


def gpsd_quality_note(qualities, protocol: str, release: str | None) -> str:
    """'' when gpsd reports every quality in `qualities` as the receiver wrote it; else what the
    checks collapsed, for the report."""
    changed = gpsd_collapsed(qualities, protocol, release)
    if not changed:
        return ""
    return (f"gpsd {release} reports UBX RTK {'/'.join(changed)} as DGPS (it reads NAV-PVT's carrSoln from 3.25 on): "
            "transitions checked as gpsd reports them")


def reported_release(reports: list) -> str | None:
    """The release in gpsd's VERSION object among watch `reports` ((arrival, report) pairs)."""
    return next((r.get("release") for _, r in reports if r.get("class") == "VERSION" and r.get("release")), None)


@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""
    skipped: bool = False


@dataclass
class Timeline:
    truths: list = field(default_factory=list)  # dicts, with "wall" (when written)
    notes: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    plugs: list = field(default_factory=list)


def load_timeline(path: str) -> Timeline:
    timeline = Timeline()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if "truth" in record:
                truth = dict(record["truth"])
                truth["wall"] = record.get("wall")
                truth["dropped"] = record.get("dropped", 0)
                timeline.truths.append(truth)
            elif "note" in record:
                timeline.notes.append(record)
            elif "action" in record:
                timeline.actions.append(record)
            elif "event" in record:
                timeline.plugs.append(record)
    return timeline


def utc_key(text: str | None):
    """A UTC timestamp as hundredths of a second since the epoch (both spellings: .4Z, .40Z, .400Z)."""
    if not text:
        return None
    try:
        moment = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return round(moment.timestamp() * 100)


def match(truths: list, messages: list) -> tuple[dict, list]:
    """(utc → (truth, arrival, message)) for the first delivery of each epoch, and repeats."""
    by_time = {utc_key(t["utc"]): t for t in truths if "utc" in t}
    matched, repeats = {}, []
    for arrival, message in messages:
        key = utc_key(message.get("utcTimeStamp"))
        if key in matched:
            repeats.append(message.get("utcTimeStamp"))
        elif key in by_time:
            matched[key] = (by_time[key], arrival, message)
    return matched, repeats


def exempt_windows(timeline: Timeline, after_plug: float = 1.5) -> list[tuple[float, float]]:
    """Scenario-time spans in which epochs may be lost by design: right after the receiver is
    (re)plugged (gpsd opens and identifies it) and while gpsd is down."""
    windows = [(p["t"], p["t"] + after_plug) for p in timeline.plugs if p.get("event") == "plugged" and p.get("t") is not None]
    for action in timeline.actions:
        if action["action"] == "gpsd-kill":
            windows.append((action["t"], action["t"] + action.get("recovery", 5.0)))
    return windows


def in_windows(t: float, windows) -> bool:
    return any(start <= t <= end for start, end in windows)


def position_difference(truth: dict, message: dict) -> str:
    """'' when the message says what the receiver said, else the first difference."""
    quality = truth["quality"]
    if message.get("diffStatus") != DIFF_STATUS[quality]:
        return f"diffStatus {message.get('diffStatus')!r}, expected {DIFF_STATUS[quality]!r} ({quality})"
    if message.get("solutionType") != SOLUTION_TYPE[quality]:
        return f"solutionType {message.get('solutionType')!r}, expected {SOLUTION_TYPE[quality]!r}"
    if quality == "none":
        if message.get("latitude") is not None:
            return f"latitude {message.get('latitude')!r} without a fix"
        return ""
    for key, expected in (("latitude", truth["latitude"]), ("longitude", truth["longitude"])):
        value = message.get(key)
        if not isinstance(value, (int, float)) or abs(value - expected) > DEGREES_TOLERANCE:
            return f"{key} {value!r}, expected {expected:.10f}"
    height = message.get("altitude")
    if not isinstance(height, (int, float)) or abs(height - truth["height"]) > 0.0025:
        return f"altitude {height!r}, expected {truth['height']:.3f} (ellipsoidal)"
    hrms = math.hypot(truth["sigma_h"], truth["sigma_h"])
    if not isinstance(message.get("hrms"), (int, float)) or abs(message["hrms"] - hrms) > 0.0015:
        return f"hrms {message.get('hrms')!r}, expected {hrms:.3f} (GST σlat, σlon)"
    if not isinstance(message.get("vrms"), (int, float)) or abs(message["vrms"] - truth["sigma_v"]) > 0.0015:
        return f"vrms {message.get('vrms')!r}, expected {truth['sigma_v']:.3f} (GST σalt)"
    if message.get("totalSatInUse") != truth["satellites"]:
        return f"totalSatInUse {message.get('totalSatInUse')!r}, expected {truth['satellites']}"
    return ""


def metres_apart(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Horizontal distance for points millimetres apart (local flat earth, WGS 84 radii)."""
    phi = math.radians((lat1 + lat2) / 2)
    s = math.sin(phi) ** 2
    meridian = 6378137.0 * (1 - 6.69437999014e-3) / (1 - 6.69437999014e-3 * s) ** 1.5
    normal = 6378137.0 / math.sqrt(1 - 6.69437999014e-3 * s)
    return math.hypot(math.radians(lat2 - lat1) * meridian, math.radians(lon2 - lon1) * normal * math.cos(phi))


def millimetre_difference(truth: dict, message: dict, limit_m: float = 0.001) -> str:
    """'' when a V2 message's position is within `limit_m` of the receiver's, horizontally and
    in ellipsoidal height (UBX receivers: HPPOSLLH carries 1e-9 degrees and 0.1 mm), and it has
    no position without a fix; else the difference."""
    if truth["quality"] == "none":
        return f"latitude {message.get('latitude')!r} without a fix" if message.get("latitude") is not None else ""
    lat, lon, height = message.get("latitude"), message.get("longitude"), message.get("altitude")
    if not all(isinstance(v, (int, float)) for v in (lat, lon, height)):
        return f"position ({lat!r}, {lon!r}, {height!r}) incomplete"
    horizontal = metres_apart(truth["latitude"], truth["longitude"], lat, lon)
    if horizontal > limit_m:
        return (f"({lat}, {lon}) is {horizontal * 1000:.2f} mm from ({truth['latitude']:.9f}, "
                f"{truth['longitude']:.9f})")
    if abs(height - truth["height"]) > limit_m:
        return f"altitude {height!r} is {abs(height - truth['height']) * 1000:.2f} mm from {truth['height']:.4f}"
    return ""


def collapse(values):
    out = []
    for value in values:
        if not out or out[-1] != value:
            out.append(value)
    return out


def stream_checks(timeline: Timeline, v2: list, v1: list, events: list, expect: dict,
                  gpsd_release: str | None = None) -> tuple[list, dict]:
    """The checks of one streaming scenario, and figures for the report and the plots.
    `gpsd_release`: the release of the gpsd in the run; the fix qualities expected on V2 and
    /events are what it reports of the receiver's (gpsd_reported_quality), and figures["notes"]
    says what that changed."""
    generated = [t for t in timeline.truths if "utc" in t]
    protocol = generated[0].get("protocol", "nmea") if generated else "nmea"

    notes = annotate_reported(generated, protocol, gpsd_release)

    def reported(truth: dict) -> dict:
        return dict(truth, quality=truth["gpsd_quality"])
    collapsed = "/".join(gpsd_collapsed([t["quality"] for t in generated], protocol, gpsd_release))
    windows = exempt_windows(timeline)
    matched, repeats = match(generated, v2)
    checks = _delivery_checks(timeline, generated, matched, repeats, v2, windows, expect)
    checks.append(_position_check(matched, reported, expect))
    checks += _quality_checks(generated, matched, reported, v2, events, expect, collapsed, gpsd_release)
    for name, passed, detail in _rate_checks(generated, matched, windows):  # LocationV2 at the receiver's rate
        checks.append(Check(name, passed, detail))
    if v1:
        checks.append(_v1_rate_check(v1))
    figures = _stream_figures(generated, matched)
    if figures["latency_ms"]:
        checks.append(_latency_check(figures, expect))
    figures["notes"] = notes
    return checks, figures


def _delivery_checks(timeline: Timeline, generated: list, matched: dict, repeats: list, v2: list, windows: list,
                     expect: dict) -> list:
    """Every epoch the receiver wrote reaches V2 once, and nothing else does."""
    checks = []
    # Epochs a healthy client must get: not corrupted on the wire (gpsd drops a sentence whose
    # checksum is wrong, so that epoch may be incomplete) and not in an exempt window.
    required = [t for t in generated if not t["corrupted"] and not t.get("dropped") and not in_windows(t["t"], windows)]
    missing = [t for t in required if utc_key(t["utc"]) not in matched]
    minimum = expect.get("min-delivery", 1.0)
    delivered = 1 - len(missing) / len(required) if required else 1.0
    checks.append(Check("V2: every epoch the receiver wrote reaches the client",
                        delivered >= minimum,
                        f"{len(required) - len(missing)}/{len(required)} delivered ({delivered:.1%}, at least {minimum:.0%})"
                        + (f"; first missing {missing[0]['utc']} (t={missing[0]['t']} s, {missing[0]['quality']})" if missing else "")))
    checks.append(Check("V2: no epoch delivered twice", not repeats, f"repeated: {repeats[:3]}" if repeats else ""))
    written = {utc_key(t["utc"]) for t in generated}
    unknown = [m.get("utcTimeStamp") for _, m in v2 if utc_key(m.get("utcTimeStamp")) not in written]
    replayed = any("replay" in t for t in timeline.truths)
    if not replayed:
        checks.append(Check("V2: no position the receiver did not write", not unknown, f"unknown: {unknown[:3]}" if unknown else ""))
    return checks


def _position_check(matched: dict, reported, expect: dict) -> Check:
    """Each delivered epoch's position (to `position-mm`, else every field) against the truth."""
    wrong = []
    millimetres = expect.get("position-mm")
    for key in sorted(matched):
        truth, _, message = matched[key]
        if truth["corrupted"]:
            continue  # gpsd dropped some of its sentences: the rest may say less
        if millimetres is not None:
            difference = millimetre_difference(truth, message, millimetres / 1000)
        else:
            difference = position_difference(reported(truth), message)
        if difference:
            wrong.append(f"{truth['utc']}: {difference}")
    name = (f"V2: every epoch's position within {millimetres:g} mm of the receiver's (horizontal and ellipsoidal height)"
            if millimetres is not None else
            "V2: position, height, quality (diffStatus, solutionType), accuracy (hrms, vrms) and satellites equal the receiver's")
    return Check(name, not wrong, f"{len(wrong)} differ; first: {wrong[0]}" if wrong else f"{len(matched)} epochs compared")


def _quality_checks(generated: list, matched: dict, reported, v2: list, events: list, expect: dict, collapsed: str,
                    gpsd_release: str | None) -> list:
    """The fix-quality transitions on V2 and as /events fixQualityChanged, and [expect] events."""
    checks = []
    expected_sequence = collapse(reported(t)["quality"] for t in generated if utc_key(t["utc"]) in matched)
    seen_sequence = collapse(next((q for q, d in DIFF_STATUS.items() if d == m.get("diffStatus")), "?") for _, m in v2
                             if utc_key(m.get("utcTimeStamp")) in matched)
    checks.append(Check("V2: fix-quality transitions in the receiver's order"
                        + (f", as gpsd {gpsd_release} reports them (UBX RTK {collapsed} as DGPS)" if collapsed else ""),
                        expected_sequence == seen_sequence,
                        f"expected {expected_sequence}, saw {seen_sequence}"))

    # /events: fixQualityChanged in the same order (the first is compared with "no fix").
    quality_events = [e.get("solutionType") for _, e in events if e.get("event") == "fixQualityChanged"]
    expected_events = [SOLUTION_TYPE[q] for q in expected_sequence]
    if expected_events and expected_events[0] is None:
        expected_events = expected_events[1:]
    checks.append(Check("/events: fixQualityChanged for each transition, in order",
                        collapse(quality_events) == collapse(expected_events),
                        f"expected {expected_events}, saw {quality_events}"))
    if "events" in expect:
        kinds = [e.get("event") for _, e in events if e.get("event") in set(expect["events"])]
        checks.append(Check(f"/events: {' → '.join(expect['events'])}", _subsequence(expect["events"], kinds),
                            f"saw {kinds}"))
    return checks


def _v1_rate_check(v1: list) -> Check:
    """V1: once a second."""
    v1_times = [arrival for arrival, message in v1 if message.get("latitude") is not None]
    intervals = [b - a for a, b in zip(v1_times, v1_times[1:])]
    median = statistics.median(intervals) if intervals else 0
    return Check("V1: one position a second", bool(intervals) and 0.9 <= median <= 1.1,
                 f"{len(v1_times)} positions, median interval {median:.3f} s")


def _stream_figures(generated: list, matched: dict) -> dict:
    """Latencies, arrivals and the quality series, for the report and the plots."""
    figures = {"latency_ms": [], "rate_series": [], "quality_series": []}
    arrivals = sorted(arrival for _, arrival, _ in matched.values())
    for truth, arrival, message in matched.values():
        if truth.get("wall"):
            figures["latency_ms"].append((arrival - truth["wall"]) * 1000)
    start = arrivals[0] if arrivals else 0
    figures["arrivals"] = [a - start for a in arrivals]
    figures["quality_series"] = [(arrival - start, truth["quality"]) for truth, arrival, _ in
                                 sorted(matched.values(), key=lambda v: v[1])]
    figures["truth_quality"] = [(t["t"], t["quality"]) for t in generated]
    return figures


def _latency_check(figures: dict, expect: dict) -> Check:
    """Receiver-to-client latency p99 under `latency-p99-ms` (250); p50 and p99 into `figures`."""
    ordered = sorted(figures["latency_ms"])
    p50 = ordered[len(ordered) // 2]
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    limit = expect.get("latency-p99-ms", 250)
    figures["latency_p50_ms"], figures["latency_p99_ms"] = p50, p99
    return Check(f"receiver-to-client latency p99 under {limit} ms", p99 <= limit,
                 f"p50 {p50:.1f} ms, p99 {p99:.1f} ms over {len(ordered)} epochs")


def _subsequence(wanted: list, seen: list) -> bool:
    position = 0
    for kind in seen:
        if position < len(wanted) and kind == wanted[position]:
            position += 1
    return position == len(wanted)


def _rate_checks(generated, matched, windows):
    """Per steady stretch of the scenario (same rate, no exempt window), the delivered rate."""
    out = []
    by_rate: dict[float, list[float]] = {}
    for truth in generated:
        key = utc_key(truth["utc"])
        if key in matched and not in_windows(truth["t"], windows):
            by_rate.setdefault(truth["rate"], []).append(matched[key][1])
    for rate, arrivals in sorted(by_rate.items()):
        if len(arrivals) < 3:
            continue
        arrivals.sort()
        intervals = [b - a for a, b in zip(arrivals, arrivals[1:]) if b - a < 2.5 / rate]
        if not intervals:
            continue
        median = statistics.median(intervals)
        measured = 1 / median if median > 0 else float("inf")
        out.append((f"V2: {rate:g} Hz epochs arrive at {rate:g} Hz", abs(measured - rate) <= 0.1 * rate,
                    f"median interval {median * 1000:.1f} ms ({measured:.2f} Hz) over {len(arrivals)} epochs"))
    return out


def gpsd_checks(timeline: Timeline, reports: list, expect: dict | None = None) -> tuple[list, dict]:
    """What gpsd itself made of the receiver's bytes (its JSON watch: `reports` are (arrival,
    report) pairs), against the timeline: the driver, a TPV for every epoch, how many TPVs per
    epoch, the epoch's last TPV within `position-mm` (default 1 mm) of the truth in latitude,
    longitude, altHAE and altMSL, status and mode per fix quality, and SKY with the receiver's
    satellites. gpsd 3.22 (Debian 12) quirks are expected where known (two TPVs per UBX epoch;
    status per quality as gpsd_reported_quality maps it for the release in gpsd's VERSION, noted
    in figures["notes"]). `expect` keys: position-mm, sky (False: the receiver writes no NAV-SAT),
    hpposllh (False: no NAV-HPPOSLLH, one TPV per epoch)."""
    expect = expect or {}
    limit = expect.get("position-mm", 1.0) / 1000
    generated = [t for t in timeline.truths if "utc" in t]
    protocol = generated[0].get("protocol", "nmea") if generated else "nmea"
    release = reported_release(reports)
    version = release or "?"
    notes = annotate_reported(generated, protocol, release)
    collapsed = "/".join(gpsd_collapsed([t["quality"] for t in generated], protocol, release))
    checks: list[Check] = []
    check_gpsd_driver(checks, reports, protocol, version)
    by_time, arrivals_by_time, order = reports_by_time(reports)
    windows = exempt_windows(timeline)
    required = [t for t in generated if not t["corrupted"] and not t.get("dropped") and not in_windows(t["t"], windows)]
    missing = [t for t in required if utc_key(t["utc"]) not in by_time]
    checks.append(Check(f"gpsd {version}: a TPV for every epoch", not missing,
                        f"{len(required) - len(missing)}/{len(required)}" + (f"; first missing {missing[0]['utc']}" if missing else "")))
    # gpsd 3.22's u-blox driver reports a fix at every NAV-PVT (1e-7 degrees, mm) and again at the
    # end of the cycle it detected (with NAV-HPPOSLLH's 1e-9 degrees): two TPVs with the epoch's time.
    quirk = protocol == "ubx" and version.startswith("3.22") and expect.get("hpposllh", True)
    # The run's first and last epochs may have one: gpsd names the driver (and starts its cycle
    # detection) at the first packet, and closes the device before a last cycle's end.
    edges = {utc_key(required[0]["utc"]), utc_key(required[-1]["utc"])} if required else set()
    counts = check_tpvs_per_epoch(checks, required, by_time, version, quirk, edges)
    wrong_status, worst, first_worst = check_last_tpv_positions(checks, required, by_time, protocol, release, version,
                                                                quirk, edges, limit)
    check_tpv_spread(checks, required, arrivals_by_time, version)
    checks.append(Check(f"gpsd {version}: mode and status for each fix quality ({f'UBX RTK {collapsed} as DGPS, status 2' if collapsed else 'RTK 4 float, 3 fixed'})",
                        not wrong_status, f"{len(wrong_status)} epochs; first: {wrong_status[0]}" if wrong_status else ""))
    check_sky(checks, generated, required, order, version, expect)
    return checks, _gpsd_figures(version, worst, first_worst, counts, notes)


def check_gpsd_driver(checks: list, reports: list, protocol: str, version: str):
    """gpsd identified the receiver with the protocol's driver."""
    drivers = sorted({r["driver"] for _, r in reports if r.get("class") == "DEVICE" and r.get("driver")})
    wanted_driver = "u-blox" if protocol == "ubx" else "NMEA0183"
    checks.append(Check(f"gpsd {version}: the receiver is identified as driver {wanted_driver!r}",
                        wanted_driver in drivers, f"DEVICE drivers: {drivers}"))


def reports_by_time(reports: list) -> tuple[dict, dict, list]:
    """gpsd's TPVs by their time, their arrivals by that time, and every (arrival, report) in order."""
    by_time: dict = {}
    arrivals_by_time: dict = {}
    order = []  # (arrival, kind, report) to pair SKY with the epoch before it
    for arrival, report in reports:
        if report.get("class") == "TPV" and report.get("time"):
            by_time.setdefault(utc_key(report["time"]), []).append(report)
            arrivals_by_time.setdefault(utc_key(report["time"]), []).append(arrival)
        order.append((arrival, report))
    return by_time, arrivals_by_time, order


def check_tpvs_per_epoch(checks: list, required: list, by_time: dict, version: str, quirk: bool, edges: set) -> dict:
    """How many TPVs gpsd printed for each epoch: one, or two with the 3.22 u-blox quirk; returns
    the count of epochs by TPVs."""
    per_epoch = 2 if quirk else 1
    counts: dict[int, int] = {}
    edge_singles = 0
    for t in required:
        n = len(by_time.get(utc_key(t["utc"]), []))
        if quirk and n == 1 and utc_key(t["utc"]) in edges:
            edge_singles += 1
            n = per_epoch
        counts[n] = counts.get(n, 0) + 1
    checks.append(Check(f"gpsd {version}: {'two TPVs per epoch (3.22: at NAV-PVT and at the cycle end)' if quirk else 'exactly one TPV per epoch'}",
                        set(counts) <= {per_epoch},
                        "epochs by number of TPVs: " + ", ".join(f"{n} TPV: {c}" for n, c in sorted(counts.items()))
                        + (f" (the first or last epoch with 1 counted as {per_epoch}: {edge_singles})" if edge_singles else "")))

    return counts


def check_last_tpv_positions(checks: list, required: list, by_time: dict, protocol: str, release, version: str,
                             quirk: bool, edges: set, limit: float) -> tuple[list, float, float]:
    """Each epoch's last TPV against the truth; returns the epochs with the wrong mode or status,
    the largest difference and the first TPVs' largest horizontal difference (metres)."""
    far, wrong_status, worst = [], [], 0.0
    first_worst = 0.0
    for truth in required:
        tpvs = by_time.get(utc_key(truth["utc"]))
        if not tpvs:
            continue
        last = tpvs[-1]
        mode = 1 if truth["quality"] == "none" else 3
        status = GPSD_STATUS[truth.get("gpsd_quality") or gpsd_reported_quality(truth["quality"], protocol, release)]
        if last.get("mode") != mode or last.get("status") != status:
            wrong_status.append(f"{truth['utc']} {truth['quality']}: mode {last.get('mode')}, status {last.get('status')}; "
                                f"expected mode {mode}, status {status}")
        if truth["quality"] == "none":
            continue
        if not all(isinstance(last.get(k), (int, float)) for k in ("lat", "lon", "altHAE", "altMSL")):
            far.append(f"{truth['utc']}: incomplete TPV {last}")
            continue
        if quirk and len(tpvs) == 1 and utc_key(truth["utc"]) in edges:
            continue  # an edge epoch gpsd reported only at NAV-PVT (above): no HPPOSLLH TPV to judge
        errors = (metres_apart(truth["latitude"], truth["longitude"], last["lat"], last["lon"]),
                  abs(last["altHAE"] - truth["height"]), abs(last["altMSL"] - truth["msl_height"]))
        worst = max(worst, *errors)
        if max(errors) > limit:
            far.append(f"{truth['utc']}: ({last['lat']}, {last['lon']}, HAE {last['altHAE']}, MSL {last['altMSL']}) vs "
                       f"({truth['latitude']:.9f}, {truth['longitude']:.9f}, {truth['height']:.4f}, {truth['msl_height']:.4f}): "
                       f"{errors[0] * 1000:.2f} mm horizontal, {errors[1] * 1000:.2f}/{errors[2] * 1000:.2f} mm HAE/MSL")
        first = tpvs[0]
        if len(tpvs) > 1 and "lat" in first:
            first_worst = max(first_worst, metres_apart(truth["latitude"], truth["longitude"], first["lat"], first["lon"]))
    checks.append(Check(f"gpsd {version}: each epoch's last TPV within {limit * 1000:g} mm of the receiver's (lat, lon, altHAE, altMSL)",
                        not far, (f"{len(far)} epochs off; first: {far[0]}" if far else "") +
                        f"{'; ' if far else ''}largest difference {worst * 1000:.3f} mm"))
    return wrong_status, worst, first_worst


def check_tpv_spread(checks: list, required: list, arrivals_by_time: dict, version: str):
    """Each epoch's TPVs within a quarter period of each other."""
    # The bridge serves an epoch's last TPV if it comes within a quarter period of the first (it
    # holds a fix that long, docs/input.md). gpsd 3.22 with NAV-DOP before NAV-PVT sends the
    # precise TPV of every other epoch only at the next epoch's first message, a period late.
    late, slowest = [], 0.0
    for truth in required:
        arrivals = arrivals_by_time.get(utc_key(truth["utc"]))
        if arrivals and len(arrivals) > 1:
            spread = max(arrivals) - min(arrivals)
            slowest = max(slowest, spread)
            if spread > 0.25 / truth["rate"]:
                late.append(f"{truth['utc']}: {spread * 1000:.0f} ms")
    checks.append(Check(f"gpsd {version}: each epoch's last TPV within a quarter period of its first (the bridge's hold)",
                        not late, (f"{len(late)} epochs late; first: {late[0]}; " if late else "") +
                        f"largest spread {slowest * 1000:.1f} ms"))


def check_sky(checks: list, generated: list, required: list, order: list, version: str, expect: dict):
    """SKY with the receiver's satellites in use once a second, or none when expect["sky"] is False."""
    # SKY: paired with the epoch of the TPV before it (gpsd 3.22 stamps a UBX SKY from a GPS
    # week it may not know), its satellites used equal the receiver's.
    by_utc = {utc_key(t["utc"]): t for t in generated}
    skies, sky_wrong, current = 0, [], None
    for _, report in order:
        if report.get("class") == "TPV" and report.get("time"):
            current = by_utc.get(utc_key(report["time"]))
        elif report.get("class") == "SKY" and report.get("satellites") and current and current["quality"] != "none":
            skies += 1
            used = sum(1 for sat in report["satellites"] if sat.get("used"))
            if used != current["satellites"]:
                sky_wrong.append(f"{current['utc']}: {used} used, expected {current['satellites']}")
    fix_seconds = len({t["utc"][:19] for t in required if t["quality"] != "none"})
    if not expect.get("sky", True):
        checks.append(Check(f"gpsd {version}: no SKY (the receiver writes no satellites)", skies == 0, f"{skies} SKY reports"))
        return
    checks.append(Check(f"gpsd {version}: SKY with the receiver's satellites in use, once a second",
                        skies >= fix_seconds - 1 and not sky_wrong,
                        f"{skies} SKY reports for {fix_seconds} seconds with a fix" + (f"; first wrong: {sky_wrong[0]}" if sky_wrong else "")))


def _gpsd_figures(version, worst, first_worst, counts, notes) -> dict:
    return {"gpsd_version": version, "largest_difference_mm": round(worst * 1000, 4),
            "first_tpv_largest_horizontal_mm": round(first_worst * 1000, 3), "tpvs_per_epoch": counts,
            "notes": list(notes)}
