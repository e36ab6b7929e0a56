#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-kcsan.sh: the race selftests on a KCSAN kernel (make check-kcsan).
# The patched check kernel plus scripts/kcsan.config (x86_64, gcc) boots
# once (QEMU TCG, init_on_free=1) and runs the race selftests (KCSAN_TESTS)
# on ext4, xfs, tmpfs and huge tmpfs. Each data-race report is sorted by
# where it is (scripts/san-report.awk): in a function the series adds, with
# one on its stack, in one the series changes, or elsewhere. Fails on a
# report in a function the series adds, a failed test or any other kernel
# splat. Ends with "check-kcsan NAME (VERSION): N passed, N failed, N
# skipped; KCSAN: ...".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tests=${KCSAN_TESTS:-evict_race split_race sibling_race poison_free}
src=$BUILD/patched/src
obj=$BUILD/patched/obj-kcsan
out=$BUILD/check-kcsan
"$TOP/scripts/get-base.sh" >/dev/null
"$TOP/scripts/apply.sh" "$src"
"$TOP/scripts/build-kernel.sh" "$src" "$obj" kcsan
"$TOP/scripts/build-progs.sh" "$src" "$BUILD/progs"
"$TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio.gz" "$BUILD/progs"

fail=0
mkdir -p "$out"
info "guest: KCSAN kernel, $tests (console: $out/console.log)"
start=$(date +%s)
SPLATS_OK=1 APPEND="init_on_free=1 fnr.only=$(tr ' ' , <<<"$tests")" \
	"$TOP/scripts/run-guest.sh" "$obj/arch/x86/boot/bzImage" \
	"$BUILD/initramfs.cpio.gz" only "$out" || fail=1
info "KCSAN guest: $(( $(date +%s) - start )) s"
SAN_OK=1 "$TOP/scripts/splat-scan.sh" "$out/console.log" || fail=1
grep -q 'kcsan: enabled early' "$out/console.log" || {
	echo "FAILED: the console does not say KCSAN was on ('kcsan: enabled early')" >&2
	fail=1
}

list=$(series_patches)
# shellcheck disable=SC2086 # one argument per patch file
funcs=$(cd "$SDIR/patches" && awk -f "$TOP/scripts/series-functions.awk" $list)
awk -v tool=KCSAN \
	-v ours="$(awk '$1 == "ours" { print $2 }' <<<"$funcs")" \
	-v touched="$(awk '$1 == "touched" { print $2 }' <<<"$funcs")" \
	-f "$TOP/scripts/san-report.awk" "$out/console.log" | tee "$out/kcsan.txt"
sline=$(tail -n 1 "$out/kcsan.txt")
grep -q ' 0 gating,' <<<"$sline" || {
	echo "FAILED: KCSAN reports in the series' code (above)" >&2
	fail=1
}
touch "$out/results.log"
awk '/^(not )?ok [0-9]+ |^FNR-RUN /' "$out/results.log"
read -r p f s < <(awk -f "$TOP/scripts/tap-summary.awk" "$out/results.log")
[ "$p" -gt 0 ] || fail=1
echo "check-kcsan $(series_label): $p passed, $((f + fail)) failed, $s skipped; $sline"
[ $((f + fail)) = 0 ]
