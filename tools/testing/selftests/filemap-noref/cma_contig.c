// SPDX-License-Identifier: GPL-2.0
/*
 * A contiguous allocation must not fail because freed page cache waits
 * for an RCU grace period.
 *
 * alloc_contig_range() (CMA, gigantic huge pages) migrates the folios out of
 * its range and then requires every page in it to be free.  A hot page
 * cache folio keeps PG_rcu_free when it is migrated, so the old copy waits
 * for a grace period before it is free; so does a hot folio dropped just
 * before.  Without waiting for them, the allocation fails with -EBUSY.
 *
 * The test checks that the whole area can be allocated first (else it
 * skips: a failure later would prove nothing), creates and allocates its
 * files while memory is plentiful, pushes their page cache into the CMA
 * area (an anonymous hog takes most other memory while the files are
 * written and read twice), lets the hog go, drops the half of the files
 * with the most pages still cached from the page cache with
 * fadvise(DONTNEED) and allocates the largest free chunk of the area
 * through CMA debugfs; then it checks every byte of the files that were
 * migrated.  Needs CONFIG_CMA_DEBUGFS and a CMA area (boot
 * with cma=64M) and at most 8 GiB free memory (it fills it); skips
 * otherwise.  Environment: FNR_DIR.
 *
 * On ext4 the journal keeps references on metadata buffers, whose block
 * device pages are movable and can sit in the area: the test checkpoints
 * the journal of every mounted ext4 and xfs with FNR_INTRUSIVE=1, else of
 * the one under test (freeze and thaw), and avoids truncate, which pins
 * ext4's allocator pages until the next commit.  Eight runs in a row in one boot
 * (ext4 and xfs) then pass on the base kernel and with the series, and a
 * kernel without the flush in alloc_contig_range() fails 4 of 4 on ext4
 * and 2 of 4 on xfs.
 *
 * With CONFIG_DEBUG_VM the deferred-free worker is held back for a second
 * (debugfs filemap_noref/delay_free_us) from the drop to the allocation,
 * so that the dropped folios are still waiting when it runs, and the test
 * requires that pages were waiting then (nr_rcu_free_pending > 0): else
 * there was nothing for alloc_contig_range() to wait for.
 *
 * control_after_hot_cache is its control: the same with rcu_free_flush()
 * off (debugfs filemap_noref/flush 0, CONFIG_DEBUG_VM), where the
 * allocation must fail while the dropped folios wait, and then succeed
 * with the flush back on.  It skips where FNR_SKIP_CONTROL is set.
 *
 * alloc_ignores_frees_elsewhere: with hot folios of a file outside the
 * area waiting (the worker held back), a one-page CMA allocation from a
 * free area must not flush them (the rcu_free_flush vm event): a flush
 * waits for frees anywhere and may start an expedited grace period, which
 * interrupts every CPU.  Needs CONFIG_DEBUG_VM (the worker's delay).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <mntent.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <linux/fs.h>
#include <linux/magic.h>

#include "../kselftest_harness.h"
#include "fnr_common.h"
#include "fnr_pressure.h"

#define CMA_DEBUGFS	"/sys/kernel/debug/cma"
#define NFILES		8
#define FILE_ID		0x00c0

static char cma_dir[512];

static bool find_cma(void)
{
	struct dirent *d;
	char p[600];
	DIR *dir;

	dir = opendir(CMA_DEBUGFS);
	if (!dir)
		return false;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), CMA_DEBUGFS "/%s/alloc", d->d_name);
		if (!access(p, W_OK)) {
			snprintf(cma_dir, sizeof(cma_dir), CMA_DEBUGFS "/%s",
				 d->d_name);
			break;
		}
	}
	closedir(dir);
	return cma_dir[0];
}

static long cma_read(const char *name)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", cma_dir, name);
	return fnr_read_long(p);
}

static int cma_write(const char *name, long v)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", cma_dir, name);
	return fnr_write_long(p, v);
}

/* Pages this test holds from the area: the teardown gives them back. */
static long area_held;

