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

seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/Fuzz/build
corpus=$root/Fuzz/corpus-nmea
seeds=$root/Fuzz/seeds
swiftc=${SWIFTC:-swiftc}

fixtures=${TMM_FIXTURES:-$root/Tests/Fixtures/nmea}
if ! ls "$fixtures"/*.log >/dev/null 2>&1; then fixtures=/work/shared/fixtures/nmea; fi

mkdir -p "$build" "$corpus"

# Build (one module, named NMEA0183, from the parser sources plus the harness) from a snapshot
# of the sources, so an editor saving a file mid-build cannot fail it. When Sources/GNSS has the
# stream decoder, its sources join the module (their `import NMEA0183` is then ignored with a
# warning) and -D NMEAFUZZ_GNSS fuzzes epoch assembly too; if that build fails, the NMEA-only
# target is built instead.
rm -rf "$build/src-nmea"
mkdir -p "$build/src-nmea/Sentences" "$build/src-nmea/GNSS"
cp "$root"/Sources/NMEA0183/*.swift "$build/src-nmea/"
cp "$root"/Sources/NMEA0183/Sentences/*.swift "$build/src-nmea/Sentences/"
cp "$root/Fuzz/NMEAFuzz.swift" "$build/src-nmea/"
compile() {
    "$swiftc" -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
        -use-ld=lld -module-name NMEA0183 "$@" -o "$build/nmea-fuzz" 2>&1 |
        grep -vE "is part of module 'NMEA0183'; ignoring import|^ *[0-9]* *\| |^ *\||^$" || true
    [ "${PIPESTATUS[0]}" -eq 0 ]
}
nmea_sources=("$build"/src-nmea/*.swift "$build"/src-nmea/Sentences/*.swift)
target="NMEA0183"
if [ "${FUZZ_GNSS:-1}" = 1 ] && [ -f "$root/Sources/GNSS/NMEAStreamDecoder.swift" ]; then
    cp "$root"/Sources/GNSS/*.swift "$build/src-nmea/GNSS/"
    echo "== building $build/nmea-fuzz (NMEA0183 + GNSS epoch assembly)"
    if compile -D NMEAFUZZ_GNSS "${nmea_sources[@]}" "$build"/src-nmea/GNSS/*.swift; then
        target="NMEA0183 + GNSS"
    else
        echo "warning: the build with Sources/GNSS failed; fuzzing NMEA0183 only" >&2
    fi
fi
if [ "$target" = "NMEA0183" ]; then
    echo "== building $build/nmea-fuzz (NMEA0183)"
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
echo "== corpus: $(ls "$corpus" | wc -l) files in $corpus, $(ls "$seeds" | wc -l) seeds in $seeds"

# Run. The Swift runtime's backtracer must be off under ASan (it trips ASan and can hang).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
log=$build/nmea-last-run.log
echo "== fuzzing for $seconds s (log: $log)"
set +e
# shellcheck disable=SC2086
"$build/nmea-fuzz" -max_total_time="$seconds" -max_len=1024 -use_value_profile=1 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/nmea-" ${FUZZ_FLAGS:-} \
    "$corpus" "$seeds" > "$log" 2>&1
status=$?
set -e

grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^Done [0-9]+ runs|^stat::' "$log" || true
execs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{ s += $2 } END { print s + 0 }')
rate=$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{ s += $2 } END { print s + 0 }')
cov=$({ grep -E '^#[0-9]+[[:space:]]' "$log" || true; } | grep -oE 'cov: [0-9]+ ft: [0-9]+' | tail -1 || true)
echo "== target: $target; executions: $execs (${rate}/s), final ${cov:-cov: ?}, corpus now $(ls "$corpus" | wc -l) files"

artifacts=$(ls "$build"/nmea-crash-* "$build"/nmea-leak-* "$build"/nmea-timeout-* "$build"/nmea-oom-* 2>/dev/null || true)
if [ "$status" -ne 0 ] || [ -n "$artifacts" ]; then
    echo "== FAILED (libFuzzer exit status $status)" >&2
    grep -E 'invariant violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|Fatal error|SUMMARY' "$log" >&2 || true
    for a in $artifacts; do
        echo "-- reproducer $a ($(wc -c < "$a") bytes); rerun: $build/nmea-fuzz $a" >&2
        od -A d -t x1z -v "$a" | head -20 >&2
    done
    exit 1
fi
echo "== OK: no crash in $seconds s"
