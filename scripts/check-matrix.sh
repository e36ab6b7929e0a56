#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-matrix.sh: the builds 'make check' does not do.
#  - x86_64 'flagroom' (NUMA + MAXSMP + NUMA_BALANCING + LRU_GEN +
#    ZONE_DEVICE + ...): builds, boots, and the page-flags layout it prints
#    keeps LAST_CPUPID in page->flags and MGLRU's full tier bits.
#  - i386: builds without PG_rcu_free (CONFIG_PAGECACHE_RCU_FREE=n), boots,
#    and passes read_semantics and evict_race on ext4, xfs and tmpfs.
# For the series SERIES (default the mainline), in build/NAME/. The config
# fragments flagroom.config and i386.config may need a variant per base
# later (options renamed or gone): build-kernel.sh takes SERIES/NAME.config
# over scripts/NAME.config where one exists.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=$BUILD/patched/src
out=$BUILD/matrix
"$TOP/scripts/get-base.sh" >/dev/null
"$TOP/scripts/apply.sh" "$src"
mkdir -p "$out"
fail=0
# The result lines, also in $out/summary.txt: copied to
# results/NAME/matrix.txt, the cover letter's "@figures lines".
summary=$out/summary.txt
echo "# check-matrix $(base_field VERSION)" >"$summary"
say() {
	echo "$*" | tee -a "$summary"
}

# x86_64 with every option that takes page->flags bits.
"$TOP/scripts/build-kernel.sh" "$src" "$BUILD/patched/obj-flagroom" flagroom
"$TOP/scripts/build-progs.sh" "$src" "$BUILD/progs"
"$TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio.gz" "$BUILD/progs"
info "guest: flagroom kernel, page-flags layout (console: $out/flagroom/console.log)"
APPEND="mminit_loglevel=4 loglevel=8" "$TOP/scripts/run-guest.sh" \
	"$BUILD/patched/obj-flagroom/arch/x86/boot/bzImage" \
	"$BUILD/initramfs.cpio.gz" probe "$out/flagroom" || fail=1
if grep -n 'warning:.*PG_rcu_free' "$BUILD/patched/obj-flagroom/build.log"; then
	echo "FAILED: flagroom: PG_rcu_free costs page->flags room (warning above)" >&2
	fail=1
fi
if ! layout=$(grep -o 'pageflags_layout_widths.*' "$out/flagroom/console.log"); then
	layout="no pageflags_layout_widths line on the console"
fi
say "x86_64 flagroom (NUMA, MAXSMP, NUMA_BALANCING, LRU_GEN, ZONE_DEVICE...): $layout"
# "Section 0 Node 10 Zone 3 Lastcpupid 21 Kasantag 0 Gen 3 Tier 2 Flags 25"
if ! awk '{ for (i = 1; i < NF; i++) w[$i] = $(i + 1) }
	END { exit !(w["Lastcpupid"] > 0 && w["Tier"] == 2) }' <<<"$layout"; then
	echo "FAILED: flagroom: LAST_CPUPID left page->flags or MGLRU lost tier bits" >&2
	fail=1
fi

# i386: no PG_rcu_free, no fast path; the tests must pass all the same.
KARCH=i386 "$TOP/scripts/build-kernel.sh" "$src" "$BUILD/patched/obj-i386" i386
if grep -q '^CONFIG_PAGECACHE_RCU_FREE=y' "$BUILD/patched/obj-i386/.config"; then
	echo "FAILED: i386 has CONFIG_PAGECACHE_RCU_FREE" >&2
	fail=1
fi
"$TOP/scripts/mkinitramfs-static.sh" i386 "$BUILD/initramfs32.cpio.gz" "$src" \
	read_semantics evict_race
info "guest: i386 kernel, read_semantics and evict_race (console: $out/i386/console.log)"
APPEND="-- read_semantics evict_race" "$TOP/scripts/run-guest.sh" \
	"$BUILD/patched/obj-i386/arch/x86/boot/bzImage" \
	"$BUILD/initramfs32.cpio.gz" i386 "$out/i386" || fail=1
touch "$out/i386/results.log"
guest_lines "$out/i386/results.log"
read -r p f s < <(awk -f "$TOP/scripts/tap-summary.awk" "$out/i386/results.log")
[ "$p" -gt 0 ] && [ "$f" = 0 ] || fail=1
grep -q ' rc=[1-9]' "$out/i386/results.log" && fail=1
say "i386 (HIGHMEM, no PG_rcu_free): read_semantics and evict_race $p passed, $f failed, $s skipped"
[ $fail = 0 ]
