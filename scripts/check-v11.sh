#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-v11.sh: the live reproducer of RFC v11's copy past the folio
# (make check-v11). The patched check kernel with v11's order step put
# back (scripts/v11/order.diff, in build/NAME/patched/obj-v11) and the
# kernel as it is boot in turn (QEMU TCG) and run reuse_order on tmpfs:
# with v11's step it must read bytes from beyond the folio, without them
# none, and both runs must show the race (races > 0). Writes
# results/NAME/reuse.txt. Mainline only: 6.12's tmpfs has no folios below
# PMD size, which the test needs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=$BUILD/patched/src
obj=$BUILD/patched/obj-check
v11=$BUILD/patched/obj-v11
out=$BUILD/check-v11
diff=$TOP/scripts/v11/order.diff
"$TOP/scripts/get-base.sh" >/dev/null
"$TOP/scripts/apply.sh" "$src"
"$TOP/scripts/build-kernel.sh" "$src" "$obj" check
# An out-of-tree build beside obj-check: copied from it, so that only
# mm/filemap.c is built again.
[ -d "$v11" ] || cp -a "$obj" "$v11"
git -C "$src" apply --check "$diff" ||
	die "scripts/v11/order.diff does not apply to $src"
git -C "$src" apply "$diff"
trap 'git -C "$src" apply -R "$diff"' EXIT
"$TOP/scripts/build-kernel.sh" "$src" "$v11" check
git -C "$src" apply -R "$diff"
trap - EXIT
"$TOP/scripts/build-progs.sh" "$src" "$BUILD/progs"
"$TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio.gz" "$BUILD/progs"

rm -rf "$out"
mkdir -p "$out"
fail=0
for k in v11 v12; do
	image=$obj/arch/x86/boot/bzImage
	[ $k = v12 ] || image=$v11/arch/x86/boot/bzImage
	info "guest: reuse_order on tmpfs, $k's order step (console: $out/$k/console.log)"
	APPEND="init_on_free=1 cma=64M fnr.only=reuse_order fnr.fs=tmpfs" \
		"$TOP/scripts/run-guest.sh" "$image" "$BUILD/initramfs.cpio.gz" only "$out/$k" ||
		die "the $k guest did not end cleanly (see $out/$k/console.log)"
	grep -E '^(ok|not ok) |^# races:|first bad read|times the new folio| attempts, ' "$out/$k/results.log" |
		sed "s/^/$k: /" >"$out/$k.txt"
	cat "$out/$k.txt"
	races=$(sed -n 's/.*# races: \([0-9]*\).*/\1/p' "$out/$k.txt")
	bad=$(sed -n 's/.*bad reads: \([0-9]*\).*/\1/p' "$out/$k.txt")
	if [ "${races:-0}" = 0 ]; then
		echo "error: $k: the race did not happen (no '# races: N' above 0)" >&2
		fail=1
	elif [ $k = v11 ] && [ "${bad:-0}" = 0 ]; then
		echo "error: v11: no bad read in $races races: the test misses the bug" >&2
		fail=1
	elif [ $k = v12 ] && [ "${bad:-0}" != 0 ]; then
		echo "error: v12: $bad bad reads" >&2
		fail=1
	fi
done
{
	echo "# make check-v11 (scripts/check-v11.sh): reuse_order on tmpfs, QEMU TCG, 2 vCPUs, init_on_free=1, $(base_field VERSION), $(date -u +%F)"
	echo "# v11: the series with scripts/v11/order.diff (v11's order step); v12: the series"
	cat "$out/v11.txt" "$out/v12.txt"
} >"$TOP/results/$(base_field NAME)/reuse.txt"
[ $fail = 0 ] || die "check-v11: see above"
echo "check-v11 $(series_label): v11 fails, v12 passes (results/$(base_field NAME)/reuse.txt)"
