#!/usr/bin/env bash
# Fuzz/run-bridge.sh [SECONDS] - build and run the Bridge parsers' libFuzzer target
# (Fuzz/BridgeFuzz.swift over the pure files ConfigurationFile, ControlProtocol and ReplayCapture
# of Sources/Bridge).
#
# Builds Fuzz/build/bridge-fuzz with -sanitize=fuzzer,address, seeds the working corpus
# Fuzz/corpus-bridge/ from Fuzz/seeds-bridge/ on first use (the corpus then grows across runs; it
# is git-ignored like the others), writes a dictionary of configuration, control-line and NMEA
# tokens to Fuzz/build/bridge.dict, and fuzzes for SECONDS (default 60) with Fuzz/seeds-bridge/ as
# a read-only extra corpus. The first byte of an input picks the parser (BridgeFuzz.swift: `c`
# configuration, `p` control protocol, `n` NMEA capture). Exits non-zero on a crash, leak, timeout
# or OOM and prints the reproducer (Fuzz/build/bridge-crash-*) as a hex dump.
#
# Environment:
#   SWIFTC            compiler (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc)
#   FUZZ_FLAGS        extra libFuzzer flags (e.g. -jobs=2 -workers=2)
#   FUZZ_MAX_LEN      largest input (default 4096: a few lines of configuration or of a capture)
#   BRIDGEFUZZ_KNOWN  comma-separated ids of reported, not yet fixed findings to skip (see the
#                     invariant ids in BridgeFuzz.swift), e.g. BRIDGEFUZZ_KNOWN=time-range
#   FUZZ_COVERAGE=1   afterwards, build a coverage-instrumented copy, run it over the corpus and
#                     the seeds, and print llvm-cov's line coverage of the three parser files
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/Fuzz/build
corpus=$root/Fuzz/corpus-bridge
seeds=$root/Fuzz/seeds-bridge
swiftc=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}

mkdir -p "$build" "$corpus"

