# SPDX-License-Identifier: GPL-2.0
# Common settings for the filemap-noref scripts. Sourced, not run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# SERIES: the directory (relative to TOP) that holds BASE, series and
# patches/. '.' is the mainline series; backports/6.12 is its backport.
SERIES=${SERIES:-.}
SERIES=${SERIES%/}
SDIR=$(cd "$TOP/$SERIES" 2>/dev/null && pwd) ||
	{ echo "error: SERIES=$SERIES: no such directory under $TOP" >&2; exit 1; }
[ -f "$SDIR/BASE" ] ||
	{ echo "error: SERIES=$SERIES: $SDIR/BASE missing" >&2; exit 1; }

die() {
	echo "error: $*" >&2
	exit 1
}

info() {
	echo "==> $*" >&2
}

# base_field NAME: print the value of NAME=... from the series' BASE file.
base_field() {
	sed -n "s/^$1=//p" "$SDIR/BASE"
}

# Each series builds in its own directory: build/<NAME from BASE>.
BUILD=${BUILD:-$TOP/build/$(base_field NAME)}

# need_cmd CMD PACKAGE: fail with the Debian package to install.
need_cmd() {
	command -v "$1" >/dev/null 2>&1 ||
		die "'$1' not found: install the Debian package '$2' (apt-get install $2), or run 'make deps'"
}

# debian_mirror ARCHIVE: print the mirror that the machine's apt sources
# name for ARCHIVE (debian, debian-security).
debian_mirror() {
	local f uri
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		uri=$(awk -v a="$1" '{ for (i = 1; i <= NF; i++)
			if ($i ~ "^[a-z]+://.*/" a "/?$") { sub("/$", "", $i); print $i; exit } }' "$f")
		if [ -n "$uri" ]; then
			echo "$uri"
			return
		fi
	done
	die "no '$1' mirror in /etc/apt/sources.list*"
}

# deb_fetch SUITE ARCHIVE PACKAGE [VERSION]: download the Debian package
# PACKAGE (VERSION, or the suite's newest) from the mirror that the
# machine's apt sources name for ARCHIVE (debian, debian-security), with a
# private apt setup in $BUILD/apt-SUITE (the machine's own is untouched);
# print the .deb's path. A .deb already there is used again.
deb_fetch() {
	local suite=$1 archive=$2 pkg=$3 ver=${4:-} uri apt log deb
	local -a opts
	need_cmd apt-get apt
	uri=$(debian_mirror "$archive") || die "cannot fetch $pkg"
	apt=$BUILD/apt-$suite
	mkdir -p "$apt/lists/partial" "$apt/deb"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main" >"$apt/sources.list"
	opts=(-o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts=-
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache::archives="$apt/deb")
	deb=$(find "$apt/deb" -maxdepth 1 -name "${pkg}_${ver//:/%3a}${ver:+_}*.deb" | sort -V | tail -n 1)
	if [ -z "$deb" ]; then
		info "fetching $pkg${ver:+=$ver} from $uri $suite"
		log=$apt/apt.log
		if ! { apt-get "${opts[@]}" update &&
			(cd "$apt/deb" && apt-get "${opts[@]}" download "$pkg${ver:+=$ver}"); } >"$log" 2>&1; then
			tail -n 5 "$log" >&2
			die "cannot fetch Debian package $pkg${ver:+=$ver} from $uri $suite (log: $log)"
		fi
		deb=$(find "$apt/deb" -maxdepth 1 -name "${pkg}_${ver//:/%3a}${ver:+_}*.deb" | sort -V | tail -n 1)
		[ -n "$deb" ] || die "apt-get download gave no ${pkg}_${ver}*.deb in $apt/deb"
	fi
	echo "$deb"
}

