// SPDX-License-Identifier: GPL-2.0
/*
 * Reads that skip the folio reference must still activate hot folios.
 *
 * Reclaim moves active file folios back to the inactive list, and an
 * inactive, referenced, unmapped file folio is reclaimed unless the next
 * read activates it (folio_mark_accessed()).  If reads through the fast
 * path only set PG_referenced, a hot folio is never activated again and a
 * stream of read-once data evicts the hot set.
 *
 * This test does the deactivation itself, so that nothing depends on
 * reclaim's timing: in a cgroup of its own, a file is read twice (the
 * second read activates its folios and makes them hot), mapped and
 * deactivated with MADV_COLD, then read twice again.  Checks, from the
 * cgroup's memory.stat: after the first two reads and after the last two,
 * at least 90% of the file is on the active list; after MADV_COLD, at most
 * 10% (else the test proves nothing).
 *
 * A stream test (hot set plus read-once data in a small cgroup) showed the
 * same effect, but its figures varied from run to run more than between
 * kernels under TCG.  Needs cgroup v2 with the memory controller; skips
 * otherwise, and on tmpfs (shmem folios live on the anon LRU lists).
 * Environment: FNR_DIR.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/mman.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "../kselftest_harness.h"
#include "fnr_common.h"
#include "fnr_pressure.h"
#include "fnr_cgroup.h"

#define FILE_SIZE	(16 * FNR_MIB)
#define CG_MAX		(256 * FNR_MIB)	/* no reclaim */
#define STAT_FLUSH_US	2500000		/* memcg stats flush every 2 s */

FIXTURE(lru) {
	char cg[256];
	char path[4096];
	int fd;
	bool created;
	bool entered;
};

FIXTURE_SETUP(lru)
{
	struct statfs sfs;
	int ret;

	if (!fnr_series())
		SKIP(return, "%s", FNR_NO_SERIES);

	self->fd = -1;
	ASSERT_EQ(0, statfs(fnr_testdir(), &sfs));
	if (sfs.f_type == TMPFS_MAGIC)
		SKIP(return, "shmem folios are on the anon LRU lists");
	snprintf(self->cg, sizeof(self->cg), FNR_CG_ROOT "/fnr_lru.%d",
		 getpid());
	snprintf(self->path, sizeof(self->path), "%s/fnr_lru.%d",
		 fnr_testdir(), getpid());
	ret = fnr_cg_create(self->cg, CG_MAX);
	if (ret == -1)
		SKIP(return, "no cgroup v2 memory controller at " FNR_CG_ROOT);
	ASSERT_EQ(0, ret);
	self->created = true;
	/* Written outside the cgroup, then dropped: it starts empty. */
	self->fd = open(self->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fnr_write_gen(self->fd, 0, FILE_SIZE, 1, 1));
	ASSERT_EQ(0, fnr_drop_cache(self->fd));
	ASSERT_EQ(0, fnr_cg_enter(self->cg));
	self->entered = true;
}

FIXTURE_TEARDOWN(lru)
{
	if (self->entered)
		fnr_cg_enter(FNR_CG_ROOT);
	if (self->fd >= 0)
		close(self->fd);
	unlink(self->path);
	if (self->created && rmdir(self->cg))
		TH_LOG("rmdir %s: %s", self->cg, strerror(errno));
}

/* Percentage of the file on the cgroup's active file list. */
static long active_pct(const char *cg)
{
	usleep(STAT_FLUSH_US);
	return fnr_cg_value(cg, "memory.stat", "active_file") * 100 /
	       (long)FILE_SIZE;
}

/*
 * Read the whole file twice, each time through a new open file, in 64 KiB
 * reads into a buffer that is already faulted in (the fast path gives up
 * on a fault), checking the data.
 */
static int read_twice(struct __test_metadata *_metadata, const char *path)
{
	static char buf[65536];
	char why[512];
	int i, fd, ret = 0;
	off_t off;

	memset(buf, 0, sizeof(buf));
	for (i = 0; i < 2 && !ret; i++) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -1;
		for (off = 0; off < FILE_SIZE && !ret; off += sizeof(buf)) {
			if (pread(fd, buf, sizeof(buf), off) != sizeof(buf) ||
			    fnr_check(buf, sizeof(buf), off, 1, 1, why,
				      sizeof(why))) {
				TH_LOG("pass %d, offset %lld: %s", i,
				       (long long)off, why);
				ret = -1;
			}
		}
		close(fd);
	}
	return ret;
}

/* 7.5 s of sleeps and 64 MiB checked byte by byte: slow under TCG. */
TEST_F_TIMEOUT(lru, fast_path_reads_activate, 90)
{
	long before, cold, after, noref, activate;
	char why[128];
	char *map;

	ASSERT_EQ(0, read_twice(_metadata, self->path));
	before = active_pct(self->cg);

	/* Mapped, so that MADV_COLD finds the folios in the page tables. */
	map = mmap(NULL, FILE_SIZE, PROT_READ, MAP_SHARED | MAP_POPULATE,
		   self->fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, madvise(map, FILE_SIZE, MADV_COLD));
	ASSERT_EQ(0, munmap(map, FILE_SIZE));
	cold = active_pct(self->cg);

	noref = fnr_vmstat(FNR_NOREF_READ);
	activate = fnr_vmstat("noref_miss_activate");
	ASSERT_EQ(0, read_twice(_metadata, self->path));
	after = active_pct(self->cg);
	noref = fnr_vmstat(FNR_NOREF_READ) - noref;
	activate = fnr_vmstat("noref_miss_activate") - activate;

	TH_LOG(
	"active: %ld%% after two reads, %ld%% after MADV_COLD, %ld%% after two more reads (%ld handed to the normal path for activation)",
	       before, cold, after, activate);
	ASSERT_EQ(0, fnr_noref_premise(noref, why, sizeof(why)))
		TH_LOG("%s", why);
	ASSERT_LE(90, before);
	ASSERT_GE(10, cold) TH_LOG("MADV_COLD did not deactivate: nothing tested");
	EXPECT_LE(90, after)
		TH_LOG(
		"hot folios read again were not activated: are fast-path reads marking them accessed?");
}

TEST_HARNESS_MAIN
