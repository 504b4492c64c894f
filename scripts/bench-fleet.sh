#!/usr/bin/env bash
# scripts/bench-fleet.sh - fleet publishing at scale (issue 24): what MQTT publishing costs a box,
# the broker and the network. About 8 minutes with the defaults. Two parts:
#
# 1. one real daemon: the CPU of `tmm-bridge run --demo` (release; the demo plays ~10 Hz) without
#    a broker, with `--mqtt mqtt://127.0.0.1:PORT` at --mqtt-rate 1 and at --mqtt-rate 0 (every
#    epoch), BENCH_FLEET_DAEMON_RUNS rounds (the three variants in rotating order), each measured
#    over BENCH_FLEET_DAEMON_SECONDS after a 5 s warm-up (the CPU clock of the daemon's process,
#    all threads); the marginal CPU of fleet publishing is the median difference. The
#    messages are counted by mosquitto_sub, and one of them is kept as part 2's payload;
# 2. tmm-fleetload: N simulated boxes (Fleet's MQTTLink, one thread each) in one process against
#    a fresh local mosquitto per measurement, N in BENCH_FLEET_BOXES at BENCH_FLEET_RATE Hz:
#    end-to-end latency to a subscriber, delivered/expected, CPU per box, broker CPU and RSS,
#    bytes on the wire.
#
# Environment:
#   BENCH_PACKAGE_PATH, BENCH_SCRATCH_PATH   as scripts/bench.sh
#   BENCH_FLEET_DAEMON=0          skip part 1
#   BENCH_FLEET_DAEMON_RUNS       rounds of part 1 (default 3)
#   BENCH_FLEET_DAEMON_SECONDS    measured seconds per daemon run (default 20)
#   BENCH_FLEET_LOAD=0            skip part 2
#   BENCH_FLEET_BOXES             box counts (default 1,10,100,1000)
#   BENCH_FLEET_RATE              Hz per box (default 1)
#   BENCH_FLEET_SECONDS           measured seconds per load run (default 15)
#   BENCH_FLEET_RUNS              repetitions of the box list (default 3)
# Needs mosquitto and mosquitto-clients (scripts/install-deps.sh), gpsd (for --demo), python3.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
package=${BENCH_PACKAGE_PATH:-$root}
scratch=${BENCH_SCRATCH_PATH:-$package/.build}
daemon_runs=${BENCH_FLEET_DAEMON_RUNS:-3}
daemon_seconds=${BENCH_FLEET_DAEMON_SECONDS:-20}
boxes=${BENCH_FLEET_BOXES:-1,10,100,1000}
rate=${BENCH_FLEET_RATE:-1}
load_seconds=${BENCH_FLEET_SECONDS:-15}
load_runs=${BENCH_FLEET_RUNS:-3}

for tool in /usr/sbin/mosquitto /usr/bin/mosquitto_sub /usr/bin/python3; do
    [ -x "$tool" ] || { echo "bench-fleet.sh: $tool is missing (scripts/install-deps.sh --bench)" >&2; exit 1; }
done

echo "== building tmm-bridge and tmm-fleetload (release)"
for product in tmm-bridge tmm-fleetload; do
    swift build -c release --product "$product" --package-path "$package" --scratch-path "$scratch" 2>&1 |
        grep -E 'error|warning' || true
done
bindir=$(swift build -c release --package-path "$package" --scratch-path "$scratch" --show-bin-path)
bridge=$bindir/tmm-bridge
[ -x "$bridge" ] && [ -x "$bindir/tmm-fleetload" ] || { echo "bench-fleet.sh: build failed" >&2; exit 1; }

tmp=$(mktemp -d /tmp/tmm-bench-fleet-XXXXXX)
chmod 755 "$tmp"  # the daemon drops to its own user, who must reach its state directory
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
calc() { awk "BEGIN { printf $1 }"; }
free_ports() {  # free_ports N: N free TCP ports on 127.0.0.1
    /usr/bin/python3 -c '
import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); held.append(s); print(s.getsockname()[1])' "$1"
}
# A process's CPU time in nanoseconds, all threads, exact (its CPU clock, Linux's
# MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)): /proc's utime + stime count 10 ms ticks, too coarse
# for a daemon at 1 % of a core.
cpu_ns() { /usr/bin/python3 -c 'import sys, time; print(time.clock_gettime_ns(((~int(sys.argv[1])) << 3) | 2))' "$1"; }

# Part 1: one real daemon.
if [ "${BENCH_FLEET_DAEMON:-1}" != 0 ]; then
    echo
    echo "## One daemon: tmm-bridge run --demo, without and with fleet publishing"
    echo
    mapfile -t ports < <(free_ports 9)
    broker_port=${ports[8]}
    cat > "$tmp/mosquitto.conf" <<EOF
