"""The corrections checks of the hwtest runner (tmmtools/harness/corrections.py) on made-up runs:
a bridge that streams, reconnects and reports as issue 23 asks passes them; one that does not
fails the check that says so. Also the lenient reading of the bridge's status keys and states.

Run: /usr/bin/python3 -m tmmtools.tests from the repository root.
"""

import unittest
from types import SimpleNamespace

from tmmtools.harness import corrections
from tmmtools.harness.verify import Timeline
from tmmtools.sim.corrections import Limits
from tmmtools.sim.scenario import CorrectionSource

SOURCE = CorrectionSource(caster="test-caster", mount="MOUNT", user="u", password="p", station_id=2461)
LIMITS = Limits(float_after=3, fixed_after=5, age_limit=5, autonomous_after=5)
START = 1000.0  # wall time of scenario time 0
# The receiver's fix per second of a run with a caster killed at 20 s and restarted at 31 s.
QUALITIES = ["autonomous"] * 4 + ["float"] * 5 + ["fixed"] * 16 + ["float"] * 5 + ["autonomous"] * 4 \
    + ["float"] * 3 + ["fixed"] * 13


def truths():
    out = []
    for second, quality in enumerate(QUALITIES):
        truth = {"t": float(second), "utc": f"2026-12-02T11:00:{second:02d}.00Z", "quality": quality,
                 "wall": START + second, "corrections": True}
        if quality != "autonomous":
            last_frame = 19 if 20 <= second < 34 else second  # the caster's frames stop with it
            truth.update(diff_age=round(float(second - last_frame) + 0.2, 1), station=2461)
        out.append(truth)
    return out


def v2_for(truth_list, station_text="2461"):
    names = {"autonomous": (1, "Autonomous"), "float": (5, "RTK Float"), "fixed": (4, "RTK Fixed")}
    return [(t["wall"] + 0.01, {"utcTimeStamp": t["utc"], "diffStatus": names[t["quality"]][0],
                                "solutionType": names[t["quality"]][1], "diffAge": t.get("diff_age"),
                                "diffID": station_text if "diff_age" in t else "-1"}) for t in truth_list]


def statuses(state_at):
    """A poll a second: the bridge's corrections object with the state `state_at(second)`."""
    return [(START + s + 0.5, {"state": state_at(s), "caster": "127.0.0.1:2101", "mountPoint": "MOUNT",
                               "stationID": 2461, "revision": 2, "frames": 10 * s, "damagedFrames": 0, "ggaSent": s},
             "") for s in range(len(QUALITIES))]


def observed(events=(), state_at=lambda s: "streaming" if s < 20 or s > 32 else "connecting", v2=None,
             actions=None, protocol="nmea", release="3.22"):
    timeline = Timeline(truths=truths(), notes=[{"note": "received", "frames": 300, "damaged": 0, "other_bytes": 40,
                                                 "station": 2461, "messages": {"1006": 10}}])
    actions = actions if actions is not None else [
        {"kind": "configure", "wall": START - 0.5, "status": 200}, {"kind": "caster-kill", "wall": START + 20},
        {"kind": "caster-restart", "wall": START + 31, "port": 2101}]
    return corrections.Observed(timeline, v2 if v2 is not None else v2_for(timeline.truths), list(events),
                                statuses(state_at), actions, release, protocol, LIMITS, {})


def good_events():
    return [(START + 0.8, {"event": corrections.EVENT_CONNECTED}), (START + 21, {"event": corrections.EVENT_LOST}),
            (START + 32, {"event": corrections.EVENT_CONNECTED})]


def run_checks(run, caster_revision=2, records=()):
    caster = SimpleNamespace(revision=caster_revision, port=2101, records=lambda: list(records))
    checks = [corrections.received_check(run, 2461), corrections.first_fix_check(run)]
    checks += corrections.v2_fix_checks(run, 2461)
    for index, action in enumerate(run.actions):
        if action["kind"] != "configure":
            checks += corrections.ACTION_CHECKS[action["kind"]](run, action, run.window_end(index))
    checks += corrections.status_checks(run, SOURCE, caster)
    checks += corrections.caster_log_checks(caster.records(), SOURCE)
    return {c.name: c for c in checks}


