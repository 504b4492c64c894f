"""Fleet publishing (MQTT) in the hardware-in-the-loop runs: the broker of a scenario's [mqtt]
section (a real mosquitto, tmmtools/peers/mqtt_broker.py), a subscriber recording every message,
the bridge's `status --json` fleet object watched, the broker stopped and restarted as the
simulator announces it, and the checks (hwtests/README.md, "Fleet publishing").

The chain under test: tmm-sim → gpsd → the bridge's hub → its fleet publisher (mqtt-rate pacing,
LocationV2 JSON) → libmosquitto, or the spool in <state-dir>/mqtt-spool while the broker is away
→ mosquitto (persistent) → the subscriber (paho-mqtt, a persistent session: clean_session=False,
a fixed client id, QoS 1), which gets what the broker queued for it while it was away too.

Everything the runner assumes about the bridge's side is named in the first section below and
nowhere else: the options, the topics, the status object and its keys, the states, the retained
status's fields. Status keys are looked up leniently (case, '-', '_' ignored).
"""

from __future__ import annotations

import json
import os
import threading
import time

from tmmtools import polling
from tmmtools.harness.bench import BenchError
from tmmtools.harness.corrections import StatusWatch, _normal
from tmmtools.harness.verify import Check, exempt_windows, in_windows, utc_key
from tmmtools.peers.mqtt_broker import MosquittoBroker

try:
    import paho.mqtt.client as mqtt
except ImportError:  # python3-paho-mqtt is Debian's, under /usr/bin/python3 only
    mqtt = None

# --- what the runner expects of the bridge: the one place these names are written -----------------
def bridge_options(url: str, fleet) -> list[str]:
    """`tmm-bridge run`'s options for the broker at `url` and an [mqtt] section."""
    return ["--mqtt", url, "--mqtt-rate", f"{fleet.rate:g}", "--mqtt-topic", fleet.topic,
            "--mqtt-client-id", fleet.client_id]


TOPIC_LOCATION, TOPIC_STATUS, TOPIC_EVENTS = "location", "status", "events"  # PREFIX/<name>
LOCATION_TIME = "utcTimeStamp"  # the LocationV2 JSON's epoch time
STATUS_OBJECT = "fleet"  # `tmm-bridge status --json`: {"fleet": {...}}
STATUS_KEYS = {  # our name → the bridge's key
    "state": "state", "published": "published", "acknowledged": "acknowledged", "spooled": "spooled",
    "drained": "drained", "dropped": "dropped", "pending": "pending", "lost": "lost",
    "oldest": "oldestPendingAgeSeconds", "connections": "connections",
}
STATE_CONNECTED = "connected"
STATE_UNREACHABLE = "unreachable"
ONLINE, REASON = "online", "reason"  # the retained status: {"online": true|false, "reason": ...}
REASON_STOPPED = "stopped"  # after a clean stop
REASON_LOST = "connection lost"  # the last will
BACKOFF = (1, 30)  # the bridge's reconnect back-off: 1 s doubling to 30 s (MQTTLink.backoffRange)
JITTER = 0.2  # each delay ±20 % (MQTTLink), so a fleet does not reconnect in step
SUBSCRIBER_ID = "tmm-hwtest-fleet"  # the recording subscriber's fixed client id (persistent session)


def publish_interval(rate: float, receiver_rate: float) -> float:
    """The seconds between published epochs: the receiver's period when mqtt-rate is 0 or not
    slower, else mqtt-rate's period in whole receiver periods."""
    period = 1 / receiver_rate
    if rate <= 0 or rate >= receiver_rate:
        return period
    return round((1 / rate) / period) * period


def status_field(fleet: dict | None, name: str):
    """A field of the bridge's fleet status by our name (STATUS_KEYS), leniently matched."""
    if not isinstance(fleet, dict):
        return None
    wanted = _normal(STATUS_KEYS[name])
    return next((v for k, v in fleet.items() if _normal(k) == wanted), None)


