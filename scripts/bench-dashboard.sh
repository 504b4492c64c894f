#!/usr/bin/env bash
# scripts/bench-dashboard.sh - what one open operator dashboard page costs the daemon (issue 25:
# "< 1 % of a core with one open page at 10 Hz"). About 3.5 minutes with the defaults.
#
# One real daemon, `tmm-bridge run --replay nmea-rtk.log` (release; the Trimble RTK capture, played
# at its own rate: 10 Hz, checked with `tmm-bridge status --json`'s fix.epochRate before and after),
# with a private gpsd. After a warm-up, tmmtools/bench/dashboard.py measures the daemon's CPU (its
# process CPU clock, all threads; /proc/PID/stat utime + stime as a cross-check) over
# BENCH_DASHBOARD_ROUNDS rounds of windows of BENCH_DASHBOARD_SECONDS, the phases in rotating order:
# no page (the baseline, measured in the same run), one WebSocket client on /dashboard/socket that
# sends the page's hello and reads every snapshot (snapshots and bytes per second counted: the 4 Hz
# cap), and the real page in Debian's headless chromium (selenium). The dashboard's cost is the
# median of the per-round differences against the baseline.
#
# Environment:
#   BENCH_PACKAGE_PATH, BENCH_SCRATCH_PATH   as scripts/bench.sh
#   BENCH_DASHBOARD_ROUNDS      rounds (default 5)
#   BENCH_DASHBOARD_SECONDS     measured seconds per window (default 10)
#   BENCH_DASHBOARD_WARMUP      seconds between the daemon's start and the first window (default 10;
#                               the track grows one point a second up to 600, so 600 measures a full one)
#   BENCH_DASHBOARD_CHROMIUM=0  skip the headless chromium phase (skipped anyway without chromium,
#                               chromedriver or python3-selenium)
#   BENCH_DASHBOARD_CAPTURE     the capture to replay (default nmea-rtk.log of TMM_FIXTURES)
#   TMM_FIXTURES                fixture folder (default Tests/Fixtures/nmea, else /work/shared/fixtures/nmea)
# Needs gpsd (the daemon's private gpsd) and /usr/bin/python3 with websockets.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
package=${BENCH_PACKAGE_PATH:-$root}
scratch=${BENCH_SCRATCH_PATH:-$package/.build}
rounds=${BENCH_DASHBOARD_ROUNDS:-5}
seconds=${BENCH_DASHBOARD_SECONDS:-10}
warmup=${BENCH_DASHBOARD_WARMUP:-10}
fixtures=${TMM_FIXTURES:-$root/Tests/Fixtures/nmea}
[ -f "$fixtures/nmea-rtk.log" ] || fixtures=/work/shared/fixtures/nmea
capture=${BENCH_DASHBOARD_CAPTURE:-$fixtures/nmea-rtk.log}

[ -x /usr/bin/python3 ] || { echo "bench-dashboard.sh: /usr/bin/python3 is missing" >&2; exit 1; }
[ -r "$capture" ] || { echo "bench-dashboard.sh: no capture $capture" >&2; exit 1; }
chromium_flags=()
if [ "${BENCH_DASHBOARD_CHROMIUM:-1}" != 0 ]; then
    if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && /usr/bin/python3 -c 'import selenium' 2>/dev/null; then
        chromium_flags=(--chromium)
    else
        echo "bench-dashboard.sh: chromium, chromedriver or python3-selenium missing: no chromium phase"
    fi
fi

echo "== building tmm-bridge (release)"
swift build -c release --product tmm-bridge --package-path "$package" --scratch-path "$scratch" 2>&1 |
    grep -E 'error|warning' || true
bridge=$(swift build -c release --package-path "$package" --scratch-path "$scratch" --show-bin-path)/tmm-bridge
[ -x "$bridge" ] || { echo "bench-dashboard.sh: build failed: no $bridge" >&2; exit 1; }

tmp=$(mktemp -d /tmp/tmm-bench-dashboard-XXXXXX)
chmod 755 "$tmp"  # the daemon drops to its own user, who must reach its state directory
daemon=
cleanup() {
    if [ -n "$daemon" ]; then kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

free_ports() {  # free_ports N: N free TCP ports on 127.0.0.1
    /usr/bin/python3 -c '
import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); held.append(s); print(s.getsockname()[1])' "$1"
}
status_field() {  # status_field EXPR: a value of `tmm-bridge status --json` (EXPR on the document d)
    "$bridge" status --json --runtime-dir "$tmp/run" 2>/dev/null |
        /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" 2>/dev/null || echo none
}

mapfile -t ports < <(free_ports 7)
"$bridge" run --replay "$capture" --registration open --no-discovery --listen 127.0.0.1 \
    --state-dir "$tmp/state" --runtime-dir "$tmp/run" \
    --location-port "${ports[0]}" --location-secure-port "${ports[1]}" --api-port "${ports[2]}" \
    --api-secure-port "${ports[3]}" --location-v2-port "${ports[4]}" \
    --location-v2-secure-port "${ports[5]}" --fallback-port-start "${ports[6]}" > "$tmp/daemon.log" 2>&1 &
daemon=$!
sleep "$warmup"
if ! kill -0 "$daemon" 2>/dev/null; then
    echo "bench-dashboard.sh: the daemon ended; its log:" >&2
    cat "$tmp/daemon.log" >&2
    exit 1
fi
api_port=$(status_field 'd["ports"]["apiPort"]')
rate_before=$(status_field '"%.2f" % d["fix"]["epochRate"]')
echo "daemon:   pid $daemon, apiPort $api_port, replaying $(basename "$capture"): fix.epochRate $rate_before Hz" \
    "after $warmup s ($(grep -m1 -o 'replaying.*' "$tmp/daemon.log" || echo '?'))"
case $rate_before in
none) echo "bench-dashboard.sh: no epoch rate from tmm-bridge status; the daemon's log:" >&2; cat "$tmp/daemon.log" >&2; exit 1 ;;
esac

echo
PYTHONPATH="$root" /usr/bin/python3 -B -m tmmtools.bench.dashboard --pid "$daemon" --port "$api_port" \
    --bridge "$bridge" --runtime-dir "$tmp/run" --rounds "$rounds" --seconds "$seconds" "${chromium_flags[@]}" |
    tee "$tmp/dashboard.txt"
rate_after=$(status_field '"%.2f" % d["fix"]["epochRate"]')
kill -0 "$daemon" 2>/dev/null || { echo "bench-dashboard.sh: the daemon ended during the run" >&2; exit 1; }

echo
echo "receiver: $(basename "$capture") replayed, fix.epochRate $rate_before Hz before, $rate_after Hz after the windows"
echo "command:  BENCH_DASHBOARD_ROUNDS=$rounds BENCH_DASHBOARD_SECONDS=$seconds BENCH_DASHBOARD_WARMUP=$warmup" \
    "$([ ${#chromium_flags[@]} -eq 0 ] && echo 'BENCH_DASHBOARD_CHROMIUM=0 ')scripts/bench-dashboard.sh"
echo "          (tmm-bridge run --replay $(basename "$capture") ..., then python3 -m tmmtools.bench.dashboard" \
    "--rounds $rounds --seconds $seconds ${chromium_flags[*]})"
echo "date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine:  $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(uname -sr)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "chromium: $( [ ${#chromium_flags[@]} -gt 0 ] && /usr/bin/chromium --version 2>/dev/null | head -1 || echo 'not run')"
echo "swift:    $(swift --version 2>&1 | head -1)"
