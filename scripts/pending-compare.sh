#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# pending-compare.sh: deferred frees under churn on one patched check
# kernel with different vm.rcu_free_expedite_pages settings (a number, or
# "default" for the kernel's own). Boots the bench-pending job (QEMU, 2
# vCPUs, 1 GiB) once per setting per round, the settings alternating, and
# writes OUT (a results file): per churn and setting, the average and peak
# MiB pending, the churn's MiB/s and the expedited grace periods a second,
# one value per round. Not a timed test: the figures are for changelogs.
# Usage: ROUNDS=2 scripts/pending-compare.sh OUT SETTING...
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: ROUNDS=N $0 OUT SETTING... (SETTING: pages or 'default')"
res=$(realpath -m "$1")
shift
rounds=${ROUNDS:-2}
obj=$BUILD/patched/obj-check
out=$BUILD/pending-compare
check_guest_prep

rm -rf "$out"
mkdir -p "$out"
for r in $(seq "$rounds"); do
	for s in "$@"; do
		case "$s" in
		default) append= ;;
		*[!0-9]*|'') die "setting '$s': a number of pages or 'default'" ;;
		*) append="sysctl.vm.rcu_free_expedite_pages=$s" ;;
		esac
		dir=$out/$s-$r
		info "round $r, vm.rcu_free_expedite_pages=$s (console: $dir/console.log)"
		APPEND="$append" "$TOP/scripts/run-guest.sh" "$obj/arch/x86/boot/bzImage" \
			"$BUILD/initramfs.cpio.gz" bench-pending "$dir" ||
			die "round $r, setting $s: the guest did not end cleanly (see $dir/console.log)"
		grep -q '^FNR-BENCH kind=pending fs=truncate ' "$dir/results.log" ||
			die "round $r, setting $s: the job did not finish (see $dir/results.log)"
		sed -n "s/^FNR-BENCH /$s $r /p" "$dir/results.log" >>"$out/raw.txt"
	done
done
{
	echo "# scripts/pending-compare.sh: make bench's pending job (scripts/guest/jobs/bench-pending) on the"
	echo "# patched check kernel, QEMU $(cat "$BUILD/accel" 2>/dev/null || echo tcg), 2 vCPUs, 1 GiB; $(series_label), $(date -u +%F)"
	echo "# code: $(code_hash) (sha256 of the patch-ids of $SERIES/patches, kernel code only)"
	echo "# settings of vm.rcu_free_expedite_pages: $*, alternating, $rounds rounds; values per round separated by '|'"
	echo "# churn: pending_bench -k KIND -P procs, 4 s each: avg and peak MiB pending (sampled every 2 ms),"
	echo "# churn MiB/s, expedited grace periods a second; truncate: one 256 MiB hot file, peak MiB, ms until"
	echo "# nothing is pending, expedited grace periods"
	awk -f "$TOP/scripts/pending-table.awk" "$out/raw.txt"
} >"$res"
cat "$res"
