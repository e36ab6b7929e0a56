#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-kunit.sh [SRC OUT]: the series' KUnit tests (scripts/kunit.config,
# the suites filemap_noref*) in the applied tree SRC, built for User-Mode
# Linux by kunit.py in $BUILD/patched/obj-kunit and run there, seconds
# once built.
# Writes OUT/kunit.log (kunit.py's output) and OUT/results.tap (a line
# per case, scripts/kunit-flat.awk); prints those lines and fails on any
# failure, or if no case ran. Without arguments (make check-kunit) it
# applies the series to $BUILD/patched/src first and writes to
# $BUILD/kunit-check.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ $# = 0 ]; then
	"$TOP/scripts/apply.sh" "$BUILD/patched/src"
	set -- "$BUILD/patched/src" "$BUILD/kunit-check"
fi
[ $# = 2 ] || die "usage: $0 [SRC OUT]"
src=$1 out=$2
[ -x "$src/tools/testing/kunit/kunit.py" ] || die "$src: no tools/testing/kunit/kunit.py"
need_cmd python3 python3
mkdir -p "$out"
ccache_cc gcc
info "kunit: $(series_label), kunit.py run under User-Mode Linux (log: $out/kunit.log)"
rc=0
(cd "$src" && ./tools/testing/kunit/kunit.py run --arch=um \
	--build_dir="$BUILD/patched/obj-kunit" --jobs="$(nproc)" \
	--make_options "CC=$KCC_CCACHE" \
	--kunitconfig="$TOP/scripts/kunit.config" \
	--raw_output=kunit 'filemap_noref*') >"$out/kunit.log" 2>&1 || rc=$?
awk -f "$TOP/scripts/kunit-flat.awk" "$out/kunit.log" >"$out/results.tap"
sed 's/^/kunit: /' "$out/results.tap"
read -r p f s < <(awk -f "$TOP/scripts/tap-summary.awk" "$out/results.tap" 2>/dev/null)
if [ "$rc" != 0 ] || [ "$p" = 0 ] || [ "$f" != 0 ]; then
	tail -n 30 "$out/kunit.log" >&2
	die "kunit: $p passed, $f failed, $s skipped (kunit.py exit $rc; log: $out/kunit.log)"
fi
info "kunit: $p passed, $f failed, $s skipped"
