"""The WebSocket servers as TMM clients use them (TMM-API.md §5, §6), with websockets 10.4.

Context: a fresh daemon (nothing registered) with `--ws-ping-interval 1 --ws-pong-timeout 1`,
a pty receiver replaying `capture` at 10 Hz, `allowedIds` allowlisted.
"""

import asyncio
import base64
import json
import os
import socket
import statistics
import struct
import time

import websockets
import websockets.exceptions

from tmmtools.client import tmmclient

# Every field of the §8.7 example, and the JSON types docs/protocol-choices.md gives them.
NUMBER_OR_NULL = ["latitude", "longitude", "altitude", "speed", "bearing", "hrms", "vrms", "pdop", "hdop", "vdop",
                  "diffAge", "mslHeight", "undulation", "utcTime", "sourceReferenceFrameEpoch",
                  "targetReferenceFrameEpoch", "pitch", "roll", "yaw", "pitchPrecision", "rollPrecision", "yawPrecision",
                  "antennaHeight"]
STRING_OR_NULL = ["geoidModel", "solutionType", "receiverModel", "receiverSerialNumber", "utcTimeStamp", "gpsTimeStamp",
                  "sourceReferenceFrameName", "targetReferenceFrameName", "igsAntenna"]
INTEGER = ["satellites", "totalSatInUse", "totalSatInView", "subscriptionType", "imuAlignmentStatus"]
V1_NUMBER = ["latitude", "longitude", "altitude", "speed", "bearing", "accuracy", "verticalAccuracyMeters", "pdop", "hdop",
             "vdop", "diffAge", "vrms", "hrms", "utcTime"]
SOLUTION_TYPE = {1: "Autonomous", 2: "DGPS", 4: "RTK Fixed", 5: "RTK Float"}


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def v2_type_problems(message):
    problems = []
    for key in NUMBER_OR_NULL:
        if key not in message or not (message[key] is None or is_number(message[key])):
            problems.append(f"{key}={message.get(key, 'missing')!r}")
    for key in STRING_OR_NULL + ["diffID", "mockProvider", "appVersion"]:
        if key not in message or not (message[key] is None or isinstance(message[key], str)):
            problems.append(f"{key}={message.get(key, 'missing')!r}")
    for key in INTEGER:
        if type(message.get(key)) is not int:
            problems.append(f"{key}={message.get(key, 'missing')!r} (integer)")
    if not (message.get("diffStatus") is None or type(message.get("diffStatus")) is int):
        problems.append(f"diffStatus={message.get('diffStatus')!r}")
    if not (message.get("battery") is None or type(message.get("battery")) is int):
        problems.append(f"battery={message.get('battery')!r}")
    if type(message.get("isTIP")) is not bool:
        problems.append(f"isTIP={message.get('isTIP')!r}")
    if not isinstance(message.get("satelliteView"), list):
        problems.append(f"satelliteView={message.get('satelliteView')!r}")
    if message.get("mockProvider") != "Trimble Mobile Manager" or message.get("subscriptionType") != 100:
        problems.append("mockProvider/subscriptionType")
    if SOLUTION_TYPE.get(message.get("diffStatus")) != message.get("solutionType"):
        problems.append(f"solutionType {message.get('solutionType')!r} for diffStatus {message.get('diffStatus')!r}")
    return problems


def v1_type_problems(message):
    problems = [f"{k}={message.get(k, 'missing')!r}" for k in V1_NUMBER if not is_number(message.get(k))]
    problems += [f"{k}={message.get(k, 'missing')!r}" for k in ("satellites", "totalSatInView", "diffStatus",
                                                                   "subscriptionType") if type(message.get(k)) is not int]
    if "solutionType" in message or "totalSatInUse" in message:
        problems.append("V2-only fields in a V1 message")
    return problems


