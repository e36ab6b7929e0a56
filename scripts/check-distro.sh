#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-distro.sh: the series under a distribution's own kernel config.
# Fetches Debian's linux-config-MAJOR (the amd64 config of its kernel
# packages) from the series' APT_SUITE, sets CONFIG_PAGECACHE_RCU_FREE=y
# on it (olddefconfig) and, for the base and the patched tree:
#  - prints the page->flags layout as mm_init.c's
#    mminit_verify_pageflags_layout() would (a probe module built against
#    the tree, scripts/distro/), and the
#    series' #warning from mm/mm_init.c if the flag pushes LAST_CPUPID out
#    of page->flags or takes an MGLRU tier bit;
#  - compiles mm/ and every other .c file the series touches (patched).
# Writes build/NAME/distro/report.txt (results/NAME/distro.txt once
# copied there for the posted version). No full kernel build: about ten
# minutes on 2 CPUs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

version=$(base_field VERSION)
major=$(echo "$version" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
pkg=linux-config-$major
flavor=amd64_none_amd64
out=$BUILD/distro
mkdir -p "$out"
need_cmd dpkg-deb dpkg
need_cmd xz xz-utils
need_cmd strings binutils
deb=$(deb_fetch "$(base_field APT_SUITE)" "$(base_field APT_ARCHIVE)" "$pkg")
debver=$(dpkg-deb -f "$deb" Version)
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg/config.$flavor.xz" | xz -d >"$out/debian.config" ||
	die "$deb has no usr/src/$pkg/config.$flavor.xz"

"$TOP/scripts/get-base.sh" >/dev/null
"$TOP/scripts/apply.sh" "$BUILD/patched/src"
report=$out/report.txt
echo "# make check-distro, $(series_label): Debian's $pkg $debver, config.$flavor" >"$report"

ccache_cc gcc
cc=$KCC_CCACHE
for k in base patched; do
	src=$BUILD/$k/src
	obj=$BUILD/$k/obj-distro
	mkdir -p "$obj"
	kmake() {
		make -s -C "$src" O="$obj" CC="$cc" HOSTCC=gcc -j"$(nproc)" "$@"
	}
	cp "$out/debian.config" "$obj/.config"
	# No debug info, module signing key or BTF tool is needed to compile
	# objects (and debug info costs time).
	"$src/scripts/config" --file "$obj/.config" --disable DEBUG_INFO_BTF \
		--enable DEBUG_INFO_NONE --disable DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT \
		--disable DEBUG_INFO_DWARF4 --disable DEBUG_INFO_DWARF5 \
		--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
		--disable MODULE_SIG_ALL
	if [ $k = patched ]; then
		"$src/scripts/config" --file "$obj/.config" --enable PAGECACHE_RCU_FREE
	fi
	kmake olddefconfig >/dev/null
	if [ $k = patched ]; then
		grep -qx 'CONFIG_PAGECACHE_RCU_FREE=y' "$obj/.config" ||
			die "olddefconfig dropped CONFIG_PAGECACHE_RCU_FREE=y from Debian's config ($obj/.config)"
	fi
	info "$k: make modules_prepare with Debian's config ($obj)"
	log=$obj/distro.log
	kmake modules_prepare >"$log" 2>&1 || { tail -n 20 "$log" >&2; die "$k: make modules_prepare failed (log: $log)"; }
	# The layout, from a probe module built against this tree.
	rm -rf "$obj/fnr-probe"
	cp -r "$TOP/scripts/distro" "$obj/fnr-probe"
	kmake M="$obj/fnr-probe" KBUILD_MODPOST_WARN=1 modules >>"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "$k: the layout probe did not build (log: $log)"; }
	layout=$(strings -a "$obj/fnr-probe/fnr_layout.o" | sed -n 's/^->//p' | paste -sd ' ')
	[ -n "$layout" ] || die "$k: no layout in the probe's $obj/fnr-probe/fnr_layout.o"
	printf '  page->flags, %-8s %s\n' "$k:" "$layout" >>"$report"
	[ $k = patched ] || continue
	# mm/ whole (the headers the series changes matter there), then the
	# other .c files it touches; the series' #warning comes from mm_init.c.
	files=$(git -C "$src" diff --name-only base HEAD -- '*.c' | grep -v -e '^tools/' -e '^mm/' || :)
	nfiles=$(echo $files | wc -w)
	info "$k: compiling mm/ and $nfiles more file(s) the series touches"
	targets=(mm/)
	for f in $files; do
		targets+=("${f%.c}.o")
	done
	kmake "${targets[@]}" >"$obj/compile.log" 2>&1 ||
		{ grep -E 'error' "$obj/compile.log" | head -n 20 >&2; die "$k: compiling under Debian's config failed (log: $obj/compile.log)"; }
	if grep -q '#warning' "$obj/compile.log"; then
		warn="the build warns $(grep -o '#warning "[^"]*"' "$obj/compile.log" | sort -u |
			sed 's/^#warning //' | paste -sd ';')"
	else
		warn="no #warning"
	fi
	echo "  CONFIG_PAGECACHE_RCU_FREE=y kept by olddefconfig; $warn;" >>"$report"
	echo "  mm/ and the $nfiles other .c files the series touches compile" >>"$report"
done
cat "$report"
