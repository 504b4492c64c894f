#!/usr/bin/env bash
# Builds the tmm-bridge .deb with dpkg-deb, no debhelper: the files are `make install
# DESTDIR=<root> PREFIX=/usr` (one list of installed files for both), the binary stripped as
# dh_strip would, the control files from packaging/debian/. `make deb` runs it after `make build`.
#
#   scripts/build-deb.sh OUTPUT_DIR      writes OUTPUT_DIR/tmm-bridge_<version>-<revision>_<arch>.deb
#
# Environment: DEB_REVISION (default 1), DEB_MAINTAINER (default: the changelog's), MAKE.
# The version is the binary's own (`tmm-bridge --version`); packaging/debian/changelog must have
# an entry for <version>-<revision> on top, or the build stops (the changelog is the record of
# what each package is). docs/install.md.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() {
    echo "build-deb: $*" >&2
    exit 1
}

[[ $# -eq 1 ]] || { echo "usage: $0 OUTPUT_DIR" >&2; exit 64; }
output=$1
revision=${DEB_REVISION:-1}
debian=packaging/debian

for tool in dpkg-deb dpkg-shlibdeps dpkg-parsechangelog strip gzip md5sum; do
    command -v "$tool" >/dev/null || die "$tool not found (packages dpkg-dev and binutils: apt-get install -y dpkg-dev binutils)"
done

root=$(mktemp -d)
shlibs=$(mktemp -d)
trap 'rm -rf "$root" "$shlibs"' EXIT
chmod 0755 "$root"
umask 022

# --- files --------------------------------------------------------------------------------
"${MAKE:-make}" --no-print-directory install DESTDIR="$root" PREFIX=/usr >/dev/null
binary="$root/usr/bin/tmm-bridge"

upstream=$("$binary" --version | sed -n 's/^tmm-bridge \([0-9][0-9A-Za-z.+~]*\)$/\1/p')
[[ -n "$upstream" ]] || die "cannot read the version from '$binary --version' (got: $("$binary" --version 2>&1 | head -n 1))"
version="$upstream-$revision"

changelog_version=$(dpkg-parsechangelog -l "$debian/changelog" -S Version)
[[ "$changelog_version" == "$version" ]] ||
    die "$debian/changelog's latest entry is $changelog_version, the package is $version: add an entry for $version (dch -v $version, or by hand)"

# As dh_strip: no symbol table or debug information in the shipped binary (lintian's
# unstripped-binary-or-object); the Swift runtime's metadata lives in its own sections and stays.
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$binary"

doc="$root/usr/share/doc/tmm-bridge"
install -d -m 0755 "$doc"
install -m 0644 "$debian/copyright" "$doc/copyright"
gzip -9n <"$debian/changelog" >"$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"

# --- control ------------------------------------------------------------------------------
# The libraries: dpkg-shlibdeps, as debhelper's ${shlibs:Depends}, reads the binary's NEEDED
# entries and the shlibs/symbols files of the packages that provide them, giving each the
# minimum version its symbols need. It wants a source tree's debian/control to exist.
mkdir "$shlibs/debian"
printf 'Source: tmm-bridge\n\nPackage: tmm-bridge\nArchitecture: any\n' >"$shlibs/debian/control"
libraries=$(cd "$shlibs" && dpkg-shlibdeps -O "$binary" 2>"$shlibs/warnings" | sed -n 's/^shlibs:Depends=//p') ||
    die "dpkg-shlibdeps failed: $(cat "$shlibs/warnings")"
[[ -n "$libraries" ]] || die "dpkg-shlibdeps found no library for $binary: $(cat "$shlibs/warnings")"
# gpsd: the daemon starts /usr/sbin/gpsd itself when no system gpsd answers. adduser: postinst
# makes the user with it. (init-system-helpers, for deb-systemd-helper, is Essential.)
depends="$libraries, gpsd, adduser"

maintainer=${DEB_MAINTAINER:-$(dpkg-parsechangelog -l "$debian/changelog" -S Maintainer)}
architecture=$(dpkg --print-architecture)
installed_size=$(du -sk "$root" | cut -f1)

install -d -m 0755 "$root/DEBIAN"
sed -e "s|@VERSION@|$version|" -e "s|@ARCHITECTURE@|$architecture|" -e "s|@MAINTAINER@|$maintainer|" \
    -e "s|@INSTALLED_SIZE@|$installed_size|" -e "s|@DEPENDS@|$depends|" "$debian/control.in" >"$root/DEBIAN/control"
if grep -n '@[A-Z_]*@' "$root/DEBIAN/control" >&2; then die "$debian/control.in has a placeholder this script does not fill"; fi
chmod 0644 "$root/DEBIAN/control"
# Every file under /etc is a conffile: kept on upgrade if edited, removed on purge.
(cd "$root" && find etc -type f -printf '/%p\n' | sort) >"$root/DEBIAN/conffiles"
chmod 0644 "$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do
    install -m 0755 "$debian/$script" "$root/DEBIAN/$script"
done
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"

# --- build --------------------------------------------------------------------------------
mkdir -p "$output"
rm -f "$output"/tmm-bridge_*.deb
deb="$output/tmm-bridge_${version}_${architecture}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "build-deb: $deb ($(du -k "$deb" | cut -f1) KiB; the binary $(du -k "$binary" | cut -f1) KiB stripped)"
echo "build-deb: Depends: $depends"
