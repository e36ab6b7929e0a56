#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# profile.sh: where the instructions of a cached read go, base vs patched.
# Builds the base and the patched kernel as make bench does (the same
# objects; scripts/bench.config has the high resolution timers that
# perf's cpu-clock needs), boots each with one
# vCPU under -icount shift=0,sleep=off and runs the profile job
# (scripts/guest/jobs/profile): perf record with cpu-clock every PERIOD
# ns, which there is every PERIOD instructions, on pread_bench with N and
# 2N reads on ext4, xfs and tmpfs, 16 B, 4 KiB and 64 KiB, and 4 KiB ext4
# reads into a destination page that is not present; the difference
# of the two runs is N reads without the setup. Prints instructions per
# read by function, self and children, base and patched side by side
# (scripts/profile-table.awk), each total next to pread_bench's own
# figure in that boot and, if make bench has run, make bench's icount
# figure (build/NAME/bench/results.tsv); writes build/NAME/profile/.
# PERIOD (default 100003) and SCALE (divides the numbers of reads;
# default 1) are for trial runs. perf is Debian's linux-perf, put into
# the initramfs with its libraries.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DEPS_EXTRA=perf:linux-perf "$TOP/scripts/deps.sh"
perf=$(command -v perf)
# Debian's /usr/bin/perf may be a wrapper script around perf_X.Y.
if [ "$(head -c 4 "$perf" | tail -c 3)" != ELF ]; then
	shopt -s nullglob
	bins=(/usr/bin/perf_[0-9]*)
	shopt -u nullglob
	[ ${#bins[@]} -gt 0 ] || die "no perf binary (perf_X.Y) beside the wrapper $perf"
	perf=$(printf '%s\n' "${bins[@]}" | sort -V | tail -n 1)
fi
out=$BUILD/profile
"$TOP/scripts/get-base.sh" >/dev/null
"$TOP/scripts/apply.sh" "$BUILD/patched/src"
"$TOP/scripts/build-kernel.sh" "$BUILD/base/src" "$BUILD/base/obj-bench" bench
"$TOP/scripts/build-kernel.sh" "$BUILD/patched/src" "$BUILD/patched/obj-bench" bench
"$TOP/scripts/build-progs.sh" "$BUILD/patched/src" "$BUILD/progs"
"$TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs-profile.cpio.gz" "$BUILD/progs" "$perf"
rm -rf "$out"
mkdir -p "$out"
for k in base patched; do
	info "profile: $k kernel (console: $out/$k/console.log)"
	ICOUNT=1 APPEND="fnr.period=${PERIOD:-100003} fnr.scale=${SCALE:-1}" \
		"$TOP/scripts/run-guest.sh" "$BUILD/$k/obj-bench/arch/x86/boot/bzImage" \
		"$BUILD/initramfs-profile.cpio.gz" profile "$out/$k"
done
bench=$BUILD/bench/results.tsv
[ -f "$bench" ] || bench=
awk -f "$TOP/scripts/profile-table.awk" -v tsv="$out/profile.tsv" -v rows="${ROWS:-25}" \
	-v bench="$bench" "$out/base/results.log" "$out/patched/results.log" |
	tee "$out/profile.txt"
info "profile: $out/profile.txt, every function in $out/profile.tsv"
