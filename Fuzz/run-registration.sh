#!/usr/bin/env bash
# Fuzz/run-registration.sh [SECONDS] - build and run the registration-codec libFuzzer target
# (Fuzz/RegistrationFuzz.swift over Sources/TMMProtocol, built with the pure modules it uses).
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

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init registration TMMProtocol "$@"

# The harness joins the module (named TMMProtocol) and so reaches its internals. The whole module
# is compiled (the JSON writer the replies use shares its file with the location encoders' memory,
# which needs GNSS; the events name Input's loss reasons and input state); only the registration
# and access-code entry points are fuzzed.
fuzz_snapshot "$root"/Sources/TMMProtocol/*.swift "$root/Fuzz/RegistrationFuzz.swift"
fuzz_include_module ByteCoding GNSS NMEA0183 Input
fuzz_build "TMMProtocol registration files"

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

fuzz_seed_corpus
fuzz_print_corpus
fuzz_run "${FUZZ_MAX_LEN:-4096}" -dict="$build/registration.dict"
fuzz_summary registration
fuzz_finish
