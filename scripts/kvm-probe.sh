#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kvm-probe.sh KERNEL INITRD: print 'kvm' if a short probe boot under KVM
# reaches user space, else 'tcg'. /dev/kvm alone proves nothing: on some
# hosts a guest hangs at "Booting from ROM". The answer is cached in
# build/accel.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: $0 KERNEL INITRD"
cache=$BUILD/accel
if [ -f "$cache" ]; then
	cat "$cache"
	exit 0
fi
accel=tcg
if [ -w /dev/kvm ]; then
	log=$(mktemp)
	timeout -k 5 30 qemu-system-x86_64 -accel kvm -cpu host -smp 1 -m 256 \
		-nodefaults -display none -no-reboot -kernel "$1" -initrd "$2" \
		-append "console=ttyS0 panic=-1 fnr.job=probe" \
		-serial null -serial file:"$log" >/dev/null 2>&1 || true
	grep -q '^FNR-PROBE ok' "$log" && accel=kvm
	rm -f "$log"
fi
info "KVM probe: using $accel"
echo $accel >"$cache"
echo $accel