listener $broker_port 127.0.0.1
allow_anonymous true
persistence false
log_dest file $tmp/mosquitto.log
$([ "$(id -u)" = 0 ] && echo "user root")
EOF
    /usr/sbin/mosquitto -c "$tmp/mosquitto.conf" > "$tmp/mosquitto.out" 2>&1 &
    broker_pid=$!
    pids+=("$broker_pid")
    sleep 0.5
    : > "$tmp/daemon.txt"
    variants=(off rate1 rate0)
    for round in $(seq 1 "$daemon_runs"); do
        for i in 0 1 2; do
            variant=${variants[$(((i + round - 1) % 3))]}
            state=$tmp/state-$round-$variant
            mkdir -p "$state"
            chmod 755 "$state"
            flags=()
            case $variant in
            rate1) flags=(--mqtt "mqtt://127.0.0.1:$broker_port" --mqtt-rate 1 --mqtt-topic fleetbench) ;;
            rate0) flags=(--mqtt "mqtt://127.0.0.1:$broker_port" --mqtt-rate 0 --mqtt-topic fleetbench) ;;
            esac
            "$bridge" run --demo --registration open --no-discovery --listen 127.0.0.1 \
                --state-dir "$state/state" --runtime-dir "$state/run" \
                --location-port "${ports[0]}" --location-secure-port "${ports[1]}" --api-port "${ports[2]}" \
                --api-secure-port "${ports[3]}" --location-v2-port "${ports[4]}" \
                --location-v2-secure-port "${ports[5]}" --fallback-port-start "${ports[6]}" \
                "${flags[@]}" > "$state/daemon.log" 2>&1 &
            daemon=$!
            pids+=("$daemon")
            sleep 5
            if ! kill -0 "$daemon" 2>/dev/null; then
                echo "bench-fleet.sh: the daemon ended; its log:" >&2
                cat "$state/daemon.log" >&2
                exit 1
            fi
            timeout "$daemon_seconds" /usr/bin/mosquitto_sub -p "$broker_port" -t fleetbench/location \
                > "$state/messages.txt" 2>/dev/null &
            counter=$!
            before=$(cpu_ns "$daemon")
            sleep "$daemon_seconds"
            after=$(cpu_ns "$daemon")
            wait "$counter" || true
            kill "$daemon"
            wait "$daemon" || true
            messages=$(wc -l < "$state/messages.txt")
            [ -s "$tmp/payload.json" ] || [ "$variant" != rate1 ] || head -1 "$state/messages.txt" > "$tmp/payload.json"
            percent=$(calc "\"%.3f\", ($after - $before) / 1e7 / $daemon_seconds")
            echo "RESULT daemon variant=$variant round=$round cpu_pct=$percent messages=$messages" \
                "seconds=$daemon_seconds load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$tmp/daemon.txt"
        done
    done
    kill "$broker_pid" 2>/dev/null || true
    col() { awk -v v="$1" '$3 == "variant=" v { for (i = 1; i <= NF; i++) if ($i ~ "^" ENVIRON["F"] "=") { sub(/^[a-z_]+=/, "", $i); print $i } }' "$tmp/daemon.txt" | median; }
    off=$(F=cpu_pct col off)
    echo
    echo "Medians of $daemon_runs runs of $daemon_seconds s (CPU of the daemon's process, % of one core; the demo"
    echo "plays ~10 Hz; the delta is against the same daemon without --mqtt; the process's CPU clock, exact):"
    echo
    echo "| tmm-bridge run --demo | CPU % | delta % | messages/s | CPU µs per message |"
    echo "|---|---:|---:|---:|---:|"
    for variant in off rate1 rate0; do
        cpu=$(F=cpu_pct col "$variant")
        msgs=$(F=messages col "$variant")
        per_second=$(calc "\"%.1f\", $msgs / $daemon_seconds")
        delta=$(calc "\"%.3f\", $cpu - $off")
        per_message=n/a
        [ "$variant" != off ] && per_message=$(calc "\"%.0f\", ($cpu - $off) / 100 * 1e6 / ($msgs / $daemon_seconds)")
        case $variant in
        off) label="no broker" ;;
        rate1) label="--mqtt, --mqtt-rate 1" ;;
        rate0) label="--mqtt, --mqtt-rate 0 (every epoch)" ;;
        esac
        echo "| $label | $cpu | $delta | $per_second | $per_message |"
    done
fi

# Part 2: N simulated boxes.
if [ "${BENCH_FLEET_LOAD:-1}" != 0 ]; then
    echo
    echo "## N boxes against one mosquitto (tmm-fleetload)"
    echo
    payload_flags=()
    if [ -s "$tmp/payload.json" ]; then
        payload_flags=(--payload "$tmp/payload.json")
        echo "payload: one message the daemon published ($(($(wc -c < "$tmp/payload.json") - 1)) bytes)"
    fi
    "$bindir/tmm-fleetload" --boxes "$boxes" --rate "$rate" --duration "$load_seconds" --runs "$load_runs" \
        "${payload_flags[@]}"
    echo
    echo "command:  tmm-fleetload --boxes $boxes --rate $rate --duration $load_seconds --runs $load_runs" \
        "${payload_flags[*]} (from scripts/bench-fleet.sh)"
fi
echo
echo "date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine:  $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(uname -sr)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "mosquitto: $(/usr/sbin/mosquitto -h 2>/dev/null | head -1)"
echo "swift:    $(swift --version 2>&1 | head -1)"
