#!/usr/bin/env bash
# Fuzz/run-tls.sh [SECONDS] - build and run the TLS input path's libFuzzer target
# (Fuzz/TLSFuzz.swift over Sources/TLS's session, keys and certificates, linked with the system
# OpenSSL): ClientHello garbage, truncated and mutated records, plain HTTP on a secure port, and
# Access Code V2 ciphertexts.
#
# Builds Fuzz/build/tls-fuzz with -sanitize=fuzzer,address (OpenSSL itself is not instrumented:
# coverage is of our side of the boundary, crashes anywhere count), seeds the working corpus
# Fuzz/corpus-tls/ from Fuzz/seeds-tls/ (real ClientHellos made by Python's ssl: TLS 1.3 with
# ALPN, TLS 1.2, h2 only; and plain HTTP), and fuzzes for SECONDS (default 60). Exits non-zero on a
# crash, leak, timeout or OOM and prints the reproducer (Fuzz/build/tls-crash-*) as a hex dump.
#
# Environment:
#   SWIFTC       compiler (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc)
#   FUZZ_FLAGS   extra libFuzzer flags (e.g. -jobs=2 -workers=2)
#   FUZZ_MAX_LEN largest input (default 16384: a few records)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init tls TLS "$@"

# The files that need Posix (the state directory's files) are left out; nothing here touches disk.
fuzz_snapshot "$root"/Sources/TLS/{CryptoError,MemoryBIO,PrivateKey,Certificate,TLSSession,TLSServer,HandshakeInputLimit}.swift \
    "$root/Sources/Posix/AppendReading.swift" "$root/Fuzz/TLSFuzz.swift"
fuzz_include_module ByteCoding
# Of Posix only AppendReading.swift is needed (it imports nothing); the rest is C and syscalls.
find "$src" -name '*.swift' -exec sed -i '/^import Posix$/d' {} +
echo "== building $fuzz_binary (TLS session, keys, certificates; libssl)"
fuzz_compile "$src"/*.swift -I "$root/Sources/COpenSSL" -lssl -lcrypto \
    || { echo "${0##*/}: build failed" >&2; exit 2; }

fuzz_seed_corpus
fuzz_print_corpus
fuzz_run "${FUZZ_MAX_LEN:-16384}"
fuzz_summary tls
fuzz_finish
