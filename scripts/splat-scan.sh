#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# splat-scan.sh CONSOLE_LOG: fail, showing each report with some context,
# if the kernel console has an oops, BUG, WARNING, KASAN, lockdep, RCU or
# bad-page report.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -r "$1" ]; then
	echo "usage: $0 CONSOLE_LOG (a readable file)" >&2
	exit 2
fi
pat='Oops|BUG:|WARNING:|KASAN:|UBSAN:|Kernel panic|general protection fault'
pat+='|possible recursive locking|possible circular locking|inconsistent lock state'
pat+='|suspicious RCU usage|rcu_.*detected stall|blocked for more than|Bad page'
pat+='|page dumped because|Call Trace:'
if grep -qE "$pat" "$1"; then
	echo "error: kernel splat in $1:" >&2
	grep -nE -B2 -A12 "$pat" "$1" | head -n 120 >&2
	exit 1
fi
