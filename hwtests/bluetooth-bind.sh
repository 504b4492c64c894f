#!/usr/bin/env bash
# Live Bluetooth checks for a bench with a paired SPP GNSS receiver. See hwtests/bluetooth.md.
#
#   sudo hwtests/bluetooth-bind.sh ADDRESS [CHANNEL]
#
# Environment:
#   TMM_BRIDGE     the binary (default: tmm-bridge on PATH, else .build/debug/tmm-bridge)
#   RFCOMM_DEVICE  N of /dev/rfcommN to use (default 0; must not be bound already)
#   NMEA_TIMEOUT   seconds to wait for the first NMEA sentence after opening the tty (default 30)
#   INTERACTIVE=1  also run the power-cycle steps (asks you to switch the receiver off and on)
#   DAEMON=1       also check the running daemon: discovery through gpsd/REST, and the rebind after
#                  the tty disappears (the daemon must be configured to keep ADDRESS bound on
#                  RFCOMM_DEVICE with CHANNEL)
#
# Exit status: 0 when every step passed or was skipped, 1 when one failed, 64 on bad arguments.
set -u

ADDRESS=${1:-}
CHANNEL=${2:-1}
DEVICE=${RFCOMM_DEVICE:-0}
NMEA_TIMEOUT=${NMEA_TIMEOUT:-30}
TTY=/dev/rfcomm$DEVICE
SYSFS=/sys/class/tty/rfcomm$DEVICE

if [[ -z "$ADDRESS" || ! "$ADDRESS" =~ ^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$ ]]; then
    echo "usage: $0 AA:BB:CC:DD:EE:FF [CHANNEL]   (the paired receiver's address; CHANNEL defaults to 1)" >&2
    exit 64
fi
ADDRESS_UPPER=${ADDRESS^^}
ADDRESS_LOWER=${ADDRESS,,}

if [[ -z "${TMM_BRIDGE:-}" ]]; then
    if command -v tmm-bridge >/dev/null; then TMM_BRIDGE=$(command -v tmm-bridge)
    else TMM_BRIDGE="$(cd "$(dirname "$0")/.." && pwd)/.build/debug/tmm-bridge"; fi
fi

passed=0 failed=0 skipped=0
pass() { echo "PASS  $*"; passed=$((passed + 1)); }
fail() { echo "FAIL  $*"; failed=$((failed + 1)); }
skip() { echo "SKIP  $*"; skipped=$((skipped + 1)); }
step() { echo; echo "== $*"; }

# Runs the bridge, keeping stdout, stderr and the status in OUT, ERR, STATUS.
bridge() {
    OUT=$("$TMM_BRIDGE" "$@" 2>/tmp/bt-hwtest.err); STATUS=$?
    ERR=$(cat /tmp/bt-hwtest.err)
    echo "   \$ tmm-bridge $* -> exit $STATUS"
    [[ -n "$OUT" ]] && sed 's/^/   | /' <<<"$OUT"
    [[ -n "$ERR" ]] && sed 's/^/   ! /' <<<"$ERR"
    return 0
}

# Waits up to $2 seconds (in 0.1 s steps) for the shell condition $1.
wait_for() {
    local condition=$1 deadline=$(( $(date +%s%N) + ${2} * 1000000000 ))
    while (( $(date +%s%N) < deadline )); do
        eval "$condition" && return 0
        sleep 0.1
    done
    return 1
}

# Reads the tty until the first NMEA sentence or the timeout; prints the sentence.
first_sentence() {
    stty -F "$TTY" raw -echo 2>/dev/null
    timeout "$NMEA_TIMEOUT" grep -a -m1 -E '^\$[A-Z]{2}[A-Z]{3},' "$TTY" | tr -d '\r'
}

we_bound=0
cleanup() {
    if (( we_bound )) && [[ "${DAEMON:-0}" != 1 && -e "$SYSFS" ]]; then "$TMM_BRIDGE" bluetooth unbind --device "$DEVICE" >/dev/null 2>&1; fi
    rm -f /tmp/bt-hwtest.err
}
trap cleanup EXIT

step "0. Preflight"
[[ -x "$TMM_BRIDGE" ]] || { echo "no tmm-bridge binary at $TMM_BRIDGE (build it, or set TMM_BRIDGE)"; exit 1; }
[[ $(id -u) -eq 0 ]] && pass "running as root (bind needs CAP_NET_ADMIN)" || fail "not root: bind and unbind need CAP_NET_ADMIN; run with sudo"
if compgen -G "/sys/class/bluetooth/hci*" >/dev/null; then
    pass "Bluetooth adapter present: $(cd /sys/class/bluetooth && echo hci*)"
else
    fail "no Bluetooth adapter in /sys/class/bluetooth (kernel without CONFIG_BT, or no adapter plugged in)"