# ccache_cc CC: CC, behind ccache if there is one, with the
# settings that let ccache hit across work trees under $BUILD (the fresh
# clones of .ci/run included), in KCC_CCACHE: not printed, as the
# exports must reach the caller (no $( ) around it).
ccache_cc() {
	KCC_CCACHE=$1
	if command -v ccache >/dev/null 2>&1; then
		KCC_CCACHE="ccache $1"
		export CCACHE_BASEDIR=$BUILD CCACHE_NOHASHDIR=1
	fi
}

# find_clang: print the newest of clang-19 ... clang-14, clang found here;
# nothing if there is none.
find_clang() {
	local c
	for c in clang-19 clang-18 clang-17 clang-16 clang-15 clang-14 clang; do
		if command -v "$c" >/dev/null 2>&1; then
			echo "$c"
			return
		fi
	done
}

# version_ge A B: version A is B or newer.
version_ge() {
	[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$2" ]
}

# The project identity (MAINTAINERS) commits the applied patches.
IDENT=$(awk '/^M:/ { sub(/^M:[[:space:]]*/, ""); print; exit }' "$TOP/MAINTAINERS")
export GIT_COMMITTER_NAME=${IDENT% <*}
export GIT_COMMITTER_EMAIL=${IDENT##*<}
GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL%>}

# series_patches: the patch files named in 'series', in order. Use it as
# list=$(series_patches), so that a missing 'series' stops the script.
series_patches() {
	[ -f "$SDIR/series" ] ||
		die "$SERIES/series is missing (export the series: make export SERIES=$SERIES)"
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$SDIR/series"
}

# patch_id PATCH: the patch-id of $SDIR/patches/PATCH (git patch-id
# --stable: its diff, not its changelog).
patch_id() {
	git patch-id --stable <"$SDIR/patches/$1" | cut -d' ' -f1
}

# code_hash: what results files record as the code they measured: the
# sha256 of the patch-ids of the series' patches, 16 hex digits, each
# patch's diff without its files under Documentation/ and
# tools/testing/selftests/, which no kernel runs: a test or a text
# changed leaves the figures of the kernel valid.
code_hash() {
	local p
	series_patches | while read -r p; do
		awk '/^diff --git / { skip = $3 ~ /^a\/(Documentation|tools\/testing\/selftests)\// } !skip' \
			"$SDIR/patches/$p" | git patch-id --stable | cut -d' ' -f1
	done | sha256sum | cut -c1-16
}

# recorded_id RECORD PATCH: the patch-id that make check-series wrote for
# PATCH in RECORD (results/NAME/series.txt), or nothing.
recorded_id() {
	awk -v p="$2" '!/^#/ && $2 == p { print $1 }' "$1"
}

# series_label [DIR]: "NAME (VERSION)" from the BASE file of the series
# (or of the series in DIR), e.g. "mainline (7.3-rc7)".
series_label() {
	local base=${1:-$SDIR}/BASE
	echo "$(sed -n 's/^NAME=//p' "$base") ($(sed -n 's/^VERSION=//p' "$base"))"
}

# check_guest_prep: the base, the series applied in $BUILD/patched/src, the
# check kernel in $BUILD/patched/obj-check, and the guest's programs and
# initramfs: what a script that boots the check kernel needs first.
check_guest_prep() {
	"$TOP/scripts/get-base.sh" >/dev/null
	"$TOP/scripts/apply.sh" "$BUILD/patched/src"
	"$TOP/scripts/build-kernel.sh" "$BUILD/patched/src" "$BUILD/patched/obj-check" check
	"$TOP/scripts/build-progs.sh" "$BUILD/patched/src" "$BUILD/progs"
	"$TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio.gz" "$BUILD/progs"
}

# guest_lines RESULTS: the lines of a guest's results.log that make
# check shows: TAP results, each program's "FNR-RUN" end, and the
# settings jobs/restore had to put back after one ("# FNR-RESTORED").
guest_lines() {
	awk '/^(not )?ok [0-9]+ |^FNR-RUN |^# FNR-RESTORED /' "$1"
}

# config_fragment NAME: the kernel config fragment NAME, the series' own
# ($SDIR/NAME, for a base that needs a variant) if there is one, else
# scripts/NAME.
config_fragment() {
	if [ -f "$SDIR/$1" ]; then
		echo "$SDIR/$1"
	elif [ -f "$TOP/scripts/$1" ]; then
		echo "$TOP/scripts/$1"
	else
		die "config fragment $1: neither $SERIES/$1 nor scripts/$1 exists"
	fi
}

# base_worktree DIR [REPO]: make DIR a work tree of REPO (default: the base
# repository, build/NAME/base/src) at its tag 'base', if DIR does not
# exist yet.
base_worktree() {
	local repo=${2:-$BUILD/base/src}
	git -C "$repo" rev-parse -q --verify base >/dev/null 2>&1 ||
		die "no base tree in $repo: run scripts/get-base.sh (make base)"
	[ -e "$1" ] && return 0
	git -C "$repo" worktree prune
	git -C "$repo" worktree add -q --detach "$(realpath -m "$1")" base
}

# fresh_worktree DIR [REPO]: a scratch work tree DIR of REPO (as
# base_worktree), reset to 'base' with nothing else in it.
fresh_worktree() {
	base_worktree "$@"
	if [ -d "$(git -C "$1" rev-parse --git-path rebase-apply)" ]; then
		git -C "$1" am --abort
	fi
	git -C "$1" checkout -q -f --detach base
	git -C "$1" clean -q -fdx
}

# sparse_worktree DIR REPO: a scratch work tree DIR of the repository
# REPO (a git directory) at its tag 'base' that holds only the files the
# series touches: enough for git am, a few MiB instead of 1.4 GiB.
sparse_worktree() {
	local dir=$1 repo=$2 paths
	mapfile -t paths < <(series_patches | sed "s|^|$SDIR/patches/|" | xargs cat |
		sed -n 's|^diff --git a/\(.*\) b/\(.*\)$|/\1\n/\2|p' | sort -u)
	[ ${#paths[@]} -gt 0 ] || die "$SERIES/patches: no 'diff --git' lines in the series"
	rm -rf "$dir"
	git --git-dir="$repo" worktree prune
	git --git-dir="$repo" worktree add -q --no-checkout --detach "$(realpath -m "$dir")" base
	git -C "$dir" sparse-checkout set --no-cone "${paths[@]}"
	git -C "$dir" checkout -q --detach base
}

# am_series DIR: am_patch every patch of the series onto DIR, in order;
# print how many.
am_series() {
	local p patches n=0
	patches=$(series_patches)
	for p in $patches; do
		am_patch "$1" "$p"
		n=$((n + 1))
	done
	echo "$n"
}

# am_patch DIR PATCH: git am --3way $SDIR/patches/PATCH in the work tree
# DIR (of any repository); on failure abort and die naming the patch and
# the files it could not apply.
am_patch() {
	local dir=$1 p=$2 files
	[ -f "$SDIR/patches/$p" ] || die "$SERIES/series names $SERIES/patches/$p, which does not exist"
	git -C "$dir" am -q --3way "$SDIR/patches/$p" >"$BUILD/am.log" 2>&1 && return 0
	files=$(git -C "$dir" diff --name-only --diff-filter=U | tr '\n' ' ')
	[ -n "$files" ] || files=$(sed -n 's/^error: patch failed: \([^:]*\):.*/\1/p; s/^error: \([^:]*\): does not exist in index/\1/p; s/^error: sha1 information is lacking or useless (\(.*\))\.$/\1/p' "$BUILD/am.log" | sort -u | tr '\n' ' ')
	files=${files% }
	cat "$BUILD/am.log" >&2
	git -C "$dir" am --abort
	die "$SERIES/patches/$p does not apply to $dir (files: ${files:-see above})"
}
