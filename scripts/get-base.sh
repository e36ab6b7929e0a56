#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# get-base.sh [ALSO_]: fetch the Debian linux-source .deb pinned in the
# series' BASE file, extract its kernel tarball into build/NAME/base/src
# as a git repository with one commit tagged 'base', check its tree hash
# against BASE and print the directory. With ALSO_ (the ALSO_* fields: a
# second tree the series must apply to, never built) the repository is
# kept without its files, as the bare build/NAME/also/repo.git, which it
# prints: 1.4 GiB less on disk. The .deb is fetched with a private apt
# sources list; the machine's own apt setup is not touched.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pre=${1:-}
case "$pre" in
'') dest=$BUILD/base gitdir=$BUILD/base/src/.git ;;
ALSO_) dest=$BUILD/also gitdir=$BUILD/also/repo.git ;;
*) die "usage: $0 [ALSO_]" ;;
esac
field() {
	local v
	v=$(base_field "$pre$1")
	[ -n "$v" ] || die "$SERIES/BASE has no $pre$1="
	echo "$v"
}
pkg=$(field DEB_PACKAGE)
ver=$(field DEB_VERSION)
suite=$(field APT_SUITE)
archive=$(field APT_ARCHIVE)
tarball=$(field TARBALL)
want_tree=$(field TREE)
src=$dest/src

if git --git-dir="$gitdir" rev-parse -q --verify base >/dev/null 2>&1; then
	tree=$(git --git-dir="$gitdir" rev-parse 'base^{tree}')
else
	need_cmd dpkg-deb dpkg
	deb=$(deb_fetch "$suite" "$archive" "$pkg" "$ver")
	info "extracting $tarball from $deb into $src"
	rm -rf "$dest"
	mkdir -p "$src"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./$tarball" | tar -xJ -C "$src" --strip-components=1 ||
		die "$deb has no $tarball"
	cd "$src"
	git init -q
	git config core.autocrlf false
	git config gc.auto 0
	# Every file, even those the kernel's .gitignore lists, so that the
	# tree hash describes the whole tarball.
	git add -A -f .
	GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z' \
		git -c user.name=base -c user.email=base@localhost \
		commit -q -m "Linux $(field VERSION) ($pkg $ver)"
	git tag base
	tree=$(git rev-parse 'base^{tree}')
	if [ "$pre" = ALSO_ ]; then
		cd "$dest"
		mv src/.git "$gitdir"
		git --git-dir="$gitdir" config core.bare true
		rm -rf src
	fi
fi

if [ "$want_tree" = unknown ]; then
	info "$SERIES/BASE has no ${pre}TREE yet; this tree is $tree"
elif [ "$tree" != "$want_tree" ]; then
	die "extracted tree $tree differs from $SERIES/BASE ${pre}TREE=$want_tree ($pkg $ver changed?)"
fi
if [ "$pre" = ALSO_ ]; then
	echo "$gitdir"
else
	echo "$src"
fi
