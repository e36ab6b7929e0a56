#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-figures.sh: the exported cover letter (SERIES/patches/0000-*)
# carries the figures its results files give today: its text must be what
# scripts/cover-body.sh makes of the cover text now. Fails, naming the
# first line that differs, when a table was edited by hand or a results
# file changed without 'make export'.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ "$SERIES" = . ]; then
	cover=$TOP/Documentation/cover-letter.txt
else
	cover=$SDIR/cover-letter.txt
fi
letter=$SDIR/patches/0000-cover-letter.patch
[ -f "$letter" ] || die "$letter is missing (make export SERIES=$SERIES)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$TOP/scripts/tested-report.sh" "$cover" check
# A results file that records the code it measured ('# code:', see
# code_hash) must have measured this series: stale figures fail here.
for f in $(sed -n 's/^@figures scale //p' "$cover"); do
	got=$(sed -n 's/^# code: \([0-9a-f]*\).*/\1/p' "$TOP/$f")
	[ -n "$got" ] || die "$f records no '# code:' line: its figures are of unknown code; run make scale again and copy its results.txt there"
	[ "$got" = "$(code_hash)" ] ||
		die "$f measured code $got, but $SERIES/patches is $(code_hash) now: run make scale again and copy its results.txt to $f"
done
"$TOP/scripts/cover-body.sh" "$cover" >"$tmp/body"
# The text starts after the mail headers' blank line; as many lines as
# the body has (no head(1): awk would die of SIGPIPE under pipefail).
awk -v n="$(wc -l <"$tmp/body")" 'body && c++ < n { print } /^$/ && !body { body = 1 }' \
	"$letter" >"$tmp/letter"
if ! diff -u "$tmp/body" "$tmp/letter" >"$tmp/diff"; then
	head -n 20 "$tmp/diff" >&2
	die "${letter#"$TOP"/} differs from ${cover#"$TOP"/} with its results files (+: the letter); run make export SERIES=$SERIES"
fi
info "$(series_label): the cover letter's text and figures match ${cover#"$TOP"/} and its results files"