fi
if command -v bluetoothctl >/dev/null; then
    info=$(bluetoothctl info "$ADDRESS_UPPER" 2>/dev/null)
    grep -q "Paired: yes" <<<"$info" && pass "$ADDRESS_UPPER is paired ($(sed -n 's/^\s*Name: //p' <<<"$info"))" \
        || fail "$ADDRESS_UPPER is not paired: pair it first (see hwtests/bluetooth.md, 'Bench setup')"
else
    skip "bluetoothctl not installed: cannot check pairing (apt-get install bluez)"
fi
bound_by_daemon=0
if [[ -e "$SYSFS" ]]; then
    if [[ "${DAEMON:-0}" == 1 && $(cat "$SYSFS/address") == "$ADDRESS_LOWER" && $(cat "$SYSFS/channel") == "$CHANNEL" ]]; then
        bound_by_daemon=1
    else
        echo "rfcomm$DEVICE is already bound ($(cat "$SYSFS/address" 2>/dev/null)); release it or set RFCOMM_DEVICE"
        exit 1
    fi
fi

step "1. Bind"
if (( bound_by_daemon )); then
    pass "the daemon bound rfcomm$DEVICE to $ADDRESS_UPPER channel $CHANNEL at start-up"
else
    bridge bluetooth bind "$ADDRESS_LOWER" --channel "$CHANNEL" --device "$DEVICE"
    if [[ $STATUS -eq 0 && "$OUT" == "bound $TTY to $ADDRESS_UPPER channel $CHANNEL"* ]]; then
        pass "bind exits 0 and says what it bound"; we_bound=1
    else
        fail "bind: expected exit 0 and 'bound $TTY to $ADDRESS_UPPER channel $CHANNEL'"
        echo "cannot continue without a bound tty"; exit 1
    fi
fi

step "2. The tty and its sysfs attributes"
wait_for "[[ -c $TTY ]]" 5 && pass "$TTY appeared (udev)" || fail "$TTY did not appear within 5 s (is udevd running?)"
[[ -c "$TTY" ]] && [[ $(stat -c %t "$TTY") == d8 ]] && pass "$TTY is a character device with major 216 (rfcomm)" \
    || fail "$TTY is not major 216: $(stat -c '%F %t:%T' "$TTY" 2>&1)"
got=$(cat "$SYSFS/address" 2>&1)
[[ "$got" == "$ADDRESS_LOWER" ]] && pass "$SYSFS/address is $got" || fail "$SYSFS/address is '$got', expected $ADDRESS_LOWER"
got=$(cat "$SYSFS/channel" 2>&1)
[[ "$got" == "$CHANNEL" ]] && pass "$SYSFS/channel is $got" || fail "$SYSFS/channel is '$got', expected $CHANNEL"

step "3. List, and BlueZ's view of the same device"
bridge bluetooth list
[[ $STATUS -eq 0 && "$OUT" == *"rfcomm$DEVICE: $ADDRESS_UPPER channel $CHANNEL "* ]] \
    && pass "list shows rfcomm$DEVICE" || fail "list does not show 'rfcomm$DEVICE: $ADDRESS_UPPER channel $CHANNEL'"
if command -v rfcomm >/dev/null; then
    show=$(rfcomm show "$DEVICE" 2>&1)
    [[ "${show^^}" == *"$ADDRESS_UPPER CHANNEL $CHANNEL"* ]] && pass "BlueZ rfcomm show agrees: $show" \
        || fail "BlueZ rfcomm show says: $show"
else
    skip "BlueZ's rfcomm tool not installed (Debian package bluez): no cross-check"
fi

step "4. Binding the same device again fails clearly"
bridge bluetooth bind "$ADDRESS_UPPER" --channel "$CHANNEL" --device "$DEVICE"
[[ $STATUS -eq 1 && "$ERR" == *"rfcomm$DEVICE is already bound"* ]] && pass "second bind: exit 1, 'already bound'" \
    || fail "second bind: expected exit 1 and 'rfcomm$DEVICE is already bound'"

step "5. NMEA through the tty (opening it makes the kernel connect)"
sentence=$(first_sentence)
[[ -n "$sentence" ]] && pass "read a sentence within ${NMEA_TIMEOUT}s: $sentence" \
    || fail "no NMEA within ${NMEA_TIMEOUT}s (receiver off? wrong channel? check 'sdptool browse $ADDRESS_UPPER')"