/* Allocate (@n > 0) or give back (@n < 0) @n pages of the area; 0 or -1. */
static int area_alloc(long n)
{
	if (n > 0 ? cma_write("alloc", n) : cma_write("free", -n))
		return -1;
	area_held += n;
	return 0;
}

/*
 * Freeze and thaw the filesystem: this checkpoints the ext4 journal, which
 * otherwise keeps references on metadata buffers until it needs the space.
 * Their block device pages are movable and may sit in the CMA area, where
 * they would make any allocation of it fail.
 */
static int checkpoint_fs(const char *dir)
{
	int fd = open(dir, O_RDONLY), ret;

	if (fd < 0)
		return -1;
	ret = ioctl(fd, FIFREEZE, 0);
	if (!ret)
		ret = ioctl(fd, FITHAW, 0);
	close(fd);
	return ret;
}

/*
 * Checkpoint every mounted ext4 and xfs, not only the one under test: the
 * journal of a file system that an earlier test used (ext4 before xfs in
 * make check's order) may still hold metadata buffers in the area.  One
 * fresh-clone run of make check on 6.12 could not allocate the area on xfs
 * in three tries a second apart that checkpointed only xfs (what held it is
 * not known: area_census() now says what the area holds when a try fails).
 * It freezes them: without FNR_INTRUSIVE=1 only the one under test (none
 * on a tmpfs, which cannot freeze and has no journal).  0, or -1 with the
 * mount that failed named.
 */
static int checkpoint_mounts(void)
{
	struct statfs sfs;
	struct mntent *m;
	int ret = 0;
	FILE *f;

	if (!fnr_intrusive()) {
		if (statfs(fnr_testdir(), &sfs))
			return -1;
		return sfs.f_type == TMPFS_MAGIC ? 0 : checkpoint_fs(fnr_testdir());
	}
	f = setmntent("/proc/mounts", "r");
	if (!f)
		return -1;
	while (!ret && (m = getmntent(f))) {
		if (strcmp(m->mnt_type, "ext4") && strcmp(m->mnt_type, "xfs"))
			continue;
		ret = checkpoint_fs(m->mnt_dir);
		if (ret)
			printf("# checkpoint (freeze, thaw) of %s failed: %s\n",
			       m->mnt_dir, strerror(errno));
	}
	endmntent(f);
	return ret;
}

/*
 * Why the area could not be allocated: what its pages are, from
 * /proc/kpageflags and /proc/kpagecount (KPF_* bits of
 * include/uapi/linux/kernel-page-flags.h).
 */
static void area_census(void)
{
	enum { BUDDY = 10, LRU = 5, ANON = 12, SLAB = 7, DIRTY = 4,
	       WRITEBACK = 8, NOPAGE = 20, PRIVATE = 35 };
	long base = cma_read("base_pfn"), count = cma_read("count"), i;
	long nfree = 0, file = 0, anon = 0, slab = 0, other = 0;
	long dirty = 0, wb = 0, priv = 0, extra = 0;
	int ff = open("/proc/kpageflags", O_RDONLY);
	int fc = open("/proc/kpagecount", O_RDONLY);
	uint64_t flags, refs;

	for (i = 0; base >= 0 && ff >= 0 && fc >= 0 && i < count; i++) {
		if (pread(ff, &flags, 8, (base + i) * 8) != 8 ||
		    pread(fc, &refs, 8, (base + i) * 8) != 8)
			break;
		if (flags & (1ULL << BUDDY) || !(flags | refs)) {
			nfree++;
			continue;
		}
		if ((flags & (1ULL << LRU)) && !(flags & (1ULL << ANON)))
			file++;
		else if (flags & (1ULL << ANON))
			anon++;
		else if (flags & (1ULL << SLAB))
			slab++;
		else if (!(flags & (1ULL << NOPAGE)))
			other++;
		dirty += !!(flags & (1ULL << DIRTY));
		wb += !!(flags & (1ULL << WRITEBACK));
		priv += !!(flags & (1ULL << PRIVATE));
		extra += refs > 1;
	}
	if (i < count)
		printf("# census of the area: cannot read /proc/kpageflags or kpagecount at page %ld: %s\n",
		       i, strerror(errno));
	else
		printf("# census of the area's %ld pages: %ld free (buddy, or no flags and no reference: a free block's tail or a page waiting for a grace period; %ld pages wait, all zones), %ld file LRU, %ld anon, %ld slab, %ld other; %ld dirty, %ld writeback, %ld with buffers (private), %ld mapped or held more than once\n",
		       count, nfree, fnr_pending_exact(), file, anon, slab,
		       other, dirty, wb, priv, extra);
	if (ff >= 0)
		close(ff);
	if (fc >= 0)
		close(fc);
}

