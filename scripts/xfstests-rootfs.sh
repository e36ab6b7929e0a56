#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# xfstests-rootfs.sh SRC IMAGE: a Debian 12 root filesystem image with
# xfstests built in /opt/xfstests and the programs it runs. SRC is an
# xfstests checkout or tarball (make xfstests: XFSTESTS_SRC, else the
# snapshot in ../shared/vendor). The root is made with debootstrap from
# the Debian mirror apt already uses, in build/xfstests/; IMAGE is rebuilt
# only when SRC, the package list or this script changes (IMAGE.stamp).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: $0 XFSTESTS_SRC IMAGE"
src=$1 img=$2
[ -e "$src" ] || die "XFSTESTS_SRC=$src: no such checkout or tarball"
[ "$(id -u)" = 0 ] || die "debootstrap and chroot need root"
need_cmd debootstrap debootstrap
need_cmd mkfs.ext4 e2fsprogs

suite=bookworm
mirror=http://deb.debian.org/debian
# What xfstests' README asks for on Debian, less the packages for other
# filesystems and kernel headers; plus the build tools.
packages="acl attr bc dmsetup e2fsprogs fio gawk kmod procps psmisc python3
quota sqlite3 uuid-runtime xfsprogs xfsdump util-linux hostname perl
libcap2-bin gcc make automake autoconf libtool libtool-bin pkg-config
uuid-dev libacl1-dev libattr1-dev libaio-dev libgdbm-dev libgdbm-compat-dev
liburing-dev libcap-dev xfslibs-dev"

if [ -d "$src" ]; then
	# A checkout: its commit (a plain directory: its path; remove the
	# image to rebuild after editing it).
	srcid=$(git -C "$src" rev-parse HEAD 2>/dev/null) || srcid=$(realpath "$src")
else
	srcid=$(sha256sum <"$src" | cut -d' ' -f1)
fi
stamp="$srcid $(echo "$suite $packages" | sha256sum | cut -c1-16) $(sha256sum <"$0" | cut -c1-16)"
if [ -f "$img" ] && [ "$(cat "$img.stamp" 2>/dev/null)" = "$stamp" ]; then
	info "xfstests root filesystem $img is up to date"
	exit 0
fi

work=$(dirname "$(realpath -m "$img")")
root=$work/rootfs
mkdir -p "$work"
rm -rf "$root" "$img" "$img.stamp"
info "debootstrap $suite into $root (log: $work/debootstrap.log)"
if ! debootstrap --variant=minbase --include="$(echo $packages | tr ' ' ,)" \
	"$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
	tail -n 20 "$work/debootstrap.log" >&2
	die "debootstrap failed (log: $work/debootstrap.log)"
fi

info "building xfstests from $src in the root (log: $work/xfstests-build.log)"
mkdir -p "$root/opt/xfstests"
if [ -d "$src" ]; then
	cp -a "$src/." "$root/opt/xfstests/"
else
	tar -xzf "$src" -C "$root/opt/xfstests" --strip-components=1
fi
mount -t proc proc "$root/proc"
trap 'umount "$root/proc"' EXIT
if ! chroot "$root" make -C /opt/xfstests -j"$(nproc)" >"$work/xfstests-build.log" 2>&1; then
	tail -n 20 "$work/xfstests-build.log" >&2
	die "xfstests did not build (log: $work/xfstests-build.log)"
fi
umount "$root/proc"
trap - EXIT
# The users and groups xfstests' README asks for.
chroot "$root" sh -e -c 'useradd -m fsgqa; useradd 123456-fsgqa; useradd fsgqa2; groupadd -f fsgqa'
echo xfstests-guest >"$root/etc/hostname"
echo "127.0.0.1 localhost xfstests-guest" >"$root/etc/hosts"

info "making $img"
truncate -s 4G "$img.tmp"
mkfs.ext4 -q -F -U clear -d "$root" "$img.tmp"
mv "$img.tmp" "$img"
echo "$stamp" >"$img.stamp"
rm -rf "$root"
