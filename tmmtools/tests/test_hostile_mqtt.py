"""The hostile MQTT broker of the fleet publishing tests (tmmtools/peers/hostile_mqtt_broker.py),
proven before the daemon's client meets it: each --mode over raw sockets (MQTT 3.1.1 and 5) and
with Debian's paho-mqtt, and its command line as the Swift tests start it (the `PORT N` line, the
summary on SIGTERM).

Run: /usr/bin/python3 -m tmmtools.tests from the repository root.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import unittest

from tmmtools import checkout
from tmmtools.peers import hostile_mqtt_broker as broker
from tmmtools.polling import wait_until

try:
    import paho.mqtt.client as mqtt
except ImportError:  # python3-paho-mqtt is Debian's, under /usr/bin/python3 only
    mqtt = None


class Records(broker.Log):
    """hostile_mqtt_broker.Log's interface, the records kept in memory."""

    def __init__(self):
        super().__init__()
        self.records = []

    def write(self, event, **fields):
        with self.lock:
            self.records.append(dict(fields, event=event))

    def of(self, event):
        with self.lock:
            return [r for r in self.records if r["event"] == event]


def options(**changes):
    defaults = dict(mode="never-ack", pong=False, trickle_interval=0.05, trickle_bytes=16, seed=0)
    return argparse.Namespace(**dict(defaults, **changes))


def mqtt_string(text: str) -> bytes:
    return len(text.encode()).to_bytes(2, "big") + text.encode()


def connect_packet(client_id="tmm-test", level=4, username=None, password=None) -> bytes:
    """A CONNECT (clean session, keep alive 60), MQTT 3.1.1 (level 4) or 5 (empty properties)."""
    flags = 0x02 | (0x80 if username else 0) | (0x40 if password else 0)
    variable = mqtt_string("MQTT") + bytes([level, flags]) + (60).to_bytes(2, "big") + (b"\x00" if level == 5 else b"")
    payload = mqtt_string(client_id) + (mqtt_string(username) if username else b"")
    payload += mqtt_string(password) if password else b""
    body = variable + payload
    return b"\x10" + broker.encode_length(len(body)) + body


def receive(sock: socket.socket, count: int, seconds: float = 5.0) -> bytes:
    """Up to `count` bytes, fewer when the peer closes or `seconds` pass without more."""
    sock.settimeout(seconds)
    data = b""
    try:
        while len(data) < count:
            chunk = sock.recv(count - len(data))
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    return data


class Modes(unittest.TestCase):
    """The broker in this process, each test with its mode, its clients over raw sockets."""

    def start(self, **changes):
        self.log = Records()
        server = broker.listen("127.0.0.1", 0)
        self.port = server.getsockname()[1]
        stop = threading.Event()
        threading.Thread(target=broker.serve, args=(server, options(**changes), self.log, None, stop),
                         daemon=True).start()
        self.addCleanup(server.close)
        self.addCleanup(stop.set)

    def client(self, packet: bytes | None = None) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        self.addCleanup(sock.close)
        if packet:
            sock.sendall(packet)
        return sock

    def test_garbage_answers_connect_with_random_bytes(self):
        self.start(mode="garbage")
        answer = receive(self.client(connect_packet()), 256)
        self.assertEqual(len(answer), 256)
        self.assertEqual(answer[0], 0x00, "packet type 0 is reserved: never a CONNACK")
        self.assertEqual(self.log.of("connect")[0]["client_id"], "tmm-test")

    def test_huge_packet_says_256_mb_and_trickles(self):
        self.start(mode="huge-packet")
        sock = self.client(connect_packet())
        self.assertEqual(receive(sock, 4), b"\x20\x02\x00\x00")
        self.assertEqual(receive(sock, 5), b"\x30\xff\xff\xff\x7f")
        self.assertEqual(broker.decode_length(b"\xff\xff\xff\x7f", 0), (268_435_455, 4))
        self.assertEqual(len(receive(sock, 7 + 64)), 7 + 64, "the topic, then trickled bytes")

    def test_never_ack_accepts_and_discards(self):
        self.start(mode="never-ack")
        sock = self.client(connect_packet(level=5))
        self.assertEqual(receive(sock, 5), b"\x20\x03\x00\x00\x00", "an MQTT 5 CONNACK, accepted")
        publish = b"\x32" + broker.encode_length(2 + 14 + 2 + 8) + mqtt_string("fleet/location") + b"\x00\x01" \
            + b'{"a":1}\n'
        sock.sendall(publish + b"\xc0\x00")
        self.assertEqual(receive(sock, 1, seconds=0.5), b"", "no PUBACK, no PINGRESP")
        wait_until(lambda: self.log.packets.get("PINGREQ"), 5, what="the PINGREQ read")
        self.assertEqual(self.log.packets, {"CONNECT": 1, "PUBLISH": 1, "PINGREQ": 1})
        self.assertEqual(self.log.bytes_received, len(connect_packet(level=5)) + len(publish) + 2)

    def test_never_ack_answers_pings_with_pong(self):
        self.start(mode="never-ack", pong=True)
        sock = self.client(connect_packet())
        self.assertEqual(receive(sock, 4), b"\x20\x02\x00\x00")
        sock.sendall(b"\xc0\x00")
        self.assertEqual(receive(sock, 2), broker.PINGRESP)

    def test_refuse_says_not_authorised_and_closes(self):
        self.start(mode="refuse")
        self.assertEqual(receive(self.client(connect_packet(username="fleet", password="x")), 5), b"\x20\x02\x00\x05")
        self.assertEqual(self.log.of("connect")[0]["username"], "fleet")
        self.assertEqual(receive(self.client(connect_packet(level=5)), 6), b"\x20\x03\x00\x87\x00")

    def test_silent_never_answers(self):
        self.start(mode="silent")
        sock = self.client(connect_packet())
        self.assertEqual(receive(sock, 1, seconds=0.5), b"")
        sock.sendall(b"\xc0\x00")
        wait_until(lambda: self.log.packets.get("PINGREQ"), 5, what="the PINGREQ read")
        self.assertEqual(self.log.of("closed"), [], "still open")

    def test_close_at_once(self):
        self.start(mode="close-at-once")
        sock = self.client()
        self.assertEqual(receive(sock, 1), b"", "end of stream at once")
        wait_until(lambda: self.log.of("closed"), 5, what="the close logged")


