#!/usr/bin/env bash
# Fuzz/run-ntrip.sh [SECONDS] - build and run the NTRIP client's libFuzzer target
# (Fuzz/NTRIPFuzz.swift over Sources/Corrections: NTRIPSession fed a caster's bytes in any reads,
# with ticks, positions, closes, failures and retries; source URLs; the upstream GGA).
#
# Builds Fuzz/build/ntrip-fuzz with -sanitize=fuzzer,address, seeds the working corpus
# Fuzz/corpus-ntrip/ from Fuzz/seeds-ntrip/ on first use (the corpus then grows across runs; it is
# git-ignored), writes a dictionary of caster answers to Fuzz/build/ntrip.dict, and fuzzes for
# SECONDS (default 60) with Fuzz/seeds-ntrip/ as a read-only extra corpus. An input's first byte
# picks the settings and a head the caster sends before the rest (NTRIPFuzz.swift), its second
# seeds the harness's choices. Exits non-zero on a crash, leak, timeout or OOM and prints the
# reproducer (Fuzz/build/ntrip-crash-*) as a hex dump.
#
# Environment:
#   SWIFTC       compiler (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc)
#   FUZZ_FLAGS   extra libFuzzer flags (e.g. -jobs=2 -workers=2)
#   FUZZ_MAX_LEN largest input (default 12000: past the 8 KiB head limit, so it is reached)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init ntrip Corrections "$@"

# The harness joins the client's module (named Corrections) and so reaches its internals (the
# session's phase, head, framer and sourcetable), with the pure modules Corrections imports.
fuzz_snapshot "$root"/Sources/Corrections/*.swift "$root/Fuzz/NTRIPFuzz.swift"
fuzz_include_module ByteCoding NMEA0183 GNSS HTTP1 Logging
fuzz_build "Corrections + ByteCoding, NMEA0183, GNSS, HTTP1, Logging"

# Tokens libFuzzer splices into inputs (its dictionary format: one quoted string per line).
cat > "$build/ntrip.dict" <<'DICT'
"ICY 200 OK\x0d\x0a"
"SOURCETABLE 200 OK\x0d\x0a"
"HTTP/1.1 200 OK\x0d\x0a"
"HTTP/1.0 200 OK\x0d\x0a"
"HTTP/1.1 401 Unauthorized\x0d\x0a"
"HTTP/1.1 404 Not Found\x0d\x0a"
"HTTP/1.1 400 Bad Request\x0d\x0a"
"HTTP/1.1 505 HTTP Version Not Supported\x0d\x0a"
"ERROR - Bad Password\x0d\x0a"
"ERROR - Bad Mountpoint\x0d\x0a"
"Transfer-Encoding: chunked\x0d\x0a"
"Content-Type: gnss/sourcetable\x0d\x0a"
"Content-Type: gnss/data\x0d\x0a"
"Content-Type: text/html\x0d\x0a"
"Content-Length: "
"Ntrip-Version: Ntrip/2.0\x0d\x0a"
"\x0d\x0a"
"\x0d\x0a\x0d\x0a"
"STR;"
"CAS;"
"NET;"
"ENDSOURCETABLE\x0d\x0a"
"0\x0d\x0a\x0d\x0a"
"19\x0d\x0a"
"FFFFFFFF"
";ext"
"\xd3\x00\x13\x3e\xd0"
"\xd3\x00\x08"
"\xd3"
"ntrip://"
"ntrips://"
"user:pass@"
"[::1]"
":2101/"
"%2F"
"Fuzz-Passw0rd"
DICT

fuzz_seed_corpus
fuzz_print_corpus
fuzz_run "${FUZZ_MAX_LEN:-12000}" -dict="$build/ntrip.dict"
fuzz_summary "Corrections: NTRIPSession"
fuzz_finish
