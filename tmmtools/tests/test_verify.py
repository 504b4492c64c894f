"""The checks' map from a receiver's fix quality to what gpsd reports of it
(harness/verify.py: gpsd_reported_quality), and the checks that go through it: gpsd before 3.25
reports a u-blox's RTK float and fixed as DGPS, so V2, /events and gpsd's own TPVs are expected
to say DGPS there, and the report says so.

Run: /usr/bin/python3 -m tmmtools.tests from the repository root (hwtest.py runs them first).
"""

import os
import unittest

from tmmtools.harness import verify

COLD_START = ["none", "autonomous", "dgps", "float", "fixed", "float"]


def reported_sequence(qualities, protocol, release):
    return verify.collapse(verify.gpsd_reported_quality(q, protocol, release) for q in qualities)


class GpsdReportedQuality(unittest.TestCase):
    def test_gpsd_3_22_reports_ubx_rtk_float_and_fixed_as_dgps(self):
        self.assertEqual(verify.gpsd_reported_quality("float", "ubx", "3.22"), "dgps")
        self.assertEqual(verify.gpsd_reported_quality("fixed", "ubx", "3.22"), "dgps")
        for quality in ("none", "autonomous", "dgps"):
            self.assertEqual(verify.gpsd_reported_quality(quality, "ubx", "3.22"), quality)

    def test_every_release_before_3_25_collapses_and_3_25_on_keeps_them(self):
        for release in ("3.22", "3.23", "3.23.1", "3.24"):
            self.assertEqual(verify.gpsd_reported_quality("fixed", "ubx", release), "dgps", release)
        for release in ("3.25", "3.25.1~dev", "3.26.1", "3.27.5", "4.0"):
            self.assertEqual(verify.gpsd_reported_quality("float", "ubx", release), "float", release)
            self.assertEqual(verify.gpsd_reported_quality("fixed", "ubx", release), "fixed", release)

    def test_nmea_receivers_keep_their_qualities_whatever_the_release(self):
        for quality in COLD_START:
            self.assertEqual(verify.gpsd_reported_quality(quality, "nmea", "3.22"), quality)

    def test_an_unknown_release_expects_the_receivers_qualities(self):
        # Nothing is assumed of a gpsd whose release is unknown: the check then names what differs.
        self.assertEqual(verify.gpsd_reported_quality("fixed", "ubx", None), "fixed")
        self.assertEqual(verify.gpsd_reported_quality("float", "ubx", "?"), "float")

    def test_the_cold_start_sequence_under_3_22_and_3_25(self):
        self.assertEqual(reported_sequence(COLD_START, "ubx", "3.22"), ["none", "autonomous", "dgps"])
        self.assertEqual(reported_sequence(COLD_START, "ubx", "3.25"), COLD_START)
        self.assertEqual(reported_sequence(COLD_START, "nmea", "3.22"), COLD_START)

    def test_release_numbers(self):
        self.assertEqual(verify.gpsd_release_tuple("3.22"), (3, 22))
        self.assertEqual(verify.gpsd_release_tuple("3.23.1"), (3, 23, 1))
        self.assertEqual(verify.gpsd_release_tuple("3.25.1~dev"), (3, 25, 1))
        self.assertIsNone(verify.gpsd_release_tuple(None))
        self.assertIsNone(verify.gpsd_release_tuple("?"))
        self.assertEqual(verify.reported_release([(0.0, {"class": "WATCH"}), (0.1, {"class": "VERSION", "release": "3.22"})]), "3.22")
        self.assertIsNone(verify.reported_release([(0.0, {"class": "TPV"})]))

    def test_the_note_says_what_was_collapsed(self):
        note = verify.gpsd_quality_note(COLD_START, "ubx", "3.22")
        self.assertIn("gpsd 3.22 reports UBX RTK float/fixed as DGPS", note)
        self.assertIn("transitions checked as gpsd reports them", note)
        self.assertEqual(verify.gpsd_quality_note(["none", "autonomous", "dgps", "fixed"], "ubx", "3.22").count("float"), 0)
        self.assertEqual(verify.gpsd_quality_note(COLD_START, "ubx", "3.25"), "")
        self.assertEqual(verify.gpsd_quality_note(COLD_START, "nmea", "3.22"), "")
        self.assertEqual(verify.gpsd_quality_note(["none", "autonomous", "dgps"], "ubx", "3.22"), "")


