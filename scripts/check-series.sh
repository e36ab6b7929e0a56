#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-series.sh: bisectability and style. Apply the series one patch at a
# time onto the base and build a kernel after each (flavor bisect:
# tinyconfig + what the series' code needs, scripts/bisect.config); stop
# at the first patch that breaks the build. Then prove that config covers
# the series: every .c file it touches was compiled, every CONFIG_ option
# its code tests is set (or named in an '# off:' line of the fragment).
# Run checkpatch.pl --strict on every patch and list what it reports (the
# changelogs explain what is left). SERIES picks the series (default: the
# mainline one). Records the result in results/NAME/series.txt: each
# patch's patch-id (git patch-id --stable: the code, not the changelog)
# and checkpatch's findings; make check compares the series with it
# (scripts/series-record.sh), as .ci/run has no time for these builds.
# FROM=N builds only from patch N on: the patches before it are applied
# unbuilt, and their code must be what the record says was built.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

patches=$(series_patches)
from=${FROM:-1}
old=$TOP/results/$(base_field NAME)/series.txt
if [ "$from" != 1 ] && [ ! -f "$old" ]; then
	die "FROM=$from: ${old#"$TOP"/} is missing, so patches before $from were never built: run without FROM"
fi
"$TOP/scripts/get-base.sh" >/dev/null
# check.sh's scratch work tree, reset to the base: one copy of the tree
# on disk. The per-patch builds have their own object directory.
src=$BUILD/patched/src
obj=$BUILD/patched/obj-bisect
fresh_worktree "$src"
cplog=$BUILD/checkpatch
rm -rf "$cplog"
mkdir -p "$cplog"
record=$BUILD/series.txt
: >"$record"

n=0
for p in $patches; do
	n=$((n + 1))
	am_patch "$src" "$p"
	id=$(patch_id "$p")
	if [ $n -lt "$from" ]; then
		[ "$(recorded_id "$old" "$p")" = "$id" ] ||
			die "FROM=$from: the code of $SERIES/patches/$p is not what ${old#"$TOP"/} says was built: run without FROM"
		info "[$n] $SERIES/patches/$p: built before (${old#"$TOP"/}), not built again"
	else
		info "[$n] $SERIES/patches/$p: building"
		"$TOP/scripts/build-kernel.sh" "$src" "$obj" bisect >/dev/null ||
			die "the build breaks at $SERIES/patches/$p (log: $obj/build.log)"
	fi
	# checkpatch's findings are reported, not fatal: see the changelogs.
	rc=0
	(cd "$src" && perl scripts/checkpatch.pl --strict --show-types --no-tree -q \
		"$SDIR/patches/$p") >"$cplog/checkpatch-$n.log" 2>&1 || rc=$?
	if [ $rc = 0 ]; then
		found=clean
	else
		found=$(grep -oE '^(ERROR|WARNING|CHECK):[A-Z_]+' "$cplog/checkpatch-$n.log" |
			sort | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 }')
	fi
	echo "    checkpatch: $found"
	echo "$id $p builds; checkpatch --strict: $found" >>"$record"
done

# What the last build compiled covers what the series changes.
[ "$from" -le $n ] || "$TOP/scripts/build-kernel.sh" "$src" "$obj" bisect >/dev/null ||
	die "the build of the whole series breaks (log: $obj/build.log)"
frag=$(config_fragment bisect.config)
bad=0
for f in $(git -C "$src" diff --name-only base HEAD -- '*.c' ':!tools'); do
	[ -f "$obj/${f%.c}.o" ] && continue
	# A file that a built one #includes (a KUnit test of static functions,
	# as ext4's mballoc-test.c is), with the option that includes it set.
	inc=
	for i in $(git -C "$src" diff --name-only base HEAD -- '*.c' ':!tools'); do
		[ -f "$obj/${i%.c}.o" ] || continue
		for h in $(sed -n 's/^#include "\(.*\.c\)"$/\1/p' "$src/$i"); do
			[ "$(dirname "$i")/$h" = "$f" ] && inc=$i
		done
	done
	[ -z "$inc" ] || continue
	echo "error: $f is changed by the series but not built by ${frag#"$TOP"/}" >&2
	bad=1
done
for c in $(git -C "$src" diff base HEAD -- '*.c' '*.h' ':!tools' |
	grep -E '^\+.*(#[[:space:]]*(if|elif)|IS_ENABLED|defined[[:space:]]*\()' |
	grep -oE '\bCONFIG_[A-Z0-9_]+' | sort -u); do
	grep -qx "$c=y" "$obj/.config" && continue
	grep -qE "^# off: $c( |\$)" "$frag" && continue
	echo "error: the series' code tests $c, which ${frag#"$TOP"/} leaves off (set it, or say why in an '# off:' line)" >&2
	bad=1
done
[ $bad = 0 ] || die "the per-patch build does not cover the series"
info "all $n patches of $SERIES/series build one by one on $(series_label) (flavor bisect)"
results=$TOP/results/$(base_field NAME)
mkdir -p "$results"
{
	echo "# make check-series SERIES=$SERIES: every patch built on its own (flavor bisect) on $(series_label)"
	echo "# patch-id (git patch-id --stable) patch: result; scripts/series-record.sh checks the series against it"
	cat "$record"
	echo "# all $n patches build one by one${FROM:+ (this run built $from to $n; the others as recorded before)}"
} >"$results/series.txt"
info "recorded in ${results#"$TOP"/}/series.txt (commit it with the series)"
