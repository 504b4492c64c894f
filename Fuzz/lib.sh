# shellcheck shell=bash
# Fuzz/lib.sh - the steps the libFuzzer runners Fuzz/run*.sh share. Sourced by them, not run.
#
# A runner, under `set -euo pipefail`, does:
#
#   . "$(dirname "$0")/lib.sh"
#   fuzz_init NAME MODULE "$@"     # NAME: prefix of all it writes in Fuzz/build; MODULE: the one
#                                  # module the sources and the harness are built into
#   (override the defaults fuzz_init sets where the target differs)
#   fuzz_snapshot FILE...          # fresh copy of the sources in Fuzz/build/src-NAME/
#   fuzz_include_module MODULE...  # the package modules those sources import join the snapshot
#   fuzz_build [LABEL]             # Fuzz/build/NAME-fuzz, or exit 2
#   (write its dictionary)
#   fuzz_seed_corpus               # the working corpus starts as a copy of the seeds
#   fuzz_print_corpus
#   fuzz_run MAX_LEN [FLAG...]     # libFuzzer for SECONDS (FLAG: e.g. -dict=...); sets $fuzz_status
#   fuzz_summary [TARGET]          # libFuzzer's totals and the `== target: ...` line
#   fuzz_finish                    # the failure block and exit 1, or `== OK: ...`
#
# Several fuzzers share Fuzz/build, so everything a runner writes there is named NAME-* (and the
# source snapshot src-NAME/). Environment read here: SWIFTC, FUZZ_FLAGS, ASAN_OPTIONS.
#
# Settings (fuzz_init's defaults; a runner may change them after it): root, build, src, corpus,
# seeds, log, swiftc, seconds, as the runners named them before; and, named fuzz_* so that they
# do not clash with a runner's own variables: fuzz_name, fuzz_module, fuzz_binary,
# fuzz_old_artifacts, fuzz_note. fuzz_run sets fuzz_status.

# fuzz_init NAME MODULE [SECONDS]: set the runner's settings to the common defaults. SECONDS
# (default 60) is the runner's first argument.
fuzz_init() {
    fuzz_name=$1
    fuzz_module=$2
    seconds=${3:-60}
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    build=$root/Fuzz/build
    src=$build/src-$fuzz_name
    fuzz_binary=$build/$fuzz_name-fuzz
    corpus=$root/Fuzz/corpus-$fuzz_name     # working corpus: grows across runs, git-ignored
    seeds=$root/Fuzz/seeds-$fuzz_name       # read-only extra corpus
    log=$build/last-run-$fuzz_name.log
    swiftc=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}
    # Reproducers (NAME-crash-*, -leak-*, -timeout-*, -oom-*) left by earlier runs: `ignore` (only
    # this run's fail it), `count` (they fail this run too) or `remove` (deleted before the run).
    fuzz_old_artifacts=ignore
    fuzz_note=""                            # appended to the `== fuzzing for` line
}

# fuzz_snapshot FILE...: make Fuzz/build and the working corpus, and copy FILE... into a fresh
# Fuzz/build/src-NAME/. Building from a snapshot means an editor saving a file mid-build cannot
# break the build.
fuzz_snapshot() {
    mkdir -p "$build" "$corpus"
    rm -rf "$src"
    mkdir -p "$src"
    cp "$@" "$src/"
}

# fuzz_include_module MODULE...: add the pure package modules the snapshot imports (ByteCoding,
# HTTP1, ...) to it, so that everything still builds as the one module MODULE of fuzz_init: their
# sources are copied in (as MODULE-FILE.swift) and every `import MODULE` line of the snapshot is
# dropped. Call it after every file is in the snapshot.
fuzz_include_module() {
    local module file
    for module in "$@"; do
        # Subfolders too (NMEA0183/Sentences): named by their path, so names stay unique.
        while IFS= read -r file; do
            local relative=${file#"$root/Sources/$module/"}
            cp "$file" "$src/$module-${relative//\//-}"
        done < <(find "$root/Sources/$module" -name '*.swift' | sort)
    done
    # After all are copied: a module added later may import one added earlier.
    for module in "$@"; do
        find "$src" -name '*.swift' -exec sed -i "/^import $module\$/d" {} +
    done
}

# fuzz_compile SWIFTC_ARG...: compile the given sources into Fuzz/build/NAME-fuzz as the module
# MODULE, with libFuzzer and AddressSanitizer.
fuzz_compile() {
    "$swiftc" -sanitize=fuzzer,address -parse-as-library -enable-experimental-feature Lifetimes -O \
        -use-ld=lld -module-name "$fuzz_module" "$@" -o "$fuzz_binary"
}

# fuzz_build [LABEL]: build the snapshot (src-NAME/*.swift); exit 2 if that fails.
fuzz_build() {
    echo "== building $fuzz_binary${1:+ ($1)}"
    fuzz_compile "$src"/*.swift || { echo "${0##*/}: build failed" >&2; exit 2; }
}