def same_state(value, state: str) -> bool:
    return value is not None and _normal(value) == _normal(state)


# --- the subscriber --------------------------------------------------------------------------------------
def decode(payload: bytes):
    """A message's payload: its JSON, else its text."""
    text = payload.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


class Subscriber:
    """paho-mqtt subscribed to PREFIX/# at QoS 1 with a persistent session (clean_session=False,
    client id SUBSCRIBER_ID): reconnects on its own (every second) and gets what the broker kept
    for it. `messages`: (arrival, topic's last level, payload, retained, duplicate) per message;
    `connects`: (wall, session present) per CONNACK."""

    def __init__(self, port: int, prefix: str, client_id: str = SUBSCRIBER_ID):
        if mqtt is None:
            raise BenchError("python3-paho-mqtt is missing (apt-get install python3-paho-mqtt)")
        self.port, self.prefix = port, prefix
        self.messages: list[tuple[float, str, object, bool, bool]] = []
        self.connects: list[tuple[float, bool]] = []
        self.lock = threading.Lock()
        self.client = mqtt.Client(client_id=client_id, clean_session=False, protocol=mqtt.MQTTv311)
        self.client.on_connect = self._connected
        self.client.on_message = self._message
        self.client.reconnect_delay_set(1, 1)

    def _connected(self, client, userdata, flags, rc):
        if rc != 0:
            return
        present = bool(flags.get("session present"))
        with self.lock:
            self.connects.append((time.time(), present))
        if not present:  # a kept session keeps its subscription (and resubscribing resends retained ones)
            client.subscribe(self.prefix + "/#", qos=1)

    def _message(self, client, userdata, message):
        record = (time.time(), message.topic.removeprefix(self.prefix + "/"), decode(message.payload),
                  bool(message.retain), bool(message.dup))
        with self.lock:
            self.messages.append(record)

    def start(self, seconds: float = 10) -> "Subscriber":
        self.client.connect_async("127.0.0.1", self.port, keepalive=5)
        self.client.loop_start()
        polling.wait_until(lambda: self.connects, seconds, what="the MQTT subscriber to connect", error=BenchError)
        return self

    def of(self, topic: str) -> list:
        with self.lock:
            return [m for m in self.messages if m[1] == topic]

    def stop(self):
        self.client.disconnect()
        self.client.loop_stop()

    def save(self, path: str):
        with self.lock, open(path, "w", encoding="utf-8") as handle:
            for arrival, topic, payload, retained, duplicate in self.messages:
                handle.write(json.dumps({"arrival": arrival, "topic": topic, "payload": payload,
                                         "retained": retained, "dup": duplicate}, sort_keys=True) + "\n")


def retained_message(port: int, topic: str, seconds: float = 3.0):
    """What the broker keeps retained on `topic` (a fresh clean session reads it), decoded; None
    when nothing came within `seconds`."""
    if mqtt is None:
        return None
    got, done = [], threading.Event()
    client = mqtt.Client(client_id=f"tmm-hwtest-retained-{os.getpid()}", clean_session=True,
                         protocol=mqtt.MQTTv311)
    client.on_connect = lambda c, u, f, rc: c.subscribe(topic, qos=1) if rc == 0 else None

    def on_message(c, u, message):
        if message.retain:
            got.append(decode(message.payload))
            done.set()
    client.on_message = on_message
    try:
        client.connect("127.0.0.1", port, keepalive=5)
    except OSError:
        return None
    client.loop_start()
    done.wait(seconds)
    client.disconnect()
    client.loop_stop()
    return got[0] if got else None


