#!/usr/bin/env bash
# Fuzz/run-registration.sh [SECONDS] - build and run the registration-codec libFuzzer target
# (Fuzz/RegistrationFuzz.swift over the pure registration files of Sources/TMMProtocol).
#
# Builds Fuzz/build/registration-fuzz with -sanitize=fuzzer,address, seeds the working corpus
# Fuzz/corpus-registration/ from Fuzz/seeds-registration/ on first use (the corpus then grows across
# runs; it is git-ignored like the others), writes a dictionary of URL/JSON tokens to
# Fuzz/build/registration.dict, and fuzzes for SECONDS (default 60) with Fuzz/seeds-registration/ as
# a read-only extra corpus. Exits non-zero on a crash, leak, timeout or OOM and prints the
# reproducer (Fuzz/build/registration-crash-*) as a hex dump.
#
# Environment:
#   SWIFTC       compiler (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc)
#   FUZZ_FLAGS   extra libFuzzer flags (e.g. -jobs=2 -workers=2)
#   FUZZ_MAX_LEN largest input (default 4096: registration URLs are short)
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/Fuzz/build
corpus=$root/Fuzz/corpus-registration
seeds=$root/Fuzz/seeds-registration
swiftc=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}

mkdir -p "$build" "$corpus"

# Build from a snapshot of the sources, so an editor saving a file mid-build cannot break it. The
# harness joins the module (named TMMProtocol) and so reaches its internals. Only the files the
# registration code needs are compiled: they use JSONWriter but nothing from GNSS or NMEA0183.
src=$build/src-registration
rm -rf "$src"
mkdir -p "$src"
cp "$root"/Sources/TMMProtocol/JSONWriter.swift "$root"/Sources/TMMProtocol/Base64*.swift \
    "$root"/Sources/TMMProtocol/PercentEncoding*.swift "$root"/Sources/TMMProtocol/Registration*.swift \
    "$root"/Sources/TMMProtocol/PortPlan*.swift "$root"/Sources/TMMProtocol/AccessCode*.swift \
    "$root/Fuzz/RegistrationFuzz.swift" "$src/"
echo "== building $build/registration-fuzz (TMMProtocol registration files)"
"$swiftc" -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
    -use-ld=lld -module-name TMMProtocol "$src"/*.swift -o "$build/registration-fuzz" ||
    { echo "run-registration.sh: build failed" >&2; exit 2; }

# Tokens libFuzzer splices into inputs (its dictionary format: one quoted string per line).
cat > "$build/registration.dict" <<'DICT'
"tmmregister://"
"tmmregister://?"
"tmmregister://trimble.tmm.iOS/register?"
"tmmsocketserverport://?"
"trimblemobilemanager://request/tmmRegister?"
"trimbleMobileManager://request/tmmSocketServerPort?"
"applicationId="
"callback="
"myapp%3A%2F%2Fresponse"
"myapp://response"
"12345678-1234-1234-1234-123456789abc"
"12345678-1234-1234-1234-123456789ABC"
"eyJ"
"eyJhcHBsaWNhdGlvbl9pZCI6"
"InJldHVybCI6"
"cmV0dXJs"
"=="
"%3D"
"%2B"
"&"
"="
"?"
"#"
"{"
"}"
":"
","
"\""
"\\u00"
"\\ud83d\\ude00"
"application_id"
"returl"
"returnurl"
"Basic "
DICT

# Seed the working corpus once.
if [ -z "$(ls -A "$corpus")" ]; then
    cp "$seeds"/* "$corpus/"
fi
echo "== corpus: $(ls "$corpus" | wc -l) files in $corpus, $(ls "$seeds" | wc -l) seeds in $seeds"

# Run. The Swift runtime's backtracer must be off under ASan (it trips ASan and can hang).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
log=$build/last-run-registration.log
echo "== fuzzing for $seconds s (log: $log)"
# Artifacts of this target are named registration-crash-*, ...; only this run's count.
marker=$build/.registration-run-start
touch "$marker"
set +e
# shellcheck disable=SC2086
"$build/registration-fuzz" -max_total_time="$seconds" -max_len="${FUZZ_MAX_LEN:-4096}" -use_value_profile=1 \
    -timeout=10 -rss_limit_mb=2048 -dict="$build/registration.dict" -print_final_stats=1 \
    -artifact_prefix="$build/registration-" ${FUZZ_FLAGS:-} "$corpus" "$seeds" > "$log" 2>&1
status=$?
set -e

grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^Done [0-9]+ runs|^stat::' "$log" || true
execs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{ s += $2 } END { print s + 0 }')
rate=$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{ s += $2 } END { print s + 0 }')
cov=$({ grep -E '^#[0-9]+[[:space:]]' "$log" || true; } | grep -oE 'cov: [0-9]+ ft: [0-9]+' | tail -1 || true)
echo "== target: registration; executions: $execs (${rate}/s), final ${cov:-cov: ?}, corpus now $(ls "$corpus" | wc -l) files"

artifacts=$(find "$build" -maxdepth 1 -newer "$marker" \( -name 'registration-crash-*' -o -name 'registration-leak-*' \
    -o -name 'registration-timeout-*' -o -name 'registration-oom-*' \) | sort)
if [ "$status" -ne 0 ] || [ -n "$artifacts" ]; then
    echo "== FAILED (libFuzzer exit status $status)" >&2
    grep -E 'invariant violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|Fatal error|SUMMARY' "$log" >&2 || true
    for a in $artifacts; do
        echo "-- reproducer $a ($(wc -c < "$a") bytes); rerun: $build/registration-fuzz $a" >&2
        od -A d -t x1z -v "$a" | head -20 >&2
    done
    exit 1
fi
echo "== OK: no crash in $seconds s"
