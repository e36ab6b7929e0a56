#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-b4.sh: prove that a maintainer's 'b4 am' takes the series from a
# mailing list's mbox (scripts/mbox.sh, offline: b4 -m) and that the result
# applies to the base: b4 finds every patch in order and the cover letter's
# base-commit, which must be the commit of this series' base tree, and
# git am of b4's .mbx gives the same tree as the series' own patches.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_cmd b4 b4
"$TOP/scripts/get-base.sh" >/dev/null
mbox=$("$TOP/scripts/mbox.sh")
n=$(series_patches | wc -l)
dir=$BUILD/b4/tree
out=$BUILD/b4/out
repo=$BUILD/base/src/.git
base=$(git --git-dir="$repo" rev-parse 'base^{commit}')

# The tree the series' own patches give.
sparse_worktree "$dir" "$repo"
am_series "$dir" >/dev/null
want=$(git -C "$dir" rev-parse 'HEAD^{tree}')
git -C "$dir" checkout -q --detach base

rm -rf "$out"
mkdir -p "$out"
cover=$(sed -n '/^Message-ID: /{s///p;q}' "$mbox")
if ! (cd "$dir" && timeout 300 b4 am -m "$mbox" -o "$out" "$cover") >"$BUILD/b4/am.log" 2>&1; then
	cat "$BUILD/b4/am.log" >&2
	die "b4 am failed on $mbox (log: $BUILD/b4/am.log)"
fi
grep -qx "Total patches: $n" "$BUILD/b4/am.log" ||
	die "b4 am did not find the $n patches of $SERIES/series in $mbox (log: $BUILD/b4/am.log)"
grep -q "Base: using specified base-commit $base\$" "$BUILD/b4/am.log" ||
	die "b4 am did not report base-commit $base, the commit of the base tree (log: $BUILD/b4/am.log)"
mbx=$(ls "$out"/*.mbx)
git -C "$dir" am -q "$mbx" >"$BUILD/b4/git-am.log" 2>&1 || {
	cat "$BUILD/b4/git-am.log" >&2
	git -C "$dir" am --abort
	die "git am $mbx (made by b4 am) does not apply to the base"
}
got=$(git -C "$dir" rev-parse 'HEAD^{tree}')
[ "$got" = "$want" ] ||
	die "b4 am's $mbx gives tree $got, the series' patches give $want"
[ "$(git -C "$dir" rev-list --count base..HEAD)" = "$n" ] ||
	die "b4 am's $mbx does not give $n commits"
echo "b4: b4 $(b4 --version) am takes the $n patches of $SERIES/series from $(basename "$mbox"), base-commit ${base:0:12} = the base tree, same tree as git am of patches/"
