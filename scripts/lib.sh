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
IDENT=$(sed -n 's/^M:[[:space:]]*//p' "$TOP/MAINTAINERS" | head -n 1)
export GIT_COMMITTER_NAME=${IDENT% <*}
export GIT_COMMITTER_EMAIL=${IDENT##*<}
GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL%>}

# series_patches: the patch files named in 'series', in order.
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$TOP/series" | grep -v '^$' || true
}
