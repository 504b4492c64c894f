#!/usr/bin/env bash
# Installs the Debian 12 packages tmm-bridge needs to build and test (and, with --bench, to run
# the benchmarks), and checks the Swift toolchain. Silent when everything is already there.
#
#   scripts/install-deps.sh            build + test packages
#   scripts/install-deps.sh --bench    also the benchmark tools (gpsdecode from gpsd-clients)
#   scripts/install-deps.sh --browser  also the browser test's (make browser-test): headless
#                                      chromium, chromedriver, Selenium, certutil, PIL; about
#                                      390 MiB installed, so only on request
#   scripts/install-deps.sh --ubx-tests  also pyubx2 from PyPI, for tmm-sim's UBX tests only
#                                      (tmmtools/tests/test_sim.py; they skip without it)
#
# As root it installs what is missing with apt-get. As another user it prints the one
# `sudo apt-get install` command to run and exits 1.
set -euo pipefail

# Keep in sync with README.md and docs (ARCHITECTURE.md "Dependencies").
# udev: udevadm for UdevadmTests; systemd: systemd-analyze for ServiceUnitAnalyzeTests (docs/service.md).
# make hwtest (hwtests/README.md): python3-matplotlib for its plots, gpsd-clients (gpspipe) for the
# bench targets, iproute2 (ip) to bring up loopback in its network namespace. man-db: systemd-analyze
# verify runs `man` on the unit's Documentation= line (ServiceUnitAnalyzeTests). rtklib: str2str, the
# real NTRIP Rev 1 caster and client of make hwtest's corrections scenarios and tmmtools' tests
# (hwtests/README.md, "Corrections"), and convbin, which decodes the RTCM generator's observations.
# libmosquitto-dev: fleet publishing's MQTT client; mosquitto, mosquitto-clients and python3-paho-mqtt:
# the real broker and independent subscribers of its tests (docs/fleet.md).
packages=(libgps-dev libudev-dev libssl-dev openssl groff-base gpsd python3-websockets python3-cryptography socat curl pkg-config make desktop-file-utils udev systemd python3-matplotlib gpsd-clients iproute2 man-db rtklib libmosquitto-dev mosquitto mosquitto-clients python3-paho-mqtt)
bench_packages=(gpsd-clients)
# tmmtools/browser (README there): chromium and chromedriver (same version, one source package),
# Selenium to drive them, certutil to trust the bridge's CA in a throw-away NSS store, PIL to read
# the screenshot, and the fonts the page names (chromium only recommends one; without any font its
# text has no glyphs and the screenshot check fails).
browser_packages=(chromium chromium-driver python3-selenium libnss3-tools python3-pil fonts-dejavu-core)

usage() {
    echo "usage: $0 [--bench] [--browser] [--ubx-tests]" >&2
    exit 64
}

ubx_tests=0
for option in "$@"; do
    case "$option" in
        --bench) packages+=("${bench_packages[@]}") ;;
        --browser) packages+=("${browser_packages[@]}") ;;
        --ubx-tests) ubx_tests=1 ;;
        -h | --help) usage ;;
        *) echo "install-deps: unknown option '$option'" >&2; usage ;;
    esac
done

status=0

# --- Debian packages ------------------------------------------------------------------------
if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: dpkg-query not found: this script supports Debian 12 (and derivatives)." >&2
    echo "install-deps: install these packages (or your system's equivalents) by hand: ${packages[*]}" >&2
    exit 1
fi

missing=()
for package in "${packages[@]}"; do
    state=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
    [[ "$state" == installed ]] || missing+=("$package")
done

if ((${#missing[@]} > 0)); then
    if [[ $(id -u) -eq 0 ]]; then
        echo "install-deps: installing missing Debian packages: ${missing[*]}"
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
    else
        echo "install-deps: missing Debian packages; install them with:" >&2
        echo "sudo apt-get install -y ${missing[*]}"
        exit 1
    fi
fi

# --- pyubx2 for tmm-sim's UBX tests (--ubx-tests only) -------------------------------------
# The simulator writes UBX with the standard library (tmmtools/sim/ubx.py); its tests check the
# frames with an independent decoder, pyubx2, which Debian 12 does not package. It goes into
# Debian's /usr/bin/python3 (the one with python3-gps that the tools run under), from PyPI with
# pip; skipped when already importable, so running this again changes nothing.
if ((ubx_tests)) && ! /usr/bin/python3 -c 'import pyubx2' >/dev/null 2>&1; then
    if [[ $(id -u) -eq 0 ]]; then
        if ! /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
            apt-get update
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-pip
        fi
        echo "install-deps: installing pyubx2 (PyPI) for /usr/bin/python3"
        /usr/bin/python3 -m pip install --break-system-packages --root-user-action=ignore 'pyubx2>=1.2,<2'
    else
        echo "install-deps: pyubx2 missing for the UBX tests; install it with:" >&2
        echo "sudo /usr/bin/python3 -m pip install --break-system-packages 'pyubx2>=1.2,<2'"
        status=1
    fi
fi

# --- Swift toolchain ------------------------------------------------------------------------
# The Makefile also looks in /opt/swift/usr/bin, so a toolchain unpacked there works without PATH.
swift_bin=$(command -v swift 2>/dev/null || true)
if [[ -z "$swift_bin" && -x /opt/swift/usr/bin/swift ]]; then
    swift_bin=/opt/swift/usr/bin/swift
fi
if [[ -z "$swift_bin" ]]; then
    cat >&2 <<'MSG'
install-deps: swift not found (not on PATH, not in /opt/swift/usr/bin).
  Fix: download the Swift 6.2 or newer toolchain for Debian 12 from https://www.swift.org/install/linux/,
  unpack it so that /opt/swift/usr/bin/swift exists (or anywhere, then add its usr/bin to PATH:
  export PATH=/path/to/swift/usr/bin:$PATH), and run this script again.
MSG
    status=1
else
    version=$("$swift_bin" --version 2>/dev/null | sed -n 's/.*Swift version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' | head -n 1)
    read -r major minor <<<"${version:-0 0}"
    if ((major < 6 || (major == 6 && minor < 2))); then
        echo "install-deps: $swift_bin is Swift ${major}.${minor}; tmm-bridge needs Swift 6.2 or newer" \
            "(Package.swift tools version 6.2). Install a newer toolchain from https://www.swift.org/install/linux/." >&2
        status=1
    fi
fi

exit "$status"