/* How many of the first @size bytes of @fd are in the page cache, in pages. */
static long cached_pages(int fd, size_t size)
{
	size_t i, n = (size + FNR_PAGE - 1) / FNR_PAGE;
	unsigned char *vec = malloc(n);
	long cached = 0;
	void *m;

	m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (!vec || m == MAP_FAILED || mincore(m, size, vec))
		cached = -1;
	for (i = 0; cached >= 0 && i < n; i++)
		cached += vec[i] & 1;
	if (m != MAP_FAILED)
		munmap(m, size);
	free(vec);
	return cached;
}

static long meminfo_mib(const char *name)
{
	return fnr_proc_value("/proc/meminfo", name) / 1024;
}

/*
 * Allocate all @count pages of the area.  A page that an earlier test left
 * pinned or under writeback there makes that fail for a while on any
 * kernel: four tries, 1, 2 and 4 s apart, each after a checkpoint of every
 * mounted ext4 and xfs (a tmpfs cannot freeze and has no journal).  0 once
 * allocated, -1 if every try failed (each failure with a census of the
 * area), -2 if a checkpoint failed.
 */
static int alloc_whole_area(long count)
{
	int i, ret = -1;

	for (i = 0; i < 4 && ret; i++) {
		if (i)
			sleep(1 << (i - 1));
		if (checkpoint_mounts())
			return -2;
		ret = area_alloc(count);
		printf("# allocating all %ld pages of the area (try %d): %s\n",
		       count, i + 1, ret ? "failed" : "done");
		if (ret)
			area_census();
	}
	return ret;
}

FIXTURE(cma) {
	struct fnr_held held;	/* frees held back, to release */
};

FIXTURE_SETUP(cma)
{
	self->held.expedite = -1;
	if (!fnr_series())
		SKIP(return, "%s", FNR_NO_SERIES);
}

FIXTURE_TEARDOWN(cma)
{
	/* What a failed assertion left allocated (else 0). */
	if (area_held && area_alloc(-area_held))
		printf("# could not give back %ld pages of the CMA area: %s\n",
		       area_held, strerror(errno));
	if (fnr_release_frees(&self->held))
		printf("# could not put back %s or %s: %s\n", FNR_DELAY_FREE,
		       FNR_EXPEDITE_SYSCTL, strerror(errno));
}

/*
 * alloc_after_hot_cache, and with @control its control: the same with
 * rcu_free_flush() off (debugfs filemap_noref/flush 0), where the
 * allocation must fail, and then, with the flush back on, succeed.
 */
