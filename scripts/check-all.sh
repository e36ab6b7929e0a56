#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-all.sh SERIES...: 'make check-one' for each series in turn, the
# later ones even if an earlier one fails; fails if any failed. Each kernel
# gets one closing line: check.sh's "check NAME (VERSION): N passed, ...",
# or, when a step before the selftests stopped it, "check NAME (VERSION):
# FAILED before the selftests (error above)".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: $0 SERIES..."
for s in "$@"; do
	[ -f "$TOP/$s/BASE" ] || die "SERIES=$s: $s/BASE missing"
done
closing=$(mktemp)
trap 'rm -f "$closing"' EXIT
status=0
summary=()
for s in "$@"; do
	label=$(series_label "$TOP/$s")
	info "make check-one SERIES=$s: $label"
	: >"$closing"
	rc=0
	CHECK_CLOSING=$closing make --no-print-directory -C "$TOP" check-one SERIES="$s" || rc=$?
	if [ $rc != 0 ]; then
		status=1
		[ -s "$closing" ] || echo "check $label: FAILED before the selftests (error above)" >"$closing"
	fi
	summary+=("$(cat "$closing")")
done
# The closing lines again, together at the end.
printf '%s\n' "${summary[@]}"
exit $status