# --- one scenario's session ---------------------------------------------------------------------------
class Session:
    """A fleet scenario's side of the run: the broker and the subscriber (`start`, before the
    bridge), the status watch (`attach`, once the bridge runs), the broker actions the simulator
    announces (`broker-stop`: the retained status read, then SIGTERM; `broker-restart`: the same
    port), `finish` (the spool drained, the bridge stopped cleanly, the retained status read); then
    `checks`. Every action is recorded with its wall time."""

    def __init__(self, scenario, out_dir: str):
        self.scenario = scenario
        self.fleet = scenario.mqtt
        self.out_dir = out_dir
        self.broker = MosquittoBroker()
        self.subscriber: Subscriber | None = None
        self.status: StatusWatch | None = None
        self.actions: list[dict] = []
        self.retained: dict[str, object] = {}  # "before broker-stop", "after the clean stop"
        self.ports: list[int] = []  # the broker's port at each start
        self.observed: Observed | None = None  # what `checks` looked at, for `plot`

    def start(self) -> "Session":
        try:
            self.broker.start()
        except (polling.TimedOut, OSError) as error:
            raise BenchError(f"mosquitto did not start: {error}") from None
        self.ports.append(self.broker.port)
        self.subscriber = Subscriber(self.broker.port, self.fleet.topic).start()
        return self

    def bridge_arguments(self) -> list[str]:
        return bridge_options(self.broker.url, self.fleet)

    def attach(self, bench):
        self.status = StatusWatch(bench.bridge_path, bench.runtime_dir, name=STATUS_OBJECT).start()

    def topic(self, name: str) -> str:
        return f"{self.fleet.topic}/{name}"

    def on_event(self, event: dict):
        """The simulator's console events: the broker actions are carried out here."""
        kind = event.get("action")
        if kind == "broker-stop":
            self.retained["before broker-stop"] = retained_message(self.broker.port, self.topic(TOPIC_STATUS))
            wall = time.time()
            code = self.broker.stop()
            self.actions.append({"kind": kind, "wall": wall, "exit": code})
        elif kind == "broker-restart":
            try:
                self.broker.start()
                self.ports.append(self.broker.port)
                self.actions.append({"kind": kind, "wall": time.time(), "port": self.broker.port})
            except (polling.TimedOut, OSError) as error:
                self.actions.append({"kind": kind, "wall": time.time(), "error": str(error)})

    def finish(self, bench, last_utc: str | None, seconds: float = 15):
        """Waits (up to `seconds`) until the spool is empty and an epoch of the last interval was
        delivered; stops the bridge with SIGTERM and reads the retained status it left."""
        rate = self.scenario.rate
        last = (utc_key(last_utc) or 0) - round((publish_interval(self.fleet.rate, rate) + 1 / rate) * 100)

        def drained():
            samples = [c for _, c, _ in self.status.samples[-1:]]
            delivered = any(isinstance(p, dict) and (utc_key(p.get(LOCATION_TIME)) or 0) >= last
                            for _, _, p, _, _ in self.subscriber.of(TOPIC_LOCATION))
            return delivered and samples and status_field(samples[0], "pending") == 0
        polling.wait_until(drained, seconds, interval=0.2)
        time.sleep(1.0)  # one more status poll after the drain
        self.status.stop()
        wall = time.time()
        code = bench.stop_bridge()
        self.actions.append({"kind": "bridge-stop", "wall": wall, "exit": code})
        self.retained["after the clean stop"] = retained_message(self.broker.port, self.topic(TOPIC_STATUS))
        time.sleep(0.3)  # the subscriber's copy of the offline status

    def close(self):
        if self.status:
            self.status.stop()
            self.status.save(os.path.join(self.out_dir, "fleet-status.jsonl"))
        if self.subscriber:
            self.subscriber.stop()
            self.subscriber.save(os.path.join(self.out_dir, "mqtt-messages.jsonl"))
        with open(os.path.join(self.out_dir, "fleet-actions.jsonl"), "w", encoding="utf-8") as handle:
            for action in self.actions:
                handle.write(json.dumps(action, sort_keys=True) + "\n")
        self.broker.stop()
        self.broker.keep_logs(self.out_dir)
        self.broker.close()

    def checks(self, timeline, receiver_rate: float) -> tuple[list, dict]:
        """The fleet checks (below) of this run; (checks, figures with "notes")."""
        run = Observed(timeline, self.subscriber.messages, self.status.samples, self.actions, self.retained,
                       self.fleet.rate, receiver_rate)
        self.observed = run
        checks = broker_checks(self.broker, self.ports, self.actions)
        checks += [rate_check(run), retained_check(run, "before broker-stop", True)]
        checks += delivery_checks(run)
        checks += status_checks(run)
        checks.append(spool_growth_check(run))
        checks.append(last_will_check(run))
        checks.append(retained_check(run, "after the clean stop", False, REASON_STOPPED))
        return checks, dict(run.figures, notes=run.notes)


    def plot(self, directory: str, name: str = "mqtt-delivery.png") -> str | None:
        """The report's plot of the run `checks` looked at (plot_delivery); its file name, or None."""
        if self.observed is None:
            return None
        return name if plot_delivery(self.observed, os.path.join(directory, name)) else None


