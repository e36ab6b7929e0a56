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
 *
 * Skips unless FNR_DIR is a tmpfs with huge folios, and unless the kernel
 * has CONFIG_MEMORY_FAILURE (MADV_HWPOISON).  Environment: FNR_DIR,
 * FNR_READERS (default 2).
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
#define READ_LEN	(64 * 1024)
#define FILE_ID		0x5a0e
#define PMD_SIZE_PATH	"/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
#define DELAY_COPY	"/sys/kernel/debug/filemap_noref/delay_copy_us"
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
		got = pread(r->fd, rd->buf, READ_LEN, off);
		/* The normal path refuses a folio with a poisoned page. */
		if (got < 0 && errno == EIO) {
			__atomic_add_fetch(&r->eio, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (got < 0) {
			fnr_fail(&r->ctl, "pread", errno);
			break;
		}
		__atomic_add_fetch(&r->reads, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&r->copied, got, __ATOMIC_RELAXED);
		if (!fnr_check(rd->buf, got, off, FILE_ID, r->gen, why,
			       sizeof(why)))
			continue;
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
};

FIXTURE_SETUP(poison)
{
	struct statfs sfs;

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
	if (self->delay_on && fnr_write_str(DELAY_COPY, "0\n"))
		TH_LOG("could not reset %s: %s", DELAY_COPY,
		       strerror(errno));
	if (self->path[0])
		unlink(self->path);
}

TEST_F_TIMEOUT(poison, large_head, 120)
{
	long i, nr = fnr_env_long("FNR_READERS", 2, 1, 64);
	struct reader *rd = calloc(nr, sizeof(*rd));
	struct poison_race *r = &self->r;
	long huge0, huge1, hw0, hw1, n0, noref = 0;
	int round, p[2], ret;
	char why[128];

	ASSERT_NE(NULL, rd);
	r->size = self->pmd;
	for (round = 0; round < ROUNDS; round++) {
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
		pthread_barrier_destroy(&r->start);
		close(r->fd);
		unlink(self->path);
		self->path[0] = 0;
		ASSERT_FALSE(r->ctl.have_err) TH_LOG("%s", r->ctl.err);
	}
	free(rd);

	TH_LOG("%d poisoned folios freed under %lu reads (%lu KiB, %lu EIO), %lu bad%s",
	       ROUNDS, r->reads, r->copied >> 10, r->eio, r->bad.n,
	       self->delay_on ? " (readers delayed after the check)" : "");
	if (r->bad.have_why)
		TH_LOG("first bad read: %s", r->bad.why);
	ASSERT_LT(0, r->copied) TH_LOG("no read copied anything");
	ASSERT_EQ(0, fnr_noref_premise(noref, why, sizeof(why)))
		TH_LOG("%s", why);
	EXPECT_EQ(0, r->bad.n) TH_LOG("readers copied a freed page");
}

TEST_HARNESS_MAIN
