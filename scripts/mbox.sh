#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mbox.sh: the series as one threaded mbox, build/NAME/series.mbox, as it
# would reach a mailing list: the cover letter and every patch of 'series',
# in order, each with a Message-ID, the patches In-Reply-To the cover
# letter. The Message-IDs are made from the subject prefix's version and
# the patch number, so the file is the same on every run. Folded header
# lines are unfolded (b4 0.12 fails on a folded From:).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cover=$SDIR/patches/0000-cover-letter.patch
[ -f "$cover" ] || die "$cover is missing (make export SERIES=$SERIES)"
ver=$(sed -n 's/^Subject: \[.* \(v[0-9]\+\) 0\+\/.*/\1/p' "$cover")
[ -n "$ver" ] || die "$cover: no 'vN 00/NN' in its Subject:"
domain=$(sed -n '/^M:.*@/{s/^M:.*@\([^>]*\)>.*/\1/p;q}' "$TOP/MAINTAINERS")
[ -n "$domain" ] || die "MAINTAINERS: no M: line with an address"
msgid() {
	printf '<filemap-noref-%s-%s-%02d@%s>' "$(base_field NAME)" "$ver" "$1" "$domain"
}

out=$BUILD/series.mbox
mkdir -p "$BUILD"
: >"$out"
n=0
for p in 0000-cover-letter.patch $(series_patches); do
	f=$SDIR/patches/$p
	[ -f "$f" ] || die "$SERIES/series names $f, which does not exist"
	{
		head -n 1 "$f"
		echo "Message-ID: $(msgid $n)"
		if [ $n -gt 0 ]; then
			echo "In-Reply-To: $(msgid 0)"
			echo "References: $(msgid 0)"
		fi
		tail -n +2 "$f" | awk '
			!body && /^$/ { if (h != "") print h; body = 1; print; next }
			!body && /^[ \t]/ { sub(/^[ \t]+/, " "); h = h $0; next }
			!body { if (h != "") print h; h = $0; next }
			{ print }'
		echo
	} >>"$out"
	n=$((n + 1))
done
info "$out: the cover letter and $((n - 1)) patch(es), thread $(msgid 0)"
echo "$out"
