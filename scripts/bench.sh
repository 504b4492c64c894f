#!/usr/bin/env bash
# scripts/bench.sh - `make bench`: the NMEA 0183 parser against gpsdecode on the same bytes.
#
# 1. builds tmm-bench in release mode;
# 2. has tmm-bench write the benchmark corpus (fixture logs without `#` lines, repeated to at
#    least 1,000,000 sentences) to a temporary file, so both sides read identical bytes;
# 3. runs tmm-bench (framer + validation + typed decode in 4096-byte chunks, plus the naive
#    String/split/Double baseline), then `gpsdecode < corpus > /dev/null` BENCH_RUNS times;
# 4. prints medians per sentence and the ratio gpsdecode / ours, with machine information.
#
# Environment:
#   BENCH_RUNS            timed runs of each (default 7); gpsdecode: BENCH_GPSDECODE_RUNS
#   BENCH_NAIVE_RUNS      runs of the naive baseline (default 3; 0 skips it)
#   BENCH_MIN_SENTENCES   corpus size (default 1000000)
#   BENCH_PACKAGE_PATH    package to build tmm-bench from (default: this repository)
#   BENCH_SCRATCH_PATH    SwiftPM scratch path (default: the package's .build)
#   BENCH_CALLGRIND=0     skip the instruction count (callgrind; on by default when valgrind is
#                         installed): instructions per sentence do not depend on machine load
#   BENCH_LATENCY=0       skip the receiver input latency run (tmm-latency; needs gpsd)
#   BENCH_FANOUT=0        skip the WebSocket fan-out run (tmm-fanout against tmm-bridge run, gpsd
#                         and a floor server; needs gpsd; about 6 minutes per repetition)
#   BENCH_FANOUT_RUNS     repetitions of the fan-out matrix, medians reported (default 3)
#   BENCH_FANOUT_QUICK=1  fan-out in quick mode: 1 run, 2 s warm-up, 4 s windows (about 4 minutes)
#   BENCH_FANOUT_CLIENTS, BENCH_FANOUT_RATES   the matrix (default 64,256,1000 and 10,20,50)
#   TMM_FIXTURES          fixture folder (default Tests/Fixtures/nmea, else /work/shared/fixtures/nmea)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=${BENCH_RUNS:-7}
gpsdecode_runs=${BENCH_GPSDECODE_RUNS:-$runs}
naive_runs=${BENCH_NAIVE_RUNS:-3}
min_sentences=${BENCH_MIN_SENTENCES:-1000000}
package=${BENCH_PACKAGE_PATH:-$root}
scratch=${BENCH_SCRATCH_PATH:-$package/.build}
fixtures=${TMM_FIXTURES:-$root/Tests/Fixtures/nmea}
if ! ls "$fixtures"/*.log >/dev/null 2>&1; then fixtures=/work/shared/fixtures/nmea; fi

# The revision, read from .git without running git.
revision() {
    local git=$root/.git head ref
    [ -f "$git" ] && git=$(sed -n 's/^gitdir: //p' "$git")
    [ -f "$git/HEAD" ] || { echo "unknown (no .git)"; return; }
    head=$(cat "$git/HEAD")
    case $head in
    ref:*)
        ref=${head#ref: }
        if [ -f "$git/$ref" ]; then
            echo "$(cut -c1-12 "$git/$ref") ($ref)"
        elif [ -f "$git/packed-refs" ] && grep -q " $ref\$" "$git/packed-refs"; then
            echo "$(grep " $ref\$" "$git/packed-refs" | cut -c1-12) ($ref)"
        else
            echo "none yet ($ref has no commit)"
        fi
        ;;
    *) echo "${head:0:12} (detached)" ;;
    esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
result() { grep '^RESULT ' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | tail -1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== building tmm-bench (release)"
swift build -c release --product tmm-bench --package-path "$package" --scratch-path "$scratch" 2>&1 |
    grep -vE '^\[[0-9]+/[0-9]+\]' || true
bin=$(swift build -c release --product tmm-bench --package-path "$package" --scratch-path "$scratch" --show-bin-path)/tmm-bench
[ -x "$bin" ] || { echo "bench.sh: build failed: no $bin" >&2; exit 1; }

corpus=$tmp/corpus.nmea
"$bin" --fixtures "$fixtures" --min-sentences "$min_sentences" --write-corpus "$corpus" > "$tmp/corpus.txt"
sentences=$(result "$tmp/corpus.txt" corpus_sentences)
bytes=$(result "$tmp/corpus.txt" corpus_bytes)
head -1 "$tmp/corpus.txt"

echo "== tmm-bench: $runs runs (naive baseline: $naive_runs)"
naive_flags=(--naive-runs "$naive_runs")
[ "$naive_runs" -eq 0 ] && naive_flags=(--no-naive)
"$bin" --fixtures "$fixtures" --min-sentences "$min_sentences" --runs "$runs" "${naive_flags[@]}" | tee "$tmp/ours.txt"

# Instructions per sentence: deterministic, unlike time on a shared machine. Counted by callgrind
# over runParser (warm-up + 1 run) on a smaller corpus of the same files.
instructions=
if [ "${BENCH_CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null; then
    echo "== callgrind: instructions per sentence (parser, 20000+ sentences)"
    valgrind --tool=callgrind --callgrind-out-file="$tmp/callgrind.out" \
        --toggle-collect='$s9tmm_bench9runParser_5chunkAA8CountersVs4SpanVys5UInt8VG_SitF' \
        "$bin" --fixtures "$fixtures" --min-sentences 20000 --runs 1 --no-naive > "$tmp/callgrind.txt" 2> "$tmp/callgrind.err" || true
    collected=$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$tmp/callgrind.err" | tail -1)
    small=$(result "$tmp/callgrind.txt" corpus_sentences)
    if [ -n "$collected" ] && [ -n "$small" ] && [ "$collected" -gt 0 ]; then
        instructions=$(awk -v i="$collected" -v n="$small" 'BEGIN { printf "%.0f", i / (2 * n) }')
        echo "  $instructions instructions/sentence ($collected instructions, 2 x $small sentences)"
    else
        echo "  callgrind measurement failed (see valgrind output); skipped"
    fi
fi

gpsdecode_version=none
if command -v gpsdecode >/dev/null; then
    gpsdecode_version=$(gpsdecode -V 2>&1 | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -1)
    echo "== gpsdecode (gpsd $gpsdecode_version): 1 warm-up + $gpsdecode_runs runs of 'gpsdecode < corpus > /dev/null'"
    reports=$(gpsdecode < "$corpus" 2>/dev/null | wc -l)
    echo "  warm-up: $reports JSON reports"
    : > "$tmp/gpsdecode.wall"
    : > "$tmp/gpsdecode.cpu"
    TIMEFORMAT='%3R %3U %3S'
    for i in $(seq 1 "$gpsdecode_runs"); do
        t=$({ time gpsdecode < "$corpus" > /dev/null 2>&1; } 2>&1)
        read -r real user sys <<< "$t"
        wall_ns=$(awk -v r="$real" -v n="$sentences" 'BEGIN { printf "%.1f", r * 1e9 / n }')
        cpu_ns=$(awk -v u="$user" -v s="$sys" -v n="$sentences" 'BEGIN { printf "%.1f", (u + s) * 1e9 / n }')
        echo "$wall_ns" >> "$tmp/gpsdecode.wall"
        echo "$cpu_ns" >> "$tmp/gpsdecode.cpu"
        echo "  gpsdecode run $i/$gpsdecode_runs: ${real} s, $wall_ns ns/sentence, CPU $cpu_ns ns/sentence"
    done
    gpsdecode_ns=$(median < "$tmp/gpsdecode.wall")
    gpsdecode_min=$(sort -g "$tmp/gpsdecode.wall" | head -1)
    gpsdecode_cpu=$(median < "$tmp/gpsdecode.cpu")
else
    echo "== gpsdecode not installed (apt-get install gpsd-clients): baseline skipped"
fi

ours_ns=$(result "$tmp/ours.txt" parser_ns_per_sentence)
ours_min=$(result "$tmp/ours.txt" parser_min_ns_per_sentence)
ours_cpu=$(result "$tmp/ours.txt" parser_cpu_ns_per_sentence)
ours_alloc=$(result "$tmp/ours.txt" parser_allocations_per_sentence)
naive_ns=$(result "$tmp/ours.txt" naive_ns_per_sentence)
naive_min=$(result "$tmp/ours.txt" naive_min_ns_per_sentence)
naive_cpu=$(result "$tmp/ours.txt" naive_cpu_ns_per_sentence)
naive_alloc=$(result "$tmp/ours.txt" naive_allocations_per_sentence)

row() {  # name median min cpu allocations
    local rate ratio cpu_ratio
    if [ -z "$2" ]; then return; fi
    rate=$(awk -v ns="$2" 'BEGIN { printf "%.2f", 1e3 / ns }')
    ratio=n/a
    cpu_ratio=n/a
    [ -n "${gpsdecode_ns:-}" ] && ratio=$(awk -v g="$gpsdecode_ns" -v ns="$2" 'BEGIN { printf "%.1fx", g / ns }')
    [ -n "${gpsdecode_cpu:-}" ] && cpu_ratio=$(awk -v g="$gpsdecode_cpu" -v ns="$4" 'BEGIN { printf "%.1fx", g / ns }')
    printf '| %-38s | %9s | %9s | %9s | %9s | %11s | %11s | %11s |\n' "$1" "$2" "$3" "$4" "$rate" "$5" "$ratio" "$cpu_ratio"
}

echo
echo "## NMEA 0183 parser benchmark"
echo
echo "corpus: $sentences sentences, $bytes bytes (fixture logs without '#' lines, repeated), fed in 4096-byte chunks."
echo "ns = nanoseconds per sentence: wall (median and minimum of the runs) and CPU (median; thread CPU"
echo "time for tmm-bench, user+sys for gpsdecode). gpsdecode/x = how many times faster than gpsdecode."
echo
printf '| %-38s | %9s | %9s | %9s | %9s | %11s | %11s | %11s |\n' implementation "wall ns" "min ns" \
    "CPU ns" "M sent./s" "allocs/sent" "gpsdecode/x" "(CPU)"
printf '|%s|%s:|%s:|%s:|%s:|%s:|%s:|%s:|\n' "$(printf -- '-%.0s' {1..40})" "$(printf -- '-%.0s' {1..10})" \
    "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..10})" \
    "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..12})"
row "tmm-bridge NMEA0183 (framer+decode)" "$ours_ns" "$ours_min" "$ours_cpu" "$ours_alloc"
row "naive Swift (String, split, Double)" "$naive_ns" "$naive_min" "$naive_cpu" "$naive_alloc"
row "gpsdecode (gpsd $gpsdecode_version)" "${gpsdecode_ns:-}" "${gpsdecode_min:-}" "${gpsdecode_cpu:-}" "n/a"
echo
target=FAIL
awk -v ns="$ours_ns" -v a="$ours_alloc" 'BEGIN { exit !(ns <= 200 && a == 0) }' && target=PASS
echo "target (issue): <= 200 ns/sentence and 0 allocations/sentence: $target (median $ours_ns ns, $ours_alloc allocations)"
echo "reference points (issue): minmea ~440 ns/sentence, gpsdecode ~7 us/sentence"
if [ -n "$instructions" ]; then
    echo "instructions: $instructions per sentence (callgrind, parser pipeline; independent of machine load)"
fi
echo
echo "command:  scripts/bench.sh (BENCH_RUNS=$runs, BENCH_GPSDECODE_RUNS=$gpsdecode_runs, BENCH_NAIVE_RUNS=$naive_runs)"
echo "date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "revision: $(revision) (working tree state not checked)"
echo "machine:  $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "swift:    $(swift --version 2>&1 | head -1)"

# Receiver input latency (issue 3): pty → gpsd → bridge, against a plain gpsd client in the
# same run. Needs gpsd; BENCH_LATENCY=0 skips it.
if [ "${BENCH_LATENCY:-1}" != 0 ]; then
    echo
    echo "## Receiver input latency (tmm-latency)"
    echo
    swift build -c release --product tmm-latency --package-path "$package" --scratch-path "$scratch" 2>&1 |
        grep -E 'error|warning' || true
    latency_bin=$(swift build -c release --product tmm-latency --package-path "$package" --scratch-path "$scratch" --show-bin-path)/tmm-latency
    latency_epochs=${BENCH_LATENCY_EPOCHS:-600}
    latency_hz=${BENCH_LATENCY_HZ:-20}
    "$latency_bin" "$latency_epochs" "$latency_hz"
    echo
    echo "command:  tmm-latency $latency_epochs $latency_hz (from scripts/bench.sh)"
    echo "load:     $(cut -d' ' -f1-3 /proc/loadavg)"
fi

# WebSocket fan-out: `tmm-bridge run` to 64-1000 V2 clients, against gpsd's own JSON fan-out and a
# floor server, with the same pty writer and client loop. Needs gpsd; BENCH_FANOUT=0 skips it.
if [ "${BENCH_FANOUT:-1}" != 0 ]; then
    echo
    echo "## WebSocket fan-out (tmm-fanout)"
    echo
    for product in tmm-fanout tmm-bridge; do
        swift build -c release --product "$product" --package-path "$package" --scratch-path "$scratch" 2>&1 |
            grep -E 'error|warning' || true
    done
    fanout_bin=$(swift build -c release --product tmm-fanout --package-path "$package" --scratch-path "$scratch" --show-bin-path)
    fanout_flags=(--runs "${BENCH_FANOUT_RUNS:-3}")
    [ "${BENCH_FANOUT_QUICK:-0}" != 0 ] && fanout_flags=(--quick)
    [ -n "${BENCH_FANOUT_CLIENTS:-}" ] && fanout_flags+=(--clients "$BENCH_FANOUT_CLIENTS")
    [ -n "${BENCH_FANOUT_RATES:-}" ] && fanout_flags+=(--rates "$BENCH_FANOUT_RATES")
    "$fanout_bin/tmm-fanout" --self-test
    "$fanout_bin/tmm-fanout" --bridge "$fanout_bin/tmm-bridge" "${fanout_flags[@]}"
    echo
    echo "command:  tmm-fanout --bridge $fanout_bin/tmm-bridge ${fanout_flags[*]} (from scripts/bench.sh)"
    echo "revision: $(revision) (working tree state not checked)"
    echo "machine:  $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
fi
