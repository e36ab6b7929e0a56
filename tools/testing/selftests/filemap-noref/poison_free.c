// SPDX-License-Identifier: GPL-2.0
/*
 * A large folio with a poisoned head page must wait for its grace period
 * like any other: its other pages go back to the page allocator, and
 * reference-free readers may still be copying them.
 *
 * free_pages_prepare() keeps only order-0 poisoned pages out of the page
 * allocator; a large folio whose split failed after memory_failure()
 * goes back whole.  The test builds that folio: a hot, stamped huge tmpfs
 * folio, pinned by a pipe (splice) so that memory_failure() cannot split
 * it, with its head page poisoned through madvise(MADV_HWPOISON).  Reader
 * threads copy pages 1 and up of it and check every byte; then the file
 * is truncated and the pipe closed, which frees the folio.  With
 * init_on_free=1 a page freed under a reader reads as zeros.  On
 * CONFIG_DEBUG_VM kernels readers stop 2 ms between checking the folio
 * and i_size and copying it (debugfs filemap_noref/delay_copy_us), so
 * that the truncate and the free land while they copy.  Short reads (after the truncate) are fine;
 * a wrong byte is not.  Each round poisons one more page for good.
 * control_large_head is its control: the same with the RCU-deferred free
 * off (debugfs defer_free 0) on a kernel booted with page_poison=1 must
 * read the poison of the freed folio (make check's control boot).
 *
 * Skips unless FNR_DIR is a tmpfs with huge folios, and unless the kernel
 * has CONFIG_MEMORY_FAILURE (MADV_HWPOISON); all of it poisons or
 * offlines pages, so it skips unless FNR_INTRUSIVE=1.  Environment:
 * FNR_DIR, FNR_READERS (default 2), FNR_INTRUSIVE.
 *
 * unpoison.soft_offline: a page of a hot file is soft-offlined (the page
 * leaves the file, poisoned: page_handle_poison()) and at once unpoisoned
 * (debugfs hwpoison/unpoison-pfn), which frees it, while readers that
 * checked it before it left sit 20 ms before their copy (debugfs
 * filemap_noref/delay_validated_us).  That free must wait for a grace
 * period as any other; v10 cleared PG_rcu_free when the poisoned page
 * was first freed, so the unpoison freed it at once and the readers
 * copied zeros.  Runs on any file system; skips without
 * CONFIG_HWPOISON_INJECT, and once a real (not injected) memory error has
 * disabled unpoison in this boot (mce_race).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/magic.h>

#include "../kselftest_harness.h"
#include "fnr_pressure.h"

#define PG		FNR_PAGE
#define ROUNDS		3
#define CONTROL_ROUNDS	12	/* 6.12 found the poison in 8 of 10 runs of 3 */
#define READ_LEN	(64 * 1024)
#define FILE_ID		0x5a0e
#define PMD_SIZE_PATH	"/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
#define DELAY_COPY	"/sys/kernel/debug/filemap_noref/delay_copy_us"
#define DELAY_VALIDATED	"/sys/kernel/debug/filemap_noref/delay_validated_us"
#define DEFER_FREE	"/sys/kernel/debug/filemap_noref/defer_free"
#define SOFT_OFFLINE	"/sys/devices/system/memory/soft_offline_page"
#define UNPOISON	"/sys/kernel/debug/hwpoison/unpoison-pfn"
#define UP_ROUNDS	20
#define UP_PAGES	4
#define UP_ID		0x5a0f
#define UP_DELAY_US	20000	/* delay_validated_us */
#define UP_HELD_S	(UP_DELAY_US / 2e6)	/* a read held after its check */
#ifndef MADV_HWPOISON
#define MADV_HWPOISON	100
#endif

struct poison_race {
	int fd;
	uint32_t gen;
	size_t size;
	pthread_barrier_t start;
	struct fnr_stop ctl;
	unsigned long reads, copied, eio;
	unsigned long poisoned;	/* bad reads with page poison in them */
	struct fnr_bad bad;
};

struct reader {
	struct poison_race *r;
	pthread_t th;
	uint64_t rng;
	uint8_t buf[READ_LEN];
};

