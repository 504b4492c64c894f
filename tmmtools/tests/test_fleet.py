"""The fleet publishing side of the hwtest runner: the real broker (tmmtools/peers/mqtt_broker.py:
Debian's mosquitto, persistent, stopped with SIGTERM and restarted on its port, with or without a
login) proven with paho-mqtt, and the fleet checks (tmmtools/harness/fleet.py) on made-up runs: a
bridge that spools, reconnects, drains and reports as issue 24 asks passes them; one that does not
fails the check that says so.

Run: /usr/bin/python3 -m tmmtools.tests from the repository root.
"""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import unittest
from types import SimpleNamespace

from tmmtools import checkout
from tmmtools.harness import fleet
from tmmtools.harness.verify import Timeline
from tmmtools.peers.mqtt_broker import MosquittoBroker, configuration
from tmmtools.polling import wait_until

try:
    import paho.mqtt.client as mqtt
except ImportError:  # python3-paho-mqtt is Debian's, under /usr/bin/python3 only
    mqtt = None

START = 1000.0  # wall time of scenario time 0
SECONDS = 50
STOP, RESTART, ONLINE_AGAIN = 10, 30, 41  # broker-stop, broker-restart, the bridge's reconnection


def key_text(second: int) -> str:
    return f"2026-12-02T12:00:{second:02d}.00Z"


def timeline() -> Timeline:
    """A 1 Hz receiver, RTK fixed, plugged at 0."""
    truths = [{"t": float(s), "utc": key_text(s), "quality": "fixed", "wall": START + s} for s in range(SECONDS)]
    return Timeline(truths=truths, plugs=[{"event": "plugged", "t": 0.0}])


def messages(spool_order=None, skip=()):
    """What the subscriber gets from a good bridge: live epochs, the spool drained at the
    reconnection (in `spool_order`), the online status first; minus the seconds in `skip`."""
    out = [(START + 0.5, "status", {"online": True}, False, False)]
    spooled = list(spool_order or range(STOP, ONLINE_AGAIN))
    for s in range(1, SECONDS):
        if s in skip or STOP <= s < ONLINE_AGAIN:
            continue
        out.append((START + s + 0.01, "location", {"utcTimeStamp": key_text(s)}, False, False))
    out.append((START + STOP + 0.1, "status", {"online": False, "reason": "connection lost"}, False, False))
    out.append((START + ONLINE_AGAIN, "status", {"online": True}, False, False))
    for index, s in enumerate(spooled):
        if s not in skip:
            out.append((START + ONLINE_AGAIN + 0.1 + index * 0.02, "location", {"utcTimeStamp": key_text(s)},
                        False, False))
    return sorted(out, key=lambda m: m[0])


def statuses(state_at=None, end=None):
    """A poll a second: the fleet object with the state `state_at(second)` and, last, `end`."""
    state_at = state_at or (lambda s: "unreachable" if STOP <= s < ONLINE_AGAIN else "connected")
    def spool(s):
        waiting = s - STOP + 1 if STOP <= s < ONLINE_AGAIN else 0
        return {"pending": waiting, "oldestPendingAgeSeconds": waiting - 0.5 if waiting else None}
    polls = [(START + s + 0.5, dict(spool(s), state=state_at(s)), "") for s in range(SECONDS)]
    final = end or {"published": 19, "acknowledged": 19, "spooled": 31, "drained": 31, "dropped": 0, "pending": 0,
                    "lost": 0, "oldestPendingAgeSeconds": None, "connections": 2}
    return polls + [(START + SECONDS + 1, dict(final, state="connected"), "")]


ACTIONS = [{"kind": "broker-stop", "wall": START + STOP, "exit": 0},
           {"kind": "broker-restart", "wall": START + RESTART, "port": 1883}]
RETAINED = {"before broker-stop": {"online": True}, "after the clean stop": {"online": False, "reason": "stopped"}}


def observed(received=None, polls=None, retained=None, rate=1.0):
    return fleet.Observed(timeline(), received if received is not None else messages(),
                          polls if polls is not None else statuses(), ACTIONS, retained or RETAINED, rate, 1.0)


def all_checks(run):
    return ([fleet.rate_check(run), fleet.retained_check(run, "before broker-stop", True)]
            + fleet.delivery_checks(run) + fleet.status_checks(run) + [fleet.spool_growth_check(run)]
            + [fleet.last_will_check(run)]
            + [fleet.retained_check(run, "after the clean stop", False, fleet.REASON_STOPPED)])


def failed(checks):
    return [c.name for c in checks if not c.passed]


