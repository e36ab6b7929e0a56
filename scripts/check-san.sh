#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-san.sh kcsan|kmsan: the race selftests on a KCSAN or KMSAN kernel
# (make check-kcsan, make check-kmsan). The patched check kernel plus
# scripts/TOOL.config boots once (QEMU TCG) and runs the selftests
# SAN_TESTS on ext4, xfs, tmpfs and huge tmpfs. KCSAN builds with gcc and
# boots with init_on_free=1; KMSAN needs clang, the newest found here
# (find_clang in lib.sh), at least the LLVM version the tree asks for, and
# a 3 GiB guest (KMSAN keeps two bytes of metadata per byte). It boots
# without init_on_free (KMSAN asks for that: cleared pages would hide
# uninitialized ones) and with acpi=noirq: under TCG a KMSAN kernel
# interprets the PCI interrupt routing (_PRT) so slowly that ACPI aborts
# it (AE_AML_LOOP_TIMEOUT), the virtio disks get no interrupt and the
# boot hangs at the partition scan. Each report is sorted by where it is
# (scripts/san-report.awk): in a function the series adds, with one on its
# stack, in one the series changes, or elsewhere. Fails on a report in a
# function the series adds, a failed test or any other kernel splat. Ends
# with "check-TOOL NAME (VERSION): N passed, N failed, N skipped; TOOL: ...".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: $0 kcsan|kmsan"
tool=$1
src=$BUILD/patched/src
obj=$BUILD/patched/obj-$tool
out=$BUILD/check-$tool
"$TOP/scripts/get-base.sh" >/dev/null
"$TOP/scripts/apply.sh" "$src"
case $tool in
kcsan)
	tests=${SAN_TESTS:-evict_race split_race sibling_race poison_free}
	cc=${KCC:-gcc}
	mem=1024
	append=init_on_free=1
	# KCSAN says so once its watchpoints are armed.
	on='kcsan: enabled early'
	;;
kmsan)
	# The copies to user space: the small reads' stack buffer included.
	tests=${SAN_TESTS:-evict_race split_race sibling_race poison_free partial_fault read_semantics}
	cc=$(find_clang)
	[ -n "$cc" ] || die "make check-kmsan needs clang: apt-get install clang-19"
	want=$(cd "$src" && SRCARCH=x86 ARCH=x86_64 scripts/min-tool-version.sh llvm)
	version_ge "$("$cc" -dumpversion)" "$want" ||
		die "$(base_field VERSION) needs LLVM $want to build with clang; the newest here is $cc $("$cc" -dumpversion) (apt-get install clang-19)"
	mem=3072
	append=acpi=noirq
	on='Starting KernelMemorySanitizer'
	;;
*) die "usage: $0 kcsan|kmsan" ;;
esac
TOOL=$(tr a-z A-Z <<<"$tool")
KCC=$cc "$TOP/scripts/build-kernel.sh" "$src" "$obj" "$tool"
"$TOP/scripts/build-progs.sh" "$src" "$BUILD/progs"
"$TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio.gz" "$BUILD/progs"

fail=0
mkdir -p "$out"
info "guest: $TOOL kernel ($cc), $tests (console: $out/console.log)"
start=$(date +%s)
MEM=$mem SPLATS_OK=1 APPEND="$append fnr.only=$(tr ' ' , <<<"$tests")" \
	"$TOP/scripts/run-guest.sh" "$obj/arch/x86/boot/bzImage" \
	"$BUILD/initramfs.cpio.gz" only "$out" || fail=1
info "$TOOL guest: $(( $(date +%s) - start )) s"
SAN_OK=1 "$TOP/scripts/splat-scan.sh" "$out/console.log" || fail=1
grep -q "$on" "$out/console.log" || {
	echo "FAILED: the console does not say $TOOL was on ('$on')" >&2
	fail=1
}

list=$(series_patches)
# shellcheck disable=SC2086 # one argument per patch file
funcs=$(cd "$SDIR/patches" && awk -f "$TOP/scripts/series-functions.awk" $list)
awk -v tool="$TOOL" \
	-v ours="$(awk '$1 == "ours" { print $2 }' <<<"$funcs")" \
	-v touched="$(awk '$1 == "touched" { print $2 }' <<<"$funcs")" \
	-f "$TOP/scripts/san-report.awk" "$out/console.log" | tee "$out/$tool.txt"
sline=$(tail -n 1 "$out/$tool.txt")
grep -q ' 0 gating,' <<<"$sline" || {
	echo "FAILED: $TOOL reports in the series' code (above)" >&2
	fail=1
}
touch "$out/results.log"
guest_lines "$out/results.log"
read -r p f s < <(awk -f "$TOP/scripts/tap-summary.awk" "$out/results.log")
[ "$p" -gt 0 ] || fail=1
echo "check-$tool $(series_label): $p passed, $((f + fail)) failed, $s skipped; $sline"
[ $((f + fail)) = 0 ]
