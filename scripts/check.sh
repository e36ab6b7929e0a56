#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check.sh: apply the series, build the patched kernel, build and run the
# selftests in the kernel tree on this host (kselftest's own runner), boot
# the patched kernel and run them in the guest on ext4, xfs and tmpfs.
# Ends with "N passed, N failed, N skipped"; exits non-zero on any failure,
# a kernel splat or a hung guest. A second boot runs the control runs
# (freed memory read on purpose; they pass when they find it). Two boots
# with 512 MiB find the OOM edge of the base and of the patched kernel
# (two more if the edges differ by more than a step).
# A skip that scripts/expected-skips does not list is a failure.
# Boots with movable memory blocks run the memory offlining race and its
# control run, in two layouts: boot memory made movable (movablecore=),
# and a pc-dimm that the guest hot-adds through ACPI and onlines movable.
# DEBUG=1 uses the debug kernel config and has neither control nor OOM
# boots, nor the movablecore= layout; its closing line begins
# "check-debug". SERIES picks the series (default:
# the mainline); the closing line names its kernel, "check mainline
# (7.3-rc7): ...", and goes to the file CHECK_CLOSING too if that is set
# (scripts/check-all.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

suffix=
append="init_on_free=1"
# A series' BASE may add kernel arguments for every guest of make check.
[ -z "$(base_field GUEST_APPEND)" ] || append+=" $(base_field GUEST_APPEND)"
if [ "${DEBUG:-0}" = 1 ]; then
	suffix=-debug
	# acpi=noirq: under TCG the KASAN kernel can interpret the PCI
	# interrupt routing (_PRT) so slowly that ACPI aborts it
	# (AE_AML_LOOP_TIMEOUT); the virtio disks then get no interrupt and
	# the boot hangs at the partition scan (seen once in a fresh-clone
	# run; KMSAN every time, see check-san.sh).
	append+=" panic_on_warn=1 debug_pagealloc=on acpi=noirq"
fi
# The OOM edge comparison boots the base kernel too; a series whose BASE
# says CHECK_OOM=no skips it (the 6.12 backport: CI time) unless OOM=1.
oom_check=1
if [ "${DEBUG:-0}" = 1 ]; then
	oom_check=0
elif [ "$(base_field CHECK_OOM)" = no ] && [ "${OOM:-0}" != 1 ]; then
	oom_check=0
	info "$SERIES: no OOM edge comparison (CHECK_OOM=no in its BASE; OOM=1 runs it)"
fi
# ZONE_MOVABLE for the offline evictor: the top three 128 MiB blocks of a
# 4 GiB guest. In a 1 GiB guest the top block has a hole (EINVAL); in
# this one it is busy (EBUSY), so two blocks go offline; the test holds
# the top block's free memory, so that the files' page cache lies in them.
MOVABLECORE=384M HOTMEM_MIB=4096
# The pc-dimm layout: 1 GiB of boot memory and a 512 MiB pc-dimm, four
# movable blocks that all go offline.
DIMM_BOOT_MIB=1024 DIMM_SIZE_MIB=512
# Every boot ends when its job has printed nothing for longer than one
# program may run (the guest kills a program at the timeout of 'settings'),
# which a hung guest reaches in minutes, or after an hour, which a run
# that goes on printing does not need: a passing check boot takes about
# ten minutes under TCG.
settings=$TOP/tools/testing/selftests/filemap-noref/settings
prog_timeout=$(sed -n 's/^timeout=//p' "$settings")
[ -n "$prog_timeout" ] || die "$settings has no timeout= line"
IDLE=${IDLE:-$((prog_timeout + 60))}
TIMEOUT=${TIMEOUT:-3600}
export IDLE TIMEOUT
src=$BUILD/patched/src
obj=$BUILD/patched/obj-check$suffix
out=$BUILD/check$suffix

"$TOP/scripts/get-base.sh" >/dev/null
"$TOP/scripts/apply.sh" "$src"
# Only the mainline series owns Documentation/filemap-noref.rst.
if [ "$SERIES" = . ]; then
	cmp -s "$TOP/Documentation/filemap-noref.rst" "$src/Documentation/mm/filemap-noref.rst" ||
		die "Documentation/filemap-noref.rst differs from the series' Documentation/mm/filemap-noref.rst: run 'make export'"
