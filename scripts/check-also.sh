#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-also.sh: prove that 'git am' applies the whole series to the second
# tree the series' BASE names in its ALSO_* fields (the mainline series:
# 7.3.4 from trixie-backports). scripts/get-base.sh ALSO_ extracts it into
# build/NAME/also/src; every patch of 'series' goes onto a scratch work
# tree of it, build/NAME/also/am, in order. No build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(base_field ALSO_VERSION)
[ -n "$ver" ] || die "$SERIES/BASE has no ALSO_VERSION=: no second tree to apply the series to"
series_patches >/dev/null	# dies early if the series file is missing
"$TOP/scripts/get-base.sh" ALSO_ >/dev/null
dir=$BUILD/also/am
fresh_worktree "$dir" "$BUILD/also/src"
n=$(am_series "$dir")
echo "also: series applies to $ver by git am ($n patches)"