class GpsdHoldsAUbloxStatus(unittest.TestCase):
    """Before 3.25 gpsd never lowers a u-blox's status (no new fix per epoch): after DGPS, an
    autonomous epoch is still DGPS in its TPV (measured with 3.22, harness/verify.py)."""
    LOST_CORRECTIONS = ["none", "autonomous", "dgps", "autonomous", "fixed", "float", "autonomous", "none",
                        "autonomous"]

    def test_before_3_25_the_highest_status_holds(self):
        self.assertEqual(verify.gpsd_reported_qualities(self.LOST_CORRECTIONS, "ubx", "3.22"),
                         ["none", "autonomous", "dgps", "dgps", "dgps", "dgps", "dgps", "none", "dgps"])
        self.assertEqual(verify.gpsd_reported_qualities(["autonomous", "float", "fixed"], "ubx", "3.24"),
                         ["autonomous", "dgps", "dgps"])

    def test_3_25_on_nmea_and_unknown_releases_follow_the_receiver(self):
        self.assertEqual(verify.gpsd_reported_qualities(self.LOST_CORRECTIONS, "ubx", "3.25"), self.LOST_CORRECTIONS)
        self.assertEqual(verify.gpsd_reported_qualities(self.LOST_CORRECTIONS, "nmea", "3.22"), self.LOST_CORRECTIONS)
        self.assertEqual(verify.gpsd_reported_qualities(self.LOST_CORRECTIONS, "ubx", None), self.LOST_CORRECTIONS)

    def test_the_note_counts_the_epochs_held(self):
        truths = [{"quality": q} for q in self.LOST_CORRECTIONS]
        notes = verify.annotate_reported(truths, "ubx", "3.22")
        self.assertEqual([t["gpsd_quality"] for t in truths][3], "dgps")
        self.assertEqual(len(notes), 2)
        self.assertIn("never lowers a u-blox's fix status", notes[1])
        self.assertIn("3 autonomous epochs", notes[1])
        self.assertEqual(verify.annotate_reported([{"quality": q} for q in COLD_START], "ubx", "3.22")[1:], [])


def cold_start_timeline(protocol="ubx"):
    """One epoch a second through the cold start's qualities, as tmm-sim's timeline records them."""
    timeline = verify.Timeline()
    for second, quality in enumerate(COLD_START):
        timeline.truths.append({"t": float(second), "utc": f"2026-12-02T10:00:{second:02d}.00Z", "quality": quality,
                                "latitude": 39.9, "longitude": -105.11, "height": 1650.0, "msl_height": 1666.5,
                                "satellites": 20, "rate": 1, "corrupted": False, "protocol": protocol, "wall": 100.0 + second})
    return timeline


# What each gpsd's TPVs make of a u-blox's qualities, written out here (not through the map under test).
SHOWN_BY = {"3.22": {"float": "dgps", "fixed": "dgps"}, "3.25": {}}


def v2_as_gpsd_reports(timeline, release):
    """V2 messages as the bridge sends them for what gpsd `release` reports (diffStatus per quality)."""
    messages = []
    for truth in timeline.truths:
        quality = SHOWN_BY[release].get(truth["quality"], truth["quality"])
        fix = quality != "none"
        messages.append((truth["wall"] + 0.02, {
            "utcTimeStamp": truth["utc"], "diffStatus": verify.DIFF_STATUS[quality], "solutionType": verify.SOLUTION_TYPE[quality],
            "latitude": truth["latitude"] if fix else None, "longitude": truth["longitude"] if fix else None,
            "altitude": truth["height"] if fix else None}))
    return messages


def events_for(messages):
    changes, last = [], None
    for arrival, message in messages:
        if message["solutionType"] != last and message["solutionType"] is not None:
            changes.append((arrival, {"event": "fixQualityChanged", "solutionType": message["solutionType"]}))
        last = message["solutionType"]
    return changes


def by_name(checks):
    return {c.name.split(" — ")[0]: c for c in checks}