static void *reader_fn(void *arg)
{
	struct reader *rd = arg;
	struct poison_race *r = rd->r;
	char why[512];
	uint64_t off;
	ssize_t got;

	pthread_barrier_wait(&r->start);
	while (!fnr_stopped(&r->ctl)) {
		/* Never page 0: a poisoned page ends any read with -EIO. */
		off = PG + fnr_rnd(&rd->rng) % (r->size - PG - READ_LEN);
		/* The normal path refuses a folio with a poisoned page. */
		got = fnr_pread_eio(&r->ctl, r->fd, rd->buf, READ_LEN, off,
				    &r->reads, &r->eio);
		if (got == -1)
			continue;
		if (got < 0)
			break;
		__atomic_add_fetch(&r->copied, got, __ATOMIC_RELAXED);
		if (!fnr_check(rd->buf, got, off, FILE_ID, r->gen, why,
			       sizeof(why)))
			continue;
		if (fnr_poison_read(rd->buf, got, off))
			__atomic_add_fetch(&r->poisoned, 1, __ATOMIC_RELAXED);
		fnr_bad_read(&r->bad, off, got, why);
	}
	return NULL;
}

/*
 * Poison the head page of the folio at the start of @fd, in a child: the
 * kernel may kill the processes that map it with SIGBUS.  Returns 0 if the page is
 * poisoned, 1 if MADV_HWPOISON is not there, -1 on error.
 */
static int poison_head(int fd, size_t size)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		char *p = mmap(NULL, size, PROT_READ, MAP_SHARED | MAP_POPULATE,
			       fd, 0);

		if (p == MAP_FAILED)
			_exit(2);
		/* A failed split of the poisoned folio returns EHWPOISON. */
		if (madvise(p, PG, MADV_HWPOISON) && errno != EHWPOISON &&
		    errno != EBUSY)
			_exit(errno == EINVAL || errno == EPERM ? 1 : 2);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	/* memory_failure() may kill the processes that map the page. */
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) <= 1)
		return WEXITSTATUS(status);
	return -1;
}

FIXTURE(poison)
{
	struct poison_race r;
	char path[PATH_MAX];
	size_t pmd;
	bool delay_on;
	bool defer_off;		/* DEFER_FREE to put back to 1 */
};

FIXTURE_SETUP(poison)
{
	struct statfs sfs;

	if (!fnr_series())
		SKIP(return, "%s", FNR_NO_SERIES);
	if (!fnr_intrusive())
		SKIP(return, "%s", FNR_NOT_ASKED);

	ASSERT_EQ(0, statfs(fnr_testdir(), &sfs));
	if (sfs.f_type != TMPFS_MAGIC)
		SKIP(return, "%s is not a tmpfs", fnr_testdir());
	self->pmd = fnr_read_long(PMD_SIZE_PATH);
	if ((long)self->pmd <= 0)
		SKIP(return, "no %s: CONFIG_TRANSPARENT_HUGEPAGE off?",
		     PMD_SIZE_PATH);
	if (fnr_proc_value("/proc/meminfo", "HardwareCorrupted") < 0)
		SKIP(return, "no HardwareCorrupted in /proc/meminfo: CONFIG_MEMORY_FAILURE off?");
	if (!access(DELAY_COPY, W_OK)) {
		self->delay_on = true;
		ASSERT_EQ(0, fnr_write_str(DELAY_COPY, "2000\n"));
	}
}

FIXTURE_TEARDOWN_PARENT(poison)
{
	if (self->defer_off && fnr_write_str(DEFER_FREE, "1\n"))
		TH_LOG("could not restore %s: %s", DEFER_FREE, strerror(errno));
	if (self->delay_on && fnr_write_str(DELAY_COPY, "0\n"))
		TH_LOG("could not reset %s: %s", DELAY_COPY,
		       strerror(errno));
	if (self->path[0])
		unlink(self->path);
}

