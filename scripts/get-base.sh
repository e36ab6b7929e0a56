#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Extract the pinned Debian kernel source into build/base/src as a git
# repository with one commit tagged 'base', and check its tree hash
# against the BASE file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkg=$(base_field DEB_PACKAGE)
ver=$(base_field DEB_VERSION)
tarball=$(base_field TARBALL)
want_tree=$(base_field TREE)
src=$BUILD/base/src
mkdir -p "$BUILD"

have=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
if [ "$have" != "$ver" ]; then
	info "installing $pkg=$ver (found: '${have:-none}')"
	if ! apt-get install -y --no-install-recommends "$pkg=$ver" >"$BUILD/apt-$pkg.log" 2>&1; then
		tail -n 5 "$BUILD/apt-$pkg.log" >&2
		die "cannot install Debian package $pkg=$ver (is 'apt-get update' done, are you root?)"
	fi
fi
[ -f "$tarball" ] || die "$tarball missing although $pkg=$ver is installed"

if git -C "$src" rev-parse -q --verify base >/dev/null 2>&1; then
	tree=$(git -C "$src" rev-parse 'base^{tree}')
else
	info "extracting $tarball into $src"
	rm -rf "$BUILD/base"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	cd "$src"
	git init -q
	git config core.autocrlf false
	git config gc.auto 0
	# Every file, even those the kernel's .gitignore lists, so that the
	# tree hash describes the whole tarball.
	git add -A -f .
	GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z' \
		git -c user.name=base -c user.email=base@localhost \
		commit -q -m "Linux $(base_field VERSION) ($pkg $ver)"
	git tag base
	tree=$(git rev-parse 'base^{tree}')
fi

if [ "$want_tree" = unknown ]; then
	info "BASE has no tree hash yet; this tree is $tree"
elif [ "$tree" != "$want_tree" ]; then
	die "extracted tree $tree differs from BASE TREE=$want_tree ($pkg $ver changed?)"
fi
echo "$src"