def plot_delivery(run: "Observed", path: str) -> bool:
    """Each location message: when it arrived against its epoch (seconds from the first epoch),
    the outage shaded, the reconnection marked: live ones lie on the diagonal, the spool drains as
    a vertical run. False without matplotlib or messages."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    if not run.locations or not run.truths:
        return False
    zero = run.truths[0]["wall"]
    first_key = utc_key(run.truths[0]["utc"])
    stop, restart = run.outage()
    figure, axes = plt.subplots(figsize=(7, 3.5))
    axes.axvspan(stop - zero, restart - zero, color="#fce94f", alpha=0.5, label="broker stopped")
    online = run.back_online()
    if online:
        axes.axvline(online - zero, color="#4e9a06", linestyle="--", label="bridge online again")
    axes.plot([a - zero for a, _, _ in run.locations], [(k - first_key) / 100 for _, k, _ in run.locations], ".",
              markersize=4, color="#3465a4", label="location message")
    axes.set_xlabel("arrival at the subscriber (s)")
    axes.set_ylabel("epoch (utcTimeStamp, s)")
    axes.set_title(f"Fleet publishing: {len(run.locations)} location messages ({run.rate:g} Hz), broker outage")
    axes.legend(loc="upper left", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return True


# --- the checks ----------------------------------------------------------------------------------------
class Observed:
    """What one run saw: the receiver's timeline, the subscriber's messages, the status samples,
    the runner's actions, the retained statuses read; with the helpers the checks share."""

    def __init__(self, timeline, messages, statuses, actions, retained, rate, receiver_rate):
        self.timeline, self.messages, self.statuses = timeline, list(messages), statuses
        self.actions, self.retained = actions, retained
        self.rate, self.receiver_rate = rate, receiver_rate
        self.truths = [t for t in timeline.truths if t.get("utc") and t.get("wall")]
        self.by_key = {utc_key(t["utc"]): t for t in self.truths}
        # As the V2 checks, epochs right after the plug are not required, one mqtt interval longer:
        # an epoch gpsd holds back while it identifies the receiver comes with the next one, and
        # mqtt-rate paces by arrival, so one of the two is not published.
        self.windows = exempt_windows(timeline, after_plug=1.5 + self.interval())
        self.figures: dict = {}
        self.notes: list[str] = []
        # The first arrival of each epoch on PREFIX/location, in arrival order: (arrival, key, payload).
        self.locations, self.repeats = [], 0
        seen = set()
        for arrival, topic, payload, _, _ in self.messages:
            key = utc_key(payload.get(LOCATION_TIME)) if topic == TOPIC_LOCATION and isinstance(payload, dict) else None
            if key is None:
                continue
            if key in seen:
                self.repeats += 1
                continue
            seen.add(key)
            self.locations.append((arrival, key, payload))

    def action(self, kind: str) -> dict | None:
        return next((a for a in self.actions if a["kind"] == kind), None)

    def interval(self) -> float:
        return publish_interval(self.rate, self.receiver_rate)

    def required(self, key) -> bool:
        """The epoch `key` must be published (a fix, outside the windows)."""
        truth = self.by_key.get(key)
        return (truth is not None and truth.get("quality") not in (None, "none")
                and not in_windows(truth.get("t", 0), self.windows))

    def outage(self) -> tuple[float, float]:
        stop, restart = self.action("broker-stop"), self.action("broker-restart")
        end = self.truths[-1]["wall"] if self.truths else time.time()
        return (stop["wall"] if stop else end, restart["wall"] if restart else end)

    def reconnected(self) -> float | None:
        """When the status first said connected after the restart (polled twice a second)."""
        _, restart = self.outage()
        return self.first_state(restart, float("inf"), STATE_CONNECTED)

    def back_online(self) -> float | None:
        """When the subscriber got the bridge's first online status after the restart: the bridge
        publishes it as it connects, so epochs written before it were spooled (or in flight)."""
        _, restart = self.outage()
        return next((a for a, topic, payload, _, _ in self.messages if a >= restart and topic == TOPIC_STATUS
                     and isinstance(payload, dict) and payload.get(ONLINE) is True), None)

    def first_state(self, after: float, before: float, state: str):
        return next((w for w, c, _ in self.statuses
                     if after <= w <= before and same_state(status_field(c, "state"), state)), None)

    def last_status(self) -> dict | None:
        return next((c for _, c, _ in reversed(self.statuses) if isinstance(c, dict)), None)


