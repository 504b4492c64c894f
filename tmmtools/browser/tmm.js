// The calls of Trimble's 2026 web sample (web-sample/frontend/src/App.tsx and tmmApi.ts), in
// plain JavaScript:
//   1. GET  {api}/api/v1/publicKey/   Accept: application/json  (a simple request: no preflight)
//   2. the Access Code V2 of TMM-API.md §4.2: RSA-OAEP with SHA-256 (MGF1-SHA-256, empty label)
//      of "<lower-case application id> <yyyy-MM-ddTHH:mm:ssZ>" under that JWK, standard Base64.
//      The sample makes it in its Node backend (publicEncrypt, RSA_PKCS1_OAEP_PADDING,
//      oaepHash sha256); a page without a backend makes the same bytes with WebCrypto.
//   3. GET  {api}/api/v1/receiver/    Authorization: AccessCodeV2 <code>  (preflighted: the
//      Authorization header is not CORS-safelisted). The first valid code registers the app.
//   4. PUT  {api}/api/v1/receiver/    {"isConnected":true}, the same code (reuse is allowed over
//      https), when the receiver is not connected; `put=1` sends it anyway so that the PUT's
//      preflight (method PUT, header Content-Type) is exercised too.
//   5. new WebSocket(url) for LocationV2, here over ws:// and wss:// at once; each message's
//      latitude, longitude and solutionType are shown, as the sample's position overlay does.
//
// Parameters (query string), defaulting to the sample's constants:
//   api   REST base URL            https://tmm-api-local.fieldsystems.trimble.com:9638
//   ws    plain LocationV2 URL     ws://127.0.0.1:9639/locationV2
//   wss   secure LocationV2 URL    wss://tmm-api-local.fieldsystems.trimble.com:9640/locationV2
//   app   the Application ID (GUID) that the bridge allows
//   limit close each socket after this many positions, so the page stops changing (default 20)
//   put   1: PUT isConnected even when the receiver is already connected
//
// window.tmm holds what happened, for the test driver (tmmtools/browser/browser_test.py); the
// messages as their raw text, so the driver parses the JSON as it came (JSON.parse would turn
// "utcTime":132827.00 into the integer 132827 and hide how the number was written).
"use strict";

const params = new URLSearchParams(window.location.search);
const config = {
  api: params.get("api") || "https://tmm-api-local.fieldsystems.trimble.com:9638",
  sockets: {
    ws: params.get("ws") || "ws://127.0.0.1:9639/locationV2",
    wss: params.get("wss") || "wss://tmm-api-local.fieldsystems.trimble.com:9640/locationV2",
  },
  app: params.get("app") || "",
  limit: Number(params.get("limit") || 20),
  alwaysPut: params.get("put") === "1",
};

const state = {
  phase: "starting",
  error: null,
  rest: [],          // {method, path, status} of every REST call
  receiver: null,    // the last ReceiverInfo
  sockets: {},       // per socket: url, opened, count, messages (raw text), closeCode, error
  done: false,       // every socket got `limit` positions and was closed by the page
};
window.tmm = state;

function setStatus(text) {
  state.phase = text;
  document.getElementById("status").textContent = text;
}

function fail(error) {
  state.error = error instanceof Error ? error.message : String(error);
  document.getElementById("error").textContent = state.error;
  // Also on the console: the driver fails a run with any console error.
  console.error("tmm-bridge browser test: " + state.error);
}

// The sample's GUID check before it builds a header (TMM-API.md §4.2 "Client-side checks").
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function rest(method, path, headers, body) {
  let response;
  try {
    response = await fetch(config.api + path, { method, headers, body });
  } catch (error) {
    // fetch says only "Failed to fetch"; the console has the reason (CORS, TLS, refused).
    state.rest.push({ method, path, status: null });
    throw new Error(`${method} ${path}: ${error.message} (refused by CORS, the TLS certificate not trusted, or no server)`);
  }
  state.rest.push({ method, path, status: response.status });
  if (!response.ok) {
    let detail = "";
    try {
      const data = await response.json();
      detail = data.error || data.Reason || "";
    } catch (_) { /* a body that is not JSON: the status says enough */ }
    throw new Error(`${method} ${path}: HTTP ${response.status} ${detail}`);
  }
  return response.json();
}