static void large_head_run(struct __test_metadata *_metadata,
			   FIXTURE_DATA(poison) *self, bool control)
{
	long i, nr = fnr_env_long("FNR_READERS", 2, 1, 64);
	struct reader *rd = calloc(nr, sizeof(*rd));
	struct poison_race *r = &self->r;
	long huge0, huge1, hw0, hw1, n0, noref = 0, overlapped = 0, ov0;
	int round, p[2], ret;
	char why[128];

	ASSERT_NE(NULL, rd);
	r->size = self->pmd;
	/* A control goes on until a freed page was read, or CONTROL_ROUNDS. */
	for (round = 0; round < (control ? CONTROL_ROUNDS : ROUNDS) &&
	     !(control && r->poisoned); round++) {
		memset(&r->ctl, 0, sizeof(r->ctl));
		r->gen = round + 1;
		snprintf(self->path, sizeof(self->path),
			 "%s/fnr_poison.XXXXXX", fnr_testdir());
		r->fd = mkstemp(self->path);
		ASSERT_LE(0, r->fd) TH_LOG("mkstemp: %s", strerror(errno));
		huge0 = fnr_proc_value("/proc/meminfo", "ShmemHugePages");
		ASSERT_EQ(0, fnr_write_gen(r->fd, 0, r->size, FILE_ID, r->gen));
		huge1 = fnr_proc_value("/proc/meminfo", "ShmemHugePages");
		if (huge1 - huge0 < (long)(r->size >> 10))
			SKIP(return, "no huge folio on %s (ShmemHugePages %ld -> %ld kB)",
			     fnr_testdir(), huge0, huge1);
		ASSERT_EQ(0, fnr_make_hot(r->fd, 0, r->size));

		/* A pipe holds a reference: the split after the poison fails. */
		ASSERT_EQ(0, pipe(p));
		ASSERT_EQ(PG, splice(r->fd, &(loff_t){ 0 }, p[1], NULL, PG, 0))
			TH_LOG("splice: %s", strerror(errno));
		hw0 = fnr_proc_value("/proc/meminfo", "HardwareCorrupted");
		ret = poison_head(r->fd, r->size);
		if (ret == 1)
			SKIP(return, "MADV_HWPOISON not supported");
		ASSERT_EQ(0, ret);
		hw1 = fnr_proc_value("/proc/meminfo", "HardwareCorrupted");
		ASSERT_LT(hw0, hw1) TH_LOG("the head page was not poisoned");
		ASSERT_LE(r->size >> 10,
			  fnr_proc_value("/proc/meminfo", "ShmemHugePages") - huge0)
			TH_LOG("the poisoned folio was split: nothing to test");

		n0 = fnr_vmstat(FNR_NOREF_READ);
		ov0 = fnr_overlapped();
		ASSERT_EQ(0, pthread_barrier_init(&r->start, NULL, nr + 1));
		for (i = 0; i < nr; i++) {
			rd[i].r = r;
			rd[i].rng = 0x9e3779b97f4a7c15ULL * (i + 1) ^ getpid();
			ASSERT_EQ(0, pthread_create(&rd[i].th, NULL, reader_fn,
						    &rd[i]));
		}
		pthread_barrier_wait(&r->start);
		usleep(50000);
		/* Free the folio under the readers: the pipe has the last ref. */
		ASSERT_EQ(0, ftruncate(r->fd, 0));
		close(p[0]);
		close(p[1]);
		usleep(50000);
		fnr_set_stop(&r->ctl);
		for (i = 0; i < nr; i++)
			ASSERT_EQ(0, pthread_join(rd[i].th, NULL));
		noref += fnr_vmstat(FNR_NOREF_READ) - n0;
		/* Summed over the rounds; -1 if not counted. */
		ov0 = fnr_overlapped_since(ov0);
		overlapped = ov0 < 0 || overlapped < 0 ? -1 : overlapped + ov0;
		pthread_barrier_destroy(&r->start);
		close(r->fd);
		unlink(self->path);
		self->path[0] = 0;
		ASSERT_FALSE(r->ctl.have_err) TH_LOG("%s", r->ctl.err);
	}
	free(rd);

	TH_LOG("%d poisoned folios freed under %lu reads (%lu KiB, %lu EIO), %lu bad%s",
	       round, r->reads, r->copied >> 10, r->eio, r->bad.n,
	       self->delay_on ? " (readers delayed after the check)" : "");
	if (r->bad.have_why)
		TH_LOG("first bad read: %s", r->bad.why);
	ASSERT_LT(0, r->copied) TH_LOG("no read copied anything");
	ASSERT_EQ(0, fnr_noref_premise(noref, why, sizeof(why)))
		TH_LOG("%s", why);
	if (control) {
		TH_LOG("%lu bad reads with page poison in them", r->poisoned);
		/* The bug it is built for: the freed folio copied. */
		EXPECT_LT(0, r->poisoned)
			TH_LOG("defer_free=0 but no page poison read: %s",
			       "the test could not detect the injected bug");
		return;
	}
	ASSERT_EQ(0, fnr_overlap_premise(overlapped, why, sizeof(why)))
		TH_LOG("%s", why);
	EXPECT_EQ(0, r->bad.n) TH_LOG("readers copied a freed page");
}

