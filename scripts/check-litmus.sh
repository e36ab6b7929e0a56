#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check-litmus.sh: run every litmus test of
# tools/memory-model/litmus-tests/filemap-noref/ with herd7 (HERD7, else
# what scripts/get-herd7.sh prints) under the Linux-kernel memory model of
# the mainline base tree, whatever SERIES says
# (build/mainline/base/src/tools/memory-model, make base SERIES=.; 6.12's
# model lacks atomic_or(), which the tests use), and compare herd7's "Observation NAME Never|Sometimes|Always"
# with the test's " * Result: ..." line. Each test NAME.litmus (the code as
# the series has it) needs at least one twin NAME+WHAT.litmus (a barrier
# left out, or the wrong order) whose expected result differs: a test
# without a Result line, or whose twins are missing or expect the same, or
# whose "C NAME" line is not its file name, fails. Prints TAP, then
# "litmus: N passed, N failed"; exits 1 on any failure. Seconds.
set -euo pipefail
export SERIES=.	# the tests use the mainline base's model
. "$(dirname "$0")/lib.sh"

export LC_ALL=C	# EPOCHREALTIME with a decimal point
herd=${HERD7:-$("$TOP/scripts/get-herd7.sh")}
model=$BUILD/base/src/tools/memory-model
dir=$TOP/tools/memory-model/litmus-tests/filemap-noref
[ -f "$model/linux-kernel.cfg" ] ||
	die "no $model/linux-kernel.cfg: run 'make base SERIES=.'"
shopt -s nullglob
# Each test before its twins: NAME, NAME+..., in C order of the names.
mapfile -t tests < <(for t in "$dir"/*.litmus; do basename "$t" .litmus; done |
	LC_ALL=C sort | sed 's/$/.litmus/')
[ ${#tests[@]} -gt 0 ] || die "no .litmus files in $dir"

# expected FILE: the file's Result line (Never, Sometimes or Always).
expected() {
	sed -n 's/^ \* Result: \(Never\|Sometimes\|Always\)[[:space:]]*$/\1/p' "$dir/$1" | head -n 1
}

echo "TAP version 13"
echo "1..${#tests[@]}"
pass=0 fail=0 n=0
start=$EPOCHREALTIME
for t in "${tests[@]}"; do
	n=$((n + 1))
	name=${t%.litmus}
	want=$(expected "$t")
	why='' diag=''
	t0=$EPOCHREALTIME
	out=$(cd "$model" && timeout 300 "$herd" -conf linux-kernel.cfg "$dir/$t" 2>&1) || true
	secs=$(echo "$t0 $EPOCHREALTIME" | awk '{ printf "%.2f", $2 - $1 }')
	got=$(awk -v n="$name" '$1 == "Observation" && $2 == n { print $3 }' <<<"$out")
	base=${name%%+*}
	if [ -z "$want" ]; then
		why="no ' * Result: Never|Sometimes|Always' line"
	elif [ "$(sed -n '1s/^C[[:space:]]\+//p' "$dir/$t")" != "$name" ]; then
		why="its first line is not 'C $name'"
	elif [ -z "$got" ]; then
		why="herd7 gave no 'Observation $name' line"
		diag=$(tail -n 10 <<<"$out" | sed 's/^/#   /')
	elif [ "$got" != "$want" ]; then
		why="herd7: $got, expected $want"
	elif [ "$base" = "$name" ]; then
		twins=("$dir/$name"+*.litmus)
		[ ${#twins[@]} -gt 0 ] || why="no twin $name+WHAT.litmus"
	elif [ ! -f "$dir/$base.litmus" ]; then
		why="twin of $base.litmus, which does not exist"
	elif [ "$(expected "$base.litmus")" = "$want" ]; then
		why="expects $want, as $base.litmus does"
	fi
	echo "# $name: herd7 ${got:-nothing}, expected ${want:-nothing} (${secs} s)"
	[ -z "$diag" ] || echo "$diag"
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "ok $n $name"
	else
		fail=$((fail + 1))
		echo "not ok $n $name # $why"
	fi
done
echo "# herd7 $("$herd" -version | cut -d, -f1), model $model, $(echo "$start $EPOCHREALTIME" | awk '{ printf "%.1f", $2 - $1 }') s in all"
echo "litmus: $pass passed, $fail failed"
[ "$fail" = 0 ]
