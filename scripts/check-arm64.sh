#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-arm64.sh: the series on arm64. Cross-builds the patched kernel
# (KARCH=arm64, tinyconfig + the selftests' config + scripts/arm64.config,
# with MTE), boots it on QEMU's virt machine under TCG (-cpu max,
# mte=on), prints the page-flags layout and runs the selftests, static
# arm64 programs, on ext4, xfs, tmpfs and tmpfs with huge=always under
# init_on_free=1 (cma=64M, cgroup v2, CPU hotplug). The
# feature is on there (64-bit): the fast path, the deferred frees and
# the architecture's flush_dcache_page() branch of the fast path are
# exercised. Ends with "check-arm64: N passed, N failed, N skipped".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

export KARCH=arm64
src=$BUILD/patched/src
obj=$BUILD/patched/obj-arm64
out=$BUILD/arm64
"$TOP/scripts/get-base.sh" >/dev/null
"$TOP/scripts/apply.sh" "$src"
"$TOP/scripts/build-kernel.sh" "$src" "$obj" arm64
fail=0
if ! grep -q '^CONFIG_PAGECACHE_RCU_FREE=y' "$obj/.config"; then
	echo "FAILED: arm64: CONFIG_PAGECACHE_RCU_FREE is not set" >&2
	fail=1
fi
if grep -n 'warning:.*PG_rcu_free' "$obj/build.log"; then
	echo "FAILED: arm64: PG_rcu_free costs page->flags room (warning above)" >&2
	fail=1
fi
tests=$(sed -n 's/^TEST_GEN_PROGS := //p' "$TOP/tools/testing/selftests/filemap-noref/Makefile")
# shellcheck disable=SC2086 # one argument per test
"$TOP/scripts/mkinitramfs-static.sh" arm64 "$BUILD/initramfs-arm64.cpio.gz" "$src" $tests
mkdir -p "$out"
info "guest: arm64 kernel, the selftests (console: $out/console.log)"
start=$(date +%s)
APPEND="init_on_free=1 cma=64M mminit_loglevel=4 loglevel=8 fnr.fs=ext4,xfs,tmpfs,hugetmpfs -- $tests" \
	"$TOP/scripts/run-guest.sh" "$obj/arch/arm64/boot/Image" \
	"$BUILD/initramfs-arm64.cpio.gz" static "$out" || fail=1
info "arm64 guest: $(( $(date +%s) - start )) s"
if ! layout=$(grep -o 'pageflags_layout_widths.*' "$out/console.log"); then
	layout="no pageflags_layout_widths line on the console"
	fail=1
fi
echo "arm64: $layout"
touch "$out/results.log"
guest_lines "$out/results.log"
read -r p f s < <(awk -f "$TOP/scripts/tap-summary.awk" "$out/results.log")
[ "$p" -gt 0 ] || fail=1
f=$((f + fail))
echo "check-arm64: $p passed, $f failed, $s skipped"
[ $f = 0 ]
