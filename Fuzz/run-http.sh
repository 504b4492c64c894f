#!/usr/bin/env bash
# Fuzz/run-http.sh [SECONDS] - build and run the HTTP/1.1 request-parser libFuzzer target
# (Fuzz/HTTPFuzz.swift over Sources/HTTP1).
#
# Builds Fuzz/build/http-fuzz with -sanitize=fuzzer,address, seeds the working corpus
# Fuzz/corpus-http/ from Fuzz/seeds-http/ on first use (the corpus then grows across runs; it is
# git-ignored), writes a dictionary of HTTP tokens to Fuzz/build/http.dict, and fuzzes for SECONDS
# (default 60) with Fuzz/seeds-http/ as a read-only extra corpus. Exits non-zero on a crash,
# leak, timeout or OOM and prints the reproducer (Fuzz/build/http-crash-*) as a hex dump.
#
# Environment:
#   SWIFTC       compiler (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc)
#   FUZZ_FLAGS   extra libFuzzer flags (e.g. -jobs=2 -workers=2)
#   FUZZ_MAX_LEN largest input (default 10000: above the 8 KiB head limit, so the limits are reached)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init http HTTP1 "$@"

# The harness joins the parser's module (named HTTP1) and so reaches its internals.
fuzz_snapshot "$root"/Sources/HTTP1/*.swift "$root/Fuzz/HTTPFuzz.swift"
fuzz_include_module ByteCoding
fuzz_build HTTP1

# Tokens libFuzzer splices into inputs (its dictionary format: one quoted string per line).
cat > "$build/http.dict" <<'DICT'
"GET "
"PUT "
"OPTIONS "
"HEAD "
"CONNECT "
" HTTP/1.1\x0d\x0a"
" HTTP/1.0\x0d\x0a"
"HTTP/2.0"
"\x0d\x0a"
"\x0d\x0a\x0d\x0a"
"\x0a\x0a"
"Host: localhost:9637\x0d\x0a"
"Content-Length: "
"Content-Length: 5\x0d\x0a"
"Transfer-Encoding: chunked\x0d\x0a"
"Transfer-Encoding: "
"Connection: close\x0d\x0a"
"Connection: keep-alive\x0d\x0a"
"Connection: Upgrade\x0d\x0a"
"Upgrade: websocket\x0d\x0a"
"Expect: 100-continue\x0d\x0a"
"Authorization: Basic "
"chunked"
"gzip, "
"0\x0d\x0a\x0d\x0a"
"5\x0d\x0ahello\x0d\x0a"
";ext=v"
"/api/v1/receiver/"
"/api/v1/positionStream?format=locationV2"
"http://localhost:9637"
"Origin: "
"Origin: null\x0d\x0a"
"https://app.example:443"
"http://[::1]:8080"
"://"
"?format="
"%41"
"%2F"
"%zz"
"+"
"&"
"="
"*"
": "
" :"
"\x0d\x0a "
DICT

fuzz_seed_corpus
fuzz_print_corpus
fuzz_run "${FUZZ_MAX_LEN:-10000}" -dict="$build/http.dict"
fuzz_summary HTTP1
fuzz_finish
