#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scale.sh: make scale. Reads a second per thread, base vs patched, with
# 1..N CPUs reading one cached file, on User-Mode Linux SMP (ARCH=um,
# ncpus=N seccomp=on): each UML CPU is a host thread, so the refcount's
# atomics and cache-line transfers are the host CPU's own (QEMU TCG
# emulates them). No KVM needed; N defaults to the host's CPUs.
# A system call from UML user space costs microseconds, so the read loop
# runs in the kernel: scripts/scale/fnr_scale.c, a module built against
# each tree (never part of the series), one kthread bound to each CPU
# calling kernel_read(). Modes: shared (one struct file for all threads),
# open (the file opened per thread), files (a file per thread: nothing
# shared, the ceiling), move (shared, each thread at an offset that moves
# on each read), rshared and rfiles (shared and files with read(2)'s copy
# to a user buffer); ushared and ufiles are shared and files from user
# space (a process a CPU, pread()), what an application sees in UML. Each boot
# runs every row once (scripts/scale/init.c); SCALE_ROUNDS rounds of a
# boot of each kernel, in a random order each round; the table gives
# medians and ranges, and the median and range of the rounds' own
# patched/base (scripts/scale-table.awk).
# What the host does to a run is recorded beside it: before each boot,
# scripts/scale/host-alu.c's throughput-bound loop on the host at 1 and
# N threads (kernel=host rows: if N threads halve it, the host's CPUs
# share cores or time, and so does every fast loop in UML); after each
# boot, the steal time it saw and the host CPU each busy UML thread ran
# on ('# boot' lines, sampled every 2 s from /proc).
# Settings: SCALE_CPUS (default nproc, at most 64, UML's NR_CPUS here),
# SCALE_THREADS (default 1, 2, 4 ... up to SCALE_CPUS), SCALE_ROUNDS (5),
# SCALE_MS (1000 a row), SCALE_SIZES (16,4096,65536), SCALE_MODES
# (shared,open,files,move,rshared,rfiles,ushared,ufiles), SCALE_FS (tmpfs,ext4), SCALE_MICRO
# (the cost of an atomic, a contended atomic, fences, a throughput-bound
# loop and a 16 B copy: atomic,contend,lfence,mfence,lockadd,alu,
# memcpy16), SCALE_BARRIERS (x86, the
# default: both kernels built with x86's SMP barriers, see
# scripts/scale/x86-barriers.h; uml: UML's own, fences).
# A third kernel, rework (SCALE_KERNELS=base,patched,rework, the
# default), is the base with scripts/scale/refcount-rework.patch: the
# idea of Gladyshev's refcount rework (folio_try_get() as one atomic add
# and a frozen bit, in no tree at 7.3-rc7), written again in the
# workbench to answer "why not fix the refcount instead?".
# Writes build/NAME/scale/results.txt (a header of '#' lines saying what
# ran where, then one line a row and boot), table.txt and chart.svg/.png
# (scripts/scale-chart.sh); build/NAME/scale-fences/ with
# SCALE_BARRIERS=uml. The posted version's results.txt is kept as
# results/NAME/scale.txt, which the cover letter's table is made from
# (scripts/cover-body.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cpus=${SCALE_CPUS:-$(nproc)}
if [ "$cpus" -gt 64 ]; then
	info "scale: $cpus CPUs, but scripts/uml.config has NR_CPUS=64: using 64"
	cpus=64
fi
rounds=${SCALE_ROUNDS:-5}
ms=${SCALE_MS:-1000}
sizes=${SCALE_SIZES:-16,4096,65536}
modes=${SCALE_MODES:-shared,open,files,move,rshared,rfiles,ushared,ufiles}
fslist=${SCALE_FS:-tmpfs,ext4}
micro=${SCALE_MICRO:-atomic,contend,lfence,mfence,lockadd,alu,memcpy16}
kernels=${SCALE_KERNELS:-base,patched,rework}
export UML_BARRIERS=${SCALE_BARRIERS:-x86}
case $UML_BARRIERS in
x86) objname=obj-uml kcflags="-include $TOP/scripts/scale/x86-barriers.h" out=$BUILD/scale ;;
uml) objname=obj-uml-fences kcflags= out=$BUILD/scale-fences ;;
*) die "SCALE_BARRIERS=$UML_BARRIERS: x86 or uml" ;;
esac
if [ -z "${SCALE_THREADS:-}" ]; then
	SCALE_THREADS=1
	for ((n = 2; n < cpus; n *= 2)); do
		SCALE_THREADS+=",$n"
	done
	[ "$cpus" = 1 ] || SCALE_THREADS+=",$cpus"