# fuzz_seed_corpus: copy the seeds into the working corpus if it is empty.
fuzz_seed_corpus() {
    if [ -z "$(ls -A "$corpus")" ]; then
        cp "$seeds"/* "$corpus/"
    fi
}

# fuzz_count DIR: the number of entries in DIR (as `ls DIR | wc -l` counts them).
fuzz_count() {
    find "$1" -mindepth 1 -maxdepth 1 ! -name '.*' | wc -l
}

fuzz_print_corpus() {
    echo "== corpus: $(fuzz_count "$corpus") files in $corpus, $(fuzz_count "$seeds") seeds in $seeds"
}

# fuzz_run MAX_LEN [FLAG...]: fuzz for SECONDS over the working corpus and the seeds, inputs of at
# most MAX_LEN bytes, with the flags every target uses, the given ones and FUZZ_FLAGS (last, so
# they win); the log goes to $log and libFuzzer's exit status to $fuzz_status.
fuzz_run() {
    # The Swift runtime's backtracer must be off under ASan (it trips ASan and can hang).
    export SWIFT_BACKTRACE=enable=no
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
    if [ "$fuzz_old_artifacts" = remove ]; then
        rm -f "$build/$fuzz_name"-crash-* "$build/$fuzz_name"-leak-* "$build/$fuzz_name"-timeout-* \
            "$build/$fuzz_name"-oom-*
    fi
    echo "== fuzzing for $seconds s (log: $log)$fuzz_note"
    if [ "$fuzz_old_artifacts" = ignore ]; then
        touch "$build/.$fuzz_name-run-start"
    fi
    fuzz_status=0
    # shellcheck disable=SC2086
    "$fuzz_binary" -max_total_time="$seconds" -max_len="$1" -use_value_profile=1 -timeout=10 \
        -rss_limit_mb=2048 "${@:2}" -print_final_stats=1 -artifact_prefix="$build/$fuzz_name-" \
        ${FUZZ_FLAGS:-} "$corpus" "$seeds" > "$log" 2>&1 || fuzz_status=$?
}

# fuzz_summary [TARGET]: print libFuzzer's INITED/DONE lines and final stats from the log, then
# `== target: TARGET; executions: N (R/s), final cov: C ft: F, corpus now K files` (without the
# `target: TARGET; ` part when no TARGET is given). Several jobs' stats are added up.
fuzz_summary() {
    local execs rate cov
    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^Done [0-9]+ runs|^stat::' "$log" || true
    # `|| true`: a run that ended before libFuzzer printed its stats (a missing binary, a crash at
    # start) must still reach fuzz_finish and its failure block, not end here under pipefail.
    execs=$({ grep -E '^stat::number_of_executed_units:' "$log" || true; } | awk '{ s += $2 } END { print s + 0 }')
    rate=$({ grep -E '^stat::average_exec_per_sec:' "$log" || true; } | awk '{ s += $2 } END { print s + 0 }')
    cov=$({ grep -E '^#[0-9]+[[:space:]]' "$log" || true; } | grep -oE 'cov: [0-9]+ ft: [0-9]+' | tail -1 || true)
    echo "== ${1:+target: $1; }executions: $execs (${rate}/s), final ${cov:-cov: ?}, corpus now $(fuzz_count "$corpus") files"
}

# fuzz_artifacts: the reproducers that count for this run (see fuzz_old_artifacts), one a line, sorted.
fuzz_artifacts() {
    local since=()
    if [ "$fuzz_old_artifacts" = ignore ]; then
        since=(-newer "$build/.$fuzz_name-run-start")
    fi
    find "$build" -maxdepth 1 "${since[@]}" \( -name "$fuzz_name-crash-*" -o -name "$fuzz_name-leak-*" \
        -o -name "$fuzz_name-timeout-*" -o -name "$fuzz_name-oom-*" \) | sort
}

# fuzz_finish: on a non-zero libFuzzer status or any reproducer, print the errors from the log and
# each reproducer as a hex dump to stderr and exit 1; else print the OK line.
fuzz_finish() {
    local artifacts a
    artifacts=$(fuzz_artifacts)
    if [ "$fuzz_status" -ne 0 ] || [ -n "$artifacts" ]; then
        echo "== FAILED (libFuzzer exit status $fuzz_status)" >&2
        grep -E 'invariant violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|Fatal error|SUMMARY' "$log" >&2 || true
        for a in $artifacts; do
            echo "-- reproducer $a ($(wc -c < "$a") bytes); rerun: $fuzz_binary $a" >&2
            od -A d -t x1z -v "$a" | head -20 >&2
        done
        exit 1
    fi
    echo "== OK: no crash in $seconds s"
}
