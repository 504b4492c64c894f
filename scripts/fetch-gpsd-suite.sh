#!/usr/bin/env bash
# Fetches gpsd 3.22's whole regression suite (test/daemon/*.log and their .log.chk golden
# outputs) from Debian 12's gpsd source package and selects the NMEA 0183 text captures, for
# Tests/GNSSTests/GPSDSuiteComparisonTests.swift, and the logs gpsd decodes with a binary driver,
# for tmmtools/endtoend/binary_suite.py. See Tests/Fixtures/gpsd-suite.md.
#
#   scripts/fetch-gpsd-suite.sh [DIR]     default DIR: $GPSD_SUITE_DIR, else .build/gpsd-suite
#                                         (git-ignored); GPSD_SUITE_SKIP=1 does nothing
# `make test` runs it first (target gpsd-suite). The tests read $GPSD_SUITE_DIR or .build/gpsd-suite.
#
# Result, in DIR:
#   nmea/NAME.log, nmea/NAME.log.chk   the selected NMEA 0183 text captures, unmodified
#   binary/NAME.log, binary/NAME.log.chk  the logs gpsd reads with a binary driver, unmodified
#   captures.tsv                       every log of the suite: verdict, reason, line counts, and
#                                      for the logs not selected as NMEA what gpsd made of them
#   COPYING                            gpsd's licence (BSD-2-Clause), from the same package
#   downloads/                         the source package as apt fetched it (.dsc, tarballs)
#   complete                           stamp: package version and selection rule version
#
# Idempotent: when the stamp says this version and rule are there it prints one line and exits
# (no network). Otherwise it needs root (or a deb-src entry already set up): it adds a deb-src
# entry in its own file /etc/apt/sources.list.d/tmm-bridge-gpsd-src.sources if no deb-src for
# deb.debian.org is configured, runs apt-get update only when apt does not know the source
# version yet, and `apt-get source` (dpkg-dev, installed if missing) so Debian's patches are
# applied: they rewrite some test logs' `# Date:` headers and two .chk files, and Debian's
# gpsd binary reproduces exactly the patched .chk files.
#
# Selection rule (decided by content, not by name; RULE_VERSION below):
#   data lines = lines (split on LF, one trailing CR dropped) that are not empty and do not
#   start with '#' (gpsd's log comments). A log is an NMEA 0183 text capture when
#     (1) at least half of its data lines start with '$' (NMEA sentence) or '!' (AIS
#         encapsulation sentence, also NMEA 0183), and
#     (2) at most 20 % of its data bytes are outside printable ASCII (0x20-0x7E and TAB), and
#     (3) at least one data line starts with '$' (AIS-only logs carry no GNSS sentence).
#   Real NMEA captures carry some noise, which is why the bounds are loose: et-332.log has 34
#   debug lines among 141, tcp-test.log leading garbage, ac12_binary.log Ashtech $PASHR,MCA
#   sentences with binary payloads (11 % of its bytes), ublox-8.log one line of UBX. The binary
#   logs are far outside (the closest, ublox-zed-f9p_hpg1.11.log: 17 % of lines are NMEA, 68 %
#   of bytes binary).
#   Everything else (SiRF, TSIP, UBX, GREIS, RTCM, Zodiac, Oncore, iTalk, NavCom, SuperStar II,
#   Garmin binary, JSON passthrough, NTRIP source table, ...) is excluded with the reason.
#
# Binary rule (rule 3; decided by gpsd itself, not by the bytes): every log the NMEA rule does not
# select is played once through Debian's gpsd exactly as gpsd's regress-driver made the .chk
# files (`gpsfake -s 38400 -1 -p LOG`, 4 at a time) and gpsd's DEVICE objects are read (the .chk
# files carry none: regress-driver filters DEVICE out). The driver gpsd settles on is the last
# one a DEVICE names. A log is binary when that driver is one of gpsd 3.22's binary GNSS drivers
# (a driver whose lexer packet type is not NMEA, RTCM, AIS or JSON: u-blox, SiRF, Trimble TSIP,
# GREIS, Skytraq, Navcom NCT, Motorola Oncore, Zodiac, iTalk, GeoStar, SuperStarII, EverMore,
# Garmin Serial/USB binary, NMEA2000). RTCM104V2/V3, AIVDM, JSON slave driver and text drivers
# (NMEA0183, MTK-3301, True North, ...) are not. Binary logs in which gpsd makes no fix stay
# selected (binary_suite.py reports them as such); captures.tsv says so. This step needs gpsd and
# gpsfake (Debian's gpsd and gpsd-clients); without them nmea/ is still made, binary/ is not, and
# the stamp says so, so that a later run with the tools completes it.
set -euo pipefail