class CorrectionsChecks(unittest.TestCase):
    def test_a_bridge_that_does_what_issue_23_asks_passes_every_check(self):
        checks = run_checks(observed(good_events()))
        for check in checks.values():
            self.assertTrue(check.passed, f"{check.name}: {check.detail}")
        self.assertEqual(len(checks), 13)

    def failed(self, checks):
        return sorted(name for name, check in checks.items() if not check.passed)

    def test_no_corrections_status_and_no_events_fail_their_checks(self):
        run = observed()
        run.statuses = [(START + s, None, "no 'corrections' in the status") for s in range(50)]
        failed = self.failed(run_checks(run))
        self.assertEqual(len(failed), 5, failed)
        self.assertTrue(all("/events" in name or "status" in name for name in failed), failed)

    def test_a_wrong_station_or_a_late_age_on_v2_fails(self):
        run = observed(good_events(), v2=v2_for(truths(), station_text="0000"))
        self.assertIn("V2: while RTK fixed on a streaming caster, diffAge under 3 s and diffID '2461'",
                      self.failed(run_checks(run)))
        late = v2_for(truths())
        for _, message in late:
            if isinstance(message["diffAge"], float):
                message["diffAge"] += 0.3
        run = observed(good_events(), v2=late)
        self.assertEqual(self.failed(run_checks(run)),
                         ["V2: diffAge and diffID equal the receiver's GGA (age of corrections, station) in every "
                          "differential epoch"])

    def test_a_receiver_that_never_fixed_fails_and_the_kill_is_not_a_fall_back(self):
        run = observed(good_events())
        for truth in run.truths:
            truth["quality"] = "autonomous"
        failed = self.failed(run_checks(run))
        self.assertIn("caster-kill: the receiver, RTK fixed, fell back (age over 5 s)", failed)
        self.assertIn("caster-restart: the receiver is RTK fixed again within 20 s", failed)

    def test_wrong_password_expects_login_refused_and_its_event(self):
        actions = [{"kind": "configure", "wall": START - 0.5, "status": 200},
                   {"kind": "wrong-password", "wall": START + 20, "status": 200, "body": "{}"},
                   {"kind": "restore-password", "wall": START + 31, "status": 200, "body": "{}"}]
        events = [(START + 0.8, {"event": corrections.EVENT_CONNECTED}),
                  (START + 20.5, {"event": corrections.EVENT_LOGIN_REFUSED}),
                  (START + 31.5, {"event": corrections.EVENT_CONNECTED})]
        run = observed(events, state_at=lambda s: "login-refused" if 20 <= s <= 31 else "streaming", actions=actions)
        checks = run_checks(run)
        self.assertEqual(self.failed(checks), [])
        run = observed(events[:1] + events[2:], state_at=lambda s: "streaming", actions=actions)
        self.assertEqual(self.failed(run_checks(run)), ["wrong-password: /events correctionsLoginRefused",
                                                        "wrong-password: status state 'login-refused' within 15 s"])

    def test_the_test_casters_log_checks_revision_agent_and_gga(self):
        request = {"event": "request", "path": "/MOUNT", "method": "GET", "revision": 2, "login": "accepted",
                   "headers": [["User-Agent", "NTRIP tmm-bridge/0.1"], ["Ntrip-Version", "Ntrip/2.0"]]}
        good = [request, {"event": "gga", "sentence": "$GPGGA,...*00", "checksum": "valid"}]
        self.assertEqual(self.failed(run_checks(observed(good_events()), records=good)), [])
        rev1 = dict(request, revision=1, headers=[["User-Agent", "tmm-bridge"]])
        failed = self.failed(run_checks(observed(good_events()), records=[rev1, dict(good[1], checksum="invalid")]))
        self.assertEqual(len(failed), 2, failed)

    def test_ubx_checks_the_bridges_own_age_and_station(self):
        """gpsd reports none for UBX: V2's diffAge and diffID are the bridge's (the last frame it
        wrote, the station of the last 1006), checked while streaming, not against the receiver's."""
        def ubx(age, station):
            return observed(good_events(), protocol="ubx", v2=[
                (a, dict(m, diffStatus=2, solutionType="DGPS", diffAge=age, diffID=station))
                for a, m in v2_for(truths())])
        run = ubx(0.4, "2461")
        checks = run_checks(run)
        self.assertEqual(self.failed(checks), [])
        self.assertIn("V2: solutionType 'DGPS' reached", checks)
        self.assertTrue(any("no diffAge/diffID" in note for note in run.notes))
        self.assertEqual(len(self.failed(run_checks(ubx(None, "-1")))), 1)


class LenientBridgeNames(unittest.TestCase):
    def test_keys_and_states_match_whatever_the_spelling(self):
        status = {"MountPoint": "M", "station_id": 3, "last-frame-age": 0.4, "State": "Login_Refused"}
        self.assertEqual(corrections.status_field(status, "mount"), "M")
        self.assertEqual(corrections.status_field(status, "station"), 3)
        self.assertEqual(corrections.status_field(status, "age"), 0.4)
        state = corrections.status_field(status, "state")
        self.assertTrue(corrections.same_state(state, corrections.STATE_LOGIN_REFUSED))
        self.assertIsNone(corrections.status_field(None, "state"))
        self.assertFalse(corrections.same_state(None, corrections.STATE_STREAMING))

    def test_the_rest_body_is_the_samples_spelling(self):
        body = corrections.rest_body("127.0.0.1", 2101, SOURCE, password="wrong")
        self.assertEqual(body, {"CorrectionSource": "ntrip", "ServerAddress": "127.0.0.1", "ServerPort": 2101,
                                "NtripMountPoint": "MOUNT", "NtripUserName": "u", "NtripPassword": "wrong"})


if __name__ == "__main__":
    unittest.main()