class StreamChecksFollowGpsd(unittest.TestCase):
    """verify.stream_checks expects V2 and /events to say what the run's gpsd reports."""

    def run_checks(self, seen_release, checked_release):
        timeline = cold_start_timeline()
        v2 = v2_as_gpsd_reports(timeline, seen_release)
        return verify.stream_checks(timeline, v2, [], events_for(v2), {"position-mm": 1.0}, checked_release)

    def transitions(self, checks):
        return next(c for c in checks if c.name.startswith("V2: fix-quality transitions"))

    def test_gpsd_3_22_dgps_for_rtk_passes_and_is_noted(self):
        checks, figures = self.run_checks("3.22", "3.22")
        for check in checks:
            self.assertTrue(check.passed, f"{check.name}: {check.detail}")
        self.assertIn("as gpsd 3.22 reports them", self.transitions(checks).name)
        self.assertEqual(len(figures["notes"]), 1)
        self.assertIn("gpsd 3.22 reports UBX RTK float/fixed as DGPS", figures["notes"][0])

    def test_gpsd_3_25_must_show_float_and_fixed(self):
        checks, figures = self.run_checks("3.25", "3.25")
        self.assertTrue(self.transitions(checks).passed, self.transitions(checks).detail)
        self.assertEqual(figures["notes"], [])
        # A gpsd that reads carrSoln but a bridge that said DGPS anyway would be wrong.
        checks, _ = self.run_checks("3.22", "3.25")
        self.assertFalse(self.transitions(checks).passed)
        events = next(c for c in checks if c.name.startswith("/events: fixQualityChanged"))
        self.assertFalse(events.passed)

    def test_rtk_on_v2_under_gpsd_3_22_is_not_what_gpsd_reports(self):
        # The bridge is exact against gpsd: RTK on V2 when gpsd said DGPS would be made up.
        checks, _ = self.run_checks("3.25", "3.22")
        self.assertFalse(self.transitions(checks).passed)


class GpsdChecksFollowTheSameMap(unittest.TestCase):
    """verify.gpsd_checks: mode and status per quality, as gpsd's VERSION release reports them."""

    def reports(self, release, statuses):
        timeline = cold_start_timeline()
        reports = [(0.0, {"class": "VERSION", "release": release}), (0.1, {"class": "DEVICE", "driver": "u-blox"})]
        for truth in timeline.truths:
            fix = truth["quality"] != "none"
            tpv = {"class": "TPV", "time": truth["utc"].replace(".00Z", ".000Z"), "mode": 3 if fix else 1}
            if statuses[truth["quality"]] is not None:
                tpv["status"] = statuses[truth["quality"]]
            if fix:
                tpv.update(lat=truth["latitude"], lon=truth["longitude"], altHAE=truth["height"], altMSL=truth["msl_height"])
            reports.append((truth["wall"], tpv))
        return verify.gpsd_checks(timeline, reports, {"sky": False, "hpposllh": False})

    def status_check(self, checks):
        return next(c for c in checks if "mode and status" in c.name)

    def test_gpsd_3_22_status_2_for_float_and_fixed(self):
        dgps = dict(verify.GPSD_STATUS, float=2, fixed=2)
        checks, figures = self.reports("3.22", dgps)
        self.assertTrue(self.status_check(checks).passed, self.status_check(checks).detail)
        self.assertIn("as DGPS", self.status_check(checks).name)
        self.assertIn("gpsd 3.22 reports UBX RTK float/fixed as DGPS", figures["notes"][0])
        checks, _ = self.reports("3.22", verify.GPSD_STATUS)  # 4 and 3 from a 3.22 would be news
        self.assertFalse(self.status_check(checks).passed)

    def test_gpsd_3_25_status_4_float_3_fixed(self):
        checks, figures = self.reports("3.25", verify.GPSD_STATUS)
        self.assertTrue(self.status_check(checks).passed, self.status_check(checks).detail)
        self.assertEqual(figures["notes"], [])
        checks, _ = self.reports("3.25", dict(verify.GPSD_STATUS, float=2, fixed=2))
        self.assertFalse(self.status_check(checks).passed)


if __name__ == "__main__":
    unittest.main()