fi

"$TOP/scripts/get-base.sh" >/dev/null
grep -q '^config SMP$' "$BUILD/base/src/arch/um/Kconfig" ||
	die "$(series_label): User-Mode Linux has no SMP before 7.3; make scale runs on the mainline series only"
[ "$(uname -m)" = x86_64 ] || die "make scale builds User-Mode Linux for x86_64: this host is $(uname -m)"
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] ||
	die "a static libc is needed for the UML init: install the Debian package 'libc6-dev'"
need_cmd cpio cpio
need_cmd mkfs.ext4 e2fsprogs
"$TOP/scripts/apply.sh" "$BUILD/patched/src"
case ,$kernels, in
*,rework,*)
	fresh_worktree "$BUILD/rework/src"
	git -C "$BUILD/rework/src" apply "$TOP/scripts/scale/refcount-rework.patch" ||
		die "scripts/scale/refcount-rework.patch does not apply to the base tree"
	;;
esac

rm -rf "$out"
mkdir -p "$out"
gcc -static -O2 -Wall -o "$out/init" "$TOP/scripts/scale/init.c"
gcc -O2 -Wall -pthread -o "$out/host-alu" "$TOP/scripts/scale/host-alu.c"
for k in ${kernels//,/ }; do
	[ -d "$BUILD/$k/src" ] || die "SCALE_KERNELS: no kernel '$k' (base, patched, rework)"
	KARCH=um "$TOP/scripts/build-kernel.sh" "$BUILD/$k/src" "$BUILD/$k/$objname" uml
	mkdir -p "$out/mod-$k" "$out/root-$k"
	cp "$TOP/scripts/scale/fnr_scale.c" "$TOP/scripts/scale/alu.h" "$TOP/scripts/scale/Kbuild" "$out/mod-$k/"
	KCFLAGS=$kcflags make -s -C "$BUILD/$k/src" O="$BUILD/$k/$objname" ARCH=um SUBARCH=x86_64 \
		M="$out/mod-$k" modules >"$out/mod-$k/build.log" 2>&1 ||
		{ cat "$out/mod-$k/build.log" >&2; die "the bench module did not build against the $k tree"; }
	cp "$out/init" "$out/mod-$k/fnr_scale.ko" "$out/root-$k/"
	(cd "$out/root-$k" && printf '%s\n' init fnr_scale.ko |
		cpio -o -H newc --quiet | gzip -9) >"$out/initramfs-$k.cpio.gz"
done

count() {	# count LIST: the items of a comma-separated list
	tr , '\n' <<<"$1" | wc -l
}
rows=$(( ($(count "$sizes") * $(count "$modes") * $(count "$fslist") + $(count "$micro")) * $(count "$SCALE_THREADS") ))

# steal: the host's steal time so far, in clock ticks (/proc/stat).
steal() {
	awk '$1 == "cpu" { print $9; exit }' /proc/stat
}

# sample PID: until PID (timeout) exits, every 2 s, "tid cpu ticks" of each
# thread of its child (UML: a host thread a UML CPU, and helpers).
sample() {
	local uml=
	while kill -0 "$1" 2>/dev/null; do
		[ -n "$uml" ] || uml=$(pgrep -P "$1" | head -n 1) || true
		# fields after "pid (comm) ": 12, 13 utime, stime; 37 processor
		[ -z "$uml" ] || awk '{ sub(/^.*\) /, ""); t = FILENAME; sub(/\/stat$/, "", t); sub(/.*\//, "", t)
			print t, $37, $12 + $13 }' /proc/"$uml"/task/*/stat 2>/dev/null || true
		sleep 2
	done
}