step "6. The daemon discovers the receiver"
if [[ "${DAEMON:-0}" == 1 ]]; then
    if command -v gpspipe >/dev/null; then
        timeout 15 gpspipe -w -n 30 2>/dev/null | grep -q "\"path\":\"$TTY\"" \
            && pass "gpsd reports $TTY (the daemon handed it over)" || fail "gpsd does not report $TTY within 15 s"
    else
        skip "gpspipe not installed (apt-get install gpsd-clients)"
    fi
    receiver=$(curl -s --max-time 5 http://127.0.0.1:9637/api/v1/receiver 2>/dev/null)
    [[ "${receiver^^}" == *"$ADDRESS_UPPER"* ]] && pass "REST /api/v1/receiver names $ADDRESS_UPPER" \
        || fail "REST /api/v1/receiver does not name $ADDRESS_UPPER: ${receiver:-no answer on 9637}"
else
    skip "daemon checks (set DAEMON=1 with the daemon running)"
fi

step "7. Unbind"
if [[ "${DAEMON:-0}" == 1 ]]; then
    skip "unbind with the daemon configured to keep the binding (step 9 does it on purpose)"
else
    bridge bluetooth unbind --device "$DEVICE"
    [[ $STATUS -eq 0 && "$OUT" == "released $TTY" ]] && pass "unbind exits 0 and says 'released $TTY'" || fail "unbind"
    wait_for "[[ ! -e $SYSFS && ! -e $TTY ]]" 5 && pass "$TTY and $SYSFS are gone" || fail "$TTY or $SYSFS still there after 5 s"
    bridge bluetooth list
    [[ $STATUS -eq 0 && "$OUT" != *"rfcomm$DEVICE:"* ]] && pass "list no longer shows rfcomm$DEVICE" || fail "list after unbind"
    bridge bluetooth unbind --device "$DEVICE"
    [[ $STATUS -eq 1 && "$ERR" == *"rfcomm$DEVICE is not bound"* ]] && pass "second unbind: exit 1, 'is not bound'" \
        || fail "second unbind: expected exit 1 and 'rfcomm$DEVICE is not bound'"
    bridge bluetooth bind "$ADDRESS_UPPER" --channel "$CHANNEL" --device "$DEVICE"
    [[ $STATUS -eq 0 ]] && pass "bound again for the next steps" || fail "bind again"
    wait_for "[[ -c $TTY ]]" 5
fi

step "8. Receiver power cycle"
if [[ "${INTERACTIVE:-0}" == 1 ]]; then
    read -r -p "   Switch the receiver OFF, wait for its Bluetooth LED to go out, then press Enter: " _
    sleep 5
    if [[ -e "$SYSFS" ]]; then
        pass "the bound tty survives the receiver going away (a bind is not released on hang-up)"
    elif wait_for "[[ -e $SYSFS ]]" 35; then
        pass "the tty disappeared and was bound again by the daemon"
    else
        fail "the tty disappeared and nobody bound it again"
    fi
    bridge bluetooth list
    [[ "$OUT" != *"rfcomm$DEVICE: $ADDRESS_UPPER channel $CHANNEL connected"* ]] \
        && pass "the link is no longer 'connected'" || fail "list still says connected with the receiver off"
    read -r -p "   Switch the receiver ON, wait until it is ready, then press Enter: " _
    sentence=$(first_sentence)
    [[ -n "$sentence" ]] && pass "NMEA again after the power cycle: $sentence" \
        || fail "no NMEA within ${NMEA_TIMEOUT}s after the power cycle"
    if [[ "${DAEMON:-0}" == 1 ]] && command -v gpspipe >/dev/null; then
        timeout 30 gpspipe -r -n 5 2>/dev/null | grep -q '^\$' && pass "gpsd delivers NMEA again" \
            || fail "gpsd delivers no NMEA 30 s after the power cycle"
    fi
else
    skip "power cycle (set INTERACTIVE=1 and be at the bench)"
fi

step "9. The daemon rebinds after the tty disappears"
if [[ "${DAEMON:-0}" == 1 ]]; then
    start=$(date +%s%N)
    bridge bluetooth unbind --device "$DEVICE"
    wait_for "[[ ! -e $SYSFS ]]" 5
    if wait_for "[[ -e $SYSFS ]]" 5; then
        ms=$(( ($(date +%s%N) - start) / 1000000 ))
        pass "rfcomm$DEVICE bound again after ${ms} ms (first retry is due 500 ms after the drop)"
        got=$(cat "$SYSFS/address" 2>&1)
        [[ "$got" == "$ADDRESS_LOWER" ]] && pass "same address: $got" || fail "rebound to '$got'"
        sentence=$(first_sentence)
        [[ -n "$sentence" ]] && pass "NMEA after the rebind: $sentence" || fail "no NMEA after the rebind"
    else
        fail "rfcomm$DEVICE not bound again within 5 s (is the daemon configured with this binding?)"
    fi
else
    skip "rebind (set DAEMON=1 with the daemon configured to keep $ADDRESS_UPPER on rfcomm$DEVICE)"
fi

echo
echo "passed $passed, failed $failed, skipped $skipped"
(( failed == 0 ))
