#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkinitramfs.sh OUT PROGDIR [HOSTPROG...]: a gzip'ed cpio with static busybox, the guest
# init and jobs (and the xfstests job's runner), the selftests
# (PROGDIR/tests) and benchmarks (PROGDIR/bench),
# their kselftest tarball (PROGDIR/kselftest.tar.gz), and the host's
# coreutils timeout with the libraries it needs: kselftest's runner.sh
# calls /usr/bin/timeout --foreground, which busybox's timeout lacks.
# Each HOSTPROG (an absolute path, e.g. /usr/bin/perf for make profile)
# is copied with its libraries too, and so are the will-it-scale programs
# in PROGDIR/wis, to /fnr/wis, if make bench built them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: $0 OUT PROGDIR [HOSTPROG...]"
out=$(realpath -m "$1")
progs=$(realpath "$2")
shift 2
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
cp "$TOP/scripts/guest/xfstests-run" "$root/fnr/"
cp "$progs"/tests/* "$root/fnr/tests/"
cp "$progs"/bench/* "$root/fnr/bench/"
cp "$progs/kselftest.tar.gz" "$root/fnr/"
[ -x /usr/bin/timeout ] || die "/usr/bin/timeout not found: install the Debian package 'coreutils'"
# host_libs PROG: copy the shared libraries PROG needs, at their paths.
host_libs() {
	local f
	for f in $(ldd "$1" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
	done
}
for p in /usr/bin/timeout "$@"; do
	[ -x "$p" ] || die "$p: no such program on this machine"
	mkdir -p "$root$(dirname "$p")"
	cp -L "$p" "$root$p"
	host_libs "$p"
done
# will-it-scale (make bench: scripts/build-wis.sh), linked with libhwloc.
if [ -d "$progs/wis" ]; then
	mkdir -p "$root/fnr/wis"
	for p in "$progs"/wis/*; do
		cp "$p" "$root/fnr/wis/"
		host_libs "$p"
	done
fi
(cd "$root" && find . | LC_ALL=C sort | cpio --quiet --reproducible -o -H newc -R 0:0) |
	gzip -9n >"$out"
