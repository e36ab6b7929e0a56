#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# splat-scan.sh CONSOLE_LOG: fail, showing each report with some context,
# if the kernel console has an oops, BUG, WARNING, KASAN, lockdep, RCU or
# bad-page report (OOM_OK=1: OOM-kill reports are expected; OFFLINE_OK=1,
# not with OOM_OK: memory offlining's dumps of pages it retries are;
# SAN_OK=1, alone: KCSAN's and KMSAN's reports are, scripts/san-report.awk
# reads them).
set -euo pipefail

if [ $# -ne 1 ] || [ ! -r "$1" ]; then
	echo "usage: $0 CONSOLE_LOG (a readable file)" >&2
	exit 2
fi
pat='Oops|BUG:|WARNING:|KASAN:|UBSAN:|Kernel panic|general protection fault'
pat+='|possible recursive locking|possible circular locking|inconsistent lock state'
pat+='|suspicious RCU usage|rcu_.*detected stall|blocked for more than|Bad page'
pat+='|page dumped because|Call Trace:'
# OOM_OK=1: an OOM kill's report (it has a Call Trace) is expected; it runs
# from "invoked oom-killer" to "Out of memory: Killed process", or to "Out
# of memory and no killable processes" (a memcg whose task was killed
# already, which its memory.max write retries).
log=$1
if [ "${OOM_OK:-0}" = 1 ]; then
	log=$(mktemp)
	trap 'rm -f "$log"' EXIT
	# OOM kills, and the allocation failures (warn_alloc(): a stack, up
	# to its </TASK>) that GFP_ATOMIC allocations may report next to them.
	awk '/invoked oom-killer:|page allocation failure:/ { skip = 1 }
		!skip { print }
		/[Oo]ut of memory: Killed process|Out of memory and no killable processes/ { skip = 0 }
		skip == 1 && /page allocation failure:/ { alloc = 1 }
		alloc && /<\/TASK>/ { skip = 0; alloc = 0 }' "$1" >"$log"
fi
if [ "${OFFLINE_OK:-0}" = 1 ]; then
	log2=$(mktemp)
	trap 'rm -f "$log2"' EXIT
	# Memory offlining retries pages that are busy for a moment (a THP
	# being faulted in) and refuses blocks with unmovable pages:
	# CONFIG_DEBUG_VM kernels dump each such page (do_migrate_range(),
	# has_unmovable_pages()). Those dumps go; any other page dump stays.
	awk '/failed to isolate pfn|migrating pfn [0-9a-f]+ failed/ { next }
		/^page: refcount/ { buf = $0; inpage = 1; next }
		inpage && /page dumped because:/ {
			if ($0 !~ /because: (isolation failed|migration failure|unmovable page)/)
				print buf "\n" $0
			inpage = 0
			next
		}
		inpage { buf = buf "\n" $0; next }
		{ print }
		END { if (inpage) print buf }' "$log" >"$log2"
	log=$log2
fi
if [ "${SAN_OK:-0}" = 1 ]; then
	log3=$(mktemp)
	trap 'rm -f "$log3"' EXIT
	# A KCSAN or KMSAN report runs from its "BUG: KCSAN:" line to the
	# line of '=' that closes it.
	awk '/BUG: K[CM]SAN: / { skip = 1; next }
		skip && /=====/ { skip = 0; next }
		!skip { print }' "$log" >"$log3"
	log=$log3
fi
if grep -qE "$pat" "$log"; then
	echo "error: kernel splat in $1:" >&2
	grep -nE -B2 -A12 "$pat" "$log" | awk 'NR <= 120' >&2
	exit 1
fi
