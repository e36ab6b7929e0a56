#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-all.sh SERIES...: 'make check-one' for each series in turn, the
# later ones even if an earlier one fails; fails if any failed. Each kernel
# gets one closing line: check.sh's "check NAME (VERSION): N passed, ...",
# or, when a step before the selftests stopped it, "check NAME (VERSION):
# FAILED before the selftests (error above)"; "check-debug" with DEBUG=1.
# Before each series it checks that the disk has room for it (NEED_GIB,
# default 7: one series' trees, objects and guests, measured about 6 GiB
# cold) and after each it reports how much the build uses. CHECK_LEAN=1 (.ci/run) removes a
# series' trees and objects once it is done; its logs stay.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: $0 SERIES..."
for s in "$@"; do
	[ -f "$TOP/$s/BASE" ] || die "SERIES=$s: $s/BASE missing"
done
need=${NEED_GIB:-7}
mkdir -p "$TOP/build"
# disk_report: how much build/ uses and how much its filesystem has free.
disk_report() {
	info "disk: build/ holds $(du -sh "$TOP/build" | cut -f1), $(df -h --output=avail "$TOP/build" | tail -n 1 | tr -d ' ') free"
}
closing=$(mktemp)
# The closing lines begin as check.sh's do.
name=check
[ "${DEBUG:-0}" != 1 ] || name=check-debug
trap 'rm -f "$closing"' EXIT
status=0
summary=()
for s in "$@"; do
	label=$(series_label "$TOP/$s")
	info "make check-one SERIES=$s: $label"
	: >"$closing"
	rc=0
	free=$(df --output=avail -B1G "$TOP/build" | tail -n 1 | tr -d ' ')
	if [ "$free" -lt "$need" ]; then
		echo "error: only $free GiB free on the filesystem of $TOP/build; make check needs about $need GiB per series (NEED_GIB)" >&2
		echo "$name $label: FAILED before the selftests (not enough disk)" >"$closing"
		rc=1
	else
		CHECK_CLOSING=$closing make --no-print-directory -C "$TOP" check-one SERIES="$s" || rc=$?
	fi
	if [ $rc != 0 ]; then
		status=1
		[ -s "$closing" ] || echo "$name $label: FAILED before the selftests (error above)" >"$closing"
	fi
	disk_report
	if [ "${CHECK_LEAN:-0}" = 1 ]; then
		b=$TOP/build/$(sed -n 's/^NAME=//p' "$TOP/$s/BASE")
		if [ -e "$b/linux" ]; then
			info "CHECK_LEAN=1: $b/linux (make apply) is a work tree of $b/base; nothing removed"
		else
			info "CHECK_LEAN=1: removing the trees and objects of $b (logs stay)"
			rm -rf "$b/base" "$b/patched" "$b/also" "$b/series" "$b/quilt" "$b/b4"
			disk_report
		fi
	fi
	summary+=("$(cat "$closing")")
done
# The closing lines again, together at the end.
printf '%s\n' "${summary[@]}"
exit $status
