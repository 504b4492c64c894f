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

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init websocket WebSocket "$@"
corpus=$build/corpus-websocket      # in Fuzz/build, and not seeded: the seeds are read beside it
log=$build/websocket-last-run.log
fuzz_old_artifacts=remove           # reproducers of earlier runs are deleted before this one

# One module: the target's sources plus the harness (which therefore has no `import WebSocket`).
fuzz_snapshot "$root"/Sources/WebSocket/*.swift "$root/Fuzz/WebSocketFuzz.swift"
fuzz_include_module ByteCoding HTTP1
fuzz_build ""                       # no label after the binary's name

fuzz_print_corpus
fuzz_run 4096
fuzz_summary ""                     # its line has no `target: ...; ` part
fuzz_finish
