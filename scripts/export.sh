#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# export.sh [DIR]: turn the commits base..HEAD of the kernel work tree DIR
# (default build/NAME/linux) into the series' patches/ and series (SERIES:
# the top level for the mainline, e.g. backports/6.12 for a backport). The
# cover letter's subject and text come from the series' cover text (first
# line PREFIX=..., then the subject, a blank line and the text):
# Documentation/cover-letter.txt for the mainline, SERIES/cover-letter.txt
# for a backport. The mainline alone owns Documentation/filemap-noref.rst:
# its export copies the tree's Documentation/mm/filemap-noref.rst there; a
# backport's copy of the document may differ and stays in its patch.
# Output is reproducible: zero commit ids, no signature, dates from the
# commits.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

dir=${1:-$BUILD/linux}
git -C "$dir" rev-parse -q --verify base >/dev/null || die "$dir: no tag 'base'"
[ -z "$(git -C "$dir" status --porcelain --untracked-files=no)" ] ||
	die "$dir has uncommitted changes: commit them first"
n=$(git -C "$dir" rev-list --count base..HEAD)
[ "$n" -gt 0 ] || die "$dir has no commits on top of base"
if [ "$SERIES" = . ]; then
	cover=$TOP/Documentation/cover-letter.txt
else
	cover=$SDIR/cover-letter.txt
fi
[ -f "$cover" ] || die "$cover is missing"
prefix=$(awk '/^PREFIX=/ { print substr($0, 8); exit }' "$cover")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# --abbrev: the index lines' hash length must not follow the size of the
# repository (git's automatic abbreviation), or every export rewrites them.
git -C "$dir" format-patch -q --zero-commit --no-signature --cover-letter --abbrev=9 \
	--base=base --subject-prefix="${prefix:-PATCH}" -o "$tmp" base..HEAD

# Fill the cover letter from the text file (its figures from their results
# files: scripts/cover-body.sh), and date it like the last patch. The
# "create mode" lines that git adds under the diffstat go: the diffstat
# names every file already, and they were a tenth of the letter.
subject=$(awk '!/^PREFIX=/ { print; exit }' "$cover")
"$TOP/scripts/tested-report.sh" "$cover"
"$TOP/scripts/cover-body.sh" "$cover" >"$tmp/body"
last=$(ls "$tmp"/0*.patch | tail -n 1)
date=$(awk '/^Date: / { print substr($0, 7); exit }' "$last")
awk -v subj="$subject" -v date="$date" -v body="$tmp/body" '
	/^Date: / && !d { print "Date: " date; d = 1; next }
	/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) }
	/^\*\*\* BLURB HERE \*\*\*$/ {
		while ((getline l < body) > 0)
			print l
		next
	}
	/^ create mode [0-7]+ / { next }
	{ print }' "$tmp/0000-cover-letter.patch" >"$tmp/cover" && mv "$tmp/cover" "$tmp/0000-cover-letter.patch"

mkdir -p "$SDIR/patches"
rm -f "$SDIR"/patches/[0-9][0-9][0-9][0-9]-*.patch
cp "$tmp"/*.patch "$SDIR/patches/"
{
	echo "# quilt series for the filemap-noref patches in patches/ (cover letter excluded)"
	(cd "$tmp" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v '^0000-cover-letter')
} >"$SDIR/series"
if [ "$SERIES" = . ]; then
	# The design document, readable without applying the series.
	cp "$dir/Documentation/mm/filemap-noref.rst" "$TOP/Documentation/filemap-noref.rst"
fi
info "exported $n patch(es) from $dir to $SERIES/patches and $SERIES/series"