fi
# The series' KUnit tests, under User-Mode Linux (not again for DEBUG=1:
# the same code, and kunit.py builds its own kernel).
kunit_ok=1
rm -rf "$out/kunit"
if [ "${DEBUG:-0}" != 1 ]; then
	"$TOP/scripts/check-kunit.sh" "$src" "$out/kunit" || kunit_ok=0
fi
"$TOP/scripts/build-kernel.sh" "$src" "$obj" check
if [ $oom_check = 1 ]; then
	"$TOP/scripts/build-kernel.sh" "$BUILD/base/src" "$BUILD/base/obj-check" check
fi
# The NUMA boot's kernel (two fake nodes for the move evictor); not for
# DEBUG=1, which has no control boots.
if [ "${DEBUG:-0}" != 1 ]; then
	"$TOP/scripts/build-kernel.sh" "$src" "$BUILD/patched/obj-numa" numa
fi
"$TOP/scripts/build-progs.sh" "$src" "$BUILD/progs"
"$TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio.gz" "$BUILD/progs"
mkdir -p "$out"

# On the host (this machine's kernel, as root) only the tests that touch
# nothing outside their own files run by default, from the kselftest
# install (run_kselftest.sh): the others take CPUs and memory blocks
# offline, drop caches, inject errors and make cgroups, which the guest
# is for. CHECK_HOST=all runs every test here too (kselftest's make
# run_tests), CHECK_HOST=none none.
host_ok=1
case ${CHECK_HOST:-safe} in
safe)
	info "host: run_kselftest.sh, the tests that touch only their files (CHECK_HOST=all: every test)"
	(cd "$BUILD/kselftest-install" && ./run_kselftest.sh -t filemap-noref:read_semantics \
		-t filemap-noref:partial_fault -t filemap-noref:splice_move) \
		>"$out/host.log" 2>&1 || host_ok=0
	;;
all)
	info "host: make -C tools/testing/selftests TARGETS=filemap-noref run_tests"
	make -s -C "$src/tools/testing/selftests" TARGETS=filemap-noref run_tests \
		>"$out/host.log" 2>&1 || host_ok=0
	;;
none)
	info "host: no selftests (CHECK_HOST=none)"
	echo "ok 1 host run skipped (CHECK_HOST=none) # SKIP" >"$out/host.log"
	;;
*) die "CHECK_HOST=${CHECK_HOST}: safe (the default), all or none" ;;
esac
awk '/^(not )?ok [0-9]+ / { print "host: " $0 }' "$out/host.log"
grep -q '^ok [0-9]' "$out/host.log" || host_ok=0

info "guest: running the selftests (console: $out/console.log)"
guest_ok=1
# cma=64M: a CMA area for cma_contig.
APPEND="$append cma=64M" "$TOP/scripts/run-guest.sh" "$obj/arch/x86/boot/bzImage" \
	"$BUILD/initramfs.cpio.gz" check "$out" || guest_ok=0
touch "$out/results.log"
guest_lines "$out/results.log"

# hotmem_boot LAYOUT OUTDIR [KERNEL ARGUMENTS]: the hotmem job with
# movable memory blocks laid out as LAYOUT says: movablecore (the top
# blocks of boot memory) or dimm (a pc-dimm present at boot, which the
# guest adds through ACPI memory hotplug and onlines movable).
hotmem_boot() {
	local layout=$1 dir=$2 args=${3:-}
	local kernel=$obj/arch/x86/boot/bzImage initrd=$BUILD/initramfs.cpio.gz

	mkdir -p "$dir"
	info "guest: memory offlining ${args:+($args) }in the $layout layout (console: $dir/console.log)"
	case $layout in
	movablecore)
		MEM=$HOTMEM_MIB APPEND="$append movablecore=$MOVABLECORE $args" \
			"$TOP/scripts/run-guest.sh" "$kernel" "$initrd" hotmem "$dir"
		;;
	dimm)
		MEM=$DIMM_BOOT_MIB DIMM_MIB=$DIMM_SIZE_MIB \
			APPEND="$append memhp_default_state=online_movable $args" \
			"$TOP/scripts/run-guest.sh" "$kernel" "$initrd" hotmem "$dir"
		;;
	*) die "hotmem_boot: unknown layout $layout" ;;
	esac
}

