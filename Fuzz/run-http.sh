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

seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/Fuzz/build
corpus=$root/Fuzz/corpus-http
seeds=$root/Fuzz/seeds-http
swiftc=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}

mkdir -p "$build" "$corpus"

# Build from a snapshot of the sources, so an editor saving a file mid-build cannot break it. The
# harness joins the parser's module (named HTTP1) and so reaches its internals.
src=$build/src-http
rm -rf "$src"
mkdir -p "$src"
cp "$root"/Sources/HTTP1/*.swift "$root/Fuzz/HTTPFuzz.swift" "$src/"
echo "== building $build/http-fuzz (HTTP1)"
"$swiftc" -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
    -use-ld=lld -module-name HTTP1 "$src"/*.swift -o "$build/http-fuzz" ||
    { echo "run-http.sh: build failed" >&2; exit 2; }

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

# Seed the working corpus once.
if [ -z "$(ls -A "$corpus")" ]; then
    cp "$seeds"/* "$corpus/"
fi
echo "== corpus: $(ls "$corpus" | wc -l) files in $corpus, $(ls "$seeds" | wc -l) seeds in $seeds"

# Run. The Swift runtime's backtracer must be off under ASan (it trips ASan and can hang).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
log=$build/last-run-http.log
echo "== fuzzing for $seconds s (log: $log)"
# Artifacts of this target are named http-crash-*, http-leak-*, ...; only this run's count.
marker=$build/.http-run-start
touch "$marker"
set +e
# shellcheck disable=SC2086
"$build/http-fuzz" -max_total_time="$seconds" -max_len="${FUZZ_MAX_LEN:-10000}" -use_value_profile=1 \
    -timeout=10 -rss_limit_mb=2048 -dict="$build/http.dict" -print_final_stats=1 -artifact_prefix="$build/http-" \
    ${FUZZ_FLAGS:-} "$corpus" "$seeds" > "$log" 2>&1
status=$?
set -e

grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^Done [0-9]+ runs|^stat::' "$log" || true
execs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{ s += $2 } END { print s + 0 }')
rate=$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{ s += $2 } END { print s + 0 }')
cov=$({ grep -E '^#[0-9]+[[:space:]]' "$log" || true; } | grep -oE 'cov: [0-9]+ ft: [0-9]+' | tail -1 || true)
echo "== target: HTTP1; executions: $execs (${rate}/s), final ${cov:-cov: ?}, corpus now $(ls "$corpus" | wc -l) files"

artifacts=$(find "$build" -maxdepth 1 -newer "$marker" \( -name 'http-crash-*' -o -name 'http-leak-*' \
    -o -name 'http-timeout-*' -o -name 'http-oom-*' \) | sort)
if [ "$status" -ne 0 ] || [ -n "$artifacts" ]; then
    echo "== FAILED (libFuzzer exit status $status)" >&2
    grep -E 'invariant violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|Fatal error|SUMMARY' "$log" >&2 || true
    for a in $artifacts; do
        echo "-- reproducer $a ($(wc -c < "$a") bytes); rerun: $build/http-fuzz $a" >&2
        od -A d -t x1z -v "$a" | head -20 >&2
    done
    exit 1
fi
echo "== OK: no crash in $seconds s"
