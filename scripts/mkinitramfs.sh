#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkinitramfs.sh OUT PROGDIR: a gzip'ed cpio with static busybox, the guest
# init and jobs, the selftests (PROGDIR/tests) and benchmarks (PROGDIR/bench).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: $0 OUT PROGDIR"
out=$(realpath -m "$1")
progs=$(realpath "$2")
bb=/bin/busybox
# ldd fails on a static binary.
if [ ! -x $bb ] || ldd $bb >/dev/null 2>&1; then
	die "a static $bb is needed: install the Debian package 'busybox-static'"
fi
need_cmd cpio cpio

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,fnr/tests,fnr/bench,fnr/jobs}
cp $bb "$root/bin/busybox"
cp "$TOP/scripts/guest/init" "$root/init"
cp "$TOP"/scripts/guest/jobs/* "$root/fnr/jobs/"
cp "$progs"/tests/* "$root/fnr/tests/"
cp "$progs"/bench/* "$root/fnr/bench/"
(cd "$root" && find . | LC_ALL=C sort | cpio --quiet --reproducible -o -H newc -R 0:0) |
	gzip -9n >"$out"