readonly VERSION=3.22-4.1+deb12u1
readonly RULE_VERSION=3
readonly SOURCES_FILE=/etc/apt/sources.list.d/tmm-bridge-gpsd-src.sources

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:-${GPSD_SUITE_DIR:-$root/.build/gpsd-suite}}
stamp_text="gpsd $VERSION rule $RULE_VERSION"
if ! command -v gpsd >/dev/null 2>&1 && [[ ! -x /usr/sbin/gpsd ]] || ! command -v gpsfake >/dev/null 2>&1; then
    have_gpsd=0
else
    have_gpsd=1
fi

say() { echo "fetch-gpsd-suite: $*"; }
die() { echo "fetch-gpsd-suite: $*" >&2; exit 1; }
# A module of the Python tools (tmmtools/README.md), under Debian's /usr/bin/python3: the two
# selection steps are tmmtools/scripts/gpsd_suite.py.
python_tool() {
    PYTHONPATH="$root" /usr/bin/python3 -B -m "tmmtools.$1" "${@:2}"
}

if [[ "${GPSD_SUITE_SKIP-}" == 1 ]]; then
    say "GPSD_SUITE_SKIP=1: not fetching; the GPSDSuite tests will be skipped unless $dir is complete"
    exit 0
fi
if [[ -f "$dir/complete" && "$(cat "$dir/complete")" == "$stamp_text" ]]; then
    say "already there: $(find "$dir/nmea" -name '*.log' | wc -l) NMEA captures and $(find "$dir/binary" -name '*.log' | wc -l) binary logs of gpsd $VERSION in $dir"
    exit 0
fi
if ((have_gpsd == 0)) && [[ -f "$dir/complete" && "$(cat "$dir/complete")" == "$stamp_text without binary" ]]; then
    say "already there: $(find "$dir/nmea" -name '*.log' | wc -l) NMEA captures of gpsd $VERSION in $dir (no binary/: gpsd or gpsfake not installed)"
    exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "apt-get not found: this script needs Debian 12 (bookworm)"
[[ -x /usr/bin/python3 ]] || die "/usr/bin/python3 not found (apt-get install python3)"
is_root=0
[[ $(id -u) -eq 0 ]] && is_root=1

network_hint="is the network up and deb.debian.org reachable? (the suite comes from Debian's gpsd
source package $VERSION; without it the GPSDSuite tests are skipped)"

# --- apt: a deb-src entry and an index that lists the version --------------------------------
known_version() {
    apt-cache showsrc gpsd 2>/dev/null | grep -qx "Version: $VERSION"
}

if ! known_version; then
    if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        ((is_root)) || die "no deb-src entry in apt's sources; run as root (sudo $0) so it can add $SOURCES_FILE"
        say "adding a deb-src entry for bookworm in $SOURCES_FILE"
        cat >"$SOURCES_FILE" <<'EOF'
# Added by tmm-bridge scripts/fetch-gpsd-suite.sh: Debian source packages, for
# `apt-get source gpsd` (gpsd's regression suite). Delete this file to undo.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    fi
    ((is_root)) || die "apt does not know gpsd source $VERSION yet; run 'sudo apt-get update' (or this script as root)"
    say "apt-get update (source indexes)"
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    if ! apt-get update >"$log" 2>&1 || grep -qE '^(Err:|W: Failed to fetch|E: )' "$log"; then
        grep -E '^(Err|W|E):' "$log" >&2 || cat "$log" >&2
        known_version || die "apt-get update failed; $network_hint"
    fi
    known_version || die "apt knows no gpsd source package $VERSION (Debian may have superseded it;
it stays available from snapshot.debian.org, e.g. /archive/debian/20250520T000000Z/pool/main/g/gpsd/)"
fi

# --- dpkg-dev: apt-get source needs dpkg-source to unpack and apply Debian's patches ----------
if ! command -v dpkg-source >/dev/null 2>&1; then
    ((is_root)) || die "dpkg-source not found; install it: sudo apt-get install dpkg-dev"
    say "installing dpkg-dev (for dpkg-source)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends dpkg-dev >/dev/null ||
        die "apt-get install dpkg-dev failed; $network_hint"
fi