TEST_F_TIMEOUT(poison, large_head, 120)
{
	large_head_run(_metadata, self, false);
}

/*
 * Its control: the same with the RCU-deferred free off (debugfs
 * filemap_noref/defer_free 0, CONFIG_DEBUG_VM) on a kernel booted with
 * page_poison=1: the folio is freed at once under the readers, which must
 * read its poison (0xaa).  Round after round, up to CONTROL_ROUNDS, until
 * one does.
 */
TEST_F_TIMEOUT(poison, control_large_head, 120)
{
	char why[256];
	const char *no = fnr_control_unfit(why, sizeof(why));

	if (no)
		SKIP(return, "%s", no);
	ASSERT_EQ(0, fnr_write_str(DEFER_FREE, "0\n"))
		TH_LOG("write 0 to %s: %s", DEFER_FREE, strerror(errno));
	self->defer_off = true;
	large_head_run(_metadata, self, true);
	ASSERT_EQ(0, fnr_write_str(DEFER_FREE, "1\n"))
		TH_LOG("restore %s: %s", DEFER_FREE, strerror(errno));
	self->defer_off = false;
}

/* unpoison.soft_offline: readers of page 1 of a small hot file. */
struct up_race {
	int fd;
	pthread_barrier_t start;
	struct fnr_stop ctl;
	unsigned long reads, eio;
	unsigned long free_seq;	/* odd from a soft offline to its end */
	unsigned long unpoisoned;	/* pages freed by unpoison so far */
	unsigned long spanned;	/* held reads across an offline and unpoison */
	struct fnr_bad bad;
};

static void *up_reader_fn(void *arg)
{
	static const size_t lens[] = { 16, 200, PG, 64 };
	struct up_race *r = arg;
	char buf[PG], why[512];
	unsigned long n, c0, u0, u1;
	uint64_t off;
	size_t len;
	ssize_t got;
	double t;

	pthread_barrier_wait(&r->start);
	for (n = 0; !fnr_stopped(&r->ctl); n++) {
		len = lens[n % 4];
		off = PG + (n * 520) % (PG - len + 1);
		c0 = __atomic_load_n(&r->free_seq, __ATOMIC_SEQ_CST);
		u0 = __atomic_load_n(&r->unpoisoned, __ATOMIC_SEQ_CST);
		t = fnr_now();
		/* EIO not expected: the page leaves the file before the poison. */
		got = fnr_pread_eio(&r->ctl, r->fd, buf, len, off, &r->reads,
				    &r->eio);
		t = fnr_now() - t;
		u1 = __atomic_load_n(&r->unpoisoned, __ATOMIC_SEQ_CST);
		if (got == -1)
			continue;
		if (got < 0)
			break;
		/*
		 * The race: a read held after its check (half the delay or
		 * more) that began before a soft offline and ended after the
		 * unpoison that freed the page.
		 */
		if (!(c0 & 1) && u1 > u0 && t >= UP_HELD_S)
			__atomic_add_fetch(&r->spanned, 1, __ATOMIC_RELAXED);
		if (!fnr_check(buf, got, off, UP_ID, 1, why, sizeof(why)))
			continue;
		fnr_bad_read(&r->bad, off, got, why);
	}
	return NULL;
}

