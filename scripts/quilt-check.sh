#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# quilt-check.sh: prove that 'quilt push -a --fuzz=0' applies the series'
# 'series' and patches/ (SERIES, default the mainline) to a plain extracted
# base tree (no git), as a distro packager would.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_cmd quilt quilt
src=$BUILD/base/src
git -C "$src" rev-parse -q --verify base >/dev/null ||
	die "no base tree in $src: run scripts/get-base.sh (make base)"
n=$(series_patches | wc -l)
if [ "$n" = 0 ]; then
	info "quilt: $SERIES/series is empty, nothing to push"
	exit 0
fi
dir=$BUILD/quilt
rm -rf "$dir"
mkdir -p "$dir"
git -C "$src" archive base | tar -x -C "$dir"

cd "$dir"
if ! QUILT_PATCHES=$SDIR/patches QUILT_SERIES=$SDIR/series \
	quilt push -a --fuzz=0 >"$BUILD/quilt.log" 2>&1; then
	tail -n 20 "$BUILD/quilt.log" >&2
	die "quilt push -a --fuzz=0 failed at $(grep '^Applying patch' "$BUILD/quilt.log" | tail -n 1 | sed 's/Applying patch //')"
fi
cd "$TOP"
rm -rf "$dir"	# a scratch copy of the whole tree: 1.4 GiB
info "quilt: $n patch(es) of $SERIES/series pushed with --fuzz=0 onto a plain $(series_label) tree"