# --- download (kept, so a re-run after a rule change needs no network) and unpack -------------
mkdir -p "$dir/downloads"
cd "$dir/downloads"
upstream=${VERSION%%-*}
if [[ ! -f "gpsd_$VERSION.dsc" || ! -f "gpsd_$upstream.orig.tar.xz" ]]; then
    say "downloading the gpsd $VERSION source package"
    # apt's download sandbox user must be able to write here (else apt warns and runs as root).
    if ((is_root)) && id _apt >/dev/null 2>&1; then chown _apt "$dir/downloads"; fi
    apt-get source --download-only "gpsd=$VERSION" >/dev/null 2>apt-source.err || {
        cat apt-source.err >&2
        die "apt-get source --download-only gpsd=$VERSION failed; $network_hint"
    }
    if ((is_root)); then chown root "$dir/downloads"; fi
    rm -f apt-source.err
fi
work=$(mktemp -d "$dir/unpack.XXXXXX")
trap 'rm -rf "$work"' EXIT
# dpkg-source checks the .dsc checksums; the OpenPGP signature cannot be checked without
# debian-keyring (it says so on stderr, kept quiet here), but apt already verified the files
# against the signed archive index when it downloaded them.
dpkg-source -x "gpsd_$VERSION.dsc" "$work/gpsd" >"$work/dpkg-source.log" 2>&1 || {
    cat "$work/dpkg-source.log" >&2
    die "dpkg-source -x gpsd_$VERSION.dsc failed (corrupt download? delete $dir/downloads and retry)"
}

# --- select ----------------------------------------------------------------------------------
rm -rf "$dir/nmea.new"
mkdir -p "$dir/nmea.new"
python_tool scripts.gpsd_suite nmea "$work/gpsd/test/daemon" "$dir/nmea.new" "$dir/captures.tsv"

# --- binary: what driver gpsd settles on, for every log the NMEA rule left out ---------------
rm -rf "$dir/binary.new"
if ((have_gpsd)); then
    mkdir -p "$dir/binary.new" "$work/gpsfake"
    say "playing the $(grep -c $'\texcluded\t' "$dir/captures.tsv") other logs through gpsd (gpsfake) to read its driver"
    export PATH="$PATH:/usr/sbin"
    # gpsfake writes its control socket in TMPDIR; gpsd's "unable to connect to the DBUS" is noise.
    awk -F'\t' '$2 == "excluded" {print $1}' "$dir/captures.tsv" |
        (cd "$work/gpsd/test/daemon" && TMPDIR="$work/gpsfake" xargs -P 4 -I{} \
            sh -c 'timeout 120 gpsfake -s 38400 -1 -p "$1" >"$2/$1.out" 2>"$2/$1.err" || echo "exit $?" >>"$2/$1.err"' \
            gpsfake {} "$work/gpsfake")
    # A run that printed no DEVICE at all failed rather than read the log (four gpsfakes at once
    # have been seen to lose one: a log classified "driver none, 0 TPVs" one time in several):
    # each such log is played once more, alone.
    awk -F'\t' '$2 == "excluded" {print $1}' "$dir/captures.tsv" | while read -r name; do
        grep -q '"class":"DEVICE' "$work/gpsfake/$name.out" 2>/dev/null && continue
        (cd "$work/gpsd/test/daemon" && TMPDIR="$work/gpsfake" timeout 120 gpsfake -s 38400 -1 -p "$name" \
            >"$work/gpsfake/$name.out" 2>"$work/gpsfake/$name.err") || echo "exit $?" >>"$work/gpsfake/$name.err"
    done
    python_tool scripts.gpsd_suite binary "$work/gpsd/test/daemon" "$work/gpsfake" "$dir/binary.new" "$dir/captures.tsv"
else
    say "gpsd or gpsfake not installed (apt-get install gpsd gpsd-clients): no binary/ selection this time"
fi

cp "$work/gpsd/COPYING" "$dir/COPYING"
rm -rf "$dir/nmea"
mv "$dir/nmea.new" "$dir/nmea"
rm -rf "$dir/binary"
if ((have_gpsd)); then
    mv "$dir/binary.new" "$dir/binary"
    echo "$stamp_text" >"$dir/complete"
else
    echo "$stamp_text without binary" >"$dir/complete"
fi
selected=$(grep -c $'\tnmea\t' "$dir/captures.tsv")
binary=$(grep -c $'\tbinary\t' "$dir/captures.tsv" || true)
total=$(($(wc -l <"$dir/captures.tsv") - 1))
say "$selected NMEA captures of $total logs in $dir/nmea ($(du -sh "$dir/nmea" | cut -f1)), $binary binary logs in $dir/binary; rules and exclusions in $dir/captures.tsv"