class FleetChecks(unittest.TestCase):
    def test_a_bridge_that_spools_reconnects_and_drains_passes_every_check(self):
        checks = all_checks(observed())
        self.assertEqual(failed(checks), [], [(c.name, c.detail) for c in checks if not c.passed])

    def test_lost_outage_epochs_fail_the_gap_check(self):
        checks = all_checks(observed(received=messages(skip=range(15, 20))))
        self.assertTrue(any("no gap" in name for name in failed(checks)), failed(checks))

    def test_a_spool_drained_out_of_order_fails(self):
        order = list(range(STOP, ONLINE_AGAIN))
        order[3], order[4] = order[4], order[3]
        checks = all_checks(observed(received=messages(spool_order=order)))
        self.assertEqual([n for n in failed(checks)], [c.name for c in checks if "in order" in c.name])

    def test_a_late_first_epoch_paced_out_after_the_plug_is_not_required(self):
        self.assertEqual(failed(all_checks(observed(received=messages(skip={2})))), [])

    def test_a_missing_rate_step_before_the_outage_fails(self):
        checks = all_checks(observed(received=messages(skip={6})))
        self.assertIn(checks[0].name, failed(checks))

    def test_status_never_unreachable_fails(self):
        checks = all_checks(observed(polls=statuses(state_at=lambda s: "connected")))
        self.assertTrue(any("'unreachable'" in name for name in failed(checks)), failed(checks))

    def test_a_spool_not_drained_fails(self):
        end = {"spooled": 31, "drained": 28, "pending": 3, "dropped": 0, "lost": 0}
        checks = all_checks(observed(polls=statuses(end=end)))
        self.assertEqual(failed(checks), [c.name for c in checks if "spool drained" in c.name])

    def test_a_spool_that_does_not_grow_while_unreachable_fails(self):
        polls = [(w, dict(c, pending=0), e) if c.get("state") == "unreachable" else (w, c, e) for w, c, e in statuses()]
        checks = all_checks(observed(polls=polls))
        self.assertEqual(failed(checks), [c.name for c in checks if "follow the outage" in c.name])

    def test_the_last_will_instead_of_a_clean_stop_fails(self):
        retained = dict(RETAINED, **{"after the clean stop": {"online": False, "reason": "connection lost"}})
        checks = all_checks(observed(retained=retained))
        self.assertEqual(failed(checks), [c.name for c in checks if "after the clean stop" in c.name])

    def test_no_last_will_fails(self):
        received = [m for m in messages() if m[2] != {"online": False, "reason": "connection lost"}]
        checks = all_checks(observed(received=received))
        self.assertEqual(failed(checks), [c.name for c in checks if "last will" in c.name])

    def test_live_messages_overtaking_the_drain_are_noted_not_failed(self):
        received = messages()
        received.append((START + ONLINE_AGAIN + 0.15, "location", {"utcTimeStamp": key_text(ONLINE_AGAIN)}, False, False))
        received = [m for m in received if not (m[1] == "location" and m[2]["utcTimeStamp"] == key_text(ONLINE_AGAIN)
                                                 and m[0] > START + ONLINE_AGAIN + 0.5)]
        run = observed(received=sorted(received, key=lambda m: m[0]))
        self.assertEqual(failed(all_checks(run)), [])
        self.assertTrue(any("while the spool drains" in note for note in run.notes), run.notes)

    def test_the_delivery_plot_is_written(self):
        run = observed()
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "mqtt-delivery.png")
            self.assertTrue(fleet.plot_delivery(run, path))
            with open(path, "rb") as handle:
                self.assertEqual(handle.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertFalse(fleet.plot_delivery(observed(received=[]), os.path.join(directory, "none.png")))

    def test_publish_interval(self):
        self.assertEqual(fleet.publish_interval(1, 5), 1.0)
        self.assertEqual(fleet.publish_interval(0, 5), 0.2)
        self.assertEqual(fleet.publish_interval(10, 5), 0.2)
        self.assertAlmostEqual(fleet.publish_interval(2, 10), 0.5)

    def test_status_keys_are_matched_leniently(self):
        self.assertEqual(fleet.status_field({"Oldest_Pending_Age_Seconds": 3.5}, "oldest"), 3.5)
        self.assertTrue(fleet.same_state("Unreachable", fleet.STATE_UNREACHABLE))


class BrokerConfiguration(unittest.TestCase):
    def test_loopback_persistent_root_and_anonymous_or_a_password_file(self):
        text = configuration(1883, "/tmp/x/")
        for line in ("listener 1883 127.0.0.1", "persistence true", "persistence_location /tmp/x/", "user root",
                     "allow_anonymous true"):
            self.assertIn(line + "\n", text)
        with_login = configuration(1883, "/tmp/x", "/tmp/x/passwords")
        self.assertIn("allow_anonymous false\npassword_file /tmp/x/passwords\n", with_login)


def client(port, client_id, clean=True, login=None):
    """A paho client connected (loop running); (client, its messages, the CONNACK code)."""
    got, codes = [], []
    c = mqtt.Client(client_id=client_id, clean_session=clean, protocol=mqtt.MQTTv311)
    if login:
        c.username_pw_set(*login)
    c.on_connect = lambda cl, u, flags, rc: codes.append(rc)
    c.on_message = lambda cl, u, m: got.append((m.topic, m.payload, m.retain))
    c.connect("127.0.0.1", port, keepalive=5)
    c.loop_start()
    wait_until(lambda: codes, 5, what="a CONNACK")
    return c, got, codes[0]


def close(c):
    c.disconnect()
    c.loop_stop()


def logged(broker, text: str) -> bool:
    """mosquitto's log (log_type all) has `text`: e.g. a subscription taken."""
    with open(broker.log_path, errors="replace") as handle:
        return text in handle.read()


@unittest.skipUnless(MosquittoBroker.available() and mqtt is not None, "needs mosquitto and python3-paho-mqtt")
class RealBroker(unittest.TestCase):
    def setUp(self):
        self.broker = MosquittoBroker()
        self.addCleanup(self.broker.close)

    def test_sigterm_keeps_retained_and_queued_messages_across_a_restart_on_the_same_port(self):
        self.broker.start()
        port = self.broker.port
        subscriber, _, _ = client(port, "hwtest-sub", clean=False)
        subscriber.subscribe("fleet/#", qos=1)
        wait_until(lambda: logged(self.broker, "fleet/#"), 5)
        close(subscriber)
        publisher, _, _ = client(port, "hwtest-pub")
        publisher.publish("fleet/status", b'{"online":true}', qos=1, retain=True).wait_for_publish()
        publisher.publish("fleet/location", b"queued", qos=1).wait_for_publish()
        close(publisher)
        self.assertEqual(self.broker.stop(), 0)
        self.assertTrue(os.path.exists(self.broker.persistence_file))
        self.broker.start()
        self.assertEqual(self.broker.port, port)
        self.assertEqual(fleet.retained_message(port, "fleet/status"), {"online": True})
        subscriber, got, _ = client(port, "hwtest-sub", clean=False)
        self.addCleanup(close, subscriber)
        wait_until(lambda: any(topic == "fleet/location" for topic, _, _ in got), 5)
        self.assertIn(("fleet/location", b"queued", False), got)

    def test_a_login_refuses_anonymous_clients(self):
        broker = MosquittoBroker(user="fleet", password="s3cret")
        self.addCleanup(broker.close)
        broker.start()
        self.assertEqual(broker.url, f"mqtt://fleet:s3cret@127.0.0.1:{broker.port}")
        anonymous, _, code = client(broker.port, "anonymous")
        close(anonymous)
        self.assertEqual(code, 5)  # not authorised
        known, _, code = client(broker.port, "known", login=("fleet", "s3cret"))
        close(known)
        self.assertEqual(code, 0)

    def test_the_subscriber_records_every_message_with_its_retained_flag(self):
        self.broker.start()
        subscriber = fleet.Subscriber(self.broker.port, "tmm-bridge/test").start()
        self.addCleanup(subscriber.stop)
        wait_until(lambda: logged(self.broker, "tmm-bridge/test/#"), 5)
        publisher, _, _ = client(self.broker.port, "hwtest-pub")
        publisher.publish("tmm-bridge/test/location", b'{"utcTimeStamp":"2026-12-02T12:00:00Z"}', qos=1).wait_for_publish()
        close(publisher)
        wait_until(lambda: subscriber.of("location"), 5)
        self.assertEqual(subscriber.of("location")[0][2], {"utcTimeStamp": "2026-12-02T12:00:00Z"})

    def test_the_command_line_prints_its_port_and_stops_on_sigterm(self):
        process = subprocess.Popen(checkout.module_command("peers.mqtt_broker", python=sys.executable),
                                   stdout=subprocess.PIPE, text=True)
        timer = threading.Timer(15, process.kill)
        timer.start()
        try:
            line = process.stdout.readline()
            self.assertRegex(line, r"^listening \d+\n$")
            process.send_signal(signal.SIGTERM)
            self.assertEqual(process.wait(10), 0)
        finally:
            timer.cancel()
            process.stdout.close()


if __name__ == "__main__":
    unittest.main()
