#!/usr/bin/env bash
# Fuzz/run-rtcm.sh [SECONDS] - build and run the RTCM 3 framer's libFuzzer target
# (Fuzz/RTCMFuzz.swift over Sources/Corrections/RTCM3Frame.swift and RTCM3Framer.swift).
#
# Builds Fuzz/build/rtcm-fuzz with -sanitize=fuzzer,address, seeds the working corpus
# Fuzz/corpus-rtcm/ from Fuzz/seeds-rtcm/ on first use (the corpus then grows across runs; it is
# git-ignored), writes a dictionary of RTCM headers to Fuzz/build/rtcm.dict, and fuzzes for
# SECONDS (default 60) with Fuzz/seeds-rtcm/ as a read-only extra corpus. Exits non-zero on a
# crash, leak, timeout or OOM and prints the reproducer (Fuzz/build/rtcm-crash-*) as a hex dump.
#
# Environment:
#   SWIFTC       compiler (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc)
#   FUZZ_FLAGS   extra libFuzzer flags (e.g. -jobs=2 -workers=2)
#   FUZZ_MAX_LEN largest input (default 8192: several frames of the longest kind, 1029 bytes)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init rtcm Corrections "$@"

# The harness joins the framer's module (named Corrections) and so reaches its internals. Only the
# two framing files are compiled: they import nothing, and the rest of the target is not fuzzed here.
fuzz_snapshot "$root/Sources/Corrections/RTCM3Frame.swift" "$root/Sources/Corrections/RTCM3Framer.swift" \
    "$root/Fuzz/RTCMFuzz.swift"
fuzz_build "Corrections: RTCM3Frame, RTCM3Framer"

# Tokens libFuzzer splices into inputs (its dictionary format: one quoted string per line): frame
# headers of common lengths and message numbers (1005, 1006, 1077, 1087, 1230).
cat > "$build/rtcm.dict" <<'DICT'
"\xd3"
"\xd3\x00"
"\xd3\x00\x00"
"\xd3\x00\x13"
"\xd3\x00\x15"
"\xd3\x03\xff"
"\xd3\x00\x13\x3e\xd0"
"\xd3\x00\x15\x3e\xe0"
"\x43\x50"
"\x43\xf0"
"\x4c\xe0"
"\xd3\xd3\xd3"
"ICY 200 OK\x0d\x0a"
DICT

fuzz_seed_corpus
fuzz_print_corpus
fuzz_run "${FUZZ_MAX_LEN:-8192}" -dict="$build/rtcm.dict"
fuzz_summary "Corrections: RTCM3Framer"
fuzz_finish
