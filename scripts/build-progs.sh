#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build-progs.sh SRC OUT: build the filemap-noref selftests inside the kernel
# tree SRC the way kselftest does (make -C tools/testing/selftests
# TARGETS=filemap-noref), then copy the static tests to OUT/tests and the
# benchmarks to OUT/bench for the guest; and package them the way CI
# systems take kselftests (make install + gen_tar) as
# OUT/kselftest.tar.gz, which the guest runs with run_kselftest.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: $0 SRC OUT"
src=$1 out=$2
ours=$TOP/tools/testing/selftests/filemap-noref
theirs=$src/tools/testing/selftests/filemap-noref

# Once the series carries the selftests, the tree's copy must be ours.
# (Only source files: built programs may lie in the tree's copy.)
if git -C "$src" ls-files --error-unmatch tools/testing/selftests/filemap-noref >/dev/null 2>&1; then
	differ=
	for f in $(cd "$ours" && find . -type f | sort); do
		cmp -s "$ours/$f" "$theirs/$f" || differ+=" ${f#./}"
	done
	for f in $(git -C "$theirs" ls-files .); do
		[ -f "$ours/$f" ] || differ+=" $f"
	done
	[ -z "$differ" ] ||
		die "tools/testing/selftests/filemap-noref differs between the series and the project (${differ# }): run 'make sync-selftests export'"
else
	rm -rf "$theirs"
	cp -r "$ours" "$theirs"
fi
make -s -C "$src/tools/testing/selftests" TARGETS=filemap-noref >"$BUILD/progs.log" 2>&1 || {
	cat "$BUILD/progs.log" >&2
	die "building the selftests in $src failed"
}
if grep -q 'warning:' "$BUILD/progs.log"; then
	cat "$BUILD/progs.log" >&2
	die "the selftests build with warnings"
fi
rm -rf "$out"
mkdir -p "$out/tests" "$out/bench"
for p in $(sed -n 's/^TEST_GEN_PROGS := //p' "$ours/Makefile"); do
	cp "$theirs/$p" "$out/tests/"
done
for p in $(sed -n 's/^TEST_GEN_PROGS_EXTENDED := //p' "$ours/Makefile"); do
	cp "$theirs/$p" "$out/bench/"
done
cp "$theirs/settings" "$out/tests/"
inst=$BUILD/kselftest-install
rm -rf "$inst"
make -s -C "$src/tools/testing/selftests" TARGETS=filemap-noref INSTALL_PATH="$inst" \
	gen_tar >"$BUILD/progs-install.log" 2>&1 || {
	cat "$BUILD/progs-install.log" >&2
	die "make install/gen_tar of the selftests in $src failed"
}
grep -qx 'filemap-noref:read_semantics' "$inst/kselftest-list.txt" ||
	die "$inst/kselftest-list.txt does not list filemap-noref:read_semantics"
cp "$inst/kselftest-packages/kselftest.tar.gz" "$out/"
