#!/usr/bin/env bash
# Fuzz/run-spool.sh [SECONDS] - build and run the MQTT spool's libFuzzer target (Fuzz/SpoolFuzz.swift
# over Sources/Fleet/SpoolRecord.swift: the recovery scan of a segment file's bytes).
#
# Builds Fuzz/build/spool-fuzz with -sanitize=fuzzer,address, seeds the working corpus
# Fuzz/corpus-spool/ from Fuzz/seeds-spool/ on first use (the corpus then grows across runs; it is
# git-ignored), writes a dictionary of record headers to Fuzz/build/spool.dict, and fuzzes for
# SECONDS (default 60) with Fuzz/seeds-spool/ as a read-only extra corpus. Exits non-zero on a
# crash, leak, timeout or OOM and prints the reproducer (Fuzz/build/spool-crash-*) as a hex dump.
#
# Environment:
#   SWIFTC       compiler (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc)
#   FUZZ_FLAGS   extra libFuzzer flags (e.g. -jobs=2 -workers=2)
#   FUZZ_MAX_LEN largest input (default 8192: many small records, or a torn big one)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init spool Fleet "$@"

# The harness joins the codec's module (named Fleet) and so reaches its internals. Only the record
# file is compiled: it imports nothing, and the rest of the target (files, libmosquitto) is not
# fuzzed here.
fuzz_snapshot "$root/Sources/Fleet/SpoolRecord.swift" "$root/Fuzz/SpoolFuzz.swift"
fuzz_build "Fleet: SpoolRecord"

# Tokens libFuzzer splices into inputs (its dictionary format: one quoted string per line): the
# magic with kinds and small lengths, the largest length allowed and one past it, zeros.
cat > "$build/spool.dict" <<'DICT'
"\xb5"
"\xb5\x01"
"\xb5\x02"
"\xb5\x01\x00\x00\x00\x00"
"\xb5\x01\x10\x00\x00\x00"
"\x00\x00\x10\x00"
"\x01\x00\x10\x00"
"\x01\x00\x00\x00\x00\x00\x00\x00"
"\x00\x00\x00\x00\x00\x00\x00\x00"
DICT

fuzz_seed_corpus
fuzz_print_corpus
fuzz_run "${FUZZ_MAX_LEN:-8192}" -dict="$build/spool.dict"
fuzz_summary "Fleet: SpoolRecord scan"
fuzz_finish
