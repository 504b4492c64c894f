"""Registration as the iOS and Windows samples do it (TMM-API.md §3.2, §3.3, §8.1, §8.2).

Context: `allowedIds` holds at least six allowlisted ids, none registered yet; `unknownId` is
not on the allowlist. The daemon runs with `--registration allowlist`.
"""

import base64
import os
import stat

from tmmtools.client import tmmclient
from tmmtools.client.tmmclient import PORT_KEYS

IOS_ORDER = ["registrationResult"] + PORT_KEYS
WINDOWS_ORDER = ["id", "status", "message", "registrationResult", "apiPort", "apiSecurePort", "locationPort",
                 "locationSecurePort", "locationV2Port", "locationV2SecurePort"]

# The return URL of Trimble's iOS sample.
SAMPLE_RETURL = "tmmapiossample://response/register"


def registry_mode(context):
    return stat.S_IMODE(os.stat(context["stateDir"] + "/registry.json").st_mode)


def run(context, checks):
    checks.equal(tmmclient.registered_ids(context), [], "nothing is registered before the first request")
    check_ios_sample_register(context, checks)
    check_ios_docs_forms(context, checks)
    check_windows_register(context, checks)
    check_unknown_id_refused(context, checks)
    check_rest_codes_follow_registration(context, checks)
    check_malformed_requests(context, checks)
    check_open_without_daemon(context, checks)
    check_tmminfo_ports(context, checks)


def check_ios_sample_register(context, checks):
    """iOS, as the samples build it: tmmregister://?<Base64 of quoted-key JSON>; then the same
    app registering again: still OK, still one entry."""
    ports, ids = context["ports"], context["allowedIds"]
    returl = SAMPLE_RETURL
    url = tmmclient.ios_register_url(tmmclient.ios_register_json(ids[0], returl))
    result = tmmclient.tmm_open(context, url)
    checks.check(result.status == 0 and result.stderr == "", "iOS register: tmm-bridge open exits 0, silent", repr(result))
    checks.check(result.stdout.count("\n") == 1, "iOS register: one reply line on stdout", repr(result.stdout))
    query = result.reply[len(returl) + 1:]
    checks.check("%" not in query and "-" not in query and "_" not in query,
                 "iOS reply: plain standard Base64, not percent-encoded or URL-safe", query)
    reply = tmmclient.decode_ios_reply(result.reply, returl)
    checks.equal(list(reply.keys()), IOS_ORDER, "iOS reply: registrationResult and the six ports, in §8.1 order")
    checks.equal(reply["registrationResult"], "OK", "iOS reply: registrationResult OK")
    checks.check(all(isinstance(reply[k], str) and reply[k].isdigit() for k in PORT_KEYS),
                 "iOS reply: every port is a JSON string of digits (what the 2025 Swift sample casts to)", repr(reply))
    checks.equal({k: int(reply[k]) for k in PORT_KEYS}, ports, "iOS reply: the ports are the daemon's real ports")
    checks.equal(tmmclient.registered_ids(context), [ids[0]], "the registry holds the id once OK was received")
    checks.equal(registry_mode(context), 0o600, "registry.json is mode 0600")

    # The same app registering again: still OK, still one entry.
    again = tmmclient.tmm_open(context, url)
    checks.check(again.status == 0 and tmmclient.decode_ios_reply(again.reply, returl)["registrationResult"] == "OK",
                 "iOS register again: OK", repr(again))
    checks.equal(tmmclient.registered_ids(context), [ids[0]], "registering again adds no duplicate")


def check_ios_docs_forms(context, checks):
    """The docs' forms: unquoted keys, `returnurl`, an authority, an upper-case GUID."""
    ports, ids = context["ports"], context["allowedIds"]
    doc_returl = "my-custom-scheme://response/register"
    doc_json = '{application_id:"%s",returl:"%s"}' % (ids[1], doc_returl)
    result = tmmclient.tmm_open(context, tmmclient.ios_register_url(doc_json, "tmmregister://trimble.tmm.iOS/register?"))
    checks.check(result.status == 0, "iOS register, unquoted keys (Trimble's doc example) and an authority: exit 0",
                 repr(result))
    checks.equal(tmmclient.decode_ios_reply(result.reply, doc_returl)["registrationResult"], "OK",
                 "iOS register, unquoted keys: OK")

    returnurl = "myapp://response/register"
    result = tmmclient.tmm_open(context, tmmclient.ios_register_url(
        tmmclient.ios_register_json(ids[2].upper(), returnurl, key="returnurl")))
    checks.check(result.status == 0, "iOS register with `returnurl` and an upper-case GUID: exit 0", repr(result))
    reply = tmmclient.decode_ios_reply(result.reply, returnurl)
    checks.check(reply["registrationResult"] == "OK" and reply["apiPort"] == str(ports["apiPort"]),
                 "iOS register with `returnurl`: OK and the ports, sent to the returnurl", repr(reply))
    checks.equal(tmmclient.registered_ids(context), ids[:3],
                 "the registry holds the three iOS ids, lower-case, in registration order")


