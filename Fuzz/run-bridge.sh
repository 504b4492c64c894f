#!/usr/bin/env bash
# Fuzz/run-bridge.sh [SECONDS] - build and run the Bridge parsers' libFuzzer target
# (Fuzz/BridgeFuzz.swift over the pure files ConfigurationFile, ControlProtocol and ReplayCapture
# of Sources/BridgeCore).
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

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init bridge BridgeCore "$@"
fuzz_note=${BRIDGEFUZZ_KNOWN:+; skipping known findings $BRIDGEFUZZ_KNOWN}

# The harness joins the module (named BridgeCore) and so reaches its internals. Only the three
# parser files are compiled, with the pure modules they import (ReplayCapture reads sentences
# with NMEA0183).
parsers=(ConfigurationFile ControlProtocol ReplayCapture)
files=()
for file in "${parsers[@]}"; do files+=("$root/Sources/BridgeCore/$file.swift"); done
fuzz_snapshot "${files[@]}" "$root/Fuzz/BridgeFuzz.swift"
fuzz_include_module NMEA0183 ByteCoding
fuzz_build "BridgeCore: ${parsers[*]}"

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
"STATUS"
"OK-JSON "
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

fuzz_seed_corpus
fuzz_print_corpus
fuzz_run "${FUZZ_MAX_LEN:-4096}" -dict="$build/bridge.dict"
fuzz_summary bridge

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

fuzz_finish
