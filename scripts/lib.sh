# SPDX-License-Identifier: GPL-2.0
# Common settings for the filemap-noref scripts. Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}

die() {
	echo "error: $*" >&2
	exit 1
}

info() {
	echo "==> $*" >&2
}

# base_field NAME: print the value of NAME=... from the BASE file.
base_field() {
	sed -n "s/^$1=//p" "$TOP/BASE"
}

# need_cmd CMD PACKAGE: fail with the Debian package to install.
need_cmd() {
	command -v "$1" >/dev/null 2>&1 ||
		die "'$1' not found: install the Debian package '$2' (apt-get install $2), or run 'make deps'"
}

# The project identity (MAINTAINERS) commits the applied patches.
IDENT=$(awk '/^M:/ { sub(/^M:[[:space:]]*/, ""); print; exit }' "$TOP/MAINTAINERS")
export GIT_COMMITTER_NAME=${IDENT% <*}
export GIT_COMMITTER_EMAIL=${IDENT##*<}
GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL%>}

# series_patches: the patch files named in 'series', in order.
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$TOP/series" | grep -v '^$' || true
}

# base_worktree DIR: make DIR a work tree of the base repository at 'base',
# if it does not exist yet.
base_worktree() {
	[ -e "$1" ] && return 0
	git -C "$BUILD/base/src" worktree prune
	git -C "$BUILD/base/src" worktree add -q --detach "$(realpath -m "$1")" base
}

# am_patch DIR PATCH: git am --3way patches/PATCH in DIR; on failure abort
# and die naming the patch and the files it could not apply.
am_patch() {
	local dir=$1 p=$2 files
	[ -f "$TOP/patches/$p" ] || die "series names patches/$p, which does not exist"
	git -C "$dir" am -q --3way "$TOP/patches/$p" >"$BUILD/am.log" 2>&1 && return 0
	files=$(git -C "$dir" diff --name-only --diff-filter=U | tr '\n' ' ')
	[ -n "$files" ] || files=$(sed -n 's/^error: patch failed: \([^:]*\):.*/\1/p; s/^error: \([^:]*\): does not exist in index/\1/p' "$BUILD/am.log" | sort -u | tr '\n' ' ')
	cat "$BUILD/am.log" >&2
	git -C "$dir" am --abort
	die "patches/$p does not apply to $dir (files: ${files:-see above})"
}