def check_windows_ok(context, checks, result, callback, what):
    ports = context["ports"]
    checks.check(result.status == 0 and result.stderr == "", f"{what}: exit 0, silent", repr(result))
    pairs = tmmclient.parse_windows_reply(result.reply, callback)
    checks.equal([k for k, _ in pairs], WINDOWS_ORDER, f"{what}: the §8.2 keys in order")
    values = dict(pairs)
    checks.check(values["id"] == "tmmRegister" and values["status"] == "success" and values["message"] == ""
                 and values["registrationResult"] == "OK", f"{what}: id=tmmRegister, status=success, OK",
                 repr(values))
    checks.equal({k: int(values[k]) for k in PORT_KEYS}, ports, f"{what}: the six real ports as decimal text")


def check_windows_register(context, checks):
    """Windows: raw callback (the samples), then percent-encoded (the docs), then the parameters
    in the other order (order varies between clients)."""
    ids = context["allowedIds"]
    callback = "tmmapisample://response"
    result = tmmclient.tmm_open(context, tmmclient.windows_register_url(ids[3], callback, scheme="trimbleMobileManager"))
    check_windows_ok(context, checks, result, callback, "Windows register, raw callback, sample's scheme casing")

    callback = "myapp://response/tmmRegister"
    url = tmmclient.windows_register_url(ids[4], callback, encode_callback=True)
    checks.check("%3A%2F%2F" in url, "the docs' form percent-encodes the callback", url)
    check_windows_ok(context, checks, tmmclient.tmm_open(context, url), callback,
                     "Windows register, percent-encoded callback")

    # Parameters in the other order (order varies between clients).
    callback = "otherapp://cb"
    url = f"trimblemobilemanager://request/tmmRegister?callback={callback}&applicationId={ids[5]}"
    check_windows_ok(context, checks, tmmclient.tmm_open(context, url), callback,
                     "Windows register, callback before applicationId")
    checks.equal(tmmclient.registered_ids(context), ids[:6], "the registry holds all six registered ids")


def check_unknown_id_refused(context, checks):
    """An id that is not on the allowlist: refused by iOS and Windows registration, registry
    unchanged."""
    unknown = context["unknownId"]
    returl = SAMPLE_RETURL
    before = tmmclient.read_registry(context)
    result = tmmclient.tmm_open(context, tmmclient.ios_register_url(tmmclient.ios_register_json(unknown, returl)))
    checks.check(result.status == 0, "iOS register of an unknown id: the reply is still produced (exit 0)", repr(result))
    checks.check("Unauthorized" in result.stderr, "iOS register of an unknown id: stderr says it was refused",
                 repr(result.stderr))
    reply = tmmclient.decode_ios_reply(result.reply, returl)
    checks.equal(reply, {"registrationResult": "Unauthorized", **{k: str(context["ports"][k]) for k in PORT_KEYS}},
                 "iOS register of an unknown id: Unauthorized, with the six ports (the 2025 Swift sample force-unwraps apiPort)")
    callback = "tmmapisample://response"
    result = tmmclient.tmm_open(context, tmmclient.windows_register_url(unknown, callback))
    values = dict(tmmclient.parse_windows_reply(result.reply, callback))
    checks.check(values.get("status") == "error" and values.get("registrationResult") == "Unauthorized"
                 and values.get("message") and "apiPort" not in values,
                 "Windows register of an unknown id: status=error, Unauthorized, a message, no ports", repr(values))
    checks.equal(tmmclient.read_registry(context), before, "refused registrations leave registry.json unchanged")


def check_rest_codes_follow_registration(context, checks):
    """REST: the unknown id's Access Code V1 is refused, registered ids' codes (any case) work."""
    ports, ids, unknown, host = context["ports"], context["allowedIds"], context["unknownId"], context["host"]
    maui = tmmclient.MauiClient(host, ports["apiPort"], unknown)
    response = maui.get("/api/v1/receiver")
    checks.check(response.status == 401 and maui.attempts == [401, 401],
                 "REST with the unknown id's Access Code V1: 401 on the try and on the retry", repr(response))
    for registered in (ids[0], ids[1].upper(), ids[4]):
        response = tmmclient.MauiClient(host, ports["apiPort"], registered).get("/api/v1/test/ping")
        checks.equal(response.status, 200, f"REST with registered id {registered}'s code: 200")


def b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


