#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# cover-body.sh COVER: the cover letter's text from the series' cover text
# COVER (its PREFIX= line, subject and the blank line after it dropped),
# with each line "@figures scale FILE" replaced by the table that
# scripts/scale-table.awk (brief) makes of the results file FILE (a path
# from the top of the workbench), and each "@figures tested FILE..." by
# scripts/tested-table.awk's table of make check's results files, and
# each "@figures distro FILE..." by scripts/distro-table.awk's lines of
# make check-distro's reports. The
# figures come from their results files, never by hand: make export
# writes them, make check-figures proves the exported cover letter still
# has them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: $0 COVER"
[ -f "$1" ] || die "$1 is missing"
n=0
while IFS= read -r line; do
	case $line in
	PREFIX=*) continue ;;
	esac
	n=$((n + 1))
	[ $n -gt 2 ] || continue
	case $line in
	"@figures scale "*)
		f=${line#@figures scale }
		[ -f "$TOP/$f" ] || die "$1: the results file $f is missing"
		awk -v brief=1 -f "$TOP/scripts/median.awk" -f "$TOP/scripts/scale-table.awk" "$TOP/$f"
		;;
	"@figures tested "*)
		files=()
		for f in ${line#@figures tested }; do
			[ -f "$TOP/$f" ] || die "$1: the results file $f is missing"
			files+=("$TOP/$f")
		done
		awk -f "$TOP/scripts/tested-table.awk" "${files[@]}"
		;;
	"@figures distro "*)
		files=()
		for f in ${line#@figures distro }; do
			[ -f "$TOP/$f" ] || die "$1: the results file $f is missing"
			files+=("$TOP/$f")
		done
		awk -f "$TOP/scripts/distro-table.awk" "${files[@]}"
		;;
	"@figures"*) die "$1: unknown figures line '$line' (only '@figures scale FILE', '@figures tested FILE...' and '@figures distro FILE...')" ;;
	*) printf '%s\n' "$line" ;;
	esac
done <"$1"
