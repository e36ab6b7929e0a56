#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# series-record.sh: the series' code is what make check-series last built
# patch by patch. results/NAME/series.txt holds each patch's patch-id (git
# patch-id --stable: the diff, not the changelog) from that run; fails,
# naming the first patch whose code differs, so that a patch changed
# without its per-patch build does not pass make check (.ci/run leaves
# those builds out for time).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

record=$TOP/results/$(base_field NAME)/series.txt
[ -f "$record" ] ||
	die "${record#"$TOP"/} is missing: run make check-series SERIES=$SERIES and commit it"
n=0
for p in $(series_patches); do
	n=$((n + 1))
	id=$(patch_id "$p")
	want=$(recorded_id "$record" "$p")
	[ -n "$want" ] ||
		die "$SERIES/patches/$p is not in ${record#"$TOP"/}: run make check-series SERIES=$SERIES"
	[ "$id" = "$want" ] ||
		die "the code of $SERIES/patches/$p differs from what make check-series built (${record#"$TOP"/}): run make check-series SERIES=$SERIES"
done
have=$(grep -cv '^#' "$record")
[ "$have" = $n ] ||
	die "${record#"$TOP"/} lists $have patches, $SERIES/series $n: run make check-series SERIES=$SERIES"
info "$(series_label): all $n patches are the code make check-series built one by one (${record#"$TOP"/})"
