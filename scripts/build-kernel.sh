#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build-kernel.sh SRC OBJ FLAVOR: configure (tinyconfig + fragments) and
# build a guest bzImage out of tree. FLAVOR 'bench' is tinyconfig +
# scripts/guest.config + scripts/bench.config, the same for the base and
# the patched kernel (make bench, make profile);
# 'bisect' (make check-series: a build after every patch) is tinyconfig +
# scripts/bisect.config alone, what the series' code needs and no more;
# 'check' adds the selftests' config (CONFIG_DEBUG_VM for the control
# switch), and with DEBUG=1 scripts/debug.config; 'flagroom' and 'i386'
# are check plus scripts/flagroom.config (every option that takes
# page->flags bits) or scripts/i386.config (with KARCH=i386); 'xfstests'
# is check plus scripts/xfstests.config (make xfstests), 'numa' check
# plus scripts/numa.config (make check's NUMA boot), 'kcsan' and
# 'kmsan' check plus scripts/kcsan.config or scripts/kmsan.config (make
# check-kcsan, make check-kmsan, which sets KCC=clang-NN); 'arm64'
# (with KARCH=arm64, cross-built with Debian's gcc-aarch64-linux-gnu) is
# the selftests' config plus scripts/arm64.config; 'uml' (with KARCH=um:
# User-Mode Linux on x86_64, make scale) is tinyconfig +
# scripts/uml.config alone, built with x86's SMP barriers
# (scripts/scale/x86-barriers.h, unless UML_BARRIERS=uml), plus
# Module.symvers for the bench module. On a tree with the series, 64-bit,
# scripts/series.config turns its option on; for 'bisect', from the patch
# that adds the KUnit test, scripts/kunit.config builds it too.
# Each scripts/NAME.config gives way to SERIES/NAME.config where a series
# has its own (config_fragment in lib.sh). KCC=clang builds with clang.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || die "usage: $0 SRC OBJ bisect|bench|check|flagroom|i386|xfstests|kcsan|kmsan|arm64|uml"
src=$(realpath "$1")
mkdir -p "$2"
obj=$(realpath "$2")
arch=${KARCH:-x86_64}

frags=("$(config_fragment guest.config)")
image=arch/x86/boot/bzImage
cross=
sub=
case "$3" in
bisect) frags=("$(config_fragment bisect.config)") ;;
bench) frags+=("$(config_fragment bench.config)") ;;
check)
	frags+=("$TOP/tools/testing/selftests/filemap-noref/config")
	if [ "${DEBUG:-0}" = 1 ]; then
		frags+=("$(config_fragment debug.config)")
	fi
	;;
flagroom | i386 | xfstests | kcsan | kmsan | numa)
	frags+=("$TOP/tools/testing/selftests/filemap-noref/config"
		"$(config_fragment "$3.config")")
	;;
arm64)
	# arm64.config replaces the x86 guest.config.
	[ "$arch" = arm64 ] || die "flavor arm64 needs KARCH=arm64"
	frags=("$TOP/tools/testing/selftests/filemap-noref/config"
		"$(config_fragment arm64.config)")
	image=arch/arm64/boot/Image
	cross=aarch64-linux-gnu-
	need_cmd ${cross}gcc gcc-aarch64-linux-gnu
	;;
uml)
	[ "$arch" = um ] || die "flavor uml needs KARCH=um"
	frags=("$(config_fragment uml.config)")
	image=linux
	sub=x86_64
	if [ "${UML_BARRIERS:-x86}" != uml ]; then
		export KCFLAGS="-include $TOP/scripts/scale/x86-barriers.h"
	fi
	;;
*) die "unknown kernel flavor '$3' (bisect, bench, check, flagroom, i386, xfstests, kcsan, kmsan, numa, arm64 or uml)" ;;
esac

if [ "$3" != i386 ] && grep -q '^config PAGECACHE_RCU_FREE$' "$src/mm/Kconfig"; then
	frags+=("$(config_fragment series.config)")
fi
# The selftests' config asks for the series' option, which a tree without
# the series (the base kernel of the OOM edge) does not have: no error
# for that one option there.
if ! grep -q '^config PAGECACHE_RCU_FREE$' "$src/mm/Kconfig"; then
	echo '# CONFIG_PAGECACHE_RCU_FREE is not set' >"$obj/no-series.config"
	frags+=("$obj/no-series.config")
fi
# The per-patch builds compile the series' KUnit test too (not run there:
# make check-kunit runs it), from the patch that adds it on.
if [ "$3" = bisect ] && grep -q '^config FILEMAP_NOREF_KUNIT_TEST$' "$src/mm/Kconfig"; then
	frags+=("$(config_fragment kunit.config)")
fi

ccache_cc "${KCC:-${cross}gcc}"
cc=$KCC_CCACHE
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026'
export KBUILD_BUILD_USER=filemap-noref KBUILD_BUILD_HOST=guest
kmake() {
	make -s -C "$src" O="$obj" ARCH="$arch" ${sub:+SUBARCH=$sub} CROSS_COMPILE="$cross" CC="$cc" HOSTCC=gcc "$@"
}

for f in flex:flex bison:bison bc:bc; do
	need_cmd "${f%%:*}" "${f##*:}"
done
[ -f /usr/include/libelf.h ] || die "libelf.h not found: install the Debian package 'libelf-dev'"

info "configuring $obj (tinyconfig + ${frags[*]##*/})"
kmake tinyconfig >/dev/null
(cd "$obj" && ARCH=$arch "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" \
	"$obj/.config" "${frags[@]}" >/dev/null)
kmake olddefconfig >/dev/null

# Every option the fragments ask for must have survived olddefconfig; the
# last fragment that sets an option wins, as in merge_config.sh.
bad=0
while read -r line from; do
	grep -qxF "$line" "$obj/.config" && continue
	echo "error: $line (from ${from#"$TOP"/}) was dropped by Kconfig" >&2
	bad=1
done < <(awk '/^CONFIG_/ { k = $0; sub(/=.*/, "", k); v[k] = $0 " " FILENAME }
	/^# CONFIG_.* is not set$/ { delete v[$2] }
	END { for (k in v) print v[k] }' "${frags[@]}")
[ $bad = 0 ] || die "the kernel config does not have what the fragments need"

info "building $obj ($(nproc) jobs, CC='$cc')"
start=$(date +%s)
if ! kmake -j"$(nproc)" "${image##*/}" >"$obj/build.log" 2>&1; then
	grep -E 'error|Error' "$obj/build.log" | head -n 20 >&2
	tail -n 20 "$obj/build.log" >&2
	die "kernel build failed in $src (log: $obj/build.log)"
fi
if [ "$3" = uml ] && ! kmake -j"$(nproc)" modules >>"$obj/build.log" 2>&1; then
	tail -n 20 "$obj/build.log" >&2
	die "make modules (Module.symvers for the bench module) failed in $obj (log: $obj/build.log)"
fi
info "built $obj/$image in $(( $(date +%s) - start )) s"