# Memory offlining needs ZONE_MOVABLE blocks, which change where the
# kernel and every other test allocate: boots of their own, with the same
# checks as the first (no splat).
# The debug kernel reserves 756 MiB at boot (KASAN's shadow; 160 MiB
# without it), and its early allocations leave a PG_reserved page at the
# start of every block that movablecore= makes movable (the offline
# race's page dumps): none goes offline. Its race runs in the pc-dimm
# layout only, whose memory comes after boot.
hotmem_layouts="movablecore dimm"
if [ "${DEBUG:-0}" = 1 ]; then
	hotmem_layouts=dimm
	mkdir -p "$out/hotmem"
	: >"$out/hotmem/results.log"
fi
hotmem_ok=1
for layout in $hotmem_layouts; do
	d=$out/hotmem
	[ $layout = movablecore ] || d=$out/hotmem-$layout
	OFFLINE_OK=1 hotmem_boot $layout "$d" || hotmem_ok=0
	touch "$d/results.log"
	guest_lines "$d/results.log"
	# The offline race skips without movable blocks: a layout that gave
	# none tested nothing.
	grep -q 'movable memory blocks go offline and back$' "$d/results.log" || {
		echo "error: no movable memory block went offline in the $layout layout (see $d/results.log)" >&2
		hotmem_ok=0
	}
done
# The pc-dimm is removed at the end (scripts/guest/jobs/hotmem).
grep '^FNR-EJECT ok: ' "$out/hotmem-dimm/results.log" || {
	echo "error: the pc-dimm was not removed (see $out/hotmem-dimm/results.log)" >&2
	hotmem_ok=0
}

# The control runs read freed memory on purpose: boots of their own, the
# offline race's with movable blocks as above, where kernel reports are
# expected (the offline ones: an offline under readers of freed pages).
# Not on the debug kernel, where KASAN and panic_on_warn turn the
# injected bug into a crash.
control_ok=1
# The guest boots after the main one, each with its own results.log.
extra_boots=(control numa hotmem hotmem-dimm hotmem-control hotmem-dimm-control)
mkdir -p "$out/control" "$out/numa" "$out/hotmem-control" "$out/hotmem-dimm-control"
: >"$out/control/results.log"
: >"$out/numa/results.log"
: >"$out/hotmem-control/results.log"
: >"$out/hotmem-dimm-control/results.log"
if [ "${DEBUG:-0}" != 1 ]; then
	# page_poison=1 (over init_on_free): a freed page reads as 0xaa, the
	# one pattern the control runs pass on. A kernel report fails this
	# boot as any other: the readers only copy freed memory (none in the
	# first run with the poison). cma=64M: cma_contig's control.
	# OOM_OK=1: memcg_churn's control must OOM-kill in its cgroup.
	info "guest: control runs with defer_free=0 (console: $out/control/console.log)"
	OOM_OK=1 APPEND="$append page_poison=1 cma=64M" "$TOP/scripts/run-guest.sh" \
		"$obj/arch/x86/boot/bzImage" "$BUILD/initramfs.cpio.gz" control \
		"$out/control" || control_ok=0
	touch "$out/control/results.log"
	guest_lines "$out/control/results.log"
	# Two fake NUMA nodes for the migration race and its control
	# (move_pages(2)), in a boot of their own, of the check kernel with
	# NUMA (scripts/numa.config).
	info "guest: the migration race on two NUMA nodes, with its control (console: $out/numa/console.log)"
	APPEND="$append page_poison=1 numa=fake=2" "$TOP/scripts/run-guest.sh" \
		"$BUILD/patched/obj-numa/arch/x86/boot/bzImage" "$BUILD/initramfs.cpio.gz" numa \
		"$out/numa" || control_ok=0
	touch "$out/numa/results.log"
	guest_lines "$out/numa/results.log"
	for layout in movablecore dimm; do
		d=$out/hotmem-control
		[ $layout = movablecore ] || d=$out/hotmem-$layout-control
		SPLATS_OK=1 hotmem_boot $layout "$d" "fnr.control=1 page_poison=1" ||
			control_ok=0
		touch "$d/results.log"
		guest_lines "$d/results.log"
	done
fi

