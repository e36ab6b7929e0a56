#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# apply.sh [DIR]: make DIR (default build/NAME/linux, the series' work tree)
# a work tree of the base repository at tag 'base' and 'git am --3way'
# every patch of the series' 'series' file onto it, in order.
# Commits DIR had that are not on 'base' are kept under refs/backup/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -le 1 ] || die "usage: $0 [DIR]"
dir=${1:-$BUILD/linux}
series_patches >/dev/null	# dies early if the series file is missing

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
n=$(am_series "$PWD")
info "$dir: base + $n patch(es) of $SERIES/series applied"
