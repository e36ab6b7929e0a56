#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-guest.sh KERNEL INITRD JOB OUTDIR: boot the guest, run JOB, and leave
# the kernel console in OUTDIR/console.log and the job's output in
# OUTDIR/results.log (without the serial line's CRs). Fails on a timeout,
# on a guest that did not finish, and on any kernel splat in the console.
#
# Environment: KARCH (x86_64, the default, i386 or arm64: qemu-system-aarch64
# -M virt under TCG), SMP (vCPUs, default: host CPUs), MEM (MiB, default 1024),
# ICOUNT=1 (one vCPU, guest time counts instructions), TIMEOUT (seconds,
# default 1800; make check: 3600), APPEND (extra kernel command line), ACCEL (kvm or tcg,
# default: scripts/kvm-probe.sh decides), SPLATS_OK=1 (kernel reports are
# expected: count them, do not fail), EXTRA_DRIVES (more disk images, after
# the three of scripts/mkdisks.sh: /dev/vdd, /dev/vde, ...; snapshot=on
# too), DIMM_MIB (x86: a pc-dimm of that size present at boot, which the
# guest adds through ACPI memory hotplug; memhp_default_state= onlines it),
# IDLE (seconds: a guest whose job console stays silent that long, boot
# included, is hung and killed then, not at the end of TIMEOUT; default
# 0, no such limit).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 4 ] || die "usage: $0 KERNEL INITRD JOB OUTDIR"
kernel=$1 initrd=$2 job=$3 out=$4
arch=${KARCH:-x86_64}
case $arch in
x86_64 | i386) need_cmd qemu-system-x86_64 qemu-system-x86 ;;
arm64) need_cmd qemu-system-aarch64 qemu-system-arm ;;
*) die "KARCH=$arch: no guest for it (x86_64, i386 or arm64)" ;;
esac
[ -f "$kernel" ] || die "no kernel image $kernel"
[ -f "$initrd" ] || die "no initramfs $initrd"
"$TOP/scripts/mkdisks.sh"
mkdir -p "$out"
rm -f "$out/console.log" "$out/results.log"

smp=${SMP:-$(nproc)}
timeout=${TIMEOUT:-1800}
qemu=qemu-system-x86_64
console=ttyS0
results=(-serial file:"$out/results.log")
if [ $arch = arm64 ]; then
	# TCG only (an x86 host). mte=on: the Memory Tagging Extension, and
	# its page flags, in use. virt has one serial port: the results go
	# through a virtio console (hvc0).
	qemu=qemu-system-aarch64
	machine=(-M virt,mte=on -accel tcg,thread=multi -cpu max -smp "$smp")
	console=ttyAMA0
	results=(-device virtio-serial-pci -device virtconsole,chardev=results
		-chardev file,id=results,path="$out/results.log")
else
	accel=${ACCEL:-$("$TOP/scripts/kvm-probe.sh" "$kernel" "$initrd")}
	if [ "${ICOUNT:-0}" = 1 ]; then
		machine=(-accel tcg -icount shift=0,sleep=off -cpu max -smp 1)
	elif [ "$accel" = kvm ]; then
		machine=(-accel kvm -cpu host -smp "$smp")
	else
		machine=(-accel tcg,thread=multi -cpu max -smp "$smp")
		# Multi-threaded TCG runs code another vCPU has just patched
		# from a stale translation: when sched_clock_init_late()
		# enabled the __sched_clock_stable key, a vCPU in
		# sched_clock_cpu() hit the int3 of the patch after the
		# patching was over ("Oops: int3", about one boot in six).
		# With the TSC marked unstable from boot the key is never
		# enabled.
		tcg_append=tsc=unstable
	fi
fi

drives=()
for d in ext4.img xfs.img swap.img; do
	drives+=(-drive file="$BUILD/disks/$d",format=raw,if=virtio,snapshot=on)
done
for d in ${EXTRA_DRIVES:-}; do
	[ -f "$d" ] || die "EXTRA_DRIVES: no disk image $d"
	drives+=(-drive file="$d",format=raw,if=virtio,snapshot=on)
done

mem=${MEM:-1024}
dimm=()
if [ -n "${DIMM_MIB:-}" ]; then
	[ $arch != arm64 ] || die "DIMM_MIB: x86 guests only"
	dimm=(-object memory-backend-ram,id=dimm0,size="$DIMM_MIB"M
		-device pc-dimm,id=dimm0,memdev=dimm0)
	mem=$mem,slots=1,maxmem=$((mem + DIMM_MIB))M
fi

rc=0
timeout -k 10 "$timeout" $qemu "${machine[@]}" -m "$mem" "${dimm[@]}" \
	-nodefaults -display none -no-reboot \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=$console panic=-1 fnr.job=$job ${tcg_append:-} ${APPEND:-}" \
	-serial file:"$out/console.log" "${results[@]}" \
	"${drives[@]}" \
	>"$out/qemu.log" 2>&1 &
qpid=$!
trap 'kill $qpid 2>/dev/null' EXIT
# The job's console, not the kernel's: a hung kernel can go on printing
# (RCU stall reports) while the job makes no progress.
idle=${IDLE:-0} quiet=0 last=0 hung=0
while [ "$idle" -gt 0 ] && kill -0 $qpid 2>/dev/null; do
	sleep 5
	size=$(stat -c %s "$out/results.log" 2>/dev/null || echo 0)
	if [ "$size" != "$last" ]; then
		last=$size quiet=0
	else
		quiet=$((quiet + 5))
	fi
	if [ $quiet -ge "$idle" ]; then
		# It may have ended in these 5 s: then wait says how.
		if kill $qpid 2>/dev/null; then
			hung=1
		fi
		break
	fi
done
wait $qpid || rc=$?
trap - EXIT
# The guest's serial line turns each newline into CR LF (the tty's ONLCR):
# the job's output is read line by line, so leave plain lines.
if [ -f "$out/results.log" ]; then
	sed -i 's/\r$//' "$out/results.log"
fi

if [ $hung = 1 ] || [ $rc = 124 ] || [ $rc = 137 ]; then
	if [ $hung = 1 ]; then
		echo "error: guest ($job) printed nothing for $idle s, killed; console tail:" >&2
	else
		echo "error: guest ($job) timed out after $timeout s; console tail:" >&2
	fi
	tail -n 40 "$out/console.log" >&2
	echo "--- results tail:" >&2
	tail -n 10 "$out/results.log" >&2
	exit 1
elif [ $rc != 0 ]; then
	cat "$out/qemu.log" >&2
	die "qemu failed (exit $rc) running $job"
fi
if ! grep -q '^FNR-END rc=0' "$out/results.log"; then
	echo "error: guest ($job) did not finish cleanly; console tail:" >&2
	tail -n 40 "$out/console.log" >&2
	echo "--- results tail:" >&2
	tail -n 20 "$out/results.log" >&2
	exit 1
fi
if [ "${SPLATS_OK:-0}" = 1 ]; then
	info "$job: $(grep -cE 'BUG:|WARNING:|KASAN:' "$out/console.log") kernel report line(s), expected here"
else
	"$TOP/scripts/splat-scan.sh" "$out/console.log"
fi