# The OOM test: one boot per kernel (base and patched, both the check
# flavor) finds its edge, the most anonymous memory past what is available
# (oom_churn -e, 16 MiB steps) that 3 runs in a row survive without an OOM
# kill (scripts/guest/jobs/oom); the patched edge must be at most one step
# below the base's. One kill decides a point, and the edge moves a step
# from run to run, so a comparison that fails boots both kernels again
# and fails only if the second pair fails too: one unlucky kill cannot
# fail make check, a regression still does. OOM-kill reports are
# expected. Not on the debug kernel, whose KASAN shadow changes the
# memory picture.
oom_ok=1
rm -rf "$out"/oom-*
mkdir -p "$out/oom"
: >"$out/oom/results.tap"
# oom_pair SUFFIX: one OOM boot per kernel, compared in $out/oom/pairSUFFIX.tap.
oom_pair() {
	local k
	for k in base patched; do
		info "guest: OOM test on the $k kernel, 512 MiB (console: $out/oom-$k$1/console.log)"
		OOM_OK=1 MEM=512 APPEND="$append" "$TOP/scripts/run-guest.sh" \
			"$BUILD/$k/obj-check/arch/x86/boot/bzImage" \
			"$BUILD/initramfs.cpio.gz" oom "$out/oom-$k$1" || oom_ok=0
		touch "$out/oom-$k$1/results.log"
		grep '^FNR-OOM-EDGE ' "$out/oom-$k$1/results.log" | sed "s/^/$k: /" || oom_ok=0
	done
	awk -f "$TOP/scripts/oom-compare.awk" "$out/oom-base$1/results.log" \
		"$out/oom-patched$1/results.log" >"$out/oom/pair$1.tap"
	cat "$out/oom/pair$1.tap"
}
if [ $oom_check = 1 ]; then
	oom_pair 1
	if grep -q '^not ok 1 ' "$out/oom/pair1.tap"; then
		info "the OOM edges differ by more than a step: booting both kernels again (fails only if this pair fails too)"
		oom_pair 2
		sed 's/^/# first pair: /' "$out/oom/pair1.tap" >"$out/oom/results.tap"
		cat "$out/oom/pair2.tap" >>"$out/oom/results.tap"
	else
		cp "$out/oom/pair1.tap" "$out/oom/results.tap"
	fi
fi

# Every failure, with what the test printed, goes to $failed too, so
# that the closing lines can repeat them.
failed=$out/failed.txt
: >"$failed"
read -r hp hf hs < <(awk -f "$TOP/scripts/tap-summary.awk" "$out/host.log" 2>>"$failed")
# Of the OOM runs' own TAP, only failures (a worker broke) and skips count:
# their number varies from boot to boot; the passes are the comparison's.
read -r _ of os < <(cat "$out"/oom-*/results.log 2>/dev/null |
	awk -f "$TOP/scripts/tap-summary.awk" 2>>"$failed")
read -r op of2 os2 < <(awk -f "$TOP/scripts/tap-summary.awk" "$out/oom/results.tap" 2>>"$failed")
of=$((of + of2)) os=$((os + os2))
read -r gp gf gs < <(awk -f "$TOP/scripts/tap-summary.awk" "$out/results.log" 2>>"$failed")
read -r cp cf cs < <(cat "$out/control/results.log" "$out/numa/results.log" "$out/hotmem-control/results.log" \
	"$out/hotmem-dimm-control/results.log" | awk -f "$TOP/scripts/tap-summary.awk" 2>>"$failed")
read -r mp mf ms < <(cat "$out/hotmem/results.log" "$out/hotmem-dimm/results.log" |
	awk -f "$TOP/scripts/tap-summary.awk" 2>>"$failed")
cat "$failed" >&2
# fail_line TEXT: report a failure that no TAP line counted.
fail_line() {
	echo "FAILED: $*" | tee -a "$failed" >&2
}
read -r kp kf ks < <(cat "$out/kunit/results.tap" 2>/dev/null |
	awk -f "$TOP/scripts/tap-summary.awk" 2>>"$failed")
pass=$((hp + gp + cp + op + mp + kp)) fail=$((hf + gf + cf + of + mf + kf))
skip=$((hs + gs + cs + os + ms + ks))
if [ $kunit_ok = 0 ]; then
	fail_line "the KUnit run (see $out/kunit/kunit.log)"
	fail=$((fail + 1))
fi
if [ $host_ok = 0 ]; then
	fail_line "run_tests on the host (see $out/host.log)"
	fail=$((fail + 1))
fi
if [ $hotmem_ok = 0 ]; then
	fail_line "a memory offlining boot (timeout, unclean end, kernel splat, no block offline or pc-dimm not removed, see above)"
	fail=$((fail + 1))