/* The PFN of page @idx of @fd (mapped for a moment); 0 if unknown. */
static uint64_t file_pfn(int fd, int pagemap, size_t idx)
{
	uint64_t e = 0;
	char *p;

	p = mmap(NULL, PG, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, idx * PG);
	if (p == MAP_FAILED)
		return 0;
	if (pread(pagemap, &e, sizeof(e),
		  ((uintptr_t)p / PG) * sizeof(e)) != sizeof(e))
		e = 0;
	munmap(p, PG);
	return e >> 63 ? e & ((1ULL << 55) - 1) : 0;
}

FIXTURE(unpoison)
{
	struct up_race r;
	char path[PATH_MAX];
	bool delay_on;
};

FIXTURE_SETUP(unpoison)
{
	if (!fnr_series())
		SKIP(return, "%s", FNR_NO_SERIES);
	if (!fnr_intrusive())
		SKIP(return, "%s", FNR_NOT_ASKED);
	if (fnr_proc_value("/proc/meminfo", "HardwareCorrupted") < 0)
		SKIP(return, "no HardwareCorrupted in /proc/meminfo: CONFIG_MEMORY_FAILURE off?");
	if (access(SOFT_OFFLINE, W_OK))
		SKIP(return, "no %s: CONFIG_MEMORY_FAILURE off?", SOFT_OFFLINE);
	if (access(UNPOISON, W_OK))
		SKIP(return, "no %s: CONFIG_HWPOISON_INJECT off?", UNPOISON);
	if (!access(DELAY_VALIDATED, W_OK)) {
		self->delay_on = true;
		ASSERT_EQ(0, fnr_write_long(DELAY_VALIDATED, UP_DELAY_US));
	}
}

FIXTURE_TEARDOWN_PARENT(unpoison)
{
	if (self->delay_on && fnr_write_str(DELAY_VALIDATED, "0\n"))
		TH_LOG("could not reset %s: %s", DELAY_VALIDATED,
		       strerror(errno));
	if (self->path[0])
		unlink(self->path);
}

