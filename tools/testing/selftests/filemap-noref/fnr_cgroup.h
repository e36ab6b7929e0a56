/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 helpers for the filemap-noref selftests: a child cgroup of
 * /sys/fs/cgroup with the memory controller and a memory.max.
 */
#ifndef __FNR_CGROUP_H
#define __FNR_CGROUP_H

#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fnr_pressure.h"

#define FNR_CG_ROOT	"/sys/fs/cgroup"

/* @key's value in @cg/@file, or the file's number if @key is NULL. */
static inline long fnr_cg_value(const char *cg, const char *file,
				const char *key)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	if (key)
		return fnr_proc_value(path, key);
	return fnr_read_long(path);
}

/* Move the calling process into @cg (0 on success). */
static inline int fnr_cg_enter(const char *cg)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	return fnr_write_str(path, "0");
}

/*
 * Create the cgroup @cg (a path under FNR_CG_ROOT) with a memory.max of
 * @max bytes and, where the kernel has swap, a memory.swap.max of 0: the
 * tests reason about what reclaim can free without swap (anon and tmpfs
 * stay), and the guests that run them may have swap on.  Returns 0, -1 if
 * cgroup v2 or its memory controller is not there (skip), or -2 if
 * creating it failed.
 */
static inline int fnr_cg_create(const char *cg, unsigned long max)
{
	char path[512];

	if (access(FNR_CG_ROOT "/cgroup.controllers", R_OK) ||
	    fnr_write_str(FNR_CG_ROOT "/cgroup.subtree_control", "+memory"))
		return -1;
	if (mkdir(cg, 0755))
		return -2;
	snprintf(path, sizeof(path), "%s/memory.max", cg);
	if (fnr_write_long(path, max)) {
		rmdir(cg);
		return -2;
	}
	snprintf(path, sizeof(path), "%s/memory.swap.max", cg);
	if (!access(path, F_OK) && fnr_write_long(path, 0)) {
		rmdir(cg);
		return -2;
	}
	return 0;
}

#endif /* __FNR_CGROUP_H */
