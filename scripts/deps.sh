#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# deps.sh: install the Debian packages the workbench needs, if missing;
# DEPS_EXTRA adds 'file-or-command:package' pairs (make check-matrix).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# command or file : Debian package
needs="
gcc:gcc make:make flex:flex bison:bison bc:bc cpio:cpio xz:xz-utils
/usr/include/libelf.h:libelf-dev /usr/include/openssl/ssl.h:libssl-dev
qemu-system-x86_64:qemu-system-x86 /bin/busybox:busybox-static
mkfs.ext4:e2fsprogs mkfs.xfs:xfsprogs quilt:quilt ccache:ccache
perl:perl git:git gnuplot:gnuplot-nox b4:b4 rsync:rsync
${DEPS_EXTRA:-}"
missing=
for n in $needs; do
	what=${n%%:*} pkg=${n##*:}
	case "$what" in
	/*) [ -e "$what" ] && continue ;;
	*) command -v "$what" >/dev/null 2>&1 && continue ;;
	esac
	missing+=" $pkg"
done
[ -n "$missing" ] || exit 0
info "installing Debian packages:$missing"
[ "$(id -u)" = 0 ] || die "need root to install:$missing"
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$BUILD"
if ! { apt-get update && apt-get install -y --no-install-recommends $missing; } \
	>"$BUILD/apt-deps.log" 2>&1; then
	tail -n 10 "$BUILD/apt-deps.log" >&2
	die "apt-get could not install:$missing (log: $BUILD/apt-deps.log)"
fi
