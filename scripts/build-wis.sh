#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build-wis.sh OUT: build will-it-scale's pread1 (one file per task) and
# pread2 (one shared file) benchmarks, process flavor, into OUT for the
# guest (scripts/guest/jobs/bench-wis). The source is WIS_SRC, a checkout
# or a tarball of will-it-scale; without it, the snapshot in
# ../shared/vendor/ beside the project (checked against its SHA256SUMS).
# will-it-scale is built unmodified with its own Makefile; it links
# libhwloc dynamically, and mkinitramfs.sh copies the libraries.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: $0 OUT"
out=$(realpath -m "$1")
tests="pread1_processes pread2_processes"
[ -f /usr/include/hwloc.h ] ||
	die "hwloc.h not found: install the Debian package 'libhwloc-dev' (will-it-scale needs it)"
src=${WIS_SRC:-}
if [ -z "$src" ]; then
	vendor=$TOP/../shared/vendor
	shopt -s nullglob
	snaps=("$vendor"/will-it-scale-*.tar.gz)
	shopt -u nullglob
	[ ${#snaps[@]} = 1 ] ||
		die "no single will-it-scale snapshot in $vendor (${#snaps[@]} found): give WIS_SRC=DIR-or-TARBALL"
	src=${snaps[0]}
	(cd "$vendor" && grep " ${src##*/}\$" SHA256SUMS | sha256sum -c --quiet -) ||
		die "$src does not match $vendor/SHA256SUMS"
fi
work=$BUILD/wis
rm -rf "$work"
mkdir -p "$work"
if [ -d "$src" ]; then
	cp -r "$src/." "$work/"
elif [ -f "$src" ]; then
	tar -xzf "$src" -C "$work" --strip-components=1 ||
		die "WIS_SRC=$src: not a gzip'ed tarball of will-it-scale"
else
	die "WIS_SRC=$src: no such file or directory"
fi
[ -f "$work/main.c" ] && [ -f "$work/tests/pread1.c" ] ||
	die "$src does not look like will-it-scale (no main.c, tests/pread1.c)"
make -s -C "$work" $tests >"$work/build.log" 2>&1 || {
	cat "$work/build.log" >&2
	die "building will-it-scale ($tests) from $src failed"
}
rm -rf "$out"
mkdir -p "$out"
for t in $tests; do
	cp "$work/$t" "$out/"
done
info "will-it-scale from ${src#"$TOP/"}: $tests"