@unittest.skipIf(mqtt is None, "needs Debian's python3-paho-mqtt (/usr/bin/python3)")
class PahoClient(unittest.TestCase):
    """A real MQTT client library against the modes that get that far."""

    def connect(self, mode: str):
        self.log = Records()
        server = broker.listen("127.0.0.1", 0)
        stop = threading.Event()
        threading.Thread(target=broker.serve, args=(server, options(mode=mode), self.log, None, stop),
                         daemon=True).start()
        self.addCleanup(server.close)
        self.addCleanup(stop.set)
        client = mqtt.Client(client_id="tmm-paho", protocol=mqtt.MQTTv311)
        codes, answered = [], threading.Event()
        client.on_connect = lambda _client, _data, _flags, rc: (codes.append(rc), answered.set())
        client.username_pw_set("fleet", "secret")
        client.connect("127.0.0.1", server.getsockname()[1], keepalive=60)
        client.loop_start()
        self.addCleanup(client.loop_stop)
        self.addCleanup(client.disconnect)
        self.assertTrue(answered.wait(5), "no CONNACK")
        return client, codes[0]

    def test_refuse_is_not_authorised(self):
        _, code = self.connect("refuse")
        self.assertEqual(code, mqtt.CONNACK_REFUSED_NOT_AUTHORIZED)

    def test_never_ack_leaves_qos1_unacknowledged(self):
        client, code = self.connect("never-ack")
        self.assertEqual(code, 0)
        info = client.publish("fleet/location", '{"lat":1}', qos=1)
        wait_until(lambda: self.log.packets.get("PUBLISH"), 5, what="the PUBLISH read")
        info.wait_for_publish(timeout=0.3)
        self.assertFalse(info.is_published(), "a PUBACK came")


class CommandLine(unittest.TestCase):
    """`python3 -m tmmtools.peers.hostile_mqtt_broker` as the Swift tests start it."""

    def test_port_line_then_summary_on_sigterm(self):
        environment = dict(os.environ, PYTHONPATH=checkout.ROOT)
        process = subprocess.Popen(
            [sys.executable, "-B", "-u", "-m", "tmmtools.peers.hostile_mqtt_broker", "--mode", "never-ack",
             "--port", "0"], stdout=subprocess.PIPE, text=True, env=environment)
        self.addCleanup(process.stdout.close)
        self.addCleanup(lambda: process.poll() is None and process.kill())
        word, port = process.stdout.readline().split()
        self.assertEqual(word, "PORT")
        with socket.create_connection(("127.0.0.1", int(port)), timeout=5) as sock:
            sock.sendall(connect_packet())
            self.assertEqual(receive(sock, 4), b"\x20\x02\x00\x00")
        process.send_signal(signal.SIGTERM)
        self.assertEqual(process.wait(10), 0)
        records = [json.loads(line) for line in process.stdout.read().splitlines()]
        summary = next(record for record in records if record["event"] == "summary")
        self.assertEqual(summary["connections"], 1)
        self.assertEqual(summary["bytes_received"], len(connect_packet()))
        self.assertEqual(summary["packets"], {"CONNECT": 1})


if __name__ == "__main__":
    unittest.main()