def _utc(key: int) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(key // 100)) + f".{key % 100:02d}"


def _seconds(start: float, end) -> str:
    return f"{end - start:.1f} s" if end is not None else "never"


def broker_checks(broker, ports: list, actions: list) -> list:
    """mosquitto was stopped with SIGTERM (exit 0: persistence saved) and restarted on its port."""
    stop = next((a for a in actions if a["kind"] == "broker-stop"), None)
    restart = next((a for a in actions if a["kind"] == "broker-restart"), None)
    return [Check("broker: mosquitto stopped with SIGTERM (exit 0), its persistence saved",
                  stop is not None and stop.get("exit") == 0 and os.path.exists(broker.persistence_file),
                  f"exit {stop and stop.get('exit')}, {os.path.basename(broker.persistence_file)} "
                  f"{'written' if os.path.exists(broker.persistence_file) else 'missing'}"),
            Check("broker: restarted on the same port", restart is not None and "error" not in restart
                  and len(set(ports)) == 1 and len(ports) == 2,
                  f"ports {ports}" + (f"; {restart['error']}" if restart and "error" in restart else ""))]


def rate_check(run: Observed) -> Check:
    """Before the outage, PREFIX/location carries epochs at mqtt-rate (by their utcTimeStamp): the
    median step is the interval, the rate within 10 % of it, no step over 1.5 intervals (mqtt-rate
    paces by arrival: an epoch a few ms late can push the next message one receiver period on)."""
    stop, _ = run.outage()
    live = [k for a, k, _ in run.locations if a < stop and run.required(k)]
    steps = sorted((b - a) / 100 for a, b in zip(live, live[1:]))
    wanted = run.interval()
    median = steps[len(steps) // 2] if steps else None
    long = [s for s in steps if s > wanted * 1.5]
    measured = (len(live) - 1) / ((live[-1] - live[0]) / 100) if len(live) > 1 and live[-1] > live[0] else None
    run.figures["location messages per second before the outage"] = round(measured, 3) if measured else None
    passed = (len(steps) >= 5 and abs(median - wanted) < 0.01 and abs(measured * wanted - 1) <= 0.1 and not long)
    return Check(f"location: one message every {wanted:g} s (mqtt-rate {run.rate:g} Hz, receiver "
                 f"{run.receiver_rate:g} Hz) before the outage", passed,
                 f"{len(live)} messages, {measured or 0:.3f}/s, median step {median} s"
                 + (f", longest {steps[-1]:g} s" if steps else ""))


def retained_check(run: Observed, when: str, online: bool, reason: str | None = None) -> Check:
    """The status the broker keeps retained: online (before the outage) or offline with `reason`."""
    status = run.retained.get(when)
    passed = isinstance(status, dict) and status.get(ONLINE) is online and (reason is None
                                                                           or status.get(REASON) == reason)
    wanted = f'{{"{ONLINE}":{str(online).lower()}' + (f',"{REASON}":"{reason}"' if reason else "") + "}"
    shown = json.dumps(status)[:200] if status is not None else "nothing retained"
    return Check(f"status: retained {wanted} {when}", passed, shown)


def delivery_checks(run: Observed) -> list:
    """Every epoch the bridge should have published (one per interval, by utcTimeStamp) reached
    the subscriber, no gap across the outage; the epochs written while the bridge could not reach
    the broker (broker-stop to its reconnection) came after the restart, in order."""
    stop, restart = run.outage()
    reconnected = run.back_online() or run.reconnected() or restart
    keys = [k for _, k, _ in run.locations]
    wanted = run.interval()
    ordered = sorted(keys)
    # A gap is two published epochs further apart than 1.5 intervals with a required one between.
    gaps = [(a, b) for a, b in zip(ordered, ordered[1:])
            if (b - a) / 100 > wanted * 1.5 and any(a < k < b and run.required(k) for k in run.by_key)]
    required = sorted(k for k in run.by_key if run.required(k))
    # The first and the last published epochs are within an interval of the first and last required.
    slack = round((wanted + 1 / run.receiver_rate) * 100)
    covered = bool(keys) and bool(required) and min(keys) <= required[0] + slack and max(keys) >= required[-1] - slack
    # Written while the broker was down: the last two intervals before the status poll saw the
    # reconnection are left out, as the link may have been connected already and sent them live
    # (which then overtake the spool, as they may).
    settled = reconnected - 2 * wanted
    spooled = [(a, k) for a, k, _ in run.locations if stop <= run.by_key.get(k, {}).get("wall", 0) < settled]
    early = [k for a, k in spooled if a < restart]
    in_order = all(x < y for (_, x), (_, y) in zip(spooled, spooled[1:]))
    run.figures.update({"location epochs delivered": len(keys), "location repeats (QoS 1 duplicates)": run.repeats,
                        "epochs written while the broker was unreachable, delivered after": len(spooled),
                        "whole location stream in utcTimeStamp order": keys == ordered})
    if keys != ordered:
        overtaken = next(b for a, b in zip(keys, keys[1:]) if b < a)
        ahead = keys[keys.index(overtaken) - 1]
        run.notes.append(f"live location messages are published while the spool drains: {_utc(ahead)} arrived "
                         f"before the spooled {_utc(overtaken)} (the spool itself drains in order; a subscriber "
                         "must order by utcTimeStamp)")
    if spooled:
        run.figures["reconnection → last spooled epoch delivered (s)"] = round(spooled[-1][0] - reconnected, 2)
    expected = (settled - stop) / wanted
    return [Check(f"location: every epoch from the first fix to the last, no gap over {wanted * 1.5:g} s "
                  "(utcTimeStamp)", covered and not gaps,
                  f"{len(keys)} epochs" + (f"; {len(gaps)} gaps, first {gaps[0][0] / 100:.2f} → {gaps[0][1] / 100:.2f}"
                                           if gaps else "") + ("" if covered else "; first or last epoch missing")),
            Check("location: the epochs written from broker-stop to the reconnection were delivered after the "
                  "restart, in order", len(spooled) >= expected - 2 and not early and in_order,
                  f"{len(spooled)} of ~{expected:.0f} epochs; {len(early)} before the restart; "
                  f"{'in order' if in_order else 'out of order'}")]


def status_checks(run: Observed) -> list:
    """`status --json` fleet: connected before the outage, unreachable during it, connected again
    after it; at the end the spool drained (drained = spooled > 0, none pending, none dropped)."""
    stop, restart = run.outage()
    start = run.statuses[0][0] if run.statuses else stop
    connected = run.first_state(start, stop, STATE_CONNECTED)
    unreachable = run.first_state(stop, restart, STATE_UNREACHABLE)
    again = run.reconnected()
    # The back-off in effect at the restart is at most the outage so far plus its first second,
    # lengthened by the jitter.
    limit = min(BACKOFF[1], restart - stop + BACKOFF[0]) * (1 + JITTER) + 3
    run.figures["broker-stop → status unreachable (s)"] = round(unreachable - stop, 2) if unreachable else None
    run.figures["broker-restart → status connected (s)"] = round(again - restart, 2) if again else None
    last = run.last_status()
    numbers = {name: status_field(last, name) for name in STATUS_KEYS if name != "state"}
    run.figures["fleet status at the end"] = numbers
    spooled, drained = numbers.get("spooled"), numbers.get("drained")
    return [Check(f"status: fleet {STATE_CONNECTED!r} before the outage", connected is not None,
                  _seconds(start, connected) + " after the first poll"),
            Check(f"status: fleet {STATE_UNREACHABLE!r} while the broker was down", unreachable is not None,
                  _seconds(stop, unreachable) + " after broker-stop"),
            Check(f"status: fleet {STATE_CONNECTED!r} again within the bridge's back-off ({BACKOFF[0]} s doubling "
                  f"to {BACKOFF[1]} s, ±{JITTER:.0%}: {limit:.0f} s here) of the restart",
                  again is not None and again - restart <= limit, _seconds(restart, again)),
            Check("status: the spool drained (drained = spooled > 0, pending 0, dropped 0, lost 0)",
                  isinstance(spooled, int) and spooled > 0 and drained == spooled and numbers.get("pending") == 0
                  and numbers.get("dropped") == 0 and numbers.get("lost") == 0,
                  ", ".join(f"{STATUS_KEYS[k]} {v!r}" for k, v in numbers.items()))]


def spool_growth_check(run: Observed) -> Check:
    """While unreachable the spool holds the epochs since the loss: at the last poll before the
    reconnection, `pending` is one per interval since broker-stop and `oldestPendingAgeSeconds`
    the time since it, each within 2 (intervals, seconds)."""
    stop, _ = run.outage()
    online = run.back_online() or run.reconnected() or float("inf")
    polls = [(w, c) for w, c, _ in run.statuses if stop <= w < online and same_state(status_field(c, "state"),
                                                                                       STATE_UNREACHABLE)]
    if not polls:
        return Check("status: while unreachable, pending and oldestPendingAgeSeconds follow the outage", False,
                     "no poll in state unreachable")
    wall, last = polls[-1]
    pending, oldest = status_field(last, "pending"), status_field(last, "oldest")
    expected = (wall - stop) / run.interval()
    run.figures["spool at the last unreachable poll (pending, oldest age s, s since broker-stop)"] = \
        (pending, oldest, round(wall - stop, 1))
    passed = (isinstance(pending, int) and abs(pending - expected) <= 2 and isinstance(oldest, (int, float))
              and abs(oldest - (wall - stop)) <= 2)
    return Check("status: while unreachable, pending and oldestPendingAgeSeconds follow the outage", passed,
                 f"{wall - stop:.1f} s after broker-stop: pending {pending!r} (~{expected:.0f}), "
                 f"oldestPendingAgeSeconds {oldest!r}")


def last_will_check(run: Observed) -> Check:
    """The bridge's last will reached the subscriber when the broker went away: mosquitto (2.0)
    publishes the wills of its connected clients as it shuts down, so it arrives with broker-stop."""
    stop, _ = run.outage()
    online = run.back_online() or float("inf")
    wills = [a for a, topic, payload, _, _ in run.messages if stop <= a < online and topic == TOPIC_STATUS
             and isinstance(payload, dict) and payload.get(ONLINE) is False and payload.get(REASON) == REASON_LOST]
    return Check(f'status: the last will {{"{ONLINE}":false,"{REASON}":"{REASON_LOST}"}} published by the broker '
                 "as it stopped", bool(wills), _seconds(stop, wills[0] if wills else None) + " after broker-stop")