static void hot_cache_run(struct __test_metadata *_metadata,
			  FIXTURE_DATA(cma) *self, bool control)
{
	long total_mib, chunk, used_mib, cma_total, cma_free, pending, cached;
	static const long margin[] = { 12, 10, 9 };	/* eighths of the area */
	int fd[NFILES], i, j, more, ret, try;
	long ncached[NFILES];
	bool drop[NFILES];
	int held;
	size_t fsize;
	char path[4096], why[512];
	const char *no;
	char *buf;
	pid_t hog;

	struct statfs sfs;

	no = control ? fnr_flush_control_unfit(why, sizeof(why)) : NULL;
	if (no)
		SKIP(return, "%s", no);
	if (!find_cma())
		SKIP(return, "no CMA area (CONFIG_CMA_DEBUGFS, boot with cma=64M)");
	ASSERT_EQ(0, statfs(fnr_testdir(), &sfs));
	if (sfs.f_type == TMPFS_MAGIC)
		SKIP(return, "tmpfs page cache is swapped, not dropped: no end to filling memory");
	cma_total = meminfo_mib("CmaTotal");
	ASSERT_LT(0, cma_total);
	if (meminfo_mib("MemFree") > 8192)
		SKIP(return, "more than 8 GiB free: too much to fill, run it in a small VM");

	/*
	 * The whole area must be allocatable before the workload, or a
	 * failure after it would prove nothing.  The allocation also moves
	 * whatever earlier runs left in the area out of it.  A page that an
	 * earlier test left pinned or under writeback there makes it fail
	 * for a while on any kernel: four tries, 7 s in all.
	 */
	chunk = cma_read("count");
	ret = alloc_whole_area(chunk);
	ASSERT_NE(-2, ret) TH_LOG("checkpoint: %s", strerror(errno));
	if (ret)
		SKIP(return, "the CMA area cannot be allocated even before the workload");
	ASSERT_EQ(0, area_alloc(-chunk));

	/*
	 * Create and allocate the files first, while memory is plentiful, so
	 * that the filesystem metadata they need is read outside the area:
	 * the truncate below changes it, and the journal then holds it.  No
	 * drop_caches after this: it would drop that metadata too.
	 */
	sync();
	fnr_write_long("/proc/sys/vm/drop_caches", 3);
	/* Half the area: more pushes the files' own pages out under the hog. */
	fsize = cma_total * FNR_MIB / 2 / NFILES;
	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/fnr_cma.%d.%d", fnr_testdir(),
			 getpid(), i);
		fd[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		ASSERT_LE(0, fd[i]);
		unlink(path);
		ASSERT_EQ(0, fallocate(fd[i], 0, 0, fsize));
	}
	ASSERT_EQ(0, checkpoint_fs(fnr_testdir()));

	/*
	 * Leave about 1.5x the area free: the allocator then prefers CMA.
	 * Where the page cache still lands elsewhere (once in a fresh-clone
	 * run on 6.12: 5 of 64 MiB), drop it and write again with less free
	 * memory left, 5/4 and then 9/8 of the area.
	 */
	for (try = 0; try < 3; try++) {
		if (try) {
			for (i = 0; i < NFILES; i++)
				ASSERT_EQ(0, posix_fadvise(fd[i], 0, 0, POSIX_FADV_DONTNEED));
			ASSERT_LE(0, fnr_wait_drained(5.0));
		}
		hog = fnr_start_hog((meminfo_mib("MemFree") - cma_total * margin[try] / 8) *
				    FNR_MIB);
		ASSERT_LT(0, hog);
		for (i = 0; i < NFILES; i++) {
			ASSERT_EQ(0, fnr_write_gen(fd[i], 0, fsize, FILE_ID + i, 1));
			ASSERT_EQ(0, fsync(fd[i]));
			ASSERT_EQ(0, fnr_make_hot(fd[i], 0, fsize));
		}
		kill(hog, SIGKILL);
		waitpid(hog, NULL, 0);

		cma_free = meminfo_mib("CmaFree");
		used_mib = cma_total - cma_free;
		TH_LOG("CMA area %s: %ld MiB, %ld MiB in use after the hot files were written (%ld/8 of it left free)",
		       cma_dir, cma_total, used_mib, margin[try]);
		if (used_mib >= cma_total / 8)
			break;
	}
	if (used_mib < cma_total / 8) {
		for (i = 0; i < NFILES; i++)
			close(fd[i]);
		SKIP(return, "the page cache did not land in the CMA area");
	}

	/* Busy buffers make migration fail on any kernel. */
	ASSERT_EQ(0, checkpoint_fs(fnr_testdir()));

	/*
	 * Half of the files leave the page cache: their hot folios wait, in
	 * the area.  The half with the most pages still cached: the hog
	 * pushed out the files written first (in one run of ten the even
	 * ones had no page left).  fadvise, not truncate: a truncate makes
	 * ext4 pin the pages of its block allocator until the next journal
	 * commit, which fails the allocation on any kernel.
	 */
	for (i = 0; i < NFILES; i++)
		ncached[i] = cached_pages(fd[i], fsize);
	for (i = 0; i < NFILES; i++) {
		for (j = 0, more = 0; j < NFILES; j++)
			more += ncached[j] > ncached[i] ||
				(ncached[j] == ncached[i] && j < i);
		drop[i] = more < NFILES / 2;
	}
	for (i = 0, cached = 0; i < NFILES; i++)
		cached += drop[i] ? ncached[i] : 0;
	/*
	 * Hold the dropped folios back: no expedited grace period, and the
	 * worker waits a second; only alloc_contig_range()'s flush frees
	 * them in time.  Read the files to drop once more first, so that all
	 * their cached folios are hot.
	 */
	held = fnr_hold_frees(&self->held);
	ASSERT_LE(0, held) TH_LOG("holding frees back: %s", strerror(errno));
	if (control)
		ASSERT_EQ(0, fnr_flush_off(&self->held))
			TH_LOG("write 0 to %s: %s", FNR_FLUSH_KNOB, strerror(errno));
	for (i = 0; i < NFILES; i++)
		if (drop[i])
			ASSERT_EQ(0, fnr_make_hot(fd[i], 0, fsize));
	for (i = 0; i < NFILES; i++)
		if (drop[i])
			ASSERT_EQ(0, posix_fadvise(fd[i], 0, 0, POSIX_FADV_DONTNEED));
	pending = fnr_pending_exact();
	TH_LOG("dropping half of the files: %ld of their %zu pages were still cached",
	       cached, NFILES / 2 * fsize / FNR_PAGE);

	chunk = cma_read("maxchunk");
	total_mib = cma_read("count") * FNR_PAGE / FNR_MIB;
	ASSERT_LT(0, chunk);
	ret = area_alloc(chunk);
	TH_LOG("allocating the largest free chunk, %ld of %ld MiB%s: %s",
	       chunk * FNR_PAGE / FNR_MIB, total_mib,
	       control ? ", rcu_free_flush() off" : "",
	       ret ? "failed" : "done");
	if (control) {
		EXPECT_NE(0, ret)
			TH_LOG("control run: the allocation succeeded without rcu_free_flush(): the test cannot see a missing wait");
		if (!ret)
			ASSERT_EQ(0, area_alloc(-chunk));
		/*
		 * With the flush back on, the worker still held back, the same
		 * allocation must succeed.
		 */
		ASSERT_EQ(0, fnr_write_str(FNR_FLUSH_KNOB, "1\n"));
		self->held.no_flush = false;
		ret = area_alloc(chunk);
		TH_LOG("again with rcu_free_flush() on (%ld pages waiting): %s",
		       fnr_pending_exact(), ret ? "failed" : "done");
	}
	EXPECT_EQ(0, ret)
		TH_LOG("cma_alloc of %ld pages failed: freed folios waiting in the area?",
		       chunk);
	ASSERT_EQ(0, fnr_release_frees(&self->held));
	if (!ret)
		ASSERT_EQ(0, area_alloc(-chunk));
	TH_LOG("%ld pages waited for a grace period before the allocation%s",
	       pending, held ? " (deferred-free worker held back 1 s)" : "");
	/* Those still cached since the hog are the ones in the area. */
	ASSERT_LT(0, cached)
		TH_LOG("no page of the files to drop was still cached: none waits in the area");
	if (held)
		ASSERT_LT(0, pending)
			TH_LOG("no dropped page was waiting: alloc_contig_range() had nothing to wait for");

	/* The migrated folios must have kept their data. */
	buf = malloc(fsize);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < NFILES; i++) {
		if (drop[i])
			continue;
		ASSERT_EQ((ssize_t)fsize, pread(fd[i], buf, fsize, 0));
		ASSERT_EQ(0, fnr_check(buf, fsize, 0, FILE_ID + i, 1, why,
				       sizeof(why)))
			TH_LOG("file %d after the CMA allocation: %s", i, why);
	}
	free(buf);
	for (i = 0; i < NFILES; i++)
		close(fd[i]);
}