# Build from a snapshot of the sources, so an editor saving a file mid-build cannot break it. The
# harness joins the module (named Bridge) and so reaches its internals. Only the three pure files
# are compiled: they import nothing.
src=$build/src-bridge
rm -rf "$src"
mkdir -p "$src"
parsers=(ConfigurationFile ControlProtocol ReplayCapture)
for file in "${parsers[@]}"; do cp "$root/Sources/Bridge/$file.swift" "$src/"; done
cp "$root/Fuzz/BridgeFuzz.swift" "$src/"
echo "== building $build/bridge-fuzz (Bridge: ${parsers[*]})"
"$swiftc" -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
    -use-ld=lld -module-name Bridge "$src"/*.swift -o "$build/bridge-fuzz" ||
    { echo "run-bridge.sh: build failed" >&2; exit 2; }

# Tokens libFuzzer splices into inputs (its dictionary format: one quoted string per line).
cat > "$build/bridge.dict" <<'DICT'
"c"
"p"
"n"
"\x0a"
"\x0d\x0a"
"\x0d"
"\x09"
" = "
"="
"#"
" #"
"\""
"registration"
"api-port"
"device"
"allow-app-id"
"state-dir"
"listen"
"gpsd"
"ws-max-message"
"/dev/serial/by-id/usb-Trimble #1"
"OPEN "
"OK "
"ERROR "
"OK OK "
"Unauthorized"
"NoNetwork"
"-"
"tmmregister://?"
"myapp://response"
"$GNGGA,"
"$GPGGA,"
"$GPRMC,"
"$GNGNS,"
"$GNGST,"
"$GPZDA,"
"$PTNL,GGK,"
"$PTNL,AVR,"
"$GPGSV,"
"$GNGSA,"
"!AIVDM,"
"*"
","
"."
"132819.60"
"235960.00"
"000000.000000001"
"\xcc\x81"
"\xe2\x80\x8d"
"\xd8\x80"
"\xef\xbf\xbd"
DICT

# Seed the working corpus once.
if [ -z "$(ls -A "$corpus")" ]; then
    cp "$seeds"/* "$corpus/"
fi
echo "== corpus: $(ls "$corpus" | wc -l) files in $corpus, $(ls "$seeds" | wc -l) seeds in $seeds"

# Run. The Swift runtime's backtracer must be off under ASan (it trips ASan and can hang).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
log=$build/last-run-bridge.log
echo "== fuzzing for $seconds s (log: $log)${BRIDGEFUZZ_KNOWN:+; skipping known findings $BRIDGEFUZZ_KNOWN}"
# Artifacts of this target are named bridge-crash-*, ...; only this run's count.
marker=$build/.bridge-run-start
touch "$marker"
set +e
# shellcheck disable=SC2086
"$build/bridge-fuzz" -max_total_time="$seconds" -max_len="${FUZZ_MAX_LEN:-4096}" -use_value_profile=1 \
    -timeout=10 -rss_limit_mb=2048 -dict="$build/bridge.dict" -print_final_stats=1 \
    -artifact_prefix="$build/bridge-" ${FUZZ_FLAGS:-} "$corpus" "$seeds" > "$log" 2>&1
status=$?
set -e

grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^Done [0-9]+ runs|^stat::' "$log" || true
execs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{ s += $2 } END { print s + 0 }')
rate=$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{ s += $2 } END { print s + 0 }')
cov=$({ grep -E '^#[0-9]+[[:space:]]' "$log" || true; } | grep -oE 'cov: [0-9]+ ft: [0-9]+' | tail -1 || true)
echo "== target: bridge; executions: $execs (${rate}/s), final ${cov:-cov: ?}, corpus now $(ls "$corpus" | wc -l) files"

# Line coverage of the parser files by the corpus (no sanitizer, so it is quick).
if [ "${FUZZ_COVERAGE:-0}" = 1 ]; then
    llvm=$(dirname "$swiftc")
    echo "== coverage: building $build/bridge-cov"
    "$swiftc" -sanitize=fuzzer -profile-generate -profile-coverage-mapping -parse-as-library \
        -enable-experimental-feature Lifetimes -Onone -use-ld=lld -module-name Bridge "$src"/*.swift \
        -o "$build/bridge-cov" 2>/dev/null || { echo "run-bridge.sh: coverage build failed" >&2; exit 2; }
    rm -f "$build"/bridge-cov-*.profraw
    LLVM_PROFILE_FILE="$build/bridge-cov-%p.profraw" BRIDGEFUZZ_KNOWN=${BRIDGEFUZZ_KNOWN:-} \
        "$build/bridge-cov" -runs=0 "$corpus" "$seeds" > "$build/bridge-cov.log" 2>&1 ||
        echo "warning: the coverage run stopped early (see $build/bridge-cov.log)" >&2
    "$llvm/llvm-profdata" merge -sparse "$build"/bridge-cov-*.profraw -o "$build/bridge-cov.profdata"
    files=()
    for file in "${parsers[@]}"; do files+=("$src/$file.swift"); done
    "$llvm/llvm-cov" report "$build/bridge-cov" -instr-profile="$build/bridge-cov.profdata" "${files[@]}" |
        sed "s|$src/||"
fi

artifacts=$(find "$build" -maxdepth 1 -newer "$marker" \( -name 'bridge-crash-*' -o -name 'bridge-leak-*' \
    -o -name 'bridge-timeout-*' -o -name 'bridge-oom-*' \) | sort)
if [ "$status" -ne 0 ] || [ -n "$artifacts" ]; then
    echo "== FAILED (libFuzzer exit status $status)" >&2
    grep -E 'invariant violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|Fatal error|SUMMARY' "$log" >&2 || true
    for a in $artifacts; do
        echo "-- reproducer $a ($(wc -c < "$a") bytes); rerun: $build/bridge-fuzz $a" >&2
        od -A d -t x1z -v "$a" | head -20 >&2
    done
    exit 1
fi
echo "== OK: no crash in $seconds s"
