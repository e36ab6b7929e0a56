#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkinitramfs32.sh OUT SRC: the i386 guest's initramfs: scripts/guest/init32.c
# as /init and read_semantics and evict_race from SRC's selftests, all
# static 32-bit (gcc -m32: Debian's gcc-multilib).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: $0 OUT SRC"
out=$(realpath "$1") src=$2
[ -f /usr/lib32/libc.a ] || die "no 32-bit libc: install the Debian package 'gcc-multilib'"
root=$BUILD/initramfs32.d
rm -rf "$root"
mkdir -p "$root"/{fnr/tests,proc,sys,dev,tmp,mnt}
cc32() {
	# kselftest_harness.h casts pointers to uintmax_t in ASSERT_*(), which
	# warns on 32-bit; any other warning fails the build.
	gcc -m32 -static -O2 -Wall -Werror -Wno-pointer-to-int-cast \
		-D_FILE_OFFSET_BITS=64 "$@" -lpthread
}
cc32 -o "$root/init" "$TOP/scripts/guest/init32.c"
for t in read_semantics evict_race; do
	cc32 -o "$root/fnr/tests/$t" \
		"$src/tools/testing/selftests/filemap-noref/$t.c"
done
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -9) >"$out"
info "built $out (i386)"
