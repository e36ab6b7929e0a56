#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# sync-selftests.sh [DIR]: make the patch "selftests: add filemap-noref
# tests" in the kernel work tree DIR (default build/NAME/linux, the work
# tree of the series SERIES) carry exactly the project's
# tools/testing/selftests/filemap-noref/. Creates the commit on top if
# there is none, else folds the changes into it. Then run 'make export'.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

dir=${1:-$BUILD/linux}
subject="selftests: add filemap-noref tests"
ours=$TOP/tools/testing/selftests/filemap-noref
cd "$dir"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "$dir has uncommitted changes: commit them first"

rm -rf tools/testing/selftests/filemap-noref
cp -r "$ours" tools/testing/selftests/filemap-noref
git add -f tools/testing/selftests/filemap-noref
if ! grep -qx 'TARGETS += filemap-noref' tools/testing/selftests/Makefile; then
	sed -i 's|^TARGETS += filesystems$|TARGETS += filemap-noref\n&|' tools/testing/selftests/Makefile
	git add -f tools/testing/selftests/Makefile
fi
if git diff --cached --quiet; then
	info "$dir: the selftests patch is up to date"
	exit 0
fi
old=$(git log -1 --format=%H --grep="^$subject\$" base..HEAD)
if [ -z "$old" ]; then
	git commit -q -s -F - <<MSG
$subject

The tests of the filemap-noref series, which lets filemap_read() copy
hot page cache folios without a reference:

 - read_semantics: what any correct kernel gives (EOF, page and folio
   boundaries, short reads, readv, RWF_NOWAIT, O_DIRECT next to buffered
   I/O, holes, truncate, mmap writes), compared byte for byte;
 - partial_fault: destination buffers that fault part way; counts, errno
   and file position must be those of the normal path, hot and cold;
 - splice_move: splice, tee and vmsplice with SPLICE_F_MOVE/GIFT give the
   right data and leave the page cache intact;
 - evict_race: readers of pages stamped in every 8 bytes race against
   fadvise, truncate, hole punch, drop_caches and a memory hog; any zero
   or foreign cell is a use-after-free.  Its control variants switch the
   RCU-deferred free off through debugfs (CONFIG_DEBUG_VM) and pass only
   when they find corrupted reads;
 - pread_bench: the benchmark, not run as a test.

Run them with the kernel booted with init_on_free=1, one directory per
filesystem in FNR_DIR.

checkpatch's advice for kernel code (__noreturn, __printf, __cold,
noinline, BIT_ULL) does not apply to these user space programs; the
quoted strings split across lines are pread_bench's one-line output
format, kept readable.  The directory falls under no MAINTAINERS entry,
like most of tools/testing/selftests.
MSG
else
	git commit -q --fixup="$old"
	GIT_SEQUENCE_EDITOR=true git rebase -q -i --autosquash base
fi
info "$dir: selftests patch updated; run 'make export'"