def check_stream(checks, frames, epochs, what, type_problems):
    """Text frames, one JSON object each, under 10 KB, equal to the capture's epochs."""
    checks.check(all(isinstance(m, str) for _, m in frames), f"{what}: every message is a text frame")
    checks.check(all(len(m.encode()) < 10240 for _, m in frames), f"{what}: every frame is under 10 240 bytes")
    messages = [json.loads(m) for _, m in frames]
    checks.check(all(isinstance(m, dict) for m in messages), f"{what}: every frame is one JSON object")
    wrong = [(i, p) for i, m in enumerate(messages) for p in [type_problems(m)] if p]
    checks.check(not wrong, f"{what}: every field has its documented JSON type", repr(wrong[:3]))
    mismatched = [(m.get("utcTime"), p) for m in messages for p in [tmmclient.position_problems(m, epochs)] if p]
    checks.check(not mismatched, f"{what}: all {len(messages)} positions equal the capture's epochs", repr(mismatched[:3]))
    return messages


async def events_with_registration(context, url, application_id):
    """/events: the first message, then a registration made while listening and its event."""
    async with websockets.connect(url, open_timeout=5, ping_interval=None) as ws:
        first = json.loads(await asyncio.wait_for(ws.recv(), 3))
        returl = "tmmapiossample://response/register"
        register = asyncio.get_running_loop().run_in_executor(None, tmmclient.tmm_open, context, tmmclient.ios_register_url(
            tmmclient.ios_register_json(application_id, returl)))
        seen = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                event = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
            except asyncio.TimeoutError:
                break
            seen.append(event)
            if event.get("event") == "registration":
                break
        result = await register
        return first, seen, result


async def ping_and_close(url):
    async with websockets.connect(url, open_timeout=5, ping_interval=None, close_timeout=3) as ws:
        started = time.monotonic()
        waiter = await ws.ping(b"tmm-e2e")
        await asyncio.wait_for(waiter, 3)
        rtt = time.monotonic() - started
        # TMM clients send nothing else; a stray text message must not break the stream.
        await ws.send('{"hello":"bridge"}')
        after = [await asyncio.wait_for(ws.recv(), 3) for _ in range(3)]
        await ws.close(1000, "done")
        return rtt, after, ws.close_code, ws.close_reason


def raw_websocket_without_pongs(host, port, path, seconds):
    """A client that completes the handshake and then never answers a ping: returns the opcodes
    it received (first ping time, close code) and whether the server closed the TCP stream."""
    key = base64.b64encode(os.urandom(16)).decode()
    sock = socket.create_connection((host, port), timeout=seconds)
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    head, data = data.split(b"\r\n\r\n", 1)
    started = time.monotonic()
    ping_at, close_code, eof_at = None, None, None
    while time.monotonic() - started < seconds:
        while True:
            if len(data) >= 2:
                length = data[1] & 0x7F
                offset = 2
                if length == 126:
                    length, offset = (struct.unpack(">H", data[2:4])[0], 4) if len(data) >= 4 else (None, 0)
                elif length == 127:
                    length, offset = (struct.unpack(">Q", data[2:10])[0], 10) if len(data) >= 10 else (None, 0)
                if length is not None and len(data) >= offset + length:
                    opcode, payload = data[0] & 0x0F, data[offset:offset + length]
                    data = data[offset + length:]
                    if opcode == 0x9 and ping_at is None:
                        ping_at = time.monotonic() - started
                    elif opcode == 0x8:
                        close_code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else 1005
                    continue
            break
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            eof_at = time.monotonic() - started
            break
        data += chunk
    sock.close()
    return head.split(b"\r\n")[0], ping_at, close_code, eof_at


async def streams(context):
    v2 = tmmclient.ws_url(context, "locationV2Port", "/locationV2")
    root = tmmclient.ws_url(context, "locationV2Port", "/")
    v1 = tmmclient.ws_url(context, "locationPort", "/")
    events = tmmclient.ws_url(context, "locationV2Port", "/events")
    return await asyncio.gather(
        tmmclient.collect(v2, 3.5), tmmclient.collect(root, 3.5), tmmclient.collect(v1, 4.6),
        events_with_registration(context, events, context["allowedIds"][1]), ping_and_close(v2))