TEST_F_TIMEOUT(cma, alloc_after_hot_cache, 180)
{
	hot_cache_run(_metadata, self, false);
}

TEST_F_TIMEOUT(cma, control_after_hot_cache, 180)
{
	hot_cache_run(_metadata, self, true);
}

TEST_F_TIMEOUT(cma, alloc_ignores_frees_elsewhere, 120)
{
	long count, flushes, pending, after;
	size_t size = 4 * FNR_MIB;
	struct statfs sfs;
	char path[4096];
	int held, fd, ret;

	if (!find_cma())
		SKIP(return, "no CMA area (CONFIG_CMA_DEBUGFS, boot with cma=64M)");
	if (fnr_vmstat(FNR_FLUSHES) < 0)
		SKIP(return, "no " FNR_FLUSHES " in /proc/vmstat (CONFIG_VM_EVENT_COUNTERS off)");

	/* Hold the whole area, so that the hot file lies outside it. */
	ASSERT_EQ(0, statfs(fnr_testdir(), &sfs));
	count = cma_read("count");
	ret = alloc_whole_area(count);
	ASSERT_NE(-2, ret) TH_LOG("checkpoint: %s", strerror(errno));
	if (ret)
		SKIP(return, "the CMA area cannot be allocated");

	snprintf(path, sizeof(path), "%s/fnr_cma_else.%d", fnr_testdir(), getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	unlink(path);
	ASSERT_EQ(0, fnr_write_gen(fd, 0, size, FILE_ID, 1));
	ASSERT_EQ(0, fnr_make_hot(fd, 0, size));
	/*
	 * Give the area back before the truncate: the file lies outside it
	 * now, and the worker is held back only a second (the most a debug
	 * delay waits), less than giving 64 MiB back took on the debug
	 * kernel, where the frees drained before the allocation.
	 */
	ASSERT_EQ(0, area_alloc(-count));
	held = fnr_hold_frees(&self->held);
	ASSERT_LE(0, held) TH_LOG("holding frees back: %s", strerror(errno));
	if (!held) {
		close(fd);
		SKIP(return, "no %s: the frees drain before the allocation", FNR_DELAY_FREE);
	}
	ASSERT_EQ(0, ftruncate(fd, 0));
	close(fd);
	pending = fnr_pending_exact();

	flushes = fnr_vmstat(FNR_FLUSHES);
	ret = area_alloc(1);
	flushes = fnr_vmstat(FNR_FLUSHES) - flushes;
	after = fnr_pending_exact();
	if (!ret)
		ASSERT_EQ(0, area_alloc(-1));
	ASSERT_EQ(0, fnr_release_frees(&self->held));
	TH_LOG("%ld pages pending outside the area, %ld after a one-page allocation from it: %ld flushes",
	       pending, after, flushes);
	ASSERT_EQ(0, ret) TH_LOG("a one-page CMA allocation failed");
	ASSERT_LT(0, pending) TH_LOG("no page of the file was waiting");
	ASSERT_EQ(0, flushes) TH_LOG("the allocation flushed frees outside its range");
	ASSERT_LT(0, after)
		TH_LOG("the frees drained before the allocation ended: the test proves nothing");
}

TEST_HARNESS_MAIN
