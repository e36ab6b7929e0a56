#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# cover-body.sh COVER: the cover letter's text from the series' cover text
# COVER (its PREFIX= line, subject and the blank line after it dropped),
# with each line "@figures scale FILE" replaced by the table that
# scripts/scale-table.awk (brief) makes of the results file FILE (a path
# from the top of the workbench), and each "@figures tested FILE..." by
# scripts/tested-table.awk's table of make check's results files, each
# "@figures report OUT FILE..." by that table's closing lines (the table
# is in OUT, scripts/tested-report.sh), and
# each "@figures distro FILE..." by scripts/distro-table.awk's lines of
# make check-distro's reports, and each "@figures lines FILE..." by the
# lines of FILE that are not comments, each a " - " item wrapped at 72
# columns (make check-compilers, make check-matrix). The figures come
# from their results files, never by hand: make export writes them, make
# check-figures proves the exported cover letter still has them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: $0 COVER"
[ -f "$1" ] || die "$1 is missing"
# results FILE...: the results files FILE (paths from the top of the
# workbench) as absolute paths, one a line; dies if one is missing.
results() {
	local f
	for f in "$@"; do
		[ -f "$TOP/$f" ] || die "$cover: the results file $f is missing"
		echo "$TOP/$f"
	done
}

cover=$1
n=0
while IFS= read -r line; do
	case $line in
	PREFIX=*) continue ;;
	esac
	n=$((n + 1))
	[ $n -gt 2 ] || continue
	case $line in
	"@figures report "*)
		# "@figures report OUT FILE...": OUT holds the table.
		read -r -a words <<<"$line"
		list=$(results "${words[@]:3}")
		mapfile -t files <<<"$list"
		;;
	"@figures scale "* | "@figures tested "* | "@figures distro "* | "@figures lines "*)
		# The words after "@figures KIND" name the results files.
		read -r -a words <<<"$line"
		list=$(results "${words[@]:2}")
		mapfile -t files <<<"$list"
		;;
	esac
	case $line in
	"@figures scale "*)
		awk -v brief=1 -f "$TOP/scripts/median.awk" -f "$TOP/scripts/scale-table.awk" "${files[@]}"
		;;
	"@figures tested "* | "@figures distro "*)
		awk -f "$TOP/scripts/${words[1]}-table.awk" "${files[@]}"
		;;
	"@figures report "*)
		# The closing lines only; scripts/tested-report.sh writes OUT.
		awk -f "$TOP/scripts/tested-table.awk" "${files[@]}" | grep '^check'
		;;
	"@figures lines "*)
		# Each line a " - " item, wrapped at 72 columns.
		awk '/^#/ || NF == 0 { next } {
			out = " -"
			for (i = 1; i <= NF; i++) {
				if (i > 1 && length(out) + 1 + length($i) > 72) {
					print out
					out = "  "
				}
				out = out " " $i
			}
			print out
		}' "${files[@]}"
		;;
	"@figures"*) die "$cover: unknown figures line '$line' (only '@figures scale FILE', '@figures tested FILE...', '@figures report OUT FILE...', '@figures distro FILE...' and '@figures lines FILE...')" ;;
	*) printf '%s\n' "$line" ;;
	esac
done <"$cover"
