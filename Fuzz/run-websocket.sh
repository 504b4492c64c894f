#!/usr/bin/env bash
# Fuzz/run-websocket.sh [SECONDS] - build and run the WebSocket libFuzzer target
# (Fuzz/WebSocketFuzz.swift: the connection state machine fed arbitrary client bytes in one, two
# and one-byte reads, plus Base64 and UTF-8 side checks).
#
# Builds Fuzz/build/websocket-fuzz with -sanitize=fuzzer,address from a snapshot of
# Sources/WebSocket, fuzzes for SECONDS (default 60) with Fuzz/seeds-websocket/ as a read-only
# seed corpus and Fuzz/build/corpus-websocket/ as the working corpus (it grows across runs), and
# exits non-zero on a crash, leak, timeout or OOM, printing the reproducer
# (Fuzz/build/websocket-crash-*) as a hex dump.
#
# Environment:
#   SWIFTC       compiler (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc)
#   FUZZ_FLAGS   extra libFuzzer flags (e.g. -jobs=2 -workers=2)
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/Fuzz/build
src=$build/src-websocket
corpus=$build/corpus-websocket
seeds=$root/Fuzz/seeds-websocket
swiftc=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}

mkdir -p "$build" "$corpus"

# Build from a snapshot of the sources, so an editor saving a file mid-build cannot fail it. One
# module: the target's sources plus the harness (which therefore has no `import WebSocket`).
rm -rf "$src"
mkdir -p "$src"
cp "$root"/Sources/WebSocket/*.swift "$root/Fuzz/WebSocketFuzz.swift" "$src/"
echo "== building $build/websocket-fuzz"
"$swiftc" -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
    -use-ld=lld -module-name WebSocket "$src"/*.swift -o "$build/websocket-fuzz" ||
    { echo "run-websocket.sh: build failed" >&2; exit 2; }
echo "== corpus: $(ls "$corpus" | wc -l) files in $corpus, $(ls "$seeds" | wc -l) seeds in $seeds"

# Run. The Swift runtime's backtracer must be off under ASan (it trips ASan and can hang).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
log=$build/websocket-last-run.log
rm -f "$build"/websocket-crash-* "$build"/websocket-leak-* "$build"/websocket-timeout-* "$build"/websocket-oom-*
echo "== fuzzing for $seconds s (log: $log)"
set +e
# shellcheck disable=SC2086
"$build/websocket-fuzz" -max_total_time="$seconds" -max_len=4096 -use_value_profile=1 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/websocket-" ${FUZZ_FLAGS:-} \
    "$corpus" "$seeds" > "$log" 2>&1
status=$?
set -e

grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^Done [0-9]+ runs|^stat::' "$log" || true
execs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{ s += $2 } END { print s + 0 }')
rate=$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{ s += $2 } END { print s + 0 }')
cov=$({ grep -E '^#[0-9]+[[:space:]]' "$log" || true; } | grep -oE 'cov: [0-9]+ ft: [0-9]+' | tail -1 || true)
echo "== executions: $execs (${rate}/s), final ${cov:-cov: ?}, corpus now $(ls "$corpus" | wc -l) files"

artifacts=$(ls "$build"/websocket-crash-* "$build"/websocket-leak-* "$build"/websocket-timeout-* \
    "$build"/websocket-oom-* 2>/dev/null || true)
if [ "$status" -ne 0 ] || [ -n "$artifacts" ]; then
    echo "== FAILED (libFuzzer exit status $status)" >&2
    grep -E 'invariant violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|Fatal error|SUMMARY' "$log" >&2 || true
    for a in $artifacts; do
        echo "-- reproducer $a ($(wc -c < "$a") bytes); rerun: $build/websocket-fuzz $a" >&2
        od -A d -t x1z -v "$a" | head -20 >&2
    done
    exit 1
fi
echo "== OK: no crash in $seconds s"
