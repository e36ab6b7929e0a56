#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-compilers.sh: the whole series builds with clang without a warning,
# and the C files it touches get no new warning from gcc W=1 or sparse
# (C=2), compared with the base tree. Uses the check kernels' configs.
# For the series SERIES (default the mainline), in build/NAME/.
# clang: the newest of clang-19 ... clang-14, clang found here (find_clang),
# if the tree accepts it (scripts/min-tool-version.sh; 7.3 needs LLVM 17:
# Debian 12 has clang-19 since 12.12), else the clang build is reported as
# skipped, with why. sparse: the one scripts/get-sparse.sh gives (7.3
# needs a newer one than Debian 12's, built here from Debian sid's source).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=$BUILD/patched/src
out=$BUILD/compilers
"$TOP/scripts/get-base.sh" >/dev/null
sparse=$("$TOP/scripts/get-sparse.sh" "$BUILD/base/src")
case "$sparse" in
"$BUILD"/*) sparse_ver=$(cat "$BUILD/sparse/version") ;;
*) sparse_ver=$("$sparse" --version) ;;
esac
"$TOP/scripts/apply.sh" "$src"
mkdir -p "$out"
fail=0
# The result lines, also in $out/summary.txt: copied to
# results/NAME/compilers.txt, the cover letter's "@figures lines".
summary=$out/summary.txt
echo "# check-compilers $(base_field VERSION)" >"$summary"
say() {
	echo "$*" | tee -a "$summary"
}

# 1. clang, the whole kernel.
want=$(cd "$src" && SRCARCH=x86 ARCH=x86_64 scripts/min-tool-version.sh llvm)
clang=$(find_clang)
have=
[ -z "$clang" ] || have=$("$clang" -dumpversion)
if [ -z "$clang" ]; then
	say "SKIPPED: clang build: no clang (apt-get install clang-19; the tree needs LLVM $want)"
elif ! version_ge "$have" "$want"; then
	say "SKIPPED: clang build: $(base_field VERSION) needs LLVM $want (scripts/min-tool-version.sh), the newest clang here is $clang $have"
else
	KCC=$clang "$TOP/scripts/build-kernel.sh" "$src" "$BUILD/patched/obj-clang" check
	if grep -n 'warning:' "$BUILD/patched/obj-clang/build.log"; then
		say "FAILED: $clang warnings (above; $BUILD/patched/obj-clang/build.log)" >&2
		fail=1
	else
		say "clang $have: the series builds (check config) without a warning"
	fi
fi

# 2. W=1 and sparse on the touched C files that the check config builds,
# compiled again in the base and the patched tree.
"$TOP/scripts/build-kernel.sh" "$BUILD/base/src" "$BUILD/base/obj-check" check
"$TOP/scripts/build-kernel.sh" "$src" "$BUILD/patched/obj-check" check
objs=
unbuilt=
for f in $(git -C "$src" diff --name-only base HEAD -- '*.c' | grep -v '^tools/'); do
	if [ -f "$BUILD/patched/obj-check/${f%.c}.o" ]; then
		objs+=" ${f%.c}.o"
	else
		unbuilt+=" $f"
	fi
done
for tree in base patched; do
	: >"$out/$tree.log"
	for o in $objs; do
		[ -f "$BUILD/$tree/src/${o%.o}.c" ] || continue
		touch "$BUILD/$tree/src/${o%.o}.c"
		make -s -C "$BUILD/$tree/src" O="$BUILD/$tree/obj-check" W=1 C=2 \
			CHECK="$sparse" "$o" >>"$out/$tree.log" 2>&1
	done
	# Without a sparse it accepts, the kernel's Makefile says so and
	# checks nothing.
	if grep -n 'is not available or not up to date' "$out/$tree.log"; then
		die "$tree: the kernel did not run $sparse (above; $out/$tree.log)"
	fi
	# /tree/src/file:line:col: warning: text -> file: warning: text
	sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: \(warning\|error\): /\1: \2: /p' \
		"$out/$tree.log" | sed "s|^$BUILD/$tree/src/||" |
		sort -u >"$out/$tree.warnings"
done
comm -13 "$out/base.warnings" "$out/patched.warnings" >"$out/new.warnings"
echo "W=1 + sparse on$objs"
[ -z "$unbuilt" ] || say "not built by the check config, so not checked:$unbuilt"
say "gcc W=1 + sparse $sparse_ver (C=2) on the $(wc -w <<<"$objs") touched C files the check config builds: $(wc -l <"$out/base.warnings") warnings on base, $(wc -l <"$out/patched.warnings") patched, $(wc -l <"$out/new.warnings") new"
if [ -s "$out/new.warnings" ]; then
	cat "$out/new.warnings" >&2
	fail=1
fi
[ $fail = 0 ]