/* 20 rounds, each a compaction and up to 1 s of unpoison retries. */
TEST_F_TIMEOUT(unpoison, soft_offline, 240)
{
	long i, nr = fnr_env_long("FNR_READERS", 2, 1, 64);
	pthread_t *th = calloc(nr, sizeof(*th));
	struct up_race *r = &self->r;
	int round, pagemap, rc, done = 0, busy = 0;
	long n0, hw0, noref, ov0;
	char s[64], why[128];
	uint64_t pfn;

	ASSERT_NE(NULL, th);
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_LE(0, pagemap) TH_LOG("pagemap: %s", strerror(errno));
	snprintf(self->path, sizeof(self->path), "%s/fnr_unpoison.XXXXXX",
		 fnr_testdir());
	r->fd = mkstemp(self->path);
	ASSERT_LE(0, r->fd) TH_LOG("mkstemp: %s", strerror(errno));
	ASSERT_EQ(0, fnr_write_gen(r->fd, 0, UP_PAGES * PG, UP_ID, 1));
	ASSERT_EQ(0, fsync(r->fd));
	hw0 = fnr_proc_value("/proc/meminfo", "HardwareCorrupted");
	n0 = fnr_vmstat(FNR_NOREF_READ);
	ov0 = fnr_overlapped();

	/*
	 * After a real memory error (mce_race) the kernel refuses to unpoison
	 * for the rest of the boot: find out before poisoning anything.  An
	 * unpoison of a page that is not poisoned fails with EBUSY otherwise.
	 */
	pfn = file_pfn(r->fd, pagemap, 1);
	ASSERT_NE(0, pfn) TH_LOG("no PFN in /proc/self/pagemap (root?)");
	snprintf(s, sizeof(s), "%llu\n", (unsigned long long)pfn);
	if (fnr_write_str(UNPOISON, s) && errno == EOPNOTSUPP)
		SKIP(return, "unpoison is off after a real memory error (%s)",
		     strerror(errno));

	ASSERT_EQ(0, pthread_barrier_init(&r->start, NULL, nr + 1));
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, up_reader_fn, r));
	pthread_barrier_wait(&r->start);
	for (round = 0; round < UP_ROUNDS && !fnr_stopped(&r->ctl); round++) {
		ASSERT_EQ(0, fnr_make_hot(r->fd, 0, UP_PAGES * PG));
		/*
		 * The page, read back in by a reader, may sit in that CPU's
		 * LRU batch, where it cannot be activated, and reads of an
		 * inactive hot folio take the normal path: compaction drains
		 * every CPU's batches first (where the kernel has it).
		 */
		fnr_write_str("/proc/sys/vm/compact_memory", "1\n");
		ASSERT_EQ(0, fnr_make_hot(r->fd, 0, UP_PAGES * PG));
		pfn = file_pfn(r->fd, pagemap, 1);
		ASSERT_NE(0, pfn) TH_LOG("no PFN in /proc/self/pagemap (root?)");
		/* Let the readers check the page and sit before their copy. */
		usleep(10000);
		snprintf(s, sizeof(s), "0x%llx\n", (unsigned long long)pfn * PG);
		__atomic_add_fetch(&r->free_seq, 1, __ATOMIC_SEQ_CST);
		if (fnr_write_str(SOFT_OFFLINE, s)) {
			if (errno == EOPNOTSUPP) {
				fnr_set_stop(&r->ctl);
				for (i = 0; i < nr; i++)
					pthread_join(th[i], NULL);
				SKIP(return, "soft offline is off (vm.enable_soft_offline?)");
			}
			busy++;		/* EBUSY: the page could not go */
			__atomic_add_fetch(&r->free_seq, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		/* A speculative reference on the page may delay the unpoison. */
		snprintf(s, sizeof(s), "%llu\n", (unsigned long long)pfn);
		for (i = 0; i < 1000; i++) {
			rc = fnr_write_str(UNPOISON, s);
			if (!rc || errno != EBUSY)
				break;
			usleep(1000);
		}
		ASSERT_EQ(0, rc) TH_LOG("unpoison pfn %#llx: %s",
					(unsigned long long)pfn, strerror(errno));
		__atomic_add_fetch(&r->unpoisoned, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&r->free_seq, 1, __ATOMIC_SEQ_CST);
		done++;
		usleep(30000);
	}
	fnr_set_stop(&r->ctl);
	for (i = 0; i < nr; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	pthread_barrier_destroy(&r->start);
	noref = fnr_vmstat(FNR_NOREF_READ) - n0;
	close(pagemap);
	free(th);

	TH_LOG("%d/%d offlined, unpoisoned (%d busy); %lu reads (%lu EIO), %ld noref, %lu bad%s",
	       done, UP_ROUNDS, busy, r->reads, r->eio, noref, r->bad.n,
	       self->delay_on ? " (readers delayed after the check)" : "");
	TH_LOG("%lu held reads began before an offline and ended after its unpoison",
	       r->spanned);
	if (r->bad.have_why)
		TH_LOG("first bad read: %s", r->bad.why);
	ASSERT_FALSE(r->ctl.have_err) TH_LOG("%s", r->ctl.err);
	ASSERT_LT(0, done) TH_LOG("no page went offline and back: nothing was raced");
	ASSERT_EQ(hw0, fnr_proc_value("/proc/meminfo", "HardwareCorrupted"))
		TH_LOG("a page stayed poisoned");
	ASSERT_EQ(0, fnr_noref_premise(noref, why, sizeof(why)))
		TH_LOG("%s", why);
	ASSERT_EQ(0, fnr_overlap_premise(fnr_overlapped_since(ov0), why,
					 sizeof(why)))
		TH_LOG("%s", why);
	/* Held after the check, a reader must have seen the page go. */
	if (self->delay_on)
		ASSERT_LT(0, r->spanned)
			TH_LOG("no read spanned an offline and its unpoison: no race");
	EXPECT_EQ(0, r->bad.n) TH_LOG("readers copied a page freed by unpoison");
}

TEST_HARNESS_MAIN
