#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkinitramfs-static.sh ARCH OUT SRC TEST...: the initramfs of a guest of
# another architecture (i386: make check-matrix, arm64: make
# check-arm64): scripts/guest/init-static.c as /init and the selftests
# TEST... from SRC's tools/testing/selftests/filemap-noref/, all static,
# built with gcc -m32 (Debian's gcc-multilib) or aarch64-linux-gnu-gcc
# (gcc-aarch64-linux-gnu) against the toolchain's own kernel headers.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 4 ] || die "usage: $0 i386|arm64 OUT SRC TEST..."
arch=$1 out=$(realpath -m "$2") src=$3
shift 3
case $arch in
i386)
	[ -f /usr/lib32/libc.a ] || die "no 32-bit libc: install the Debian package 'gcc-multilib'"
	# kselftest_harness.h casts pointers to uintmax_t in ASSERT_*(),
	# which warns on 32-bit.
	cc=(gcc -m32 -Wno-pointer-to-int-cast -D_FILE_OFFSET_BITS=64)
	;;
arm64)
	need_cmd aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu
	# Only recommended by gcc-aarch64-linux-gnu.
	[ -f /usr/aarch64-linux-gnu/lib/libc.a ] ||
		die "no arm64 libc: install the Debian package 'libc6-dev-arm64-cross'"
	cc=(aarch64-linux-gnu-gcc)
	;;
*) die "unknown architecture '$arch' (i386 or arm64)" ;;
esac
root=$BUILD/initramfs-$arch.d
rm -rf "$root"
mkdir -p "$root"/{fnr/tests,proc,sys,dev,tmp,mnt}
# Any warning fails the build.
ccs() {
	"${cc[@]}" -static -O2 -Wall -Werror "$@" -lpthread
}
ccs -o "$root/init" "$TOP/scripts/guest/init-static.c"
for t in "$@"; do
	ccs -o "$root/fnr/tests/$t" "$src/tools/testing/selftests/filemap-noref/$t.c"
done
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -9n >"$out"
info "built $out ($arch: $*)"
