#!/usr/bin/env bash
# Fuzz/run-gpsd-json.sh [SECONDS] - build and run the gpsd JSON libFuzzer target
# (Fuzz/GPSDJSONFuzz.swift + Fuzz/GPSDJSONFuzz.c over GPSDCaptureReader, the CGPS shim with
# libgps, GPSDReport(kind:from:) and GPSDReportAssembler).
#
# Builds Fuzz/build/gpsd-json-fuzz: the C shim (Sources/CGPS/CGPS.c, included by
# Fuzz/GPSDJSONFuzz.c) with clang -fsanitize=fuzzer-no-link,address, the Swift sources with
# -sanitize=fuzzer,address, linked with the system's libgps (-lgps; libgps itself is not
# instrumented: ASan sees its calls into libc, not its own memory accesses). Seeds the working
# corpus Fuzz/corpus-gpsd-json/ from Fuzz/seeds-gpsd-json/ (real gpsd 3.21/3.22 lines from its
# regression suite) on first use (the corpus then grows across runs; it is git-ignored), writes a
# dictionary of gpsd's JSON names to Fuzz/build/gpsd-json.dict, and fuzzes for SECONDS (default
# 60). Exits non-zero on a crash, leak, timeout or OOM and prints the reproducer
# (Fuzz/build/gpsd-json-crash-*) as a hex dump.
#
# Environment:
#   SWIFTC          Swift compiler (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc)
#   CLANG           C compiler (default: the clang beside SWIFTC: same LLVM, same fuzzer runtime)
#   GPSDFUZZ_KNOWN  comma-separated ids of reported, not yet fixed value findings to skip (see
#                   checkValue in GPSDJSONFuzz.swift), e.g. GPSDFUZZ_KNOWN=position-range
#   FUZZ_FLAGS      extra libFuzzer flags
#   FUZZ_MAX_LEN    largest input (default 20000: above the reader's 16,000-byte line limit)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init gpsd-json GPSD "$@"
clang=${CLANG:-$(dirname "$swiftc")/clang}
[ -x "$clang" ] || clang=$(command -v clang)

# Swift: the reader whole; of GPSDConnection.swift (which needs Posix and a socket) only the two
# extensions that turn libgps's structs into Swift values, cut out wherever they live in
# Sources/GPSD; Input (the device type), GNSS and the modules they import join the one module GPSD.
fuzz_snapshot "$root/Sources/GPSD/GPSDCaptureReader.swift" "$root/Fuzz/GPSDJSONFuzz.swift"
{
    echo "import CGPS"
    for file in "$root"/Sources/GPSD/*.swift; do
        case ${file##*/} in GPSDCaptureReader.swift) continue ;; esac
        awk '/^extension (GPSDDevice|GPSDReport) \{/ { copy = 1 } copy { print } copy && /^\}/ { copy = 0 }' "$file"
    done
} > "$src/GPSDConversions.swift"
for name in 'extension GPSDDevice {' 'extension GPSDReport {'; do
    grep -qF "$name" "$src/GPSDConversions.swift" || { echo "${0##*/}: no '$name' in Sources/GPSD" >&2; exit 2; }
done
fuzz_include_module Input GNSS NMEA0183 ByteCoding

# C: the shim and the harness's C side in one translation unit, and the clang modules Swift
# imports (CGPS, as SwiftPM would make it, and GPSDFuzzC, the harness's two entry points).
mkdir -p "$src/c"
cp "$root/Sources/CGPS/CGPS.c" "$root/Sources/CGPS/include/CGPS.h" "$root/Fuzz/GPSDJSONFuzz.c" "$src/c/"
cat > "$src/c/GPSDFuzzC.h" <<'HEADER'
#pragma once
int gpsdfuzz_well_formed(const char *line);
int gpsdfuzz_libgps_status(const char *line);
HEADER
cat > "$src/c/module.modulemap" <<'MAP'
module CGPS { header "CGPS.h" export * }
module GPSDFuzzC { header "GPSDFuzzC.h" export * }
MAP
echo "== building $fuzz_binary (GPSDCaptureReader + CGPS/libgps + GPSDReportAssembler)"
"$clang" -fsanitize=fuzzer-no-link,address -O1 -g -Wall -I "$src/c" -c "$src/c/GPSDJSONFuzz.c" \
    -o "$build/gpsd-json-cgps.o" || { echo "${0##*/}: C build failed" >&2; exit 2; }
# The compiler's status, read before anything else runs: an `|| true` after the pipeline would
# replace PIPESTATUS (a failed build then fuzzed the previous binary), as run.sh's compile says.
compile() {
    local statuses
    fuzz_compile -I "$src/c" "$src"/*.swift "$build/gpsd-json-cgps.o" -lgps 2>&1 |
        grep -vE "is part of module 'GPSD'; ignoring import|^ *[0-9]* *\| |^ *\||^$"
    statuses=("${PIPESTATUS[@]}")
    [ "${statuses[0]}" -eq 0 ]
}
compile || { echo "${0##*/}: build failed" >&2; exit 2; }

# Tokens libFuzzer splices into inputs: gpsd's classes and the members libgps reads.
cat > "$build/gpsd-json.dict" <<'DICT'
"{\"class\":\"TPV\","
"{\"class\":\"SKY\","
"{\"class\":\"GST\","
"{\"class\":\"DEVICE\","
"{\"class\":\"DEVICES\",\"devices\":["
"{\"class\":\"VERSION\","
"{\"class\":\"WATCH\","
"{\"class\":\"ERROR\",\"message\":\"x\"}"
"\"class\":"
"\"time\":\"2020-03-18T13:28:19.600Z\""
"\"time\":"
"\"mode\":3"
"\"mode\":"
"\"status\":"
"\"lat\":"
"\"lon\":"
"\"altHAE\":"
"\"altMSL\":"
"\"geoidSep\":"
"\"speed\":"
"\"track\":"
"\"climb\":"
"\"eph\":"
"\"epv\":"
"\"dgpsAge\":"
"\"dgpsSta\":"
"\"rms\":"
"\"alt\":"
"\"hdop\":"
"\"vdop\":"
"\"pdop\":"
"\"satellites\":["
"{\"PRN\":"
"\"el\":"
"\"az\":"
"\"ss\":"
"\"used\":true"
"\"gnssid\":"
"\"svid\":"
"\"path\":\"/dev/ttyACM0\""
"\"driver\":\"u-blox\""
"\"activated\":0"
"\"activated\":"
"\"release\":\"3.22\""
"\\u00e9"
"\\\""
"1e308"
"-1e308"
"1e-400"
"-0.0"
"999999999999999999999"
"null"
"true"
"false"
"[]"
"{}"
"\x0d\x0a"
"\x0a"
"}"
"]"
DICT

fuzz_seed_corpus
fuzz_print_corpus
fuzz_run "${FUZZ_MAX_LEN:-20000}" -dict="$build/gpsd-json.dict"
fuzz_summary "GPSD JSON (reader + CGPS/libgps + assembler)"
fuzz_finish
