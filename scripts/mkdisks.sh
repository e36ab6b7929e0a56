#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkdisks.sh: empty ext4 and xfs images and a swap area in build/disks/
# for the guest. The guest attaches them with snapshot=on, so every boot
# starts from these.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_cmd mkfs.ext4 e2fsprogs
need_cmd mkfs.xfs xfsprogs
need_cmd mkswap util-linux
dir=$BUILD/disks
mkdir -p "$dir"
if [ ! -f "$dir/ext4.img" ]; then
	truncate -s 512M "$dir/ext4.img.tmp"
	mkfs.ext4 -q -F -U clear -E root_owner=0:0 "$dir/ext4.img.tmp"
	mv "$dir/ext4.img.tmp" "$dir/ext4.img"
fi
if [ ! -f "$dir/xfs.img" ]; then
	truncate -s 512M "$dir/xfs.img.tmp"
	mkfs.xfs -q -f "$dir/xfs.img.tmp"
	mv "$dir/xfs.img.tmp" "$dir/xfs.img"
fi
if [ ! -f "$dir/swap.img" ]; then
	truncate -s 256M "$dir/swap.img.tmp"
	chmod 600 "$dir/swap.img.tmp"
	mkswap -q -U clear "$dir/swap.img.tmp"
	mv "$dir/swap.img.tmp" "$dir/swap.img"
fi
