#!/usr/bin/env bash
# The packaging test (`make package-test`, run by .ci/run after `make test`): builds the .deb
# (make deb, which runs make build), lints it, installs it on this machine, checks what it made,
# runs the installed daemon as its user with the Swift toolchain hidden, removes and purges it
# and checks that nothing is left; then checks `make install`/`make uninstall` in a staging root.
# Not a `swift test` suite: it needs the static release build (minutes) and root, and it changes
# the machine (a package, a system user) for the time it runs.
#
#   scripts/package-test.sh [--no-build] [DEB_DIR]      (default .build/deb)
#
# --no-build tests the .deb already in DEB_DIR (and the binary make build left) as it is.
#
# Needs root on Debian 12 (installs lintian, dpkg-dev and binutils when missing). Safe to run
# again: a tmm-bridge package left installed by an interrupted run is purged first, and an EXIT
# trap purges it and removes its scratch files whatever happens. It refuses to run over a
# tmm-bridge installed some other way (make install), which it must not remove. docs/install.md.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=yes
if [[ "${1-}" == --no-build ]]; then
    build=no
    shift
fi
[[ $# -le 1 && "${1-}" != -* ]] || { echo "usage: $0 [--no-build] [DEB_DIR]" >&2; exit 64; }
deb_dir=${1:-.build/deb}
package=tmm-bridge
failures=0

fail() {
    echo "package-test: FAIL: $*" >&2
    failures=$((failures + 1))
}
ok() { echo "package-test: ok: $*"; }
die() {
    echo "package-test: $*" >&2
    exit 1
}
# A module of the Python tools (tmmtools/README.md), under Debian's /usr/bin/python3: the free
# ports and the position read are tmmtools/scripts/package_test.py.
checkout=$PWD
python_tool() {
    PYTHONPATH="$checkout" /usr/bin/python3 -B -m "tmmtools.$1" "${@:2}"
}

[[ $(id -u) -eq 0 ]] || die "needs root (it installs and purges the package): sudo make package-test"

# --- tools --------------------------------------------------------------------------------
tools=(lintian dpkg-dev binutils curl python3-websockets util-linux)
missing=()
for tool in "${tools[@]}"; do
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$tool" 2>/dev/null || true) == installed ]] || missing+=("$tool")
done
if ((${#missing[@]} > 0)); then
    echo "package-test: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- a clean start --------------------------------------------------------------------------
purge() {
    if dpkg-query -W -f='${db:Status-Status}' "$package" >/dev/null 2>&1 &&
        [[ $(dpkg-query -W -f='${db:Status-Status}' "$package") != not-installed ]]; then
        dpkg --purge "$package" >/dev/null
    fi
}
if [[ -e /usr/bin/tmm-bridge ]] && ! dpkg-query -S /usr/bin/tmm-bridge >/dev/null 2>&1; then
    die "/usr/bin/tmm-bridge exists but belongs to no package (make install PREFIX=/usr?): remove it first (make uninstall PREFIX=/usr)"
fi
purge
# The purge at the end removes the user: never one this test did not make. (On a shared machine,
# also a sign that something else, e.g. a test suite's daemons started as root, which drop to
# tmm-bridge when that user exists, still runs as it, and would keep deluser from removing it.)
if getent passwd tmm-bridge >/dev/null || getent group tmm-bridge >/dev/null; then
    die "the user or group tmm-bridge exists, and no tmm-bridge package does: the purge would remove it; remove it first (deluser --system tmm-bridge; delgroup --system tmm-bridge)$(pgrep -u tmm-bridge >/dev/null 2>&1 && echo "; processes run as it: $(pgrep -u tmm-bridge -d ' ')")"
fi

scratch=$(mktemp -d)
daemon_pid=
cleanup() {
    local status=$?
    if [[ -n "$daemon_pid" ]] && kill -0 "$daemon_pid" 2>/dev/null; then
        kill -TERM "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || true
    fi
    purge || echo "package-test: could not purge $package: run dpkg --purge $package" >&2
    rm -rf "$scratch"
    exit "$status"
}
trap cleanup EXIT

# Polls COMMAND until it succeeds, for at most SECONDS (conditions, not sleeps).
wait_for() {
    local seconds=$1
    shift
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

# --- build and lint ---------------------------------------------------------------------------
[[ $build == yes ]] && "${MAKE:-make}" --no-print-directory deb
debs=("$deb_dir"/"$package"_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || die "expected exactly one $package .deb in $deb_dir, found: ${debs[*]}"
deb=${debs[0]}

# The tags a locally built package cannot avoid, each explained in docs/install.md ("lintian").
# Any other tag fails the test: fix it, or add it here and there with the reason.
expected_tags=(
    initial-upload-closes-no-bugs
    hardening-no-fortify-functions
    package-supports-alternative-init-but-no-init.d-script
    spelling-error-in-binary
)
lintian_output=$(lintian --info --display-info --pedantic --tag-display-limit 0 "$deb" 2>&1 || true)
echo "$lintian_output" | sed 's/^/  lintian: /'
while read -r severity _ tag _; do
    [[ -n "${tag-}" && "$severity" =~ ^[EWIPX]:$ ]] || continue
    if [[ " ${expected_tags[*]} " != *" $tag "* ]]; then
        fail "lintian: $severity $tag is new (fix it, or explain it in docs/install.md and list it in $0)"
    fi
done <<<"$lintian_output"

# --- install ----------------------------------------------------------------------------------
# apt installs the Depends from the archive, then the package (it needs a path with a slash).
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$(realpath "$deb")" >/dev/null ||
    die "apt-get install $deb failed"
ok "installed $(dpkg-query -W -f='${Package} ${Version}' "$package")"

# path mode owner:group: every file the package ships, exactly.
expected_files=(
    "/etc/tmm-bridge/tmm-bridge.conf 640 root:tmm-bridge"
    "/lib/systemd/system/tmm-bridge.service 644 root:root"
    "/lib/udev/rules.d/60-tmm-bridge.rules 644 root:root"
    "/usr/bin/tmm-bridge 755 root:root"
    "/usr/lib/modules-load.d/tmm-bridge.conf 644 root:root"
    "/usr/share/applications/tmm-bridge-open.desktop 644 root:root"
    "/usr/share/doc/tmm-bridge/changelog.Debian.gz 644 root:root"
    "/usr/share/doc/tmm-bridge/copyright 644 root:root"
    "/usr/share/man/man8/tmm-bridge.8.gz 644 root:root"
)
listed=$(dpkg -L "$package" | while read -r path; do [[ -d "$path" ]] || echo "$path"; done | LC_ALL=C sort)
expected_paths=$(printf '%s\n' "${expected_files[@]}" | cut -d' ' -f1 | LC_ALL=C sort)
[[ "$listed" == "$expected_paths" ]] || fail "the package's files differ from the expected list: $(diff <(echo "$expected_paths") <(echo "$listed") | grep '^[<>]' | tr '\n' ' ')"
for entry in "${expected_files[@]}"; do
    read -r path mode owner <<<"$entry"
    actual=$(stat -c '%a %U:%G' "$path" 2>/dev/null || echo missing)
    [[ "$actual" == "$mode $owner" ]] || fail "$path is '$actual', expected '$mode $owner'"
done
# Directories the package ships belong to root and are not writable by others.
while read -r path; do
    [[ -d "$path" && ! -L "$path" ]] || continue   # /lib is a symlink on merged-/usr systems
    [[ $(stat -c '%U:%G %a' "$path") =~ ^root:root\ 7[0-5][0-5]$ ]] || fail "directory $path is $(stat -c '%U:%G %a' "$path")"
done < <(dpkg -L "$package")
# The installed files are the repository's (PREFIX=/usr: the unit's ExecStart is unchanged).
cmp -s /lib/systemd/system/tmm-bridge.service systemd/tmm-bridge.service || fail "the installed unit differs from systemd/tmm-bridge.service"
cmp -s /lib/udev/rules.d/60-tmm-bridge.rules udev/60-tmm-bridge.rules || fail "the installed rules differ from udev/60-tmm-bridge.rules"
cmp -s /etc/tmm-bridge/tmm-bridge.conf packaging/tmm-bridge.conf || fail "the installed configuration differs from packaging/tmm-bridge.conf"
cmp -s <(gzip -dc /usr/share/man/man8/tmm-bridge.8.gz) packaging/tmm-bridge.8 || fail "the installed man page differs from packaging/tmm-bridge.8"
((failures == 0)) && ok "${#expected_files[@]} files, owners and modes as expected"

# The user and group; the conffile; the service enabled for the next boot (no systemd here).
failures_before=$failures
user=$(getent passwd tmm-bridge || true)
[[ "$user" =~ ^tmm-bridge:x:[0-9]+:[0-9]+:[^:]*:/nonexistent:/usr/sbin/nologin$ ]] || fail "user tmm-bridge: '$user'"
uid=$(id -u tmm-bridge 2>/dev/null || echo none)
[[ "$uid" != none ]] && ((uid < 1000)) || fail "tmm-bridge is not a system user (uid $uid)"
[[ $(id -gn tmm-bridge 2>/dev/null) == tmm-bridge ]] || fail "tmm-bridge's primary group is not tmm-bridge"
[[ -e /nonexistent ]] && fail "/nonexistent exists (a home was created)"
[[ $(dpkg-query -W -f='${Conffiles}' "$package") == *"/etc/tmm-bridge/tmm-bridge.conf "* ]] || fail "/etc/tmm-bridge/tmm-bridge.conf is not a registered conffile"
wants=/etc/systemd/system/multi-user.target.wants/tmm-bridge.service
[[ $(readlink "$wants" 2>/dev/null) == /lib/systemd/system/tmm-bridge.service ]] || fail "the service is not enabled ($wants: $(readlink "$wants" || echo missing))"
((failures == failures_before)) && ok "user $(id tmm-bridge), conffile registered, service enabled ($wants)"

# --- the installed binary, without the toolchain ------------------------------------------------
binary=/usr/bin/tmm-bridge
swift=$(command -v swift || true)
toolchain=
if [[ -n "$swift" ]]; then
    # /opt/swift/usr/bin/swift -> /opt/swift; a toolchain installed in / has its libraries in /usr/lib/swift.
    toolchain=$(dirname "$(dirname "$(dirname "$(realpath "$swift")")")")
    [[ "$toolchain" == / ]] && toolchain=/usr/lib/swift
fi
if ldd "$binary" | grep -E -e "${toolchain:-^$}/" -e 'libswift|libFoundation|libdispatch|libBlocksRuntime' >&2; then
    fail "ldd $binary lists the toolchain libraries above"
fi
# Every library it loads comes from a package it depends on.
depends=$(dpkg-query -W -f='${Depends}' "$package")
while read -r library; do
    owner=$(dpkg-query -S "$(realpath "$library")" 2>/dev/null | head -n 1 | cut -d: -f1 || true)
    [[ -z "$owner" ]] && owner=$(dpkg-query -S "$library" 2>/dev/null | head -n 1 | cut -d: -f1 || true)
    [[ -n "$owner" ]] || { fail "$library (loaded by $binary) belongs to no package"; continue; }
    [[ ", $depends" == *", $owner "* || ", $depends," == *", $owner,"* ]] || fail "$binary needs $library from $owner, which Depends does not name"
done < <(objdump -p "$binary" | awk '/NEEDED/ { print $2 }' | while read -r name; do ldd "$binary" | awk -v n="$name" '$1 == n { print $3 }'; done)

# Hides the toolchain (an empty tmpfs over its folder in a private mount namespace) for the
# command that follows "${hide[@]}". unshare and sh exec, so a command started with & is the
# daemon itself ($! is its pid).
hide=()
if [[ -n "$toolchain" ]]; then
    hide=(unshare --mount --propagation private -- sh -c 'mount -t tmpfs tmpfs "$1" && shift && exec "$@"' sh "$toolchain")
fi
version=$("${hide[@]}" "$binary" --version) || fail "$binary --version failed with the toolchain ($toolchain) hidden"
[[ "$version" == "tmm-bridge $(dpkg-query -W -f='${Version}' "$package" | sed 's/-[^-]*$//')" ]] || fail "--version says '$version'"
ok "'$version' with ${toolchain:-no toolchain} hidden; ldd: only Debian libraries, all from Depends ($depends)"

# --- the installed daemon, as its user, on the installed configuration ------------------------
# As the unit starts it (docs/service.md): user and group tmm-bridge, dialout supplementary, no
# capabilities, umask 0077, the directories systemd would make with the variables that name
# them, so it reads /etc/tmm-bridge/tmm-bridge.conf (root:tmm-bridge 0640) as shipped.
install -d -m 0700 -o tmm-bridge -g tmm-bridge /var/lib/tmm-bridge
install -d -m 0755 -o tmm-bridge -g tmm-bridge /run/tmm-bridge
read -r -a ports < <(python_tool scripts.package_test ports 7)
log="$scratch/daemon.log"
"${hide[@]}" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin STATE_DIRECTORY=/var/lib/tmm-bridge \
    RUNTIME_DIRECTORY=/run/tmm-bridge CONFIGURATION_DIRECTORY=/etc/tmm-bridge \
    setpriv --reuid tmm-bridge --regid tmm-bridge --groups dialout --no-new-privs --bounding-set -all \
    sh -c 'umask 0077 && exec "$@"' sh "$binary" run --demo --no-discovery \
    --location-port "${ports[0]}" --location-secure-port "${ports[1]}" --api-port "${ports[2]}" \
    --api-secure-port "${ports[3]}" --location-v2-port "${ports[4]}" --location-v2-secure-port "${ports[5]}" \
    --fallback-port-start "${ports[6]}" >"$log" 2>&1 &
daemon_pid=$!
api="http://127.0.0.1:${ports[2]}"
# One LocationV1 message (V1 needs no registration): the whole path, pty, private gpsd, epochs,
# servers, works as the user.
read_position() {
    python_tool scripts.package_test position "ws://127.0.0.1:${ports[0]}/"
}
# The public key is the one REST resource that needs no access code.
if wait_for 60 sh -c "curl -fsS '$api/api/v1/publicKey' | grep -q '\"kty\":\"RSA\"'"; then
    ok "the daemon answers on $api (GET /api/v1/publicKey: an RSA key)"
    if wait_for 30 read_position; then
        ok "a LocationV1 position on ws://127.0.0.1:${ports[0]}/: $(read_position)"
    else
        fail "no LocationV1 position on ws://127.0.0.1:${ports[0]}/ within 30 s: $(read_position 2>&1 | tail -n 1)"
    fi
    daemon_user=$(ps -o user= -p "$daemon_pid" | tr -d ' ')
    [[ "$daemon_user" == tmm-bridge ]] || fail "the daemon runs as '$daemon_user', not tmm-bridge"
    gpsd_user=$(pgrep -x gpsd -a -u tmm-bridge | head -n 1 || true)
    [[ -n "$gpsd_user" ]] || echo "package-test: note: no private gpsd as tmm-bridge (a system gpsd answers on 2947?)"
    strangers=$(find /var/lib/tmm-bridge /run/tmm-bridge -mindepth 1 ! -user tmm-bridge 2>/dev/null)
    [[ -z "$strangers" ]] || fail "files the daemon made belong to someone else: $strangers"
    [[ -n $(find /var/lib/tmm-bridge -mindepth 1 -print -quit) ]] || fail "the daemon kept nothing in /var/lib/tmm-bridge"
else
    fail "the installed daemon did not answer on $api within 60 s; its log:"
    sed 's/^/  daemon: /' "$log" >&2
fi
kill -TERM "$daemon_pid" 2>/dev/null || true
status=0
wait "$daemon_pid" || status=$?
((status == 0)) && ok "the daemon stopped on SIGTERM with status 0" || fail "the daemon exited with status $status on SIGTERM; its log: $(tail -n 5 "$log")"
daemon_pid=

# --- reinstall, remove, purge -------------------------------------------------------------------
dpkg -i "$deb" >/dev/null || fail "reinstalling over itself failed"
[[ -d /var/lib/tmm-bridge && $(id -u tmm-bridge 2>/dev/null) == "$uid" ]] || fail "reinstalling lost the state or changed the user"
echo "# an administrator's change" >>/etc/tmm-bridge/tmm-bridge.conf
failures_before=$failures
dpkg -r "$package" >/dev/null || fail "dpkg -r failed"
[[ -e /usr/bin/tmm-bridge ]] && fail "dpkg -r left /usr/bin/tmm-bridge"
[[ -f /etc/tmm-bridge/tmm-bridge.conf ]] || fail "dpkg -r removed the edited conffile (only purge may)"
getent passwd tmm-bridge >/dev/null || fail "dpkg -r removed the user (only purge may)"
[[ $(readlink /etc/systemd/system/tmm-bridge.service 2>/dev/null) == /dev/null ]] || fail "dpkg -r did not mask the unit"
((failures == failures_before)) && ok "removed: binary gone; configuration, user and state kept; unit masked"

failures_before=$failures
dpkg --purge "$package" >/dev/null || fail "dpkg --purge failed"
for entry in "${expected_files[@]}"; do
    path=${entry%% *}
    [[ -e "$path" || -L "$path" ]] && fail "purge left $path"
done
for path in /etc/tmm-bridge /var/lib/tmm-bridge /run/tmm-bridge /usr/share/doc/tmm-bridge "$wants" \
    /etc/systemd/system/tmm-bridge.service /var/lib/systemd/deb-systemd-helper-enabled/tmm-bridge.service.dsh-also \
    /var/lib/systemd/deb-systemd-helper-enabled/multi-user.target.wants/tmm-bridge.service \
    /var/lib/systemd/deb-systemd-helper-masked/tmm-bridge.service; do
    [[ -e "$path" || -L "$path" ]] && fail "purge left $path"
done
getent passwd tmm-bridge >/dev/null && fail "purge left the user tmm-bridge$(pgrep -u tmm-bridge >/dev/null 2>&1 && echo " (processes run as it, so deluser refused: $(pgrep -u tmm-bridge -a | head -n 3))")"
getent group tmm-bridge >/dev/null && fail "purge left the group tmm-bridge"
[[ $(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || echo not-installed) == not-installed ]] || fail "dpkg still knows $package after purge"
((failures == failures_before)) && ok "purged: no file, directory, user, group or systemd state left"

# --- make install / make uninstall in a staging root -----------------------------------------------
for prefix in /usr /usr/local; do
    stage="$scratch/stage${prefix//\//-}"
    mkdir -p "$stage"
    "${MAKE:-make}" --no-print-directory -s install DESTDIR="$stage" PREFIX="$prefix" >/dev/null
    lib=$([[ $prefix == /usr ]] && echo /lib || echo "$prefix/lib")
    expected=$(printf '%s\n' /etc/tmm-bridge/tmm-bridge.conf "$lib/systemd/system/tmm-bridge.service" \
        "$lib/udev/rules.d/60-tmm-bridge.rules" "$prefix/bin/tmm-bridge" "$prefix/lib/modules-load.d/tmm-bridge.conf" \
        "$prefix/share/applications/tmm-bridge-open.desktop" "$prefix/share/man/man8/tmm-bridge.8.gz" | LC_ALL=C sort)
    got=$(cd "$stage" && find . ! -type d -printf '/%P\n' | LC_ALL=C sort)
    [[ "$got" == "$expected" ]] || fail "make install PREFIX=$prefix: $(diff <(echo "$expected") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
    grep -qx "ExecStart=$prefix/bin/tmm-bridge run" "$stage$lib/systemd/system/tmm-bridge.service" || fail "make install PREFIX=$prefix: ExecStart is not $prefix/bin/tmm-bridge"
    grep -qx "Exec=$prefix/bin/tmm-bridge open %u" "$stage$prefix/share/applications/tmm-bridge-open.desktop" || fail "make install PREFIX=$prefix: the handler's Exec is not $prefix/bin/tmm-bridge"
    "${MAKE:-make}" --no-print-directory -s uninstall DESTDIR="$stage" PREFIX="$prefix" >/dev/null
    left=$(find "$stage" ! -type d)
    [[ -z "$left" ]] || fail "make uninstall PREFIX=$prefix left: $left"
done
ok "make install and make uninstall (DESTDIR, PREFIX=/usr and /usr/local): the expected files, then none"

echo "package-test: sizes: the static binary $(du -k .build/static/release/tmm-bridge | cut -f1) KiB" \
    "($(dpkg-deb -f "$deb" Installed-Size) KiB installed, stripped), $(basename "$deb") $(du -k "$deb" | cut -f1) KiB"
if ((failures > 0)); then
    echo "package-test: $failures check(s) failed" >&2
    exit 1
fi
echo "package-test: all checks passed"