def run(context, checks):
    epochs = tmmclient.capture_epochs(context["capture"])
    checks.check(len(epochs) == 122, "the capture decodes to its 122 epochs here too", str(len(epochs)))
    check_locked_until_registration(context, checks)

    # --- everything at once: V2 on both paths, V1, /events, ping/pong and close -----------------------
    (v2_frames, root_frames, v1_frames, (first_event, later_events, second_registration),
     (rtt, after_text, close_code, close_reason)) = asyncio.run(streams(context))

    check_v2_stream(checks, v2_frames, epochs)
    check_v2_root_stream(checks, root_frames, epochs)
    check_v1_stream(checks, v1_frames, epochs)
    check_events(context, checks, first_event, later_events, second_registration)
    check_ping_pong_and_close(checks, rtt, after_text, close_code, close_reason)
    check_message_too_big(context, checks)
    check_client_without_pongs(context, checks)


def check_locked_until_registration(context, checks):
    """V2 is locked until a registration; refused and malformed ones do not unlock it."""
    for path in ("/", "/locationV2", "/events"):
        status = asyncio.run(tmmclient.handshake_status(tmmclient.ws_url(context, "locationV2Port", path)))
        checks.equal(status, 401, f"V2 {path} before any registration: upgrade refused with 401 (InvalidStatusCode)")
    frames = tmmclient.ws_collect(tmmclient.ws_url(context, "locationPort", "/"), 2.5, limit=1)
    checks.equal(len(frames), 1, "V1 needs no unlock: a position arrives while V2 is locked")
    checks.equal(asyncio.run(tmmclient.handshake_status(tmmclient.ws_url(context, "locationV2Port", "/nowhere"))), 404,
                 "V2 port, unknown path: 404")
    checks.equal(asyncio.run(tmmclient.handshake_status(tmmclient.ws_url(context, "locationPort", "/locationV2"))), 404,
                 "V1 port serves only /: /locationV2 is 404")

    returl = "tmmapiossample://response/register"
    # Refused and malformed registrations do not unlock.
    tmmclient.tmm_open(context, tmmclient.ios_register_url(tmmclient.ios_register_json(context["unknownId"], returl)))
    tmmclient.tmm_open(context, "tmmregister://?" + base64.b64encode(b'{"returl":"a://b"}').decode())
    checks.equal(asyncio.run(tmmclient.handshake_status(tmmclient.ws_url(context, "locationV2Port", "/locationV2"))), 401,
                 "V2 stays locked after an Unauthorized and a malformed registration")
    result = tmmclient.tmm_open(context, tmmclient.ios_register_url(
        tmmclient.ios_register_json(context["allowedIds"][0], returl)))
    checks.check(result.status == 0 and tmmclient.decode_ios_reply(result.reply, returl)["registrationResult"] == "OK",
                 "registration OK", repr(result))


def check_v2_stream(checks, v2_frames, epochs):
    """V2 on /locationV2: the capture's positions at 10 Hz, none twice, kept while it answers pings."""
    messages = check_stream(checks, v2_frames, epochs, "V2 /locationV2", v2_type_problems)
    times = [t for t, _ in v2_frames]
    rate = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else 0
    checks.check(len(times) >= 25 and 6.0 <= rate <= 14.0,
                 f"V2 /locationV2: {len(times)} positions at {rate:.1f} Hz, the capture's 10 Hz")
    intervals = [b - a for a, b in zip(times, times[1:])]
    checks.check(intervals and 0.06 <= statistics.median(intervals) <= 0.14,
                 f"V2 /locationV2: median interval {statistics.median(intervals) if intervals else 0:.3f} s")
    utc = [m["utcTime"] for m in messages]
    checks.check(len(set(utc)) == len(utc), "V2 /locationV2: no epoch delivered twice", repr(utc))
    checks.check(times[-1] - v2_frames[0][0] >= 3.0,
                 "V2 client that answers the server's 1 s pings is kept: positions until the end of 3.5 s")


