#!/usr/bin/env bash
# Fuzz/run.sh [SECONDS] - build and run the NMEA 0183 libFuzzer target (Fuzz/NMEAFuzz.swift).
#
# Builds Fuzz/build/nmea-fuzz with -sanitize=fuzzer,address, seeds Fuzz/corpus-nmea/ from the
# fixture logs on first use (one sentence per file plus a few whole-file heads; the corpus then
# grows across runs), and fuzzes for SECONDS (default 60) with Fuzz/seeds/ as a read-only extra
# corpus. Exits non-zero on a crash, leak, timeout or OOM and prints the reproducer
# (Fuzz/build/nmea-crash-*) as a hex dump. Other fuzzers share Fuzz/build, so everything this
# script writes there is named nmea-* (and the source snapshot src-nmea/).
#
# Environment:
#   TMM_FIXTURES     fixture folder (default Tests/Fixtures/nmea, else /work/shared/fixtures/nmea)
#   SWIFTC           compiler (default: swiftc on PATH)
#   NMEAFUZZ_KNOWN   comma-separated ids of reported, not yet fixed value findings to skip
#                    (see checkValue in NMEAFuzz.swift), e.g. NMEAFUZZ_KNOWN=leap-second
#   FUZZ_FLAGS       extra libFuzzer flags
#   FUZZ_GNSS=0      do not add Sources/GNSS (epoch assembly) to the target
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
fuzz_init nmea NMEA0183 "$@"
seeds=$root/Fuzz/seeds
log=$build/nmea-last-run.log
swiftc=${SWIFTC:-swiftc}
fuzz_old_artifacts=count            # a reproducer left by an earlier run fails this one too

fixtures=${TMM_FIXTURES:-$root/Tests/Fixtures/nmea}
if ! ls "$fixtures"/*.log >/dev/null 2>&1; then fixtures=/work/shared/fixtures/nmea; fi

# Build one module, named NMEA0183, from the parser sources plus the harness. When Sources/GNSS
# has the stream decoder, its sources join the module (their `import NMEA0183` is then ignored
# with a warning) and -D NMEAFUZZ_GNSS fuzzes epoch assembly too; if that build fails, the
# NMEA-only target is built instead.
fuzz_snapshot "$root"/Sources/NMEA0183/*.swift "$root/Fuzz/NMEAFuzz.swift"
mkdir -p "$src/Sentences" "$src/GNSS"
cp "$root"/Sources/NMEA0183/Sentences/*.swift "$src/Sentences/"
fuzz_include_module ByteCoding
compile() {
    # The compiler's status, not grep's: PIPESTATUS must be read before anything else runs (an
    # `|| true` after the pipeline would replace it).
    local statuses
    fuzz_compile "$@" 2>&1 | grep -vE "is part of module 'NMEA0183'; ignoring import|^ *[0-9]* *\| |^ *\||^$"
    statuses=("${PIPESTATUS[@]}")
    [ "${statuses[0]}" -eq 0 ]
}
nmea_sources=("$src"/*.swift "$src"/Sentences/*.swift)
target="NMEA0183"
if [ "${FUZZ_GNSS:-1}" = 1 ] && [ -f "$root/Sources/GNSS/NMEAStreamDecoder.swift" ]; then
    cp "$root"/Sources/GNSS/*.swift "$src/GNSS/"
    echo "== building $fuzz_binary (NMEA0183 + GNSS epoch assembly)"
    if compile -D NMEAFUZZ_GNSS "${nmea_sources[@]}" "$src"/GNSS/*.swift; then
        target="NMEA0183 + GNSS"
    else
        echo "warning: the build with Sources/GNSS failed; fuzzing NMEA0183 only" >&2
    fi
fi
if [ "$target" = "NMEA0183" ]; then
    echo "== building $fuzz_binary (NMEA0183)"
    compile "${nmea_sources[@]}" || { echo "run.sh: build failed" >&2; exit 2; }
fi

# Seed the working corpus once.
if [ -z "$(ls -A "$corpus")" ]; then
    if ls "$fixtures"/*.log >/dev/null 2>&1; then
        echo "== seeding $corpus from $fixtures"
        # One file per distinct sentence line (line end kept), named by its position.
        cat "$fixtures"/*.log | grep -a '^\$' | sort -u |
            awk -v dir="$corpus" '{ f = sprintf("%s/line-%05d", dir, NR); printf "%s\n", $0 > f; close(f) }'
        # A few whole-file heads: garbage lines, banners, bad checksums, joined captures.
        for name in et-332 venus634lp firefly-II foretrex-201 ublox-zed-f9p-nmea nmea-rtk; do
            [ -f "$fixtures/$name.log" ] && head -c 1024 "$fixtures/$name.log" > "$corpus/file-$name"
        done
    else
        echo "warning: no fixture logs found; starting from Fuzz/seeds only" >&2
    fi
fi
fuzz_print_corpus
fuzz_run 1024
fuzz_summary "$target"
fuzz_finish
