#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-series.sh: bisectability and style. Apply the series one patch at a
# time onto the base and build the guest kernel (check flavor, so with
# DEBUG_VM) after each; stop at the first patch that breaks the build.
# Run checkpatch.pl --strict on every patch and list what it reports (the
# changelogs explain what is left). SERIES picks the series (default: the
# mainline one).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

patches=$(series_patches)
"$TOP/scripts/get-base.sh" >/dev/null
# check.sh's scratch work tree and object directory, reset to the base:
# one copy of the tree on disk, and check.sh's build after this one only
# rebuilds what apply.sh touches.
src=$BUILD/patched/src
obj=$BUILD/patched/obj-check
fresh_worktree "$src"
cplog=$BUILD/checkpatch
rm -rf "$cplog"
mkdir -p "$cplog"

n=0
for p in $patches; do
	n=$((n + 1))
	am_patch "$src" "$p"
	info "[$n] $SERIES/patches/$p: building"
	"$TOP/scripts/build-kernel.sh" "$src" "$obj" check >/dev/null ||
		die "the build breaks at $SERIES/patches/$p (log: $obj/build.log)"
	# checkpatch's findings are reported, not fatal: see the changelogs.
	rc=0
	(cd "$src" && perl scripts/checkpatch.pl --strict --no-tree -q \
		"$SDIR/patches/$p") >"$cplog/checkpatch-$n.log" 2>&1 || rc=$?
	if [ $rc = 0 ]; then
		echo "    checkpatch: clean"
	else
		grep -E '^(ERROR|WARNING|CHECK):' "$cplog/checkpatch-$n.log" |
			sed 's|^|    checkpatch: |'
	fi
done
info "all $n patches of $SERIES/series build one by one on $(series_label)"
