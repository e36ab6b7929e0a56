#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# apply.sh DIR: make DIR a work tree of the base repository at tag 'base'
# and 'git am --3way' every patch of 'series' onto it, in order.
# Commits DIR had that are not on 'base' are kept under refs/backup/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: $0 DIR"
dir=$1
src=$BUILD/base/src
git -C "$src" rev-parse -q --verify base >/dev/null ||
	die "no base tree in $src: run scripts/get-base.sh (make base)"

base_worktree "$dir"
cd "$dir"
[ -d .git ] || [ -f .git ] || die "$dir exists but is not a git work tree"
if [ -d "$(git rev-parse --git-path rebase-apply)" ]; then
	git am --abort	# left over from an earlier failure
fi
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	die "$dir has uncommitted changes: commit or stash them first"
fi
if [ "$(git rev-parse HEAD)" != "$(git rev-parse 'base^{commit}')" ]; then
	backup=refs/backup/$(date +%Y%m%d-%H%M%S)
	git update-ref "$backup" HEAD
	info "$dir: previous HEAD kept as $backup"
fi
git checkout -q --detach base
git clean -q -fdx

n=0
while read -r p; do
	am_patch "$PWD" "$p"
	n=$((n + 1))
done < <(series_patches)
info "$dir: base + $n patch(es) applied"
