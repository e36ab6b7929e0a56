#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench.sh: build the base and the patched kernel (same config), boot each,
# and measure:
#  - icount: one vCPU under -icount shift=0,sleep=off, where guest time
#    counts instructions; instructions per read, deterministic;
#  - contention: all host CPUs as vCPUs, all threads on one file (same) or
#    one file each (sep); ROUNDS alternating base/patched boots, median;
#  - pending: freed memory waiting for a grace period under churn, and the
#    churn throughput; PENDING_ROUNDS alternating boots, median;
#  - wis: will-it-scale's pread1 (one file per process) and pread2 (one
#    shared file), 4 KiB reads, processes = vCPUs, on tmpfs and ext4;
#    WIS_ROUNDS alternating boots (default 3), median and range. The
#    source is WIS_SRC (a will-it-scale checkout or tarball), else the
#    snapshot in ../shared/vendor/ (scripts/build-wis.sh);
#  - oom: the OOM edge in a 512 MiB guest as make check finds it (the most
#    anonymous memory past what is available that 3 runs in a row survive
#    without an OOM kill, scripts/guest/jobs/oom); OOM_ROUNDS alternating
#    boots (default 1, about 5 minutes each), median.
# BENCH_JOBS picks a subset (default: icount contention wis pending oom).
# Prints a table and writes build/NAME/bench/results.tsv, for the series
# SERIES (default the mainline).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rounds=${ROUNDS:-5}
pending_rounds=${PENDING_ROUNDS:-3}
oom_rounds=${OOM_ROUNDS:-1}
wis_rounds=${WIS_ROUNDS:-3}
oom_mib=512
jobs=${BENCH_JOBS:-icount contention wis pending oom}
out=$BUILD/bench
"$TOP/scripts/get-base.sh" >/dev/null
"$TOP/scripts/apply.sh" "$BUILD/patched/src"
"$TOP/scripts/build-kernel.sh" "$BUILD/base/src" "$BUILD/base/obj-bench" bench
"$TOP/scripts/build-kernel.sh" "$BUILD/patched/src" "$BUILD/patched/obj-bench" bench
"$TOP/scripts/build-progs.sh" "$BUILD/patched/src" "$BUILD/progs"
case " $jobs " in
*" wis "*) "$TOP/scripts/build-wis.sh" "$BUILD/progs/wis" ;;
esac
"$TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio.gz" "$BUILD/progs"
rm -rf "$out"
mkdir -p "$out"

run() {	# run KERNEL(base|patched) JOB RUNDIR
	info "bench: $1 kernel, $2 ($3)"
	"$TOP/scripts/run-guest.sh" "$BUILD/$1/obj-bench/arch/x86/boot/bzImage" \
		"$BUILD/initramfs.cpio.gz" "$2" "$out/$3"
	grep -E "^FNR-(BENCH|OOM-EDGE) " "$out/$3/results.log" | sed "s/^/$1 $2 /" >>"$out/raw.txt"
}

for job in $jobs; do
	case $job in
	icount)
		ICOUNT=1 run base bench-icount icount-base
		ICOUNT=1 run patched bench-icount icount-patched
		;;
	contention)
		for r in $(seq "$rounds"); do
			run base bench-contention "contention-base-$r"
			run patched bench-contention "contention-patched-$r"
		done
		;;
	wis)
		for r in $(seq "$wis_rounds"); do
			run base bench-wis "wis-base-$r"
			run patched bench-wis "wis-patched-$r"
		done
		;;
	pending)
		for r in $(seq "$pending_rounds"); do
			run base bench-pending "pending-base-$r"
			run patched bench-pending "pending-patched-$r"
		done
		;;
	oom)
		for r in $(seq "$oom_rounds"); do
			OOM_OK=1 MEM=$oom_mib APPEND=init_on_free=1 run base oom "oom-base-$r"
			OOM_OK=1 MEM=$oom_mib APPEND=init_on_free=1 run patched oom "oom-patched-$r"
		done
		;;
	*) die "BENCH_JOBS: unknown job '$job' (icount, contention, wis, pending, oom)" ;;
	esac
done

awk -f "$TOP/scripts/median.awk" -f "$TOP/scripts/bench-table.awk" -v tsv="$out/results.tsv" -v oom_mib=$oom_mib \
	"$out/raw.txt"
info "results: $out/results.tsv (raw lines: $out/raw.txt)"
case " $jobs " in
*" icount "* | *" contention "*)
	"$TOP/scripts/bench-chart.sh" "$out/results.tsv" "$out" ;;
esac
