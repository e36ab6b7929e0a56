#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# get-herd7.sh: print a herd7 (7.58 or later, as tools/memory-model/README
# asks) for make check-litmus: the machine's own if it works, else
# Debian sid's. Debian 12 has no herdtools7, and sid's herd7 needs sid's
# glibc (2.42 or later; Debian 12 has 2.36) and libgmp (6.3). So fetch
# the .debs of herdtools7, libc6 and libgmp10 from sid with a private apt
# sources list (deb_fetch; the machine's apt setup is untouched) into
# build/tools/herd7/apt-sid/deb, unpack them into build/tools/herd7/root
# and write the wrapper build/tools/herd7/herd7, which starts herd7
# through sid's own loader with sid's libraries (herd7 needs libgmp,
# libm and libc) and sets HERDLIB, the directory of herd's own .cat files
# (stdlib.cat...), which herd7 otherwise looks for in
# /usr/share/herdtools7/herd. 40 MB fetched, 25 MB unpacked, about 10 s;
# the .debs and the wrapper are used again when present.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

min=7.58
# works HERD7: HERD7 runs and is version $min or later.
works() {
	local v
	v=$("$@" -version 2>/dev/null) || return 1
	version_ge "${v%%,*}" "$min"
}

if works herd7; then
	command -v herd7
	exit 0
fi
dir=$TOP/build/tools/herd7
root=$dir/root
if ! works "$dir/herd7"; then
	need_cmd dpkg-deb dpkg
	info "no herd7 $min or later here: using Debian sid's, in $dir"
	rm -rf "$root" "$dir/herd7"
	mkdir -p "$root"
	# Only herd7 and its .cat files of herdtools7's 250 MB.
	for pkg in herdtools7:./usr/bin/herd7:./usr/share/herdtools7/herd \
		libc6:./usr/lib/x86_64-linux-gnu libgmp10:./usr/lib/x86_64-linux-gnu; do
		IFS=: read -r -a what <<<"$pkg"
		deb=$(BUILD=$dir deb_fetch sid debian "${what[0]}")
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$root" "${what[@]:1}" ||
			die "cannot unpack ${what[*]:1} of $deb (${what[0]})"
		[ "${what[0]}" != herdtools7 ] || ver=$(dpkg-deb -f "$deb" Version)
	done
	lib=$root/usr/lib/x86_64-linux-gnu
	for f in "$lib/ld-linux-x86-64.so.2" "$root/usr/bin/herd7" "$root/usr/share/herdtools7/herd/stdlib.cat"; do
		[ -e "$f" ] || die "$f missing after unpacking sid's herdtools7, libc6 and libgmp10"
	done
	{
		echo '#!/bin/sh'
		echo "# Debian sid's herdtools7 $ver on sid's glibc (scripts/get-herd7.sh)"
		printf 'HERDLIB=%q\nexport HERDLIB\n' "$root/usr/share/herdtools7/herd"
		printf 'exec %q --library-path %q --argv0 herd7 %q "$@"\n' \
			"$lib/ld-linux-x86-64.so.2" "$lib" "$root/usr/bin/herd7"
	} >"$dir/herd7"
	chmod +x "$dir/herd7"
	works "$dir/herd7" ||
		die "Debian sid's herd7 does not run here: try $dir/herd7 -version"
	info "herd7 $("$dir/herd7" -version) (Debian sid's herdtools7 $ver)"
fi
echo "$dir/herd7"