def check_v2_root_stream(checks, root_frames, epochs):
    """V2 on / (older clients)."""
    check_stream(checks, root_frames, epochs, "V2 /", v2_type_problems)
    checks.check(len(root_frames) >= 25, f"V2 / (older clients): {len(root_frames)} positions in 3.5 s")


def check_v1_stream(checks, v1_frames, epochs):
    """V1 on /: the latest epoch once a second."""
    v1_messages = check_stream(checks, v1_frames, epochs, "V1 /", v1_type_problems)
    v1_times = [t for t, _ in v1_frames]
    v1_intervals = [b - a for a, b in zip(v1_times, v1_times[1:])]
    checks.check(len(v1_frames) >= 4 and all(0.6 <= i <= 1.4 for i in v1_intervals)
                 and 0.9 <= statistics.mean(v1_intervals) <= 1.1,
                 f"V1 /: {len(v1_frames)} positions, 1 s apart ({', '.join(f'{i:.2f}' for i in v1_intervals)})")
    checks.check(len({m["utcTime"] for m in v1_messages}) == len(v1_messages),
                 "V1 /: each second brings the latest epoch (no repeats)")


def check_events(context, checks, first_event, later_events, second_registration):
    """/events: the status first, then a registration made while listening."""
    checks.check(first_event.get("event") == "status" and isinstance(first_event.get("time"), str)
                 and first_event.get("input") == "live" and isinstance(first_event.get("receiver"), dict)
                 and first_event["receiver"].get("isConnected") is True,
                 "/events: the first message is {\"event\":\"status\",...} with input live and the receiver",
                 repr(first_event))
    registration = [e for e in later_events if e.get("event") == "registration"]
    checks.check(second_registration.status == 0 and registration
                 and "applicationId" not in registration[0]
                 and context["allowedIds"][1].lower() not in json.dumps(registration[0]).lower()
                 and registration[0].get("registrationResult") == "OK",
                 "/events: a registration made while listening arrives as {\"event\":\"registration\",...}",
                 repr(later_events))


def check_ping_pong_and_close(checks, rtt, after_text, close_code, close_reason):
    """Ping answered, a stray text message ignored, a clean close."""
    checks.check(rtt < 1.0, f"ping answered by a pong with the same payload ({rtt * 1000:.1f} ms)")
    checks.check(len(after_text) == 3 and all(isinstance(m, str) for m in after_text),
                 "a text message from the client is ignored: positions keep coming")
    # RFC 6455 §5.5.1: the reply "typically echos the status code it received" (the reason is optional).
    checks.equal(close_code, 1000, f"clean close: the server answers our 1000 with 1000 (reason {close_reason!r})")


async def too_big(context):
    """A message over the 64 KiB limit; the close code it gets."""
    async with websockets.connect(tmmclient.ws_url(context, "locationV2Port", "/locationV2"), open_timeout=5,
                                  ping_interval=None, max_size=None) as ws:
        await ws.send("x" * 70000)
        return await tmmclient.close_code_when_closed(ws, 5)


def check_message_too_big(context, checks):
    """A message over the 64 KiB limit: closed with 1009."""
    checks.equal(asyncio.run(too_big(context)), 1009,
                 "a 70 000-byte message from the client: closed with 1009 (too big)")


def check_client_without_pongs(context, checks):
    """A client that never answers the server's pings."""
    host, ports = context["host"], context["ports"]
    status_line, ping_at, code, eof_at = raw_websocket_without_pongs(host, ports["locationV2Port"], "/locationV2", 6)
    checks.check(status_line.startswith(b"HTTP/1.1 101"), "raw client: 101 Switching Protocols", repr(status_line))
    checks.check(ping_at is not None and 0.7 <= ping_at <= 2.5, f"the server pings a silent client after ~1 s ({ping_at})")
    checks.check(code == 1001 and eof_at is not None and ping_at is not None and 0.7 <= eof_at - ping_at <= 2.5,
                 f"no pong: closed with 1001 after the pong timeout (close {code}, EOF at {eof_at})")


if __name__ == "__main__":
    tmmclient.main(run)