fi
if [ $control_ok = 0 ]; then
	fail_line "a control or NUMA boot (timeout or unclean end, see above)"
	fail=$((fail + 1))
fi
if [ $oom_ok = 0 ]; then
	fail_line "an OOM test boot (timeout, unclean end or kernel splat, see above)"
	fail=$((fail + 1))
fi
# kselftest as CI systems run it (scripts/guest/jobs/kselftest): the installed
# tree's run_kselftest.sh, its KTAP line, the timeout from 'settings' and
# one that fires; then the check job's own timeout on a test that runs
# on in its own process group, which scripts/guest/jobs/killrest must find.
if [ -s "$out/results.log" ]; then
	for l in '^ok 1 selftests: filemap-noref: read_semantics$' \
		'^# timeout set to 600$' \
		'^# timeout probe: not ok 1 selftests: filemap-noref: evict_race # TIMEOUT 2 seconds$' \
		'^# kill probe: # FNR-KILLED evict_race: [1-9][0-9]* process(es) left after the timeout$'; do
		grep -q "$l" "$out/results.log" && continue
		fail_line "the guest's kselftest job printed no line matching '$l' (see $out/results.log)"
		fail=$((fail + 1))
	done
fi
# A test that SIGKILL did not end (scripts/guest/jobs/killrest).
for f in "$out/results.log" "$out"/*/results.log; do
	[ -f "$f" ] || continue
	stuck=$(grep -m1 -E '^(# kill probe: )?FNR-STUCK ' "$f") || continue
	fail_line "$stuck ($f)"
	fail=$((fail + 1))
done
# A program that left a setting changed (scripts/guest/jobs/restore put
# it back): its teardown did not run, and the programs after it ran with
# that setting.
for f in "$out/results.log" "$out"/*/results.log; do
	[ -f "$f" ] || continue
	while read -r l; do
		fail_line "$l ($f)"
		fail=$((fail + 1))
	done < <(grep '^# FNR-RESTORED ' "$f")
done
if [ $guest_ok = 0 ]; then
	fail_line "the guest run (timeout, unclean end or kernel splat, see above)"
	fail=$((fail + 1))
fi
# No silent skips: every skip in the guest boots must be one the series
# expects (scripts/expected-skips, and SERIES/expected-skips for a series'
# own), each with its reason. Not on the debug kernel, which has no
# control boots.
if [ "${DEBUG:-0}" != 1 ]; then
	skip_args=(boot=check "$out/results.log")
	for b in "${extra_boots[@]}" oom-base1 oom-patched1 oom-base2 oom-patched2; do
		[ -f "$out/$b/results.log" ] && skip_args+=("boot=$b" "$out/$b/results.log")
	done
	expected=$out/expected-skips
	cat "$TOP/scripts/expected-skips" >"$expected"
	[ ! -f "$SDIR/expected-skips" ] || cat "$SDIR/expected-skips" >>"$expected"
	if ! awk -f "$TOP/scripts/skip-check.awk" "$expected" "${skip_args[@]}" >"$out/skips.txt"; then
		cat "$out/skips.txt" >&2
		n=$(awk '/^not ok/ { n++ } END { print n ? n : 1 }' "$out/skips.txt")
		fail_line "$n skip(s) that scripts/expected-skips (or $SERIES/expected-skips) does not list (see above): add each with its reason, or fix the test"
		fail=$((fail + n))
	fi
fi
closing="check$suffix $(series_label): $pass passed, $fail failed, $skip skipped"
echo "$closing"
# What was tested, a line per program and file system: the cover
# letter's table (scripts/tested-table.awk) once copied to
# results/NAME/check.txt.
tested_args=(boot=host "$out/host.log" boot=check "$out/results.log")
for b in "${extra_boots[@]}"; do
	tested_args+=("boot=$b" "$out/$b/results.log")
done
[ ! -s "$out/oom/results.tap" ] || tested_args+=(boot=oom "$out/oom/results.tap")
{
	echo "# kernel $(base_field VERSION)$suffix"
	echo "# closing $closing"
	awk -f "$TOP/scripts/tested.awk" "${tested_args[@]}"
} >"$out/tested.txt"
if [ -n "${CHECK_CLOSING:-}" ]; then
	{ echo "$closing"; cat "$failed"; } >"$CHECK_CLOSING"
fi
[ $fail = 0 ]
