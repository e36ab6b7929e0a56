#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# get-sparse.sh SRC: print a sparse that the kernel tree SRC accepts (its
# scripts/checker-valid.sh; without one, any sparse). Debian 12's sparse
# 0.6.4 is too old for 7.3, which needs __typeof_unqual__ (6.14 on). Then
# build Debian sid's sparse, from its upstream tarball fetched with a
# private apt sources list, into build/NAME/sparse: its Debian patches only
# choose gcc-16 and the linker flags for the package. 'make sparse' builds
# in seconds and needs only a C compiler. Its version is in
# build/NAME/sparse/version.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || die "usage: $0 KERNEL_SRC"
valid() {
	[ -x "$(command -v "$1")" ] || return 1
	[ -f "$src/scripts/checker-valid.sh" ] || return 0
	[ "$(sh "$src/scripts/checker-valid.sh" "$1")" = 1 ]
}
src=$1
if valid sparse; then
	command -v sparse
	exit 0
fi
dir=$BUILD/sparse
if ! valid "$dir/sparse" || [ ! -f "$dir/version" ]; then
	need_cmd apt-get apt
	info "sparse $(sparse --version 2>/dev/null || echo '(none)') fails $src/scripts/checker-valid.sh: building Debian sid's"
	rm -rf "$dir"
	mkdir -p "$dir/lists/partial" "$dir/pkg"
	mirror=$(debian_mirror debian)
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror sid main" \
		>"$dir/sources.list"
	opts=(-o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=-
		-o Dir::State::Lists="$dir/lists")
	if ! { apt-get "${opts[@]}" update &&
		(cd "$dir/pkg" && apt-get "${opts[@]}" source --download-only sparse); } \
		>"$dir/apt.log" 2>&1; then
		tail -n 5 "$dir/apt.log" >&2
		die "cannot fetch Debian sid's sparse source (log: $dir/apt.log)"
	fi
	orig=$(find "$dir/pkg" -maxdepth 1 -name 'sparse_*.orig.tar.*' ! -name '*.asc')
	[ -n "$orig" ] || die "no sparse_*.orig.tar.* in $dir/pkg"
	mkdir "$dir/src"
	tar -xf "$orig" -C "$dir/src" --strip-components=1
	if ! make -C "$dir/src" -j"$(nproc)" sparse >"$dir/build.log" 2>&1; then
		tail -n 10 "$dir/build.log" >&2
		die "sparse did not build (log: $dir/build.log)"
	fi
	cp "$dir/src/sparse" "$dir/sparse"
	# sparse_0.6.5~rc1.orig.tar.gz -> 0.6.5~rc1 (--version says 0.6.4)
	v=${orig##*/sparse_}
	echo "${v%.orig.tar.*} (Debian sid's source)" >"$dir/version"
	valid "$dir/sparse" ||
		die "Debian sid's sparse ($orig) fails $src/scripts/checker-valid.sh too"
fi
echo "$dir/sparse"