function base64(bytes) {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text);
}

// "2026-12-02T12:00:00Z": the sample's `toISOString().split('.')[0] + 'Z'`.
function accessCodeTimestamp(date) {
  return date.toISOString().split(".")[0] + "Z";
}

async function accessCodeV2(jwk, applicationId) {
  if (jwk.kty !== "RSA" || !jwk.n || !jwk.e) throw new Error("the public key is not an RSA JWK");
  // Only kty, n and e, as the sample's backend passes them on: other members (alg, use) would
  // make WebCrypto check them against the algorithm asked for here.
  const key = await crypto.subtle.importKey("jwk", { kty: "RSA", n: jwk.n, e: jwk.e, ext: true },
    { name: "RSA-OAEP", hash: "SHA-256" }, false, ["encrypt"]);
  const text = `${applicationId.toLowerCase()} ${accessCodeTimestamp(new Date())}`;
  const encrypted = await crypto.subtle.encrypt({ name: "RSA-OAEP" }, key, new TextEncoder().encode(text));
  return base64(encrypted);
}

function show(name, field, value) {
  document.querySelector(`#socket-${name} [data-field="${field}"]`).textContent = value;
}

function openSocket(name, url) {
  const socketState = { url, opened: false, count: 0, messages: [], closeCode: null, error: null };
  state.sockets[name] = socketState;
  const panel = document.getElementById("socket-template").content.firstElementChild.cloneNode(true);
  panel.id = `socket-${name}`;
  document.getElementById("sockets").appendChild(panel);
  show(name, "name", url.split("//")[0] + "//");
  show(name, "url", url);
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.onopen = () => { socketState.opened = true; };
    socket.onmessage = (event) => {
      if (socketState.count >= config.limit) return;
      const message = JSON.parse(String(event.data));
      // As the sample's parsePosition: messages without a position are not shown.
      if (message.latitude == null || message.longitude == null) return;
      socketState.count += 1;
      socketState.messages.push(String(event.data));
      show(name, "count", String(socketState.count));
      show(name, "latitude", message.latitude.toFixed(8));
      show(name, "longitude", message.longitude.toFixed(8));
      show(name, "solutionType", message.solutionType == null ? "null" : message.solutionType);
      show(name, "utcTime", message.utcTime == null ? "null" : message.utcTime.toFixed(2));
      if (socketState.count === config.limit) socket.close(1000, "enough positions");
    };
    socket.onerror = () => {
      socketState.error = "WebSocket error";
      reject(new Error(`${url}: the WebSocket failed (handshake refused, or the TLS certificate not trusted)`));
    };
    socket.onclose = (event) => {
      socketState.closeCode = event.code;
      if (socketState.count >= config.limit) resolve();
      else reject(new Error(`${url}: closed (${event.code}) after ${socketState.count} positions`));
    };
  });
}

async function main() {
  if (!GUID.test(config.app)) throw new Error(`app=${JSON.stringify(config.app)} is not a GUID`);

  setStatus("Checking Trimble Mobile Manager...");
  const jwk = await rest("GET", "/api/v1/publicKey/", { Accept: "application/json" });

  setStatus("Generating access code...");
  const code = await accessCodeV2(jwk, config.app);
  const authorized = { Accept: "application/json", Authorization: `AccessCodeV2 ${code}` };

  setStatus("Checking GNSS receiver status...");
  let receiver = await rest("GET", "/api/v1/receiver/", authorized);
  state.receiver = receiver;
  if (!receiver.isReceiverConfigured) throw new Error("No GNSS receiver is configured.");
  if (!receiver.isConnected || config.alwaysPut) {
    setStatus("Connecting to GNSS receiver...");
    receiver = await rest("PUT", "/api/v1/receiver/", { ...authorized, "Content-Type": "application/json" },
      JSON.stringify({ isConnected: true }));
    state.receiver = receiver;
  }
  if (!receiver.isConnected) throw new Error("GNSS receiver is not connected.");

  setStatus("Receiving GNSS positions...");
  await Promise.all(Object.entries(config.sockets).map(([name, url]) => openSocket(name, url)));
  state.done = true;
  setStatus(`Done: ${config.limit} positions over each socket.`);
}

main().catch(fail);
