#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# control-rates.sh: how often each control run finds the bug it injects
# (make control-rates). Boots the patched check kernel once (QEMU TCG)
# with page_poison=1 and the control job repeated ROUNDS times (default
# 10): each control run, with the deferral off, must read the page poison
# of a freed page. Writes results/NAME/control-rates.txt: per control and
# file system the runs that found it and the time they took
# (scripts/control-rates.awk). Fails if a run missed it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rounds=${ROUNDS:-10}
obj=$BUILD/patched/obj-check
out=$BUILD/control-rates
check_guest_prep

rm -rf "$out"
mkdir -p "$out"
info "guest: the control runs, $rounds rounds (console: $out/console.log)"
start=$(date +%s)
TIMEOUT=$((1800 * rounds)) APPEND="init_on_free=1 page_poison=1 fnr.rounds=$rounds" \
	"$TOP/scripts/run-guest.sh" "$obj/arch/x86/boot/bzImage" \
	"$BUILD/initramfs.cpio.gz" control "$out" ||
	die "the control guest did not end cleanly (see $out/console.log)"
secs=$(( $(date +%s) - start ))
fail=0
awk -f "$TOP/scripts/control-rates.awk" "$out/results.log" >"$out/rates.txt" || fail=1
res=$TOP/results/$(base_field NAME)/control-rates.txt
{
	echo "# make control-rates (scripts/control-rates.sh): $rounds rounds of the control boot, QEMU TCG, 2 vCPUs,"
	echo "# init_on_free=1 page_poison=1, defer_free=0; $(series_label), $(date -u +%F), guest $secs s"
	echo "# found: runs that found the injected bug, of the runs (skips left out): a race control"
	echo "# read the page poison of a freed page; a flush control (cma.control_*, memcg.control_*)"
	echo "# saw the failure that a missing wait for pending pages causes (no times: \"-\");"
	echo "# median and max: seconds from the start of the race to the first poison read"
	cat "$out/rates.txt"
} >"$res"
cat "$res"
[ $fail = 0 ] || die "control-rates: a control run missed the injected bug (above)"
echo "control-rates $(series_label): every control run found the injected bug ($res)"
