#!/usr/bin/env bash
# Zero-warnings gate: builds every target, tests included (debug), and fails if the compiler
# printed a warning for any file under Sources/ or Tests/. Extra arguments go to `swift build`.
#
# A file that compiled cleanly before is not recompiled, so its warnings would not be printed
# again; to keep the gate from passing on a second run, the object file of each file that warned
# is removed, and the next run recompiles it. Warnings from files compiled by a plain
# `swift build` outside this script are only seen once they are recompiled (`make clean` forces
# it); CI always builds from scratch.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
physical=$(pwd -P)

log=$(mktemp)
trap 'rm -f "$log"' EXIT

set +e
swift build --build-tests "$@" 2>&1 | tee "$log"
build_status=${PIPESTATUS[0]}
set -e

# Diagnostics look like `/abs/path/Sources/X/File.swift:12:5: warning: ...`.
warnings=()
while IFS= read -r line; do
    case "$line" in
        "$root"/Sources/*": warning: "* | "$root"/Tests/*": warning: "* | \
            "$physical"/Sources/*": warning: "* | "$physical"/Tests/*": warning: "*)
            warnings+=("$line") ;;
    esac
done < <(grep -F ': warning: ' "$log" | sort -u)

finish() {
    if ((build_status != 0)); then
        echo "check-warnings: swift build --build-tests failed (exit $build_status)" >&2
        exit "$build_status"
    fi
    exit "$1"
}

((${#warnings[@]} == 0)) && finish 0

echo >&2
echo "check-warnings: ${#warnings[@]} compiler warning(s) in Sources/ or Tests/ (the project allows none):" >&2
printf '  %s\n' "${warnings[@]}" >&2

# Force the warned files to recompile next time, so the warnings are shown again (also when the
# build failed elsewhere: the files that warned may have compiled and been cached).
bin=$(swift build "$@" --show-bin-path)
for line in "${warnings[@]}"; do
    file=${line%%:*}
    relative=${file#"$root"/}
    relative=${relative#"$physical"/}
    case "$relative" in
        Tests/Support/*) module=$(cut -d/ -f3 <<<"$relative") ;;
        Sources/* | Tests/*) module=$(cut -d/ -f2 <<<"$relative") ;;
        *) continue ;;
    esac
    # Removing the file's object file makes the next build recompile just that file.
    objects="$bin/${module//-/_}.build"
    [[ -d "$objects" ]] && find "$objects" -name "$(basename "$file").o" -delete
done
finish 1
