#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-also.sh: prove that 'git am' applies the whole series to the second
# tree the series' BASE names in its ALSO_* fields (the mainline series:
# 7.3.4 from trixie-backports). scripts/get-base.sh ALSO_ makes it the
# bare repository build/NAME/also/repo.git; every patch of 'series' goes
# onto a scratch work tree of it, build/NAME/also/am, in order. No build,
# so the work tree is sparse: it holds only the files the series touches.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(base_field ALSO_VERSION)
[ -n "$ver" ] || die "$SERIES/BASE has no ALSO_VERSION=: no second tree to apply the series to"
series_patches >/dev/null	# dies early if the series file is missing
"$TOP/scripts/get-base.sh" ALSO_ >/dev/null
dir=$BUILD/also/am
sparse_worktree "$dir" "$BUILD/also/repo.git"
n=$(am_series "$dir")
echo "also: series applies to $ver by git am ($n patches)"
