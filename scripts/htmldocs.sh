#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# htmldocs.sh: build the kernel documentation the series touches with the
# kernel's own Sphinx setup (SPHINXDIRS per directory, Debian's
# python3-sphinx) in the base and the patched tree; fails on a Sphinx
# warning in a touched file that the base does not have. For the series
# SERIES (default the mainline), in build/NAME/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_cmd sphinx-build python3-sphinx
src=$BUILD/patched/src
out=$BUILD/docs
"$TOP/scripts/get-base.sh" >/dev/null
"$TOP/scripts/apply.sh" "$src"
docs=$(git -C "$src" diff --name-only base HEAD -- 'Documentation/*.rst')
# The directories with an index.rst that hold them, e.g. Documentation/mm.
dirs=
for d in $docs; do
	d=$(dirname "${d#Documentation/}")
	until [ -f "$src/Documentation/$d/index.rst" ]; do d=$(dirname "$d"); done
	case " $dirs " in *" $d "*) ;; *) dirs+=" $d" ;; esac
done
mkdir -p "$out"
for tree in base patched; do
	if [ $tree = base ]; then s=$BUILD/base/src; else s=$src; fi
	# From scratch: Sphinx only reports warnings for files it reads.
	rm -rf "${out:?}/$tree"
	: >"$out/$tree.log"
	for d in $dirs; do
		info "$tree: make htmldocs SPHINXDIRS=$d"
		make -s -C "$s" O="$out/$tree" SPHINXDIRS="$d" htmldocs \
			>>"$out/$tree.log" 2>&1 ||
			die "htmldocs failed in the $tree tree for $d (log: $out/$tree.log)"
	done
	# Warnings about the touched files, without line numbers.
	: >"$out/$tree.warnings"
	for f in $docs; do
		awk -v f="$f" 'index($0, f) && tolower($0) ~ /warning|error/ {
			sub(/:[0-9]+: /, ": "); print }' "$out/$tree.log" |
			sed "s|^$s/||" >>"$out/$tree.warnings"
	done
done
comm -13 <(sort -u "$out/base.warnings") <(sort -u "$out/patched.warnings") \
	>"$out/new.warnings"
echo "htmldocs (SPHINXDIRS:$dirs): $(wc -l <"$out/patched.warnings") warnings in the touched files, $(wc -l <"$out/new.warnings") new against the base"
if [ -s "$out/new.warnings" ]; then
	cat "$out/new.warnings" >&2
	exit 1
fi