def malformed_requests(victim):
    """(what, URL, the phrase stderr must contain) of each malformed request, all of them about
    `victim`."""
    good_json = tmmclient.ios_register_json(victim, SAMPLE_RETURL)
    return [
        ("plain text", "not a url at all", "not a URL"),
        ("unknown scheme", "ftp://example/x?" + b64(good_json), "unknown scheme"),
        ("iOS without a query", "tmmregister://", "no query"),
        ("iOS with an empty query", "tmmregister://?", "no query"),
        ("iOS query not Base64", "tmmregister://?!!not*base64!!", "not Base64"),
        ("iOS Base64 of text", "tmmregister://?" + b64("hello world"), "not a JSON object"),
        ("iOS Base64 of a JSON array", "tmmregister://?" + b64("[1,2]"), "not a JSON object"),
        ("iOS Base64 of truncated JSON", "tmmregister://?" + b64(good_json[:-5]), "not a JSON object"),
        ("iOS Base64 of non-UTF-8", "tmmregister://?" + b64(b"\xff\xfe{}"), "not UTF-8"),
        ("iOS JSON without application_id", "tmmregister://?" + b64('{"returl":"myapp://r"}'), "no application id"),
        ("iOS JSON without returl", "tmmregister://?" + b64('{"application_id":"%s"}' % victim), "no return URL"),
        ("iOS application_id not a GUID", "tmmregister://?" + b64('{"application_id":"12345","returl":"a://b"}'),
         "not a GUID"),
        ("iOS application_id a number", "tmmregister://?" + b64('{"application_id":12345,"returl":"a://b"}'),
         "must be a string"),
        ("iOS returl without a scheme",
         "tmmregister://?" + b64('{"application_id":"%s","returl":"response/register"}' % victim), "no scheme"),
        ("iOS returl with a space",
         "tmmregister://?" + b64('{"application_id":"%s","returl":"my app://r"}' % victim), "spaces"),
        ("iOS JSON with trailing bytes", "tmmregister://?" + b64(good_json + "x"), "not a JSON object"),
        ("Windows without applicationId", "trimblemobilemanager://request/tmmRegister?callback=myapp://r",
         "no application id"),
        ("Windows without callback", f"trimblemobilemanager://request/tmmRegister?applicationId={victim}",
         "no return URL"),
        ("Windows with a duplicate applicationId",
         f"trimblemobilemanager://request/tmmRegister?applicationId={victim}&applicationId={victim}&callback=a://b",
         "more than once"),
        ("Windows with a broken %-escape",
         f"trimblemobilemanager://request/tmmRegister?applicationId={victim}&callback=myapp%3A%2F%2Fr%ZZ",
         "%-escape"),
        ("Windows unknown request",
         f"trimblemobilemanager://request/tmm%20Frobnicate?applicationId={victim}&callback=a://b", "unknown request"),
        ("Windows without a query", "trimblemobilemanager://request/tmmRegister", "no query"),
    ]


def check_malformed_requests(context, checks):
    """Malformed requests: exit 1, a clear message, nothing registered."""
    ports, host = context["ports"], context["host"]
    victim = context["allowedIds"][6]  # allowlisted, not registered: a lenient parser would register it
    malformed = malformed_requests(victim)
    before = tmmclient.read_registry(context)
    for name, url, phrase in malformed:
        result = tmmclient.tmm_open(context, url)
        checks.check(result.status == 1 and result.stdout == "" and phrase in result.stderr,
                     f"malformed ({name}): exit 1, no reply, stderr says '{phrase}'", repr(result))
    checks.equal(tmmclient.read_registry(context), before, "malformed requests leave registry.json byte for byte unchanged")
    checks.check(victim not in tmmclient.registered_ids(context), "the id inside the malformed requests is not registered")
    response = tmmclient.MauiClient(host, ports["apiPort"], victim).get("/api/v1/receiver")
    checks.equal(response.status, 401, "REST with that id's code: 401")


def check_open_without_daemon(context, checks):
    """No daemon behind the runtime directory: exit 1 and say so."""
    port_request = "trimblemobilemanager://request/tmmSocketServerPort?callback=myapp%3A%2F%2Fports"
    result = tmmclient.tmm_open(dict(context, runtimeDir=context["stateDir"] + "/nowhere"), port_request)
    checks.check(result.status == 1 and result.stdout == "" and "no tmm-bridge daemon is running" in result.stderr,
                 "open with no daemon running: exit 1, 'no tmm-bridge daemon is running there'", repr(result))


def check_tmminfo_ports(context, checks):
    """The real ports also come back from tmmInfo: the same numbers as in the replies."""
    ports, ids, host = context["ports"], context["allowedIds"], context["host"]
    info = tmmclient.MauiClient(host, ports["apiPort"], ids[0]).get("/api/v1/tmmInfo").json()
    checks.equal({k: info[k] for k in PORT_KEYS}, ports, "tmmInfo reports the ports the replies carried")


if __name__ == "__main__":
    tmmclient.main(run)
