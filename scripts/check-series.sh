#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-series.sh: bisectability and style. Apply the series one patch at a
# time onto the base and build the guest kernel (check flavor, so with
# DEBUG_VM) after each; stop at the first patch that breaks the build.
# Run checkpatch.pl --strict on every patch and list what it reports (the
# changelogs explain what is left).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/get-base.sh" >/dev/null
src=$BUILD/series/src
obj=$BUILD/series/obj
# A scratch work tree of this script's own, reset to the base.
base_worktree "$src"
if [ -d "$(git -C "$src" rev-parse --git-path rebase-apply)" ]; then
	git -C "$src" am --abort
fi
git -C "$src" checkout -q -f --detach base
git -C "$src" clean -q -fdx

n=0
while read -r p; do
	n=$((n + 1))
	am_patch "$src" "$p"
	info "[$n] $p: building"
	"$TOP/scripts/build-kernel.sh" "$src" "$obj" check >/dev/null ||
		die "the build breaks at patches/$p (log: $obj/build.log)"
	# checkpatch's findings are reported, not fatal: see the changelogs.
	rc=0
	(cd "$src" && perl scripts/checkpatch.pl --strict --no-tree -q \
		"$TOP/patches/$p") >"$BUILD/series/checkpatch-$n.log" 2>&1 || rc=$?
	if [ $rc = 0 ]; then
		echo "    checkpatch: clean"
	else
		grep -E '^(ERROR|WARNING|CHECK):' "$BUILD/series/checkpatch-$n.log" |
			sed 's|^|    checkpatch: |'
	fi
done < <(series_patches)
info "all $n patches build one by one"