# boot KERNEL ROUND: one boot, every row; its lines go to raw.txt, with
# the host's alu rows before it and a '# boot' line after it.
boot() {
	local log=$out/boot-$1-$2.log limit pid spid rc=0 st0
	# Twice the rows' time, plus a minute for the boot and the files.
	limit=$(( 60 + rows * ms * 2 / 1000 ))
	"$out/host-alu" "$2" 1 500 >>"$out/raw.txt"
	"$out/host-alu" "$2" "$hostcpus" 500 >>"$out/raw.txt"
	truncate -s 0 "$out/disk.img"
	truncate -s 256M "$out/disk.img"
	mkfs.ext4 -q -F "$out/disk.img"
	info "scale: $1 kernel, round $2 ($cpus CPUs)"
	st0=$(steal)
	timeout -k 10 "$limit" "$BUILD/$1/$objname/linux" \
		mem=1G ncpus="$cpus" seccomp=on initrd="$out/initramfs-$1.cpio.gz" \
		rdinit=/init ubd0="$out/disk.img" con0=fd:0,fd:1 con=null \
		scale_kernel="$1" scale_round="$2" scale_ms="$ms" \
		scale_threads="$SCALE_THREADS" scale_sizes="$sizes" \
		scale_modes="$modes" scale_fs="$fslist" scale_micro="$micro" \
		</dev/null >"$log" 2>&1 &
	pid=$!
	sample "$pid" >"$out/cpus-$1-$2.txt" &
	spid=$!
	wait "$pid" || rc=$?
	wait "$spid"
	if [ "$rc" != 0 ]; then
		tail -n 30 "$log" >&2
		die "the $1 UML kernel failed or hung (exit $rc, limit $limit s); log: $log"
	fi
	awk -v k="$1" -v r="$2" -v st=$(( $(steal) - st0 )) -v hz="$(getconf CLK_TCK)" \
		-f "$TOP/scripts/scale-cpus.awk" "$out/cpus-$1-$2.txt" >>"$out/raw.txt"
	if grep -qE '^scale error|BUG:|WARNING:|Oops|Bad page|nonzero _refcount' "$log" ||
		! grep -q '^scale done' "$log"; then
		tail -n 30 "$log" >&2
		die "the $1 UML run reported an error or a kernel splat, or did not finish its rows; log: $log"
	fi
	grep '^scale kernel=' "$log" >>"$out/raw.txt"
}

hostcpus=$(( cpus < $(nproc) ? cpus : $(nproc) ))
start=$(date +%s)
for r in $(seq "$rounds"); do
	for k in $(tr , '\n' <<<"$kernels" | shuf); do
		boot "$k" "$r"
	done
done
{
	echo "# make scale, $(series_label), $(awk '/^PREFIX=/ { print substr($0, 8); exit }' "$TOP/Documentation/cover-letter.txt"), $(date -u +%Y-%m-%d)"
	echo "# code: $(code_hash) (sha256 of the patch-ids of $SERIES/patches, kernel code only; make check-figures compares it)"
	echo "# host: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) CPUs ($(lscpu | awk -F': *' '/^Socket\(s\)/ { s = $2 } /^Core\(s\) per socket/ { c = $2 } /^Thread\(s\) per core/ { t = $2 } END { printf "%s socket(s), %s core(s) each, %s thread(s) a core", s, c, t }')$(lscpu | awk -F': *' '/^Hypervisor vendor/ { printf ", under %s", $2 }')), Linux $(uname -r)"
	echo "# User-Mode Linux SMP, ncpus=$cpus, barriers: $UML_BARRIERS; $rounds rounds of a boot a kernel, in random order, $ms ms a row ($(( $(date +%s) - start )) s of boots)"
	echo "# kernels $kernels; threads $SCALE_THREADS; sizes $sizes; modes $modes; fs $fslist; pieces $micro"
	cat "$out/raw.txt"
} >"$out/results.txt"
awk -f "$TOP/scripts/median.awk" -f "$TOP/scripts/scale-table.awk" "$out/results.txt" | tee "$out/table.txt"
"$TOP/scripts/scale-chart.sh" "$out/results.txt" "$out"
info "make scale: $out/table.txt, chart.svg and chart.png (results: $out/results.txt)"
